// Single-head attention in both WASM modules against the double-precision
// reference on many random shapes, and the properties attention must have.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertClose, loadBoth, rowSums } from './helpers.mjs';
import { attentionReference, keyVisible, seededRandom } from './reference.mjs';

const [simdLens, scalarLens] = await loadBoth();

// Hand-picked shapes (widths that are not multiples of the SIMD width, m != n,
// dk != dv, single rows and columns) plus random ones.
const FIXED_SHAPES = [
  [1, 1, 1, 1], [1, 7, 3, 5], [7, 1, 5, 3], [3, 5, 7, 9], [17, 33, 5, 3], [4, 4, 4, 4], [8, 8, 16, 16],
  [33, 17, 13, 2], [5, 70, 1, 1], [70, 5, 31, 29], [64, 64, 64, 64], [2, 3, 65, 67],
];

function randomCase(random, [m, n, dk, dv]) {
  const options = { q: random.floats(m * dk), k: random.floats(n * dk), v: random.floats(n * dv, -3, 3), m, n, dk, dv };
  if (random.next() < 0.4) options.causal = true;
  if (random.next() < 0.4) options.keyMask = random.mask(n);
  if (random.next() < 0.4) options.temperature = random.uniform(0.05, 5);
  if (random.next() < 0.3) options.scale = random.uniform(0.01, 2);
  return options;
}

function checkAgainstReference(lens, options, label) {
  const expected = attentionReference(options);
  const { output, weights } = lens.attention(options);
  assertClose(weights, expected.weights, { atol: 2e-6, rtol: 1e-4, label: `${label} weights` });
  assertClose(output, expected.output, { atol: 1e-5, rtol: 1e-4, label: `${label} output` });
  return { output, weights };
}

