// The `into` option of attention and multiHeadAttention: results copied into
// preallocated arrays the caller reuses across calls. They must hold exactly
// the numbers fresh arrays get (bit for bit), be the very arrays returned, be
// overwritten by each call, and be refused with a message naming the option
// and the expected length when they do not fit. A refused call (and a call
// that fails after validation) leaves the arrays and the heap as they were.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertBitIdentical, assertRefused, loadBoth, sentinel } from './helpers.mjs';
import { seededRandom } from './reference.mjs';

const lenses = await loadBoth();

function attentionInputs(random, { heads = 1, m, n, dk, dv }) {
  return { q: random.floats(heads * m * dk), k: random.floats(heads * n * dk), v: random.floats(heads * n * dv),
    m, n, dk, dv, heads };
}

function multiHeadInputs(random, { n, dModel, heads, nContext }) {
  const options = { x: random.floats(n * dModel), n, dModel, heads, wq: random.floats(dModel ** 2),
    wk: random.floats(dModel ** 2), wv: random.floats(dModel ** 2), wo: random.floats(dModel ** 2),
    bq: random.floats(dModel), bo: random.floats(dModel) };
  if (nContext !== undefined) Object.assign(options, { nContext, context: random.floats(nContext * dModel) });
  return options;
}

for (const lens of lenses) {
  describe(`${lens.simdLevel} module: attention({ into })`, () => {
    test('fills the given arrays with the same bits as fresh arrays and returns them', () => {
      const random = seededRandom(lens.simd ? 101 : 102);
      for (const shape of [{ m: 5, n: 7, dk: 4, dv: 3 }, { heads: 3, m: 17, n: 33, dk: 16, dv: 8 },
        { m: 1, n: 1, dk: 1, dv: 1 }]) {
        const options = { ...attentionInputs(random, shape), causal: shape.m === 17 };
        const fresh = lens.attention(options);
        const into = { output: sentinel(fresh.output.length), weights: sentinel(fresh.weights.length) };
        const filled = lens.attention({ ...options, into });
        assert.equal(filled.output, into.output);
        assert.equal(filled.weights, into.weights);
        assertBitIdentical(filled.output, fresh.output, 'output');
        assertBitIdentical(filled.weights, fresh.weights, 'weights');
      }
    });

    test('the same arrays serve calls with other inputs: each call overwrites them', () => {
      const random = seededRandom(lens.simd ? 103 : 104);
      const shape = { heads: 2, m: 9, n: 12, dk: 8, dv: 8 };
      const into = { output: new Float32Array(2 * 9 * 8), weights: new Float32Array(2 * 9 * 12) };
      let previous = null;
      for (let call = 0; call < 4; call++) {
        const options = { ...attentionInputs(random, shape), causal: call % 2 === 1 };
        const filled = lens.attention({ ...options, into });
        const fresh = lens.attention(options);
        assertBitIdentical(filled.output, fresh.output, `call ${call} output`);
        assertBitIdentical(filled.weights, fresh.weights, `call ${call} weights`);
        if (previous) assert.notDeepEqual(Array.from(filled.weights), previous, 'the weights were not overwritten');
        previous = Array.from(filled.weights);
      }
    });

    test('one array may be given alone; the other output comes fresh', () => {
      const options = attentionInputs(seededRandom(105), { m: 4, n: 6, dk: 3, dv: 2 });
      const fresh = lens.attention(options);
      const weights = new Float32Array(24);
      const onlyWeights = lens.attention({ ...options, into: { weights } });
      assert.equal(onlyWeights.weights, weights);
      assert.notEqual(onlyWeights.output, fresh.output);
      assertBitIdentical(onlyWeights.output, fresh.output, 'output');
      assertBitIdentical(weights, fresh.weights, 'weights');
      const output = new Float32Array(8);
      const onlyOutput = lens.attention({ ...options, weights: false, into: { output } });
      assert.equal(onlyOutput.output, output);
      assert.equal(onlyOutput.weights, null);
      assertBitIdentical(output, lens.attention({ ...options, weights: false }).output, 'output without weights');
    });

    test('views into one buffer work when they do not overlap', () => {
      const options = attentionInputs(seededRandom(106), { m: 3, n: 5, dk: 2, dv: 4 });
      const fresh = lens.attention(options);
      const buffer = new ArrayBuffer(4 * (12 + 15 + 1));
      const into = { output: new Float32Array(buffer, 4, 12), weights: new Float32Array(buffer, 4 * 13, 15) };
      lens.attention({ ...options, into });
      assertBitIdentical(into.output, fresh.output, 'output');
      assertBitIdentical(into.weights, fresh.weights, 'weights');
      assert.equal(new Float32Array(buffer)[0], 0, 'the float before the views was written');
    });

    test('wrong types, lengths, keys, outputs that are not returned and shared memory are refused', () => {
      const options = attentionInputs(seededRandom(107), { heads: 2, m: 3, n: 4, dk: 2, dv: 5 });
      const output = sentinel(30), weights = sentinel(24);
      const refuse = (into, kind, message, extra = {}) =>
        assertRefused(lens, () => lens.attention({ ...options, ...extra, into }), kind, message, [output, weights]);
      refuse({ output: Array.from(output), weights }, TypeError,
        /^attnlens\.attention: into\.output must be a Float32Array of length heads\*m\*dv = 2\*3\*5 = 30, got Array\(30\)$/);
      refuse({ output, weights: new Float64Array(24) }, TypeError,
        /into\.weights must be a Float32Array of length heads\*m\*n = 2\*3\*4 = 24, got Float64Array\(24\)/);
      refuse({ output: new Float32Array(31), weights }, RangeError,
        /^attnlens\.attention: into\.output must be of length heads\*m\*dv = 2\*3\*5 = 30, got length 31$/);
      refuse({ output, weights: weights.subarray(1) }, RangeError, /into\.weights must be of length .* = 24, got length 23/);
      refuse({ output, weight: weights }, TypeError, /unknown key "weight" in into; expected output, weights/);
      refuse(output, TypeError, /into must be an object of preallocated Float32Arrays \{ output, weights \}, got Float32Array\(30\)/);
      refuse([output, weights], TypeError, /into must be an object .*, got Array\(2\)/);
      refuse({ output, weights }, TypeError, /into\.weights was given, but this call returns no weights: weights is false/,
        { weights: false });
      const shared = new Float32Array(30);
      refuse({ output: shared, weights: shared.subarray(0, 24) }, RangeError,
        /into\.output and into\.weights share memory; each output needs its own array/);
      const buffer = new ArrayBuffer(4 * 60);
      refuse({ output: new Float32Array(buffer, 0, 30), weights: new Float32Array(buffer, 4 * 29, 24) }, RangeError,
        /share memory/);
      // One array for both: lengths differ here, so the same object fails on length first; equal lengths:
      const square = attentionInputs(seededRandom(108), { m: 2, n: 3, dk: 2, dv: 3 });
      const both = sentinel(6);
      assertRefused(lens, () => lens.attention({ ...square, into: { output: both, weights: both } }), RangeError,
        /into\.output and into\.weights share memory/, [both]);
    });

    test('a call refused after its inputs are staged in the heap (non-finite, too large) leaves the arrays as they were', () => {
      const options = attentionInputs(seededRandom(109), { m: 3, n: 4, dk: 2, dv: 2 });
      const into = { output: sentinel(6), weights: sentinel(12) };
      const q = options.q.slice();
      q[3] = NaN;
      assertRefused(lens, () => lens.attention({ ...options, q, into }), RangeError, /q must be finite/,
        [into.output, into.weights]);
      // Finite inputs whose scores would overflow float32: found from the staged copies.
      const k = options.k.map((value) => value * 1e20);
      assertRefused(lens, () => lens.attention({ ...options, q: options.q.map((value) => value * 1e20), k, into }),
        RangeError, /q and k are too large for float32 arithmetic/, [into.output, into.weights]);
      // The module and the arrays work on.
      assertBitIdentical(lens.attention({ ...options, into }).weights, lens.attention(options).weights, 'weights after');
    });
  });

  describe(`${lens.simdLevel} module: multiHeadAttention({ into })`, () => {
    test('self- and cross-attention fill the given arrays bit for bit, call after call', () => {
      const random = seededRandom(lens.simd ? 111 : 112);
      for (const shape of [{ n: 6, dModel: 12, heads: 3 }, { n: 5, dModel: 16, heads: 2, nContext: 9 }]) {
        const keys = shape.nContext ?? shape.n;
        const into = { output: sentinel(shape.n * shape.dModel), weights: sentinel(shape.heads * shape.n * keys) };
        for (let call = 0; call < 3; call++) {
          const options = { ...multiHeadInputs(random, shape), causal: call === 1 };
          const fresh = lens.multiHeadAttention(options);
          const filled = lens.multiHeadAttention({ ...options, into });
          assert.equal(filled.output, into.output);
          assert.equal(filled.weights, into.weights);
          assertBitIdentical(filled.output, fresh.output, `call ${call} output`);
          assertBitIdentical(filled.weights, fresh.weights, `call ${call} weights`);
        }
      }
    });

    test('arrays that do not fit are refused, naming the expected length', () => {
      const options = multiHeadInputs(seededRandom(113), { n: 4, dModel: 6, heads: 2, nContext: 5 });
      const output = sentinel(24), weights = sentinel(40);
      const refuse = (into, kind, message) =>
        assertRefused(lens, () => lens.multiHeadAttention({ ...options, into }), kind, message, [output, weights]);
      refuse({ output, weights: sentinel(32) }, RangeError,
        /^attnlens\.multiHeadAttention: into\.weights must be of length heads\*n\*nContext = 2\*4\*5 = 40, got length 32$/);
      refuse({ output: new Uint8Array(24), weights }, TypeError,
        /into\.output must be a Float32Array of length n\*dModel = 4\*6 = 24, got Uint8Array\(24\)/);
      refuse({ output, weights, scores: weights }, TypeError, /unknown key "scores" in into/);
      refuse({ output: weights.subarray(0, 24), weights }, RangeError, /share memory/);
      // explainMatrices returns a dozen arrays and takes no `into`.
      assert.throws(() => lens.explainMatrices({ ...options, into: { output } }), /unknown option "into"/);
    });
  });
}
