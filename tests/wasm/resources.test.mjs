// Resources and determinism: no WebAssembly heap leak over 10,000 calls,
// bit-identical results for repeated calls.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { assertBitIdentical, loadBoth } from './helpers.mjs';
import { seededRandom } from './reference.mjs';

const [simdLens, scalarLens] = await loadBoth();

function randomCall(random) {
  const kind = random.integer(0, 9);
  if (kind < 5) {
    const m = random.integer(1, 12), n = random.integer(1, 12), dk = random.integer(1, 9), dv = random.integer(1, 9);
    return ['attention', { q: random.floats(m * dk), k: random.floats(n * dk), v: random.floats(n * dv), m, n, dk, dv,
      causal: random.next() < 0.5, keyMask: random.next() < 0.3 ? random.mask(n) : undefined }];
  }
  const heads = random.integer(1, 3), dModel = heads * random.integer(1, 4), n = random.integer(1, 8);
  const options = { x: random.floats(n * dModel), n, dModel, heads, wq: random.floats(dModel ** 2), wk: random.floats(dModel ** 2),
    wv: random.floats(dModel ** 2), wo: random.floats(dModel ** 2), bq: random.next() < 0.5 ? random.floats(dModel) : undefined };
  if (random.next() < 0.5) {
    options.nContext = random.integer(1, 8);
    options.context = random.floats(options.nContext * dModel);
  }
  if (kind < 8) return ['multiHeadAttention', options];
  if (kind < 9) return ['explainMatrices', options];
  return ['explainSentence', { text: random.pick(['a b c', 'the cat sat', 'hello, world!', 'x']), dModel: dModel, heads, causal: random.next() < 0.5 }];
}

test('the heap meter sees allocations (so an unchanged reading means no leak)', async () => {
  // The raw Embind module, not the public API: only here do we allocate by hand.
  const { default: createModule } = await import('../../web/lib/wasm/attnlens-simd.mjs');
  const wasmBinary = await readFile(new URL('../../web/lib/wasm/attnlens-simd.wasm', import.meta.url));
  const module = await createModule({ wasmBinary });
  const before = module.heapBytesInUse();
  const pointer = module._malloc(4096);
  assert.ok(module.heapBytesInUse() >= before + 4096);
  module._free(pointer);
  assert.equal(module.heapBytesInUse(), before);
});

for (const lens of [simdLens, scalarLens]) {
  describe(`${lens.simd ? 'SIMD' : 'scalar'} module: resources`, () => {
    test('10,000 random valid calls (and some failing ones) leave the heap where it started', () => {
      const random = seededRandom(lens.simd ? 41 : 42);
      const before = lens.heapBytesInUse();
      let failures = 0;
      for (let i = 0; i < 10_000; i++) {
        const [name, options] = randomCall(random);
        lens[name](options);
        if (i % 500 === 0) {
          // Error paths: text tokenized in WASM memory, then refused; the allocation budget.
          assert.throws(() => lens.explainSentence({ text: 'word '.repeat(1100) }), RangeError);
          assert.throws(() => lens.attention({ q: new Float32Array(1e5), k: new Float32Array(1e5), v: new Float32Array(1e5), m: 1e5, n: 1e5, dk: 1, dv: 1 }), RangeError);
          failures += 2;
        }
      }
      assert.equal(failures, 40);
      assert.equal(lens.heapBytesInUse(), before);
    });

    test('repeated calls give bit-identical results', () => {
      const random = seededRandom(43);
      for (let i = 0; i < 50; i++) {
        const [name, options] = randomCall(random);
        const first = lens[name](options), second = lens[name](options);
        for (const key of ['output', 'weights']) assertBitIdentical(first[key], second[key], `${name} ${key}`);
      }
      const large = { text: 'Bit for bit, the same answer every time you ask the same question.', dModel: 96, heads: 6 };
      const a = lens.explainSentence(large), b = lens.explainSentence(large);
      for (const key of ['q', 'scores', 'scaledScores', 'weights', 'concatenatedHeads', 'output']) assertBitIdentical(a[key], b[key], key);
    });

    test('inputs are not modified and outputs are fresh arrays', () => {
      const random = seededRandom(44);
      const options = { q: random.floats(12), k: random.floats(12), v: random.floats(12), m: 3, n: 3, dk: 4, dv: 4 };
      const copies = Object.fromEntries(['q', 'k', 'v'].map((name) => [name, options[name].slice()]));
      const first = lens.attention(options);
      for (const name of ['q', 'k', 'v']) assertBitIdentical(options[name], copies[name], name);
      first.weights.fill(0);
      const second = lens.attention(options);
      assert.ok(second.weights.some((value) => value !== 0));
      assert.notEqual(second.weights.buffer, first.weights.buffer);
    });
  });
}