for (const lens of [simdLens, scalarLens]) {
  describe(`${lens.simd ? 'SIMD' : 'scalar'} module: attention`, () => {
    test('random cases across many shapes match the double reference', () => {
      const random = seededRandom(lens.simd ? 11 : 12);
      const shapes = [...FIXED_SHAPES];
      for (let i = 0; i < 150; i++) {
        shapes.push([random.integer(1, 40), random.integer(1, 40), random.integer(1, 40), random.integer(1, 40)]);
      }
      for (const shape of shapes) {
        const options = randomCase(random, shape);
        checkAgainstReference(lens, options, `shape ${shape} causal=${!!options.causal} mask=${!!options.keyMask}`);
      }
    });

    test('causal with fewer queries than keys is aligned to the end', () => {
      const random = seededRandom(5);
      const m = 3, n = 7, dk = 5, dv = 6;
      const options = { q: random.floats(m * dk), k: random.floats(n * dk), v: random.floats(n * dv), m, n, dk, dv, causal: true };
      const { weights } = checkAgainstReference(lens, options, 'm < n causal');
      // The last query sees every key; query 0 sees keys 0..4 only.
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          if (j > i + n - m) assert.equal(weights[i * n + j], 0, `weights[${i}][${j}] must be 0`);
          else assert.ok(weights[i * n + j] > 0, `weights[${i}][${j}] must be > 0`);
        }
      }
    });

    test('rows of the weights sum to 1 and causal weights are 0 above the diagonal', () => {
      const random = seededRandom(6);
      for (const [m, n, dk, dv] of [[9, 9, 5, 3], [16, 16, 8, 8], [31, 31, 7, 7]]) {
        const options = { q: random.floats(m * dk, -4, 4), k: random.floats(n * dk, -4, 4), v: random.floats(n * dv), m, n, dk, dv };
        const free = lens.attention(options);
        for (const [i, sum] of rowSums(free.weights, m, n).entries()) assert.ok(Math.abs(sum - 1) < 1e-5, `row ${i} sums to ${sum}`);
        const causal = lens.attention({ ...options, causal: true });
        for (const [i, sum] of rowSums(causal.weights, m, n).entries()) assert.ok(Math.abs(sum - 1) < 1e-5, `causal row ${i} sums to ${sum}`);
        for (let i = 0; i < m; i++) for (let j = i + 1; j < n; j++) assert.equal(causal.weights[i * n + j], 0);
      }
    });

    test('permuting keys and values together permutes the weights and keeps the output', () => {
      const random = seededRandom(7);
      const m = 6, n = 11, dk = 7, dv = 5;
      const q = random.floats(m * dk), k = random.floats(n * dk), v = random.floats(n * dv);
      const keyMask = random.mask(n, 0.8);
      keyMask[0] = 1;
      const permutation = Array.from({ length: n }, (_, i) => i).sort(() => random.next() - 0.5);
      const permutedK = new Float32Array(n * dk), permutedV = new Float32Array(n * dv), permutedMask = new Uint8Array(n);
      permutation.forEach((from, to) => {
        permutedK.set(k.subarray(from * dk, (from + 1) * dk), to * dk);
        permutedV.set(v.subarray(from * dv, (from + 1) * dv), to * dv);
        permutedMask[to] = keyMask[from];
      });
      const original = lens.attention({ q, k, v, m, n, dk, dv, keyMask });
      const permuted = lens.attention({ q, k: permutedK, v: permutedV, m, n, dk, dv, keyMask: permutedMask });
      assertClose(permuted.output, original.output, { atol: 1e-6, rtol: 1e-5, label: 'output' });
      const expectedWeights = new Float32Array(m * n);
      for (let i = 0; i < m; i++) permutation.forEach((from, to) => { expectedWeights[i * n + to] = original.weights[i * n + from]; });
      assertClose(permuted.weights, expectedWeights, { atol: 1e-7, rtol: 1e-5, label: 'weights' });
    });

    test('scores of +-1e4 give finite, correct (one-hot) weights', () => {
      // dk = 1, scale = 1: the scores are exactly q_i * k_j.
      const q = new Float32Array([1e4, -1e4, 1]);
      const k = new Float32Array([1, -1, 0.5, -0.5]);
      const v = new Float32Array([10, 20, 30, 40]);
      const options = { q, k, v, m: 3, n: 4, dk: 1, dv: 1, scale: 1 };
      const { output, weights } = checkAgainstReference(lens, options, '+-1e4');
      assert.deepEqual(Array.from(weights.subarray(0, 4)), [1, 0, 0, 0]);
      assert.deepEqual(Array.from(weights.subarray(4, 8)), [0, 1, 0, 0]);
      assert.deepEqual(Array.from(output.subarray(0, 2)), [10, 20]);
      // Large scores that differ by a little still give the right softmax.
      const close = lens.attention({ q: new Float32Array([1e4]), k: new Float32Array([1, 0.9999]), v: new Float32Array([1, 0]),
        m: 1, n: 2, dk: 1, dv: 1, scale: 1 });
      assertClose(close.weights, [1 / (1 + Math.exp(-1)), 1 / (1 + Math.exp(1))], { atol: 1e-5, rtol: 0, label: 'close scores' });
    });

    test('extreme but finite inputs give NaN-free results or a RangeError, never NaN', () => {
      const m = 4, n = 5, dk = 8, dv = 3;
      const random = seededRandom(8);
      // |q.k| up to 8e30: scores stay finite in float32.
      const big = { q: random.floats(m * dk, -1e15, 1e15), k: random.floats(n * dk, -1e15, 1e15), v: random.floats(n * dv, -1e30, 1e30), m, n, dk, dv };
      const { output, weights } = checkAgainstReference(lens, big, 'huge inputs');
      assert.ok(output.every(Number.isFinite) && weights.every(Number.isFinite));
      // Each product 1e20 * +-1e20 overflows float32 and inf + -inf is NaN:
      // a RangeError naming the inputs, not a NaN result.
      const overflow = { q: new Float32Array([1e20, 1e20]), k: new Float32Array([1e20, -1e20, 1, 1]), v: new Float32Array([1, 2]),
        m: 1, n: 2, dk: 2, dv: 1 };
      assert.throws(() => lens.attention(overflow), (error) => error instanceof RangeError && /q and k are too large/.test(error.message) && /dk \* max\|q\|/.test(error.message));
      // Inputs from 1e10 to 1e25: finite, correct results or that RangeError, never NaN.
      const outcomes = { finite: 0, refused: 0 };
      for (let i = 0; i < 40; i++) {
        const size = 10 ** random.integer(10, 25);
        const risky = { ...big, q: random.floats(m * dk, -size, size), k: random.floats(n * dk, -size, size) };
        try {
          const result = lens.attention(risky);
          assert.ok(result.output.every(Number.isFinite) && result.weights.every(Number.isFinite));
          assertClose(result.weights, attentionReference(risky).weights, { atol: 1e-5, rtol: 1e-3, label: `1e${Math.log10(size)}` });
          outcomes.finite++;
        } catch (error) {
          assert.ok(error instanceof RangeError && /too large for float32/.test(error.message), error.message);
          outcomes.refused++;
        }
      }
      assert.ok(outcomes.finite > 0 && outcomes.refused > 0, JSON.stringify(outcomes));
      checkAgainstReference(lens, randomCase(random, [3, 4, 5, 6]), 'after overflow');
    });

    test('a fully masked row gives zero weights and a zero output, not NaN', () => {
      const random = seededRandom(9);
      const m = 3, n = 4, dk = 5, dv = 2;
      const options = { q: random.floats(m * dk), k: random.floats(n * dk), v: random.floats(n * dv), m, n, dk, dv };
      const allMasked = lens.attention({ ...options, keyMask: new Uint8Array(n) });
      assert.deepEqual(Array.from(allMasked.weights), new Array(m * n).fill(0));
      assert.deepEqual(Array.from(allMasked.output), new Array(m * dv).fill(0));
      // Causal + mask hiding key 0 leaves query 0 of a square problem with no key.
      const keyMask = new Uint8Array([0, 1, 1, 1]);
      const causal = lens.attention({ q: random.floats(4 * dk), k: options.k, v: options.v, m: 4, n, dk, dv, causal: true, keyMask });
      assert.deepEqual(Array.from(causal.weights.subarray(0, n)), [0, 0, 0, 0]);
      assert.deepEqual(Array.from(causal.output.subarray(0, dv)), [0, 0]);
      for (let i = 0; i < 4; i++) for (let j = 0; j < n; j++) {
        if (!keyVisible({ m: 4, n, causal: true, keyMask }, i, j)) assert.equal(causal.weights[i * n + j], 0);
      }
      assert.ok(Math.abs(rowSums(causal.weights, 4, n)[1] - 1) < 1e-6);
    });

    test('temperature sharpens (< 1) and flattens (> 1) the distribution as the formula says', () => {
      const random = seededRandom(10);
      const m = 5, n = 9, dk = 6, dv = 4;
      const options = { q: random.floats(m * dk, -2, 2), k: random.floats(n * dk, -2, 2), v: random.floats(n * dv), m, n, dk, dv };
      for (const temperature of [0.1, 0.5, 1, 2, 10]) checkAgainstReference(lens, { ...options, temperature }, `temperature ${temperature}`);
      const maxOf = (weights) => Math.max(...weights.subarray(0, n));
      const sharp = lens.attention({ ...options, temperature: 0.1 }).weights;
      const flat = lens.attention({ ...options, temperature: 10 }).weights;
      assert.ok(maxOf(sharp) > maxOf(lens.attention(options).weights));
      assert.ok(maxOf(flat) < maxOf(lens.attention(options).weights));
    });
  });
}

test('SIMD and scalar modules agree to float32 rounding', () => {
  const random = seededRandom(13);
  for (let i = 0; i < 40; i++) {
    const options = randomCase(random, [random.integer(1, 30), random.integer(1, 30), random.integer(1, 30), random.integer(1, 30)]);
    const a = simdLens.attention(options), b = scalarLens.attention(options);
    assertClose(a.weights, b.weights, { atol: 2e-6, rtol: 1e-4, label: 'weights' });
    assertClose(a.output, b.output, { atol: 1e-5, rtol: 1e-4, label: 'output' });
  }
});
