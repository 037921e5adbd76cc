// Multi-head attention (self and cross, with biases, masks, causal,
// temperature) and explainMatrices against the double reference.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertBitIdentical, assertClose, loadBoth, rowSums } from './helpers.mjs';
import { multiHeadReference, seededRandom } from './reference.mjs';

const [simdLens, scalarLens] = await loadBoth();

const WIDTHS_AND_HEADS = [[1, 1], [2, 2], [4, 1], [6, 3], [8, 2], [12, 4], [16, 16], [30, 5], [33, 3], [64, 8]];

function randomMultiHead(random, { dModel, heads, cross = false, biases = false }) {
  const n = random.integer(1, 20);
  const scaleOfW = 1 / Math.sqrt(dModel);
  const options = {
    x: random.floats(n * dModel, -2, 2), n, dModel, heads,
    wq: random.floats(dModel * dModel, -scaleOfW, scaleOfW), wk: random.floats(dModel * dModel, -scaleOfW, scaleOfW),
    wv: random.floats(dModel * dModel, -scaleOfW, scaleOfW), wo: random.floats(dModel * dModel, -scaleOfW, scaleOfW),
  };
  if (cross) {
    options.nContext = random.integer(1, 20);
    options.context = random.floats(options.nContext * dModel, -2, 2);
  }
  if (biases) {
    for (const name of ['bq', 'bk', 'bv', 'bo']) if (random.next() < 0.8) options[name] = random.floats(dModel);
  }
  const nKeys = options.nContext ?? n;
  if (random.next() < 0.4) options.causal = true;
  if (random.next() < 0.3) options.keyMask = random.mask(nKeys);
  if (random.next() < 0.3) options.temperature = random.uniform(0.2, 4);
  return options;
}

const caseLabel = (o) => `n=${o.n} nContext=${o.nContext ?? '-'} dModel=${o.dModel} heads=${o.heads} causal=${!!o.causal} mask=${!!o.keyMask}`;

for (const lens of [simdLens, scalarLens]) {
  describe(`${lens.simd ? 'SIMD' : 'scalar'} module: multi-head attention`, () => {
    test('self- and cross-attention, with and without biases, match the double reference', () => {
      const random = seededRandom(lens.simd ? 21 : 22);
      for (const [dModel, heads] of WIDTHS_AND_HEADS) {
        for (const cross of [false, true]) {
          for (const biases of [false, true]) {
            const options = randomMultiHead(random, { dModel, heads, cross, biases });
            const expected = multiHeadReference(options);
            const { output, weights } = lens.multiHeadAttention(options);
            const nKeys = options.nContext ?? options.n;
            assert.equal(weights.length, heads * options.n * nKeys);
            assertClose(weights, expected.weights, { atol: 5e-6, rtol: 1e-4, label: `${caseLabel(options)} weights` });
            assertClose(output, expected.output, { atol: 2e-5, rtol: 1e-4, label: `${caseLabel(options)} output` });
          }
        }
      }
    });

    test('weights are [head][query][key]: each head matches attention() on its columns', () => {
      const random = seededRandom(23);
      const options = randomMultiHead(random, { dModel: 12, heads: 3, cross: true });
      delete options.keyMask;
      const explained = lens.explainMatrices(options);
      const { weights } = lens.multiHeadAttention(options);
      const n = options.n, nKeys = options.nContext, width = 4;
      for (let h = 0; h < 3; h++) {
        const columns = (matrix, rows) => Float32Array.from({ length: rows * width },
          (_, i) => matrix[Math.floor(i / width) * 12 + h * width + (i % width)]);
        const head = lens.attention({ q: columns(explained.q, n), k: columns(explained.k, nKeys), v: columns(explained.v, nKeys),
          m: n, n: nKeys, dk: width, dv: width, causal: options.causal, temperature: options.temperature });
        assertClose(weights.subarray(h * n * nKeys, (h + 1) * n * nKeys), head.weights, { atol: 1e-6, rtol: 1e-5, label: `head ${h}` });
      }
    });

    test('explainMatrices returns every intermediate, matching the reference and multiHeadAttention', () => {
      const random = seededRandom(24);
      for (const [dModel, heads] of [[8, 2], [12, 3], [30, 5]]) {
        for (const cross of [false, true]) {
          const options = randomMultiHead(random, { dModel, heads, cross, biases: true });
          const explained = lens.explainMatrices(options);
          const expected = multiHeadReference(options);
          const label = caseLabel(options);
          const nKeys = options.nContext ?? options.n;
          assert.equal(explained.n, options.n);
          assert.equal(explained.nContext, nKeys);
          assert.equal(explained.headWidth, dModel / heads);
          assert.equal(explained.scale, 1 / Math.sqrt(dModel / heads));
          assertBitIdentical(explained.x, options.x, 'x');
          assertBitIdentical(explained.contextX, options.context ?? options.x, 'contextX');
          for (const name of ['wq', 'wk', 'wv', 'wo']) assertBitIdentical(explained[name], options[name], name);
          for (const name of ['q', 'k', 'v', 'concatenatedHeads', 'output']) {
            assertClose(explained[name], expected[name], { atol: 2e-5, rtol: 1e-4, label: `${label} ${name}` });
          }
          for (const name of ['scores', 'scaledScores', 'weights']) {
            assertClose(explained[name], expected[name], { atol: 2e-5, rtol: 1e-4, label: `${label} ${name}` });
          }
          const direct = lens.multiHeadAttention(options);
          assertBitIdentical(explained.weights, direct.weights, 'weights vs multiHeadAttention');
          assertBitIdentical(explained.output, direct.output, 'output vs multiHeadAttention');
        }
      }
    });

    test('explainMatrices defaults: heads = 1, W_O = identity, masked scaled scores are -Infinity', () => {
      const random = seededRandom(25);
      const n = 5, dModel = 6;
      const options = { x: random.floats(n * dModel), n, dModel, wq: random.floats(36), wk: random.floats(36), wv: random.floats(36), causal: true };
      const explained = lens.explainMatrices(options);
      assert.equal(explained.heads, 1);
      assertBitIdentical(explained.output, explained.concatenatedHeads, 'output = concatenated heads');
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          if (j > i) {
            assert.equal(explained.scaledScores[i * n + j], -Infinity);
            assert.equal(explained.weights[i * n + j], 0);
          } else {
            assertClose([explained.scaledScores[i * n + j]], [explained.scores[i * n + j] / Math.sqrt(dModel)], { atol: 1e-6 });
          }
        }
      }
      for (const sum of rowSums(explained.weights, n, n)) assert.ok(Math.abs(sum - 1) < 1e-5);
    });

    test('causal cross-attention with fewer queries than keys is aligned to the end', () => {
      const random = seededRandom(26);
      const n = 2, nContext = 5, dModel = 4;
      const options = { x: random.floats(n * dModel), n, dModel, heads: 2, context: random.floats(nContext * dModel), nContext,
        wq: random.floats(16), wk: random.floats(16), wv: random.floats(16), wo: random.floats(16), causal: true };
      const { weights } = lens.multiHeadAttention(options);
      assertClose(weights, multiHeadReference(options).weights, { atol: 2e-6, label: 'weights' });
      for (let h = 0; h < 2; h++) {
        // Query 0 sits at position 3: it sees keys 0..3, not key 4; query 1 sees all.
        assert.equal(weights[h * 10 + 4], 0);
        assert.ok(weights[h * 10 + 3] > 0 && weights[h * 10 + 9] > 0);
      }
    });
  });
}
