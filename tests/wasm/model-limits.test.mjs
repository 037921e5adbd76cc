// What JavaScript asks the module instead of writing the core's constants
// down again: its limits (memory, panel width, safetensors header size and
// nesting) and the memory a run or an explain needs; both sides' checks of
// the header limit.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { ensureWasmBuilt, load, repoRoot } from './helpers.mjs';

ensureWasmBuilt();
const lens = await load();
const heapAtStart = lens.heapBytesInUse();
const folder = `${repoRoot}../shared/models/sort-gpt2`;
const sort = {
  config: JSON.parse(readFileSync(`${folder}/config.json`, 'utf8')),
  weights: new Uint8Array(readFileSync(`${folder}/model.safetensors`)),
};

async function instantiate(variant) {
  const { default: createModule } = await import(`../../web/lib/wasm/attnlens-${variant}.mjs`);
  const wasmBinary = readFileSync(new URL(`../../web/lib/wasm/attnlens-${variant}.wasm`, import.meta.url));
  return createModule({ wasmBinary });
}

// The build's own numbers, read from where they are set.
const cmake = readFileSync(`${repoRoot}CMakeLists.txt`, 'utf8');
const [, maximumGiB] = cmake.match(/-sMAXIMUM_MEMORY=(\d+)GB/);
const scalarKernels = readFileSync(`${repoRoot}src/kernels/scalar_kernels.hpp`, 'utf8');
const [, scalarPanelWidth] = scalarKernels.match(/constexpr std::size_t kPanelWidth = (\d+);/);

test("the module's limits are the build's", async () => {
  const modules = { simd: await instantiate('simd'), scalar: await instantiate('scalar') };
  for (const [variant, module] of Object.entries(modules)) {
    const limits = module.limits();
    assert.equal(limits.maxMemoryBytes, Number(maximumGiB) * 2 ** 30, variant);
    // safetensors refuses headers over 100 MB (its own MAX_HEADER_SIZE).
    assert.equal(limits.maxSafetensorsHeaderBytes, 100_000_000, variant);
    // A header needs 3 levels (header, entry, shape); the core allows 8.
    assert.equal(limits.maxSafetensorsNesting, 8, variant);
    // The weight types src/model/float16.hpp names.
    assert.deepEqual(limits.weightDtypes, ['F32', 'F16', 'BF16'], variant);
  }
  // Panels of 16 columns with SIMD (4 batches of 4 floats), of the scalar kernels' width without.
  assert.equal(modules.simd.limits().panelWidth, 16);
  assert.equal(modules.scalar.limits().panelWidth, Number(scalarPanelWidth));
});

