// The model view and all-heads multiples draw pooled weights (data.pool f:
// each head as ceil(n/f) x ceil(nKeys/f) blocks, model.run's attention
// { pool }) at the cell size of the n tokens, each block f cells a side, with
// a block hidden only when every cell in it is; the views that draw each
// weight refuse pooled data with an Error saying so. Checked against blocks
// pooled by the tests' reference (tests/support/pooled-reference.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AttentionDataError, attentionData, headValues, hiddenCells, requireUnpooled } from '../../../web/views/attention-data.js';
import { cellSide } from '../../../web/views/heatmap.js';
import { modelGridScene, multiplesScene } from '../../../web/views/model-grid.js';
import { fromRun } from '../../../web/views/records.js';
import { load } from '../../../web/lib/node.js';
import { pooledReference } from '../../support/pooled-reference.mjs';
import { tinyCheckpoint } from '../../support/tiny-checkpoints.mjs';

// A causal head over n tokens that looks one token back (the first token at itself).
function previousTokenHead(n) {
  const weights = new Float32Array(n * n);
  for (let query = 0; query < n; query++) weights[query * n + Math.max(0, query - 1)] = 1;
  return weights;
}

const n = 1023; // not a multiple of 4: the last block of a side holds 3 tokens
const f = 4;
const side = Math.ceil(n / f);
const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
const head = previousTokenHead(n);
const data = { tokens, layers: 2, heads: 2, pool: f, causal: true, weights: new Float32Array(4 * side * side) };
for (let index = 0; index < 4; index++) data.weights.set(pooledReference(head, 0, n, n, f), index * side * side);

test('pooled data: each head is its blocks, the previous-token diagonal kept at full weight', () => {
  const model = attentionData(data, { normalized: false });
  assert.deepEqual([model.n, model.rows, model.cols, model.pool], [n, side, side, f]);
  const values = headValues(model, 1, 1);
  assert.equal(values.length, side * side);
  for (let block = 0; block < side; block++) assert.equal(values[block * side + block], 1, `diagonal block ${block}`);
  // The causal mask pooled: a block is hidden only when every key in it follows every query in it.
  const hidden = hiddenCells(model, 0);
  for (let blockRow = 0; blockRow < side; blockRow++) {
    for (let blockCol = 0; blockCol < side; blockCol++) {
      assert.equal(hidden[blockRow * side + blockCol], blockCol > blockRow ? 1 : 0, `block ${blockRow}, ${blockCol}`);
    }
  }
  assert.throws(() => requireUnpooled(model, 'heatmap'), (error) => error instanceof AttentionDataError
    && /heatmap needs each weight, but these are pooled by 4 \(data.pool\): only modelView and allHeads draw pooled weights/.test(error.message));
  assert.doesNotThrow(() => requireUnpooled(attentionData({ tokens: ['a'], heads: 1, weights: new Float32Array([1]) }), 'heatmap'));
});

test('the model view and the multiples draw each block f cells of the n tokens a side, with its hidden blocks', () => {
  const model = attentionData(data, { normalized: false });
  const maxGrid = 100;
  const cell = cellSide(n, n, maxGrid, { compact: true });
  const gridData = {
    queryTokens: tokens, keyTokens: tokens, layers: 2, heads: 2, pool: f, current: { layer: 0, head: 0 },
    weightsOf: (layer, h) => headValues(model, layer, h), hiddenOf: (layer) => hiddenCells(model, layer),
  };
  const grids = (scene) => scene.shapes.filter((shape) => shape.kind === 'grid' && shape.cols > 1);
  const drawn = grids(modelGridScene(gridData, { maxGrid }));
  assert.equal(drawn.length, 4, 'one grid per layer and head');
  for (const grid of drawn) {
    assert.deepEqual([grid.rows, grid.cols], [side, side]);
    assert.deepEqual([grid.w, grid.h], [side * f * cell, side * f * cell], 'a block is f token cells a side');
    assert.deepEqual(grid.hidden, hiddenCells(model, 0), "the pooled causal mask");
    assert.equal(grid.values.length, side * side);
  }
  const multiples = grids(multiplesScene({ queryTokens: tokens, keyTokens: tokens, pool: f, hidden: hiddenCells(model, 0),
    headValues: [headValues(model, 0, 0), headValues(model, 0, 1)] }, { maxGrid }));
  assert.deepEqual(multiples.map((grid) => [grid.rows, grid.w]), [[side, side * f * cell], [side, side * f * cell]]);
});

test('fromRun of a pooled run (model.run\'s attention { pool }): every layer\'s blocks, or one layer\'s', async () => {
  const lens = await load();
  const checkpoint = tinyCheckpoint({ arch: 'gpt2', seed: 5 });
  const model = await lens.loadModel({ config: JSON.parse(checkpoint.files['config.json']), weights: checkpoint.files['model.safetensors'] });
  try {
    const ids = Array.from({ length: 11 }, (_, i) => i + 1);
    const full = model.run({ ids, logits: 'none' });
    const run = model.run({ ids, logits: 'none', attention: { pool: 3 } });
    const every = attentionData(fromRun(run));
    assert.deepEqual([every.layers, every.rows, every.cols, every.pool], [run.layers, 4, 4, 3]);
    const last = run.layers - 1;
    const one = attentionData(fromRun(run, { layer: last }));
    assert.deepEqual(Array.from(headValues(one, 0, 1)), Array.from(pooledReference(full.attention, (last * run.heads + 1) * 121, 11, 11, 3)));
    assert.deepEqual(hiddenCells(one, 0), hiddenCells(every, last), 'the causal mask pooled alike');
    assert.equal(fromRun(full).pool, undefined, 'a run in full: data as before');
  } finally {
    model.dispose();
  }
});
