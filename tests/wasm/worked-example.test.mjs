// The worked example of the tutorials attnlens teaches (issue 2): 3 tokens,
// d = 4, one head, checked through explainMatrices and through attention() on
// Q = X W_Q, K = X W_K, V = X W_V, in both WASM modules.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertClose, loadBoth } from './helpers.mjs';
import { matmul, multiHeadReference } from './reference.mjs';

const X = [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]].flat();
const W_Q = [[0.1, 0.2, 0, 0], [0, 0.1, 0.3, 0], [0.1, 0, 0, 0.2], [0, 0, 0.2, 0.3]].flat();
const W_K = [[0.2, 0, 0.1, 0], [0, 0.1, 0, 0.3], [0.1, 0, 0.2, 0], [0, 0.2, 0, 0.1]].flat();
const W_V = [[0, 0.1, 0, 0.2], [0.2, 0, 0.2, 0], [0, 0.3, 0.1, 0], [0.1, 0, 0, 0.3]].flat();

// Row 0 is given by the tutorial; rows 1 and 2 were computed with the double
// reference (tests/wasm/reference.mjs) and are pinned here, so a change in
// the reference or the core shows up.
const EXPECTED_WEIGHTS = [
  [0.3135989, 0.3500636, 0.3363374],
  [0.3008724, 0.3495638, 0.3495638],
  [0.2976848, 0.3581798, 0.3441354],
].flat();
const EXPECTED_OUTPUT = [
  [0.3109394, 0.2599746, 0.2722866, 0.4409267],
  [0.3146074, 0.2601745, 0.2747819, 0.4446947],
  [0.3181485, 0.2567281, 0.2762810, 0.4465125],
].flat();
const TOLERANCE = { atol: 1e-6, rtol: 0 };

const f32 = (values) => new Float32Array(values);
const [simdLens, scalarLens] = await loadBoth();

test('the double reference reproduces the tutorial numbers and the pinned rows', () => {
  const identity = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];
  const reference = multiHeadReference({ x: X, n: 3, dModel: 4, heads: 1, wq: W_Q, wk: W_K, wv: W_V, wo: identity });
  assertClose(reference.weights, EXPECTED_WEIGHTS, { ...TOLERANCE, label: 'reference weights' });
  assertClose(reference.output, EXPECTED_OUTPUT, { ...TOLERANCE, label: 'reference output' });
});

for (const lens of [simdLens, scalarLens]) {
  describe(`${lens.simd ? 'SIMD' : 'scalar'} module`, () => {
    test('explainMatrices with heads = 1 and W_O = identity', () => {
      const result = lens.explainMatrices({ x: f32(X), n: 3, dModel: 4, wq: f32(W_Q), wk: f32(W_K), wv: f32(W_V) });
      assert.equal(result.heads, 1);
      assert.equal(result.headWidth, 4);
      assert.equal(result.nContext, 3);
      assert.equal(result.tokens, null);
      assert.equal(result.contextTokens, null);
      assertClose(result.weights, EXPECTED_WEIGHTS, { ...TOLERANCE, label: 'weights' });
      assertClose(result.concatenatedHeads, EXPECTED_OUTPUT, { ...TOLERANCE, label: 'head output' });
      assertClose(result.output, EXPECTED_OUTPUT, { ...TOLERANCE, label: 'output' });
      assertClose(result.q, matmul(X, W_Q, 3, 4, 4), { ...TOLERANCE, label: 'q' });
      assertClose(result.k, matmul(X, W_K, 3, 4, 4), { ...TOLERANCE, label: 'k' });
      assertClose(result.v, matmul(X, W_V, 3, 4, 4), { ...TOLERANCE, label: 'v' });
      assertClose(result.scaledScores, Array.from(result.scores, (s) => s / 2), { ...TOLERANCE, label: 'scaled' });
      assert.deepEqual(Array.from(result.wo), [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
      assert.ok(result.elapsedMs >= 0);
    });

    test('attention() on Q = X W_Q, K = X W_K, V = X W_V', () => {
      const q = f32(matmul(X, W_Q, 3, 4, 4));
      const k = f32(matmul(X, W_K, 3, 4, 4));
      const v = f32(matmul(X, W_V, 3, 4, 4));
      const { output, weights } = lens.attention({ q, k, v, m: 3, n: 3, dk: 4, dv: 4 });
      assert.ok(output instanceof Float32Array && weights instanceof Float32Array);
      assertClose(weights, EXPECTED_WEIGHTS, { ...TOLERANCE, label: 'weights' });
      assertClose(output, EXPECTED_OUTPUT, { ...TOLERANCE, label: 'output' });
    });

    test('multiHeadAttention with heads = 1 agrees', () => {
      const identity = f32([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
      const { output, weights } = lens.multiHeadAttention({
        x: f32(X), n: 3, dModel: 4, heads: 1, wq: f32(W_Q), wk: f32(W_K), wv: f32(W_V), wo: identity,
      });
      assertClose(weights, EXPECTED_WEIGHTS, { ...TOLERANCE, label: 'weights' });
      assertClose(output, EXPECTED_OUTPUT, { ...TOLERANCE, label: 'output' });
    });
  });
}