test('a header over the limit is refused before it is read; the core refuses it too', async () => {
  const limit = 100_000_000;
  const file = new Uint8Array(8 + limit + 1);
  new DataView(file.buffer).setBigUint64(0, BigInt(limit + 1), true);
  const before = lens.heapBytesInUse();
  await assert.rejects(lens.loadModel({ config: sort.config, weights: file }),
    /weights has a header of 95\.4 MiB, more than the format's limit of 95\.4 MiB/);
  assert.equal(lens.heapBytesInUse(), before);
  // The core's own guard, asked directly.
  const module = await instantiate('simd');
  const table = (headerBytes, dataBytes, tensors = []) => module.checkSafetensorsTable({ headerBytes, dataBytes, tensors });
  assert.equal(table(limit + 1, 0), 'the safetensors header is 100000001 bytes; at most 100000000 are allowed');
  assert.equal(table(0, 0), 'the safetensors header is empty');
  assert.equal(table(limit, 0), '');
  assert.match(table(2, -1), /dataBytes must be a whole number/);
  assert.match(table(2, 0, 'nope'), /tensors must be an array/);
  assert.match(table(2, 0, [{ name: 'a', dtype: 'F32', shape: ['2'], begin: 0, end: 8 }]), /tensors\[0\] must be/);
  assert.equal(table(2, 8, [{ name: 'a', dtype: 'F32', shape: [2], begin: 0, end: 8 }]), '');
});

test("a run's and an explain's memory come from the core, and a run that would not fit is refused", async () => {
  // Llama has no position table, so a long context costs no weights.
  const checkpoint = tinyCheckpoint({ arch: 'llama', dtype: 'F32', seed: 3 });
  const config = { ...checkpoint.config, max_position_embeddings: 50000 };
  const model = await lens.loadModel({ config, weights: checkpoint.files['model.safetensors'] });
  try {
    const { layers, heads, dModel, vocabSize } = model.info;
    const n = 40000;
    const ids = new Int32Array(n).fill(1);
    // An independent lower bound: the outputs, and the residual stream and
    // its normalized copy the core keeps per token.
    const outputs = 4 * (layers * heads * n * n + n * dModel + n * vocabSize);
    const atLeast = outputs + 4 * 2 * n * dModel;
    assert.throws(() => model.run({ ids }), (error) => {
      assert.ok(error instanceof RangeError);
      const match = error.message.match(/^model\.run: 40000 tokens need about ([\d.]+) GiB of WebAssembly memory \([\d.]+ MiB of it for the queries, keys and values the model keeps\), more than the .* available; use fewer tokens$/);
      assert.ok(match, error.message);
      assert.ok(Number(match[1]) * 2 ** 30 >= atLeast * 0.999, `${match[1]} GiB < ${atLeast} bytes`);
      return true;
    });
    assert.throws(() => model.explain({ ids }), /model\.explain: 40000 tokens need about [\d.]+ GiB/);
    // Small runs still fit and compute.
    assert.equal(model.run({ ids: ids.subarray(0, 5) }).n, 5);
    assert.equal(model.explain({ ids: ids.subarray(0, 5), layer: 1 }).n, 5);
  } finally {
    model.dispose();
  }
});

// Issue 24: a run counts the growth of what the model keeps (queries, keys and values of every layer, the
// residual stream); when only the kept cache stands in the way it is dropped first, else the run is refused.
test('a run that would not fit beside the kept cache drops it first; one that would not fit at all is refused', async () => {
  const module = await instantiate('simd');
  const { loadModel } = await import('../../web/lib/model/load-model.js');
  const { availableMemory } = await import('../../web/lib/validation.js');
  const checkpoint = tinyCheckpoint({ arch: 'llama', dtype: 'F32', seed: 3 });
  const model = await loadModel(module, { config: { ...checkpoint.config, max_position_embeddings: 50000 }, weights: checkpoint.files['model.safetensors'] });
  // One block that leaves `leave` bytes available: what is left is the top of the memory, in one piece, since the
  // runs before allocated nothing big (a fresh run's n x n weights would leave a hole too big for the block).
  const filler = (leave) => {
    const pointer = module._malloc(availableMemory(module) - leave);
    assert.ok(pointer, 'the filler block');
    return { free: () => module._free(pointer) };
  };
  try {
    const { layers, heads, kvHeads, headWidth, dModel } = model.info;
    // Queries and keys headWidth floats a head, values headWidth rounded up to whole panels (the kept keys
    // and values are in the kernels' panel layout, README model.run).
    const { panelWidth } = module.limits();
    const valueWidth = Math.ceil(headWidth / panelWidth) * panelWidth;
    const perPosition = 4 * (layers * ((heads + kvHeads) * headWidth + kvHeads * valueWidth) + dModel);
    const n = 3000; // a kept cache of 2.6 MiB, and a fresh run's n x n weights per head that still fit
    const all = Int32Array.from({ length: 2 * n }, (_, i) => (i * 7) % model.info.vocabSize);
    const quiet = { attention: 'none', logits: 'none' };
    // The kept positions typed in steps: no run allocates more than 100 x n weights per head.
    let kept;
    for (let end = 100; end <= n; end += 100) kept = model.run({ ids: all.subarray(0, end), ...quiet }).cacheBytes;
    // The positions the kept blocks hold (5 bytes per id of the last run besides): the run one longer must grow them.
    const capacity = (kept - 5 * n) / perPosition;
    assert.ok(Number.isInteger(capacity) && capacity >= n, `${kept} bytes kept for ${n} positions`);
    const ids = all.subarray(0, capacity + 1);
    // Memory for nothing beyond a megabyte: refused, naming the kept cache's share.
    let fill = filler(2 ** 20);
    let needed;
    try {
      assert.throws(() => model.run({ ids, ...quiet }), (error) => {
        const match = error.message.match(/^model\.run: \d+ tokens need about ([\d.]+) MiB of WebAssembly memory \(([\d.]+) MiB of it for the queries, keys and values the model keeps\), more than the .* available; use fewer tokens$/);
        assert.ok(error instanceof RangeError && match, error.message);
        assert.ok(error.message.startsWith(`model.run: ${ids.length} tokens`), error.message);
        assert.ok(Math.abs(Number(match[2]) * 2 ** 20 - perPosition * ids.length) < 0.06 * 2 ** 20, `the cache's share: ${match[2]} MiB`);
        needed = Number(match[1]) * 2 ** 20;
        return true;
      });
    } finally {
      fill.free();
    }
    // Room for the run and a cache of capacity + 1 positions, but not beside the one kept (it grows by a quarter):
    // the run drops it, computes every position, and gives the numbers of a fresh run.
    fill = filler(needed + 0.1 * kept);
    let appended;
    try {
      appended = model.run({ ids, ...quiet });
    } finally {
      fill.free();
    }
    assert.equal(appended.reusedPositions, 0, 'the kept cache was dropped first');
    model.dropCache();
    assert.deepEqual(appended.hidden, model.run({ ids, ...quiet }).hidden);
    // With room, the same append reuses the kept positions.
    for (let end = 100; end <= n; end += 100) model.run({ ids: all.subarray(0, end), ...quiet });
    assert.equal(model.run({ ids, ...quiet }).reusedPositions, n);
  } finally {
    model.dispose();
  }
});

test('the weight bytes the core gives before loading are what it holds after, for every storage', async () => {
  const module = await instantiate('simd');
  const { loadModel } = await import('../../web/lib/model/load-model.js');
  const { readModelConfig } = await import('../../web/lib/model/config.js');
  const { readSafetensors } = await import('../../web/lib/model/safetensors.js');
  const { canonicalTensorName } = await import('../../web/lib/model/tensor-names.js');
  for (const arch of ['gpt2', 'bert', 'llama']) {
    for (const dtype of ['F32', 'BF16']) {
      const checkpoint = tinyCheckpoint({ arch, dtype, seed: 5 });
      const weights = checkpoint.files['model.safetensors'];
      const { architecture, core } = readModelConfig(checkpoint.config);
      const inFile = new Map(readSafetensors(module, weights, 'weights').tensors
        .map((tensor) => [canonicalTensorName(architecture, tensor.name), tensor.dtype]));
      for (const weightStorage of ['float32', 'as-stored']) {
        const model = await loadModel(module, { config: checkpoint.config, weights, weightStorage });
        const keep16Bit = weightStorage === 'as-stored';
        const handle = new module.ModelHandle({ ...core, keep16Bit });
        try {
          const loaded = handle.plan().tensors
            .filter(({ name }) => inFile.has(name) && !(name === 'lm_head.weight' && model.info.tiedLmHead))
            .map(({ name }) => ({ name, dtype: inFile.get(name) }));
          assert.equal(handle.storedBytes(loaded, keep16Bit), model.info.weightBytes, `${arch} ${dtype} ${weightStorage}`);
          assert.equal(handle.storedBytes([{ name: 'nonsense', dtype: 'F32' }], false), Infinity);
          assert.equal(handle.storedBytes([null], false), Infinity);
        } finally {
          handle.delete();
          model.dispose();
        }
      }
    }
  }
});

after(() => assert.equal(lens.heapBytesInUse(), heapAtStart, 'the tests left memory allocated'));
