// What JavaScript asks the module instead of writing the core's constants
// down again: its limits (memory, panel width, safetensors header size), the
// memory a run or an explain needs, and the header checks that now live in
// the core's one reader (nlohmann/json). Each bad header gets a clear error,
// leaves no memory behind, and the module keeps working.
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
  }
  // Panels of 16 columns with SIMD (4 batches of 4 floats), of the scalar kernels' width without.
  assert.equal(modules.simd.limits().panelWidth, 16);
  assert.equal(modules.scalar.limits().panelWidth, Number(scalarPanelWidth));
});

// Writes a safetensors file whose header is exactly `json`, over `dataBytes` zero bytes.
function fileWithHeader(json, dataBytes = 96) {
  const header = new TextEncoder().encode(json);
  const file = new Uint8Array(8 + header.length + dataBytes);
  new DataView(file.buffer).setBigUint64(0, BigInt(header.length), true);
  file.set(header, 8);
  return file;
}

const entry = (offsets = '[0,96]') => `{"dtype":"F32","shape":[2,12],"data_offsets":${offsets}}`;

// Each header, and what its error must say.
const badHeaders = [
  ['a duplicate tensor name', `{"a":${entry()},"a":${entry()}}`, /duplicate tensor name "a"/],
  ['a duplicate key in an entry', '{"a":{"dtype":"F32","dtype":"F16","shape":[2,12],"data_offsets":[0,96]}}',
    /tensor "a": duplicate key "dtype"/],
  ['a duplicate metadata key', '{"__metadata__":{"k":"1","k":"2"}}', /__metadata__ has the key "k" twice/],
  ['__metadata__ twice', '{"__metadata__":{},"__metadata__":{}}', /__metadata__ twice/],
  ['not JSON', '{"a": oops}', /not valid JSON: .*invalid literal.* at byte 6/],
  ['a trailing comma', `{"a":${entry()},}`, /not valid JSON: .*expected string literal at byte \d+/],
  ['a lone surrogate', `{"\\ud800":${entry()}}`, /not valid JSON: .*surrogate/],
  ['not an object', '[1, 2]', /not a JSON object/],
  ['deep nesting', `{"a":{"x":${'['.repeat(5000)}${']'.repeat(5000)}}}`, /nesting deeper than 8 levels/],
  ['a fraction as a size', '{"a":{"dtype":"F32","shape":[2.0,12],"data_offsets":[0,96]}}',
    /tensor "a": expected an integer, found 2\.0/],
  ['a size past 2^53', '{"a":{"dtype":"F32","shape":[9007199254740993],"data_offsets":[0,96]}}',
    /shape dimension 9007199254740993 is too large/],
  ['an unknown dtype', '{"a":{"dtype":"F12","shape":[2,12],"data_offsets":[0,96]}}', /unknown dtype "F12"/],
  ['offsets past the data', `{"a":${entry('[8,104]')}}`, /reach past the end of the data \(96 bytes\)/],
  ['reversed offsets', `{"a":${entry('[96,0]')}}`, /end before they begin/],
  ['a shape that disagrees with its bytes', `{"a":${entry('[0,48]')}}`, /needs 96 bytes, but data_offsets \[0, 48\] hold 48/],
];

for (const [what, json, message] of badHeaders) {
  test(`a header with ${what} is refused clearly, and nothing stays allocated`, async () => {
    const before = lens.heapBytesInUse();
    await assert.rejects(lens.loadModel({ config: sort.config, weights: fileWithHeader(json) }), (error) => {
      assert.ok(error instanceof RangeError, error.message);
      assert.match(error.message, /^attnlens\.loadModel: weights has a bad safetensors header: /);
      assert.match(error.message, message);
      return true;
    });
    assert.equal(lens.heapBytesInUse(), before);
  });
}

test('a header over the limit is refused before it is copied; the core refuses it too', async () => {
  const limit = 100_000_000;
  const file = new Uint8Array(8 + limit + 1);
  new DataView(file.buffer).setBigUint64(0, BigInt(limit + 1), true);
  const before = lens.heapBytesInUse();
  await assert.rejects(lens.loadModel({ config: sort.config, weights: file }),
    /weights has a header of 95\.4 MiB, more than the format's limit of 95\.4 MiB/);
  assert.equal(lens.heapBytesInUse(), before);
  // The core's own guard, asked directly: it looks at the size before any byte.
  const module = await instantiate('simd');
  const header = module._malloc(16);
  try {
    assert.equal(module.parseSafetensorsHeader({ header, size: limit + 1, dataBytes: 0 }).error,
      'the safetensors header is 100000001 bytes; at most 100000000 are allowed');
    assert.equal(module.parseSafetensorsHeader({ header, size: 0, dataBytes: 0 }).error, 'the safetensors header is empty');
    assert.match(module.parseSafetensorsHeader({ header, size: 2, dataBytes: -1 }).error, /dataBytes must be a whole number/);
  } finally {
    module._free(header);
  }
});

test('the module keeps working after every bad header', async () => {
  const model = await lens.loadModel(sort);
  try {
    assert.equal(model.run({ ids: [2, 1, 0] }).n, 3);
  } finally {
    model.dispose();
  }
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
      const match = error.message.match(/^model\.run: 40000 tokens need about ([\d.]+) GiB of WebAssembly memory, more than the .* available; use fewer tokens$/);
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

after(() => assert.equal(lens.heapBytesInUse(), heapAtStart, 'the tests left memory allocated'));
