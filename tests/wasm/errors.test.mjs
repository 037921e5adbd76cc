// Every kind of bad input gets the right error type, with a message that
// names the argument and the expected and actual value, before WebAssembly
// runs; afterwards the module still computes the same results and holds no
// extra memory.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertBitIdentical, loadBoth } from './helpers.mjs';
import { seededRandom } from './reference.mjs';

const [simdLens, scalarLens] = await loadBoth();
const random = seededRandom(31);

const ATTENTION = { q: random.floats(8), k: random.floats(12), v: random.floats(15), m: 2, n: 3, dk: 4, dv: 5 };
const MULTI_HEAD = { x: random.floats(12), n: 3, dModel: 4, heads: 2, wq: random.floats(16), wk: random.floats(16), wv: random.floats(16), wo: random.floats(16) };
const CROSS = { ...MULTI_HEAD, context: random.floats(8), nContext: 2 };
const { heads: _heads, wo: _wo, ...MATRICES } = MULTI_HEAD;
const SENTENCE = { text: 'A small valid sentence.', dModel: 8, heads: 2 };

const withNaN = (array, index) => { const copy = array.slice(); copy[index] = NaN; return copy; };
const withValue = (array, index, value) => { const copy = array.slice(); copy[index] = value; return copy; };

// [label, function, options, error class, message pattern]
const CASES = [
  // Options objects
  ['no options', 'attention', undefined, TypeError, /attnlens\.attention: expected an options object, got undefined/],
  ['null options', 'multiHeadAttention', null, TypeError, /expected an options object, got null/],
  ['number options', 'explainSentence', 5, TypeError, /expected an options object, got 5/],
  ['array options', 'explainMatrices', [], TypeError, /expected an options object, got Array\(0\)/],
  ['misspelled option', 'attention', { ...ATTENTION, keymask: new Uint8Array(3) }, TypeError, /unknown option "keymask"; expected one of q, k, v, m, n, dk, dv, causal, keyMask, scale, temperature/],
  // Dimensions
  ['missing m', 'attention', { ...ATTENTION, m: undefined }, TypeError, /m must be a positive integer \(it is required\), got undefined/],
  ['string m', 'attention', { ...ATTENTION, m: '2' }, TypeError, /m must be a positive integer, got "2"/],
  ['zero n', 'attention', { ...ATTENTION, n: 0 }, RangeError, /n must be an integer from 1 to 2147483647, got 0/],
  ['negative dk', 'attention', { ...ATTENTION, dk: -4 }, RangeError, /dk must be an integer from 1 to 2147483647, got -4/],
  ['fractional dv', 'attention', { ...ATTENTION, dv: 2.5 }, RangeError, /dv must be an integer from 1 to 2147483647, got 2.5/],
  ['NaN m', 'attention', { ...ATTENTION, m: NaN }, RangeError, /m must be an integer from 1 to 2147483647, got NaN/],
  ['infinite n', 'attention', { ...ATTENTION, n: Infinity }, RangeError, /n must be an integer from 1 to 2147483647, got Infinity/],
  ['2^31 m', 'attention', { ...ATTENTION, m: 2 ** 31 }, RangeError, /m must be an integer from 1 to 2147483647, got 2147483648/],
  ['bigint m', 'attention', { ...ATTENTION, m: 2n }, TypeError, /m must be a positive integer, got 2n/],
  ['zero heads', 'multiHeadAttention', { ...MULTI_HEAD, heads: 0 }, RangeError, /heads must be an integer from 1 to 2147483647, got 0/],
  ['missing heads', 'multiHeadAttention', { ...MULTI_HEAD, heads: undefined }, TypeError, /heads must be a positive integer \(it is required\)/],
  ['dModel % heads', 'multiHeadAttention', { ...MULTI_HEAD, heads: 3 }, RangeError, /dModel must be divisible by heads, got dModel = 4, heads = 3/],
  ['dModel % heads (explain)', 'explainMatrices', { ...MATRICES, heads: 3 }, RangeError, /explainMatrices: dModel must be divisible by heads, got dModel = 4, heads = 3/],
  // Arrays: type, length, finiteness
  ['missing q', 'attention', { ...ATTENTION, q: undefined }, TypeError, /q must be a Float32Array of length m\*dk = 2\*4 = 8 \(it is required\), got undefined/],
  ['plain array q', 'attention', { ...ATTENTION, q: Array.from(ATTENTION.q) }, TypeError, /q must be a Float32Array of length m\*dk = 2\*4 = 8, got Array\(8\)/],
  ['Float64Array k', 'attention', { ...ATTENTION, k: new Float64Array(12) }, TypeError, /k must be a Float32Array of length n\*dk = 3\*4 = 12, got Float64Array\(12\)/],
  ['short q', 'attention', { ...ATTENTION, q: new Float32Array(7) }, RangeError, /q must be of length m\*dk = 2\*4 = 8, got length 7/],
  ['long v', 'attention', { ...ATTENTION, v: new Float32Array(16) }, RangeError, /v must be of length n\*dv = 3\*5 = 15, got length 16/],
  ['NaN in q', 'attention', { ...ATTENTION, q: withNaN(ATTENTION.q, 3) }, RangeError, /q must be finite \(no NaN or Infinity\), got q\[3\] = NaN/],
  ['Infinity in v', 'attention', { ...ATTENTION, v: withValue(ATTENTION.v, 14, Infinity) }, RangeError, /v must be finite \(no NaN or Infinity\), got v\[14\] = Infinity/],
  ['-Infinity in k', 'attention', { ...ATTENTION, k: withValue(ATTENTION.k, 0, -Infinity) }, RangeError, /k must be finite \(no NaN or Infinity\), got k\[0\] = -Infinity/],
  ['missing wo', 'multiHeadAttention', { ...MULTI_HEAD, wo: undefined }, TypeError, /wo must be a Float32Array of length dModel\*dModel = 4\*4 = 16 \(it is required\), got undefined/],
  ['short wq', 'multiHeadAttention', { ...MULTI_HEAD, wq: new Float32Array(15) }, RangeError, /wq must be of length dModel\*dModel = 4\*4 = 16, got length 15/],
  ['short x', 'multiHeadAttention', { ...MULTI_HEAD, x: new Float32Array(11) }, RangeError, /x must be of length n\*dModel = 3\*4 = 12, got length 11/],
  ['NaN in x', 'multiHeadAttention', { ...MULTI_HEAD, x: withNaN(MULTI_HEAD.x, 5) }, RangeError, /x must be finite \(no NaN or Infinity\), got x\[5\] = NaN/],
  // The matrices' finiteness is read from the core's packing (after the layer ran), still in argument order and
  // before the magnitude bounds.
  ['NaN in wv', 'multiHeadAttention', { ...MULTI_HEAD, wv: withNaN(MULTI_HEAD.wv, 9) }, RangeError, /wv must be finite \(no NaN or Infinity\), got wv\[9\] = NaN/],
  ['-Infinity in wo', 'multiHeadAttention', { ...CROSS, wo: withValue(MULTI_HEAD.wo, 15, -Infinity) }, RangeError, /wo must be finite \(no NaN or Infinity\), got wo\[15\] = -Infinity/],
  ['NaN in wk and in bq', 'multiHeadAttention', { ...MULTI_HEAD, wk: withNaN(MULTI_HEAD.wk, 0), bq: new Float32Array([0, NaN, 0, 0]) }, RangeError, /wk must be finite \(no NaN or Infinity\), got wk\[0\] = NaN/],
  ['NaN in x and in wq', 'multiHeadAttention', { ...MULTI_HEAD, x: withNaN(MULTI_HEAD.x, 2), wq: withNaN(MULTI_HEAD.wq, 3) }, RangeError, /x must be finite \(no NaN or Infinity\), got x\[2\] = NaN/],
  ['Infinity in wq, huge x', 'multiHeadAttention', { ...MULTI_HEAD, x: withValue(MULTI_HEAD.x, 0, 1e38), wq: withValue(MULTI_HEAD.wq, 4, Infinity) }, RangeError, /wq must be finite \(no NaN or Infinity\), got wq\[4\] = Infinity/],
  ['huge wv', 'multiHeadAttention', { ...MULTI_HEAD, wv: withValue(MULTI_HEAD.wv, 0, 1e38) }, RangeError, /x, wv and bv are too large for float32 arithmetic: dModel \* max\|x\| \* max\|wv\| \+ max\|bv\|/],
  ['short bias', 'multiHeadAttention', { ...MULTI_HEAD, bq: new Float32Array(3) }, RangeError, /bq must be of length dModel = 4, got length 3/],
  ['Infinity in bias', 'multiHeadAttention', { ...MULTI_HEAD, bo: new Float32Array([0, Infinity, 0, 0]) }, RangeError, /bo must be finite \(no NaN or Infinity\), got bo\[1\] = Infinity/],
  ['string wk', 'explainMatrices', { ...MATRICES, wk: 'wk' }, TypeError, /wk must be a Float32Array of length dModel\*dModel = 4\*4 = 16, got "wk"/],
  ['short optional wo', 'explainMatrices', { ...MATRICES, wo: new Float32Array(4) }, RangeError, /wo must be of length dModel\*dModel = 4\*4 = 16, got length 4/],
  ['context without nContext', 'multiHeadAttention', { ...CROSS, nContext: undefined }, TypeError, /nContext must be a positive integer \(it is required\), got undefined/],
  ['nContext without context', 'multiHeadAttention', { ...CROSS, context: undefined }, TypeError, /nContext was given without context/],
  ['short context', 'explainMatrices', { ...MATRICES, context: new Float32Array(7), nContext: 2 }, RangeError, /context must be of length nContext\*dModel = 2\*4 = 8, got length 7/],
  ['NaN in context', 'multiHeadAttention', { ...CROSS, context: withNaN(CROSS.context, 7) }, RangeError, /context must be finite \(no NaN or Infinity\), got context\[7\] = NaN/],
  // Masks and flags
  ['array mask', 'attention', { ...ATTENTION, keyMask: [1, 1, 1] }, TypeError, /keyMask must be a Uint8Array of length n = 3 \(1 = keep, 0 = mask\), got Array\(3\)/],
  ['Int8Array mask', 'attention', { ...ATTENTION, keyMask: new Int8Array(3) }, TypeError, /keyMask must be a Uint8Array of length n = 3.*got Int8Array\(3\)/],
  ['short mask', 'attention', { ...ATTENTION, keyMask: new Uint8Array(2) }, RangeError, /keyMask must be of length n = 3, got length 2/],
  ['self mask length', 'multiHeadAttention', { ...MULTI_HEAD, keyMask: new Uint8Array(2) }, RangeError, /keyMask must be of length n = 3, got length 2/],
  ['cross mask length', 'multiHeadAttention', { ...CROSS, keyMask: new Uint8Array(3) }, RangeError, /keyMask must be of length nContext = 2, got length 3/],
  ['string causal', 'attention', { ...ATTENTION, causal: 'yes' }, TypeError, /causal must be a boolean, got "yes"/],
  ['numeric causal', 'multiHeadAttention', { ...MULTI_HEAD, causal: 1 }, TypeError, /causal must be a boolean, got 1/],
  ['numeric identity', 'explainSentence', { ...SENTENCE, identity: 1 }, TypeError, /identity must be a boolean, got 1/],
  // Numbers: scale and temperature
  ['zero temperature', 'attention', { ...ATTENTION, temperature: 0 }, RangeError, /temperature must be a finite number greater than 0 that fits float32, got 0/],
  ['negative temperature', 'multiHeadAttention', { ...MULTI_HEAD, temperature: -1 }, RangeError, /temperature must be a finite number greater than 0 that fits float32, got -1/],
  ['NaN temperature', 'explainMatrices', { ...MATRICES, temperature: NaN }, RangeError, /temperature must be a finite number greater than 0 that fits float32, got NaN/],
  ['infinite temperature', 'explainSentence', { ...SENTENCE, temperature: Infinity }, RangeError, /temperature must be a finite number greater than 0 that fits float32, got Infinity/],
  ['temperature below float32', 'attention', { ...ATTENTION, temperature: 1e-46 }, RangeError, /temperature must be a finite number greater than 0 that fits float32, got 1e-46/],
  ['string temperature', 'attention', { ...ATTENTION, temperature: '1' }, TypeError, /temperature must be a finite number greater than 0, got "1"/],
  ['tiny temperature', 'attention', { ...ATTENTION, temperature: 1e-39 }, RangeError, /temperature must keep scale \/ temperature finite in float32, got scale = 0.5, temperature = 1e-39/],
  ['negative scale', 'attention', { ...ATTENTION, scale: -1 }, RangeError, /scale must be a finite number greater than 0 that fits float32, got -1/],
  ['zero scale', 'attention', { ...ATTENTION, scale: 0 }, RangeError, /scale must be a finite number greater than 0 that fits float32, got 0/],
  ['huge scale', 'attention', { ...ATTENTION, scale: 1e39 }, RangeError, /scale must be a finite number greater than 0 that fits float32, got 1e\+39/],
  // Magnitudes that would overflow float32 inside the arithmetic
  ['huge q', 'attention', { ...ATTENTION, q: withValue(ATTENTION.q, 0, 3e38) }, RangeError, /q and k are too large for float32 arithmetic: dk \* max\|q\| \* max\|k\| \* max\(1, scale \/ temperature\) must be at most 8\.51e\+37, got/],
  ['huge x', 'multiHeadAttention', { ...MULTI_HEAD, x: withValue(MULTI_HEAD.x, 0, 1e38) }, RangeError, /x, wq and bq are too large for float32 arithmetic: dModel \* max\|x\| \* max\|wq\| \+ max\|bq\|/],
  ['huge context', 'multiHeadAttention', { ...CROSS, context: withValue(CROSS.context, 0, 1e38) }, RangeError, /context, wk and bk are too large/],
  ['huge wo', 'explainMatrices', { ...MATRICES, wo: withValue(new Float32Array(16), 0, 3e38) }, RangeError, /the values, wo and bo are too large/],
  // Sizes beyond the 2 GiB WebAssembly memory
  ['attention too big', 'attention', { q: new Float32Array(40000), k: new Float32Array(40000), v: new Float32Array(40000), m: 40000, n: 40000, dk: 1, dv: 1 },
    RangeError, /attention: sizes \(m = 40000, n = 40000, dk = 1, dv = 1\) need about 5\.96\d GiB of WebAssembly memory, more than the .* available \(the module is limited to 2 GiB\)/],
  ['multi-head too big', 'multiHeadAttention', { x: new Float32Array(30000), n: 30000, dModel: 1, heads: 1, wq: new Float32Array(1), wk: new Float32Array(1), wv: new Float32Array(1), wo: new Float32Array(1) },
    RangeError, /multiHeadAttention: sizes \(n = 30000, nContext = 30000, dModel = 1, heads = 1\) need about .* GiB of WebAssembly memory/],
  ['explain too big', 'explainMatrices', { x: new Float32Array(16000), n: 16000, dModel: 1, wq: new Float32Array(1), wk: new Float32Array(1), wv: new Float32Array(1) },
    RangeError, /explainMatrices: sizes \(n = 16000, nContext = 16000, dModel = 1, heads = 1\) need about .* GiB/],
  ['sentence too big', 'explainSentence', { text: 'w '.repeat(1024), dModel: 1024, heads: 1024 },
    RangeError, /explainSentence: sizes \(tokens = 1024, context tokens = 1024, dModel = 1024, heads = 1024\) need about 12\.\d\d\d GiB/],
  // explainSentence options
  ['missing text', 'explainSentence', { dModel: 8 }, TypeError, /text must be a string, got undefined/],
  ['numeric text', 'explainSentence', { text: 42 }, TypeError, /text must be a string, got 42/],
  ['numeric context', 'explainSentence', { ...SENTENCE, context: 5 }, TypeError, /context must be a string or undefined, got 5/],
  ['zero dModel', 'explainSentence', { ...SENTENCE, dModel: 0 }, RangeError, /dModel must be an integer from 1 to 1024, got 0/],
  ['wide dModel', 'explainSentence', { ...SENTENCE, dModel: 2048 }, RangeError, /dModel must be an integer from 1 to 1024, got 2048/],
  ['sentence heads', 'explainSentence', { ...SENTENCE, dModel: 64, heads: 3 }, RangeError, /dModel must be divisible by heads, got dModel = 64, heads = 3/],
  ['negative seed', 'explainSentence', { ...SENTENCE, seed: -1 }, RangeError, /seed must be an integer from 0 to 4294967295, got -1/],
  ['2^32 seed', 'explainSentence', { ...SENTENCE, seed: 2 ** 32 }, RangeError, /seed must be an integer from 0 to 4294967295, got 4294967296/],
  ['string seed', 'explainSentence', { ...SENTENCE, seed: '7' }, TypeError, /seed must be an integer from 0 to 4294967295, got "7"/],
  ['unknown sentence option', 'explainSentence', { ...SENTENCE, model: 'gpt' }, TypeError, /unknown option "model"/],
];

