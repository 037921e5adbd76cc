// Proposed for tests/wasm/ (performance round 2): the optional `heads` option
// of lens.attention (stacked heads in one call) against per-head references.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertBitIdentical, assertClose, loadBoth } from './helpers.mjs';
import { attentionReference, seededRandom } from './reference.mjs';

const lenses = await loadBoth();

for (const lens of lenses) {
  describe(`${lens.simd ? 'SIMD' : 'scalar'} module: attention with heads`, () => {
    test('stacked heads equal the double reference of each head (with causal mask and key mask)', () => {
      const random = seededRandom(lens.simd ? 51 : 52);
      for (const [heads, m, n, dk, dv] of [[3, 5, 7, 4, 6], [8, 17, 33, 16, 20], [2, 40, 40, 64, 64]]) {
        const q = random.floats(heads * m * dk), k = random.floats(heads * n * dk), v = random.floats(heads * n * dv);
        const keyMask = random.mask(n);
        const result = lens.attention({ q, k, v, m, n, dk, dv, heads, causal: true, keyMask, temperature: 0.7 });
        assert.equal(result.output.length, heads * m * dv);
        assert.equal(result.weights.length, heads * m * n);
        for (let h = 0; h < heads; h++) {
          const expected = attentionReference({
            q: q.subarray(h * m * dk, (h + 1) * m * dk), k: k.subarray(h * n * dk, (h + 1) * n * dk),
            v: v.subarray(h * n * dv, (h + 1) * n * dv), m, n, dk, dv, causal: true, keyMask, temperature: 0.7,
          });
          assertClose(result.weights.subarray(h * m * n, (h + 1) * m * n), expected.weights, { label: `head ${h} weights` });
          assertClose(result.output.subarray(h * m * dv, (h + 1) * m * dv), expected.output, { label: `head ${h} output` });
        }
      }
    });

    test('heads: 1 is the same call as no heads option, bit for bit', () => {
      const random = seededRandom(53);
      const options = { q: random.floats(6 * 8), k: random.floats(9 * 8), v: random.floats(9 * 5), m: 6, n: 9, dk: 8, dv: 5 };
      const plain = lens.attention(options), one = lens.attention({ ...options, heads: 1 });
      assertBitIdentical(plain.output, one.output, 'output');
      assertBitIdentical(plain.weights, one.weights, 'weights');
    });

    test('bad heads and stacked lengths give errors that name them', () => {
      const random = seededRandom(54);
      const options = { q: random.floats(2 * 3 * 4), k: random.floats(2 * 5 * 4), v: random.floats(2 * 5 * 4), m: 3, n: 5, dk: 4, dv: 4, heads: 2 };
      assert.throws(() => lens.attention({ ...options, heads: 0 }), { name: 'RangeError', message: /heads must be an integer from 1 to/ });
      assert.throws(() => lens.attention({ ...options, heads: '2' }), { name: 'TypeError', message: /heads must be a positive integer/ });
      assert.throws(() => lens.attention({ ...options, heads: 3 }),
        { name: 'RangeError', message: /q must be of length heads\*m\*dk = 3\*3\*4 = 36, got length 24/ });
      const bad = options.v.slice();
      bad[33] = NaN;
      assert.throws(() => lens.attention({ ...options, v: bad }), { name: 'RangeError', message: /v must be finite \(no NaN or Infinity\), got v\[33\] = NaN/ });
    });
  });
}
