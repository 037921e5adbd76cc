// lens.attention({ ..., weights: false }): the output-only (online softmax,
// flash-style) path of the core through the public API.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadBoth } from './helpers.mjs';
import { attentionReference, seededRandom } from './reference.mjs';

const lenses = await loadBoth();

function maxDifference(a, b) {
  let worst = 0;
  for (let i = 0; i < b.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

function maxMagnitude(values) {
  return values.reduce((max, x) => Math.max(max, Math.abs(x)), 0);
}

// max |a - b| / max |b|: the relative error measure of the benchmarks.
function relativeDifference(actual, expected) {
  return maxDifference(actual, expected) / maxMagnitude(expected);
}

// Output row i of causal attention (queries = keys = the same n positions), in doubles.
function causalOutputRow({ q, k, v, d }, i) {
  const scores = [];
  for (let j = 0; j <= i; j++) {
    let sum = 0;
    for (let p = 0; p < d; p++) sum += q[i * d + p] * k[j * d + p];
    scores.push(sum / Math.sqrt(d));
  }
  const max = Math.max(...scores);
  const exps = scores.map((s) => Math.exp(s - max));
  const total = exps.reduce((a, b) => a + b, 0);
  const row = new Float64Array(d);
  for (let j = 0; j <= i; j++) for (let p = 0; p < d; p++) row[p] += (exps[j] / total) * v[j * d + p];
  return row;
}

for (const lens of lenses) {
  describe(`${lens.simd ? 'SIMD' : 'scalar'} module: attention with weights: false`, () => {
    test('the output equals the weights path within 1e-6 relative; weights is null', () => {
      const random = seededRandom(lens.simd ? 61 : 62);
      // Shapes cross the key blocks of the online softmax (256 keys in wasm)
      // and the panel and query-block edges; masks hide keys inside and
      // across blocks, and one mask hides every key of a block.
      const cases = [
        { heads: 1, m: 5, n: 7, dk: 4, dv: 6 },
        { heads: 3, m: 40, n: 600, dk: 16, dv: 20, causal: true },
        { heads: 2, m: 70, n: 515, dk: 64, dv: 64, temperature: 0.5, keyMask: (n) => Uint8Array.from({ length: n }, (_, j) => (j < 300 ? 0 : j % 3)) },
        { heads: 1, m: 600, n: 300, dk: 8, dv: 40, causal: true, scale: 0.9, keyMask: (n) => random.mask(n) },
      ];
      for (const { keyMask, ...shape } of cases) {
        const { heads, m, n, dk, dv } = shape;
        const options = {
          ...shape, keyMask: keyMask?.(n),
          q: random.floats(heads * m * dk), k: random.floats(heads * n * dk), v: random.floats(heads * n * dv),
        };
        const full = lens.attention(options);
        const outputOnly = lens.attention({ ...options, weights: false });
        assert.equal(outputOnly.weights, null);
        assert.equal(outputOnly.output.length, heads * m * dv);
        // Each output row is a weighted average of v rows, so max|v| is its
        // scale: the two paths, which sum in different orders, agree to float
        // rounding of that. (Relative to max|output|, which averaging makes
        // small, even the weights path is 1-2e-6 from the double reference.)
        const difference = maxDifference(outputOnly.output, full.output) / maxMagnitude(options.v);
        assert.ok(difference <= 1e-6, `${JSON.stringify(shape)}: difference / max|v| = ${difference}`);
        for (let h = 0; h < heads; h++) {
          const expected = attentionReference({
            ...options, q: options.q.subarray(h * m * dk, (h + 1) * m * dk), k: options.k.subarray(h * n * dk, (h + 1) * n * dk),
            v: options.v.subarray(h * n * dv, (h + 1) * n * dv),
          }).output;
          const error = relativeDifference(outputOnly.output.subarray(h * m * dv, (h + 1) * m * dv), expected);
          assert.ok(error <= 1e-5, `${JSON.stringify(shape)}, head ${h}: relative error vs double ${error}`);
        }
        // weights: true is the default.
        assert.equal(lens.attention({ ...options, weights: true }).weights.length, heads * m * n);
      }
    });

    test('a query whose keys are all masked gets a zero row, as with weights', () => {
      const random = seededRandom(63);
      const m = 3, n = 300, d = 4;
      const options = { q: random.floats(m * d), k: random.floats(n * d), v: random.floats(n * d), m, n, dk: d, dv: d };
      const result = lens.attention({ ...options, keyMask: new Uint8Array(n), weights: false });
      assert.deepEqual(Array.from(result.output), new Array(m * d).fill(0));
    });

    test('weights must be a boolean; the module keeps working', () => {
      const random = seededRandom(64);
      const options = { q: random.floats(8), k: random.floats(8), v: random.floats(8), m: 2, n: 2, dk: 4, dv: 4 };
      assert.throws(() => lens.attention({ ...options, weights: 'no' }),
        { name: 'TypeError', message: 'attnlens.attention: weights must be a boolean, got "no"' });
      assert.throws(() => lens.attention({ ...options, weights: 0 }),
        { name: 'TypeError', message: 'attnlens.attention: weights must be a boolean, got 0' });
      assert.equal(lens.attention({ ...options, weights: false }).output.length, 8);
    });
  });
}

test('the memory check counts the padded panels of V, as wide as the module packs them', async () => {
  // The SIMD modules pack V in panels of 16 columns, the scalar one in
  // panels of 8: with dv = 1, V takes 16 (or 8) floats per key. At 27M keys
  // (SIMD) inputs, weights, mask and K^T are 0.46 GB and V's panels 1.73 GB;
  // at 45M keys (scalar) 0.77 GB and 1.44 GB. Counting V as n*dv floats
  // would accept either call, and the core would run out of memory.
  const cases = [{ lens: lenses[0], n: 27_000_000, gib: /2\.0\d\d GiB/ },
    { lens: lenses[1], n: 45_000_000, gib: /2\.0\d\d GiB/ }];
  for (const { lens, n, gib } of cases) {
    const zeros = new Float32Array(n);
    assert.throws(() => lens.attention({ q: zeros.subarray(0, 1), k: zeros, v: zeros, m: 1, n, dk: 1, dv: 1 }),
      (error) => error instanceof RangeError &&
        error.message.startsWith(`attnlens.attention: sizes (m = 1, n = ${n}, dk = 1, dv = 1) need about `) &&
        gib.test(error.message));
  }
});

describe('SIMD module: output only where the weights would not fit in 2 GiB', () => {
  const lens = lenses[0];
  // 30000 x 30000 weights are 3.6 GB; the output-only call needs about 4 MB.
  // Causal halves the work (about 15 GFLOP); d = 8 keeps the inputs small.
  const n = 30000, d = 8;
  const random = seededRandom(65);
  const inputs = { q: random.floats(n * d), k: random.floats(n * d), v: random.floats(n * d), m: n, n, dk: d, dv: d, causal: true };

  test('with weights the call is refused for memory, naming the sizes', () => {
    assert.throws(() => lens.attention(inputs),
      { name: 'RangeError', message: /^attnlens\.attention: sizes \(m = 30000, n = 30000, dk = 8, dv = 8\) need about 3\.3\d\d GiB/ });
  });

  test('without weights it runs, matches the double reference on sampled rows, and frees everything', () => {
    const before = lens.heapBytesInUse();
    const { output, weights } = lens.attention({ ...inputs, weights: false });
    assert.equal(weights, null);
    assert.equal(lens.heapBytesInUse(), before);
    assert.equal(output.length, n * d);
    // Rows across key blocks, including the last (sees all 30000 keys).
    for (const i of [0, 1, 255, 256, 4097, 17000, n - 1]) {
      const expected = causalOutputRow({ ...inputs, d }, i);
      const row = output.subarray(i * d, (i + 1) * d);
      const difference = relativeDifference(row, expected);
      assert.ok(difference <= 1e-5, `row ${i}: relative difference ${difference}`);
    }
  });
});
