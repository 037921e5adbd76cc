// loadModel's weightStorage: an F16 or BF16 checkpoint's matrices kept at
// 16 bits ('as-stored') give the very bits of the same file converted to
// float32 at load, in every module, for every architecture (sharded files
// and a tied LM head included), in about half the WebAssembly memory; 'auto'
// keeps float32 when it fits; bad values are refused by name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { architectures, tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { loadBoth } from './helpers.mjs';

const [simdLens, scalarLens] = await loadBoth();
const lenses = { [simdLens.simdLevel]: simdLens, scalar: scalarLens };

function sameBits(actual, expected, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const b = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  const differing = a.findIndex((bits, i) => bits !== b[i]);
  assert.equal(differing, -1, `${what}: first differing float at ${differing}`);
}

for (const [level, lens] of Object.entries(lenses)) {
  for (const arch of architectures) {
    for (const dtype of ['F16', 'BF16']) {
      test(`${level}: ${arch} ${dtype} kept at 16 bits gives the bits of float32, in about half the bytes`, async () => {
        // Wide enough (d_model 48, MLP 192) that the matrices are most of the bytes.
        const checkpoint = tinyCheckpoint({ arch, dtype, seed: 21, shards: arch === 'llama' });
        const weights = checkpoint.shards ?? checkpoint.files['model.safetensors'];
        const config = checkpoint.files['config.json'];
        const wide = await lens.loadModel({ config, weights, weightStorage: 'float32' });
        const narrow = await lens.loadModel({ config, weights, weightStorage: 'as-stored' });
        try {
          assert.equal(wide.info.weightStorage, 'float32');
          assert.equal(narrow.info.weightStorage, '16-bit');
          assert.ok(narrow.info.weightBytes < 0.7 * wide.info.weightBytes,
            `${narrow.info.weightBytes} bytes at 16 bits against ${wide.info.weightBytes} as float32`);
          const ids = Int32Array.from({ length: 9 }, (_, i) => (i * 7 + 3) % wide.info.vocabSize);
          const expected = wide.run({ ids }), actual = narrow.run({ ids });
          sameBits(actual.attention, expected.attention, 'attention');
          sameBits(actual.hidden, expected.hidden, 'hidden');
          if (expected.logits) sameBits(actual.logits, expected.logits, 'logits');
          const wideTrace = wide.explain({ ids, layer: 1 }), narrowTrace = narrow.explain({ ids, layer: 1 });
          for (const step of ['wq', 'wo', 'weights', 'layerOutput']) sameBits(narrowTrace[step], wideTrace[step], step);
        } finally {
          wide.dispose();
          narrow.dispose();
        }
      });
    }
  }

  test(`${level}: 'auto' keeps float32 when it fits; an F32 file is float32 whatever is asked`, async () => {
    const f16 = tinyCheckpoint({ arch: 'gpt2', dtype: 'F16', seed: 22 });
    const auto = await lens.loadModel({ config: f16.files['config.json'], weights: f16.files['model.safetensors'] });
    const f32 = tinyCheckpoint({ arch: 'gpt2', dtype: 'F32', seed: 22 });
    const asStored = await lens.loadModel({ config: f32.files['config.json'], weights: f32.files['model.safetensors'],
      weightStorage: 'as-stored' });
    try {
      assert.equal(auto.info.weightStorage, 'float32');
      assert.equal(asStored.info.weightStorage, 'float32');
    } finally {
      auto.dispose();
      asStored.dispose();
    }
  });

  test(`${level}: weightStorage must name a storage`, async () => {
    const checkpoint = tinyCheckpoint({ arch: 'gpt2', dtype: 'F16', seed: 23 });
    const heapBefore = lens.heapBytesInUse();
    await assert.rejects(
      lens.loadModel({ config: checkpoint.files['config.json'], weights: checkpoint.files['model.safetensors'], weightStorage: 'half' }),
      (error) => error instanceof TypeError && /weightStorage must be one of 'auto', 'float32', 'as-stored', got "half"/.test(error.message),
    );
    assert.equal(lens.heapBytesInUse(), heapBefore);
  });
}
