// linesScene (the BertViz-style head view) as data: which lines it draws, at
// which opacities, for small inputs (every key) and large ones (the strongest).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { linesScene } from '../../../web/views/lines.js';

// Seeded softmax rows.
function softmaxRows(rows, cols, seed) {
  let state = seed;
  const random = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const values = new Float32Array(rows * cols);
  for (let row = 0; row < rows; row++) {
    let sum = 0;
    for (let col = 0; col < cols; col++) sum += (values[row * cols + col] = Math.exp(6 * random()));
    for (let col = 0; col < cols; col++) values[row * cols + col] /= sum;
  }
  return values;
}

// Every drawn line as { row, col, opacity }, read back from the scene's segments.
function drawnLines(scene, layout) {
  const lines = [];
  for (const shape of scene.shapes.filter((s) => s.kind === 'segments')) {
    for (let i = 0; i < shape.points.length; i += 4) {
      const row = Math.round((shape.points[i + 1] - layout.top) / layout.rowH - 0.5);
      const col = Math.round((shape.points[i + 3] - layout.top) / layout.rowH - 0.5);
      lines.push({ row, col, opacity: shape.opacity, width: shape.width });
    }
  }
  return lines;
}

const tokens = (n) => Array.from({ length: n }, (_, i) => `t${i}`);

test('up to 64 keys: a line for every visible weight, at that weight to 1/64', () => {
  const n = 12;
  const values = softmaxRows(n, n, 7);
  const { scene, layout } = linesScene({ queryTokens: tokens(n), keyTokens: tokens(n), values });
  const lines = drawnLines(scene, layout);
  const expected = Array.from(values).filter((w) => w >= 0.004).length;
  assert.equal(lines.length, expected);
  for (const { row, col, opacity, width } of lines) {
    assert.ok(Math.abs(opacity - values[row * n + col]) <= 1 / 128 + 1e-9 || opacity === 1 / 64, `(${row}, ${col})`);
    assert.equal(width, 2);
  }
});

test('more than 64 keys: each query draws its 8 strongest keys, 1 px wide', () => {
  const n = 100;
  const values = softmaxRows(n, n, 3);
  const { scene, layout } = linesScene({ queryTokens: tokens(n), keyTokens: tokens(n), values });
  const lines = drawnLines(scene, layout);
  for (let row = 0; row < n; row++) {
    const drawn = lines.filter((line) => line.row === row).map((line) => line.col).sort((a, b) => a - b);
    const strongest = Array.from(values.subarray(row * n, (row + 1) * n), (w, col) => [w, col])
      .sort((a, b) => b[0] - a[0]).slice(0, 8).filter(([w]) => w >= 0.004).map(([, col]) => col).sort((a, b) => a - b);
    assert.deepEqual(drawn, strongest, `query ${row}`);
  }
  assert.ok(lines.every((line) => line.width === 1));
});