function validResults(lens) {
  return [
    lens.attention(ATTENTION).weights,
    lens.multiHeadAttention(CROSS).output,
    lens.explainMatrices(MATRICES).scores,
    lens.explainSentence(SENTENCE).weights,
  ];
}

for (const lens of [simdLens, scalarLens]) {
  describe(`${lens.simd ? 'SIMD' : 'scalar'} module: bad input`, () => {
    const baseline = validResults(lens);
    const heapBefore = lens.heapBytesInUse();

    for (const [label, name, options, ErrorClass, pattern] of CASES) {
      test(`${label}: ${ErrorClass.name} from ${name}`, () => {
        assert.throws(() => lens[name](options), (error) => {
          assert.equal(error.constructor, ErrorClass, `${error.constructor.name}: ${error.message}`);
          assert.match(error.message, new RegExp(`^attnlens\\.${name}: `));
          assert.match(error.message, pattern);
          return true;
        });
        // The module keeps working and computes exactly what it did before.
        validResults(lens).forEach((result, i) => assertBitIdentical(result, baseline[i], `valid call ${i}`));
        assert.equal(lens.heapBytesInUse(), heapBefore);
      });
    }
  });
}

test('the largest allowed values still compute finite results', () => {
  // Just inside the magnitude bound: 4 * 9e18 * 2e18 * 0.5 = 7.2e37 <= 8.5e37.
  const q = new Float32Array(8).fill(9e18), k = new Float32Array(12).fill(2e18);
  for (const lens of [simdLens, scalarLens]) {
    const { output, weights } = lens.attention({ ...ATTENTION, q, k });
    assert.ok(output.every(Number.isFinite) && weights.every(Number.isFinite));
    for (let i = 0; i < 6; i++) assert.ok(Math.abs(weights[i] - 1 / 3) < 1e-6);
  }
});
