// Loading in chunks: loadModel stages each tensor a few megabytes of rows at
// a time (ModelHandle.loadTensor with firstRow / rows). With a tiny chunk
// size every matrix of a tiny checkpoint spans many chunks, including chunks
// that start inside a packed panel; the model must run bit for bit as one
// loaded a tensor at a time, and a bad value in a later chunk must name the
// tensor and leave no memory behind.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { architectures, dtypes, tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { writeSafetensors } from '../support/safetensors.mjs';
import { assertBitIdentical, ensureWasmBuilt } from './helpers.mjs';

ensureWasmBuilt();
const { loadModel } = await import('../../web/lib/model/load-model.js');
const { readModelConfig } = await import('../../web/lib/model/config.js');

// The Embind modules themselves (loadModel's first argument; the public
// lens.loadModel always uses the default chunk size).
async function instantiate(variant) {
  const { default: createModule } = await import(`../../web/lib/wasm/attnlens-${variant}.mjs`);
  const wasmBinary = readFileSync(new URL(`../../web/lib/wasm/attnlens-${variant}.wasm`, import.meta.url));
  return createModule({ wasmBinary });
}
const modules = { simd: await instantiate('simd'), scalar: await instantiate('scalar') };

const ids = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5];

// Chunk sizes in bytes: one row per chunk; a few rows (fewer than a panel, so
// chunks start inside panels); 16-row aligned chunks of the widest rows.
const chunkSizes = [1, 300, 16 * 4 * 128];

function runAll(model) {
  const { attention, hidden, logits } = model.run({ ids });
  return { attention, hidden, logits };
}

for (const variant of Object.keys(modules)) {
  for (const arch of architectures) {
    test(`${variant} / ${arch}: a load in chunks runs bit for bit as a load of whole tensors`, async () => {
      const module = modules[variant];
      const heapAtStart = module.heapBytesInUse();
      for (const dtype of dtypes) {
        const checkpoint = tinyCheckpoint({ arch, dtype, seed: 21 });
        const options = { config: checkpoint.config, weights: checkpoint.files['model.safetensors'] };
        const whole = await loadModel(module, options);
        // Measured before any run: a run leaves the model's incremental cache.
        const weightBytes = module.heapBytesInUse();
        const expected = runAll(whole);
        whole.dispose();
        for (const chunkBytes of chunkSizes) {
          const label = `${dtype}, chunks of ${chunkBytes} bytes`;
          const events = [];
          const model = await loadModel(module, { ...options, onProgress: (event) => events.push(event) }, { chunkBytes });
          try {
            // No more memory than a whole load: any buffer kept would add a
            // malloc chunk (16 bytes at least). dlmalloc hands out a whole free
            // chunk when splitting it would leave less than its 16-byte minimum,
            // so where the loads' temporary buffers left holes can make the
            // whole load's total 8 bytes larger, never the chunked one's.
            const chunkedBytes = module.heapBytesInUse();
            assert.ok(chunkedBytes <= weightBytes && weightBytes - chunkedBytes < 16,
              `${label}: the same memory as a whole load (${chunkedBytes} bytes, whole ${weightBytes})`);
            const actual = runAll(model);
            assertBitIdentical(actual.attention, expected.attention, `${label} attention`);
            assertBitIdentical(actual.hidden, expected.hidden, `${label} hidden`);
            if (expected.logits === null) assert.equal(actual.logits, null);
            else assertBitIdentical(actual.logits, expected.logits, `${label} logits`);
            // Progress still counts tensors, once each, then 'done'.
            const total = events[0].total;
            assert.deepEqual(events.map((event) => event.done), [...Array.from({ length: total }, (_, i) => i + 1), total]);
            assert.equal(events.at(-1).phase, 'done');
          } finally {
            model.dispose();
          }
        }
      }
      assert.equal(module.heapBytesInUse(), heapAtStart, 'memory left allocated after dispose');
    });
  }
}

test('a value that is not finite in a later chunk names the tensor and its index, and frees everything', async () => {
  const module = modules.simd;
  for (const dtype of ['F32', 'BF16']) {
    const checkpoint = tinyCheckpoint({ arch: 'gpt2', dtype, seed: 22 });
    const { n_embd: d, vocab_size: vocab } = checkpoint.config;
    // The last value of the embedding (an [out, in] tensor: packed panel
    // columns) and one in the middle of a Conv1D [in, out] matrix.
    for (const [canonical, rows, cols, row, col] of [
      ['wte.weight', vocab, d, vocab - 1, d - 1],
      ['h.1.mlp.c_fc.weight', d, 4 * d, Math.floor(d / 2) + 1, 7],
    ]) {
      const hubName = checkpoint.hubNames[canonical];
      const entries = checkpoint.entries.map((entry) => {
        if (entry.name !== hubName) return entry;
        const values = Float64Array.from(entry.values);
        values[row * cols + col] = NaN;
        return { ...entry, values };
      });
      const weights = writeSafetensors(entries);
      const before = module.heapBytesInUse();
      const index = row * cols + col;
      await assert.rejects(loadModel(module, { config: checkpoint.config, weights }, { chunkBytes: 64 }), (error) => {
        assert.ok(error instanceof RangeError, `${error.constructor.name}: ${error.message}`);
        assert.match(error.message, new RegExp(`^attnlens\\.loadModel: tensor "${hubName.replace(/\./g, '\\.')}": `));
        assert.match(error.message, new RegExp(`tensor "${canonical.replace(/\./g, '\\.')}" holds a value that is not finite`));
        assert.match(error.message, new RegExp(`index ${index} \\(element \\[${row}, ${col}\\] of \\[${rows}, ${cols}\\]\\)`));
        return true;
      });
      assert.equal(module.heapBytesInUse(), before, `${dtype} ${canonical}: a failed chunked load left memory allocated`);
    }
  }
});

test('ModelHandle.loadTensor refuses chunks out of order, and finish() a tensor with rows missing', async () => {
  const module = modules.simd;
  const checkpoint = tinyCheckpoint({ arch: 'gpt2', dtype: 'F32', seed: 23 });
  const before = module.heapBytesInUse();
  const { core: config } = readModelConfig(checkpoint.config);
  const core = { dModel: config.modelWidth, vocabSize: config.vocabSize };
  const handle = new module.ModelHandle(config);
  assert.equal(handle.plan().error, undefined);
  const d = core.dModel;
  const data = module._malloc(4 * d * 4);
  try {
    module.HEAPF32.fill(0.5, data >>> 2, (data >>> 2) + 4 * d);
    const load = (firstRow, rows) =>
      handle.loadTensor({ name: 'wte.weight', dtype: 'F32', data, count: rows * d, firstRow, rows });
    assert.equal(load(0, 4), '');
    assert.match(load(8, 4), /"wte\.weight": rows \[8, 12\) arrive before rows \[4, 8\)/);
    assert.equal(load(0, 4), '');
    assert.match(load(0, 4), /rows \[0, 4\) arrive twice/);
    assert.match(load(core.vocabSize - 2, 4), /past the end/);
    assert.equal(load(0, 4), '');
    assert.equal(load(4, 4), '');
    assert.match(handle.finish(), new RegExp(`wte\\.weight \\(rows \\[8, ${core.vocabSize}\\) did not arrive\\)`));
  } finally {
    module._free(data);
    handle.delete();
  }
  assert.equal(module.heapBytesInUse(), before, 'memory left allocated after delete');
});
