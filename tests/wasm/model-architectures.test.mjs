// Every architecture, in every dtype and every naming variant the hub's files
// use, against the independent float64 forward (tests/support/model-reference.mjs):
// tiny random checkpoints written by tests/support/tiny-checkpoints.mjs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { referenceForward } from '../support/model-reference.mjs';
import { architectures, checkpointVariants, tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertClose, loadBoth } from './helpers.mjs';
import { assertMatchesReference, idsFor } from './model-checks.mjs';

const [simdLens, scalarLens] = await loadBoth();

for (const { arch, naming, dtype } of checkpointVariants) {
  test(`${arch} / ${naming} / ${dtype}: run() matches the float64 forward`, async () => {
    const checkpoint = tinyCheckpoint({ arch, naming, dtype, seed: 11 });
    const { config } = checkpoint;
    const model = await simdLens.loadModel({ config: checkpoint.files['config.json'], weights: checkpoint.files['model.safetensors'] });
    try {
      assert.equal(model.info.architecture, arch);
      assert.equal(model.info.dtype, dtype);
      for (const [n, seed] of [[1, 1], [7, 2], [model.info.maxPositions, 3]]) {
        const ids = idsFor(model.info.vocabSize, n, seed);
        const actual = model.run({ ids });
        assert.equal(actual.attention.length, model.info.layers * model.info.heads * n * n);
        assertMatchesReference(actual, referenceForward(arch, config, checkpoint.tensors, ids), `n = ${n}`);
      }
    } finally {
      model.dispose();
    }
  });
}

for (const arch of architectures) {
  test(`${arch}: the scalar module computes the same model`, async () => {
    const checkpoint = tinyCheckpoint({ arch, dtype: 'F16', seed: 5 });
    const model = await scalarLens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
    try {
      const ids = idsFor(model.info.vocabSize, 9, 4);
      assertMatchesReference(model.run({ ids }), referenceForward(arch, checkpoint.config, checkpoint.tensors, ids), 'scalar');
    } finally {
      model.dispose();
    }
  });

  test(`${arch}: a sharded checkpoint loads as the single file does`, async () => {
    const checkpoint = tinyCheckpoint({ arch, dtype: 'BF16', seed: 6, shards: true });
    const single = await simdLens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
    const sharded = await simdLens.loadModel({ config: checkpoint.config, weights: checkpoint.shards.map((s) => s.buffer) });
    try {
      assert.deepEqual({ ...sharded.info, loadMs: 0 }, { ...single.info, loadMs: 0 });
      const ids = idsFor(single.info.vocabSize, 6, 9);
      const a = single.run({ ids }), b = sharded.run({ ids });
      assert.deepEqual(b.attention, a.attention);
      assert.deepEqual(b.hidden, a.hidden);
    } finally {
      single.dispose();
      sharded.dispose();
    }
  });

  test(`${arch}: explain() gives each layer's steps as the reference defines them, and run()'s weights`, async () => {
    const checkpoint = tinyCheckpoint({ arch, dtype: 'F32', seed: 8, naming: arch === 'llama' ? 'gqa' : undefined });
    const model = await simdLens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
    try {
      const ids = idsFor(model.info.vocabSize, 5, 12);
      const { layers, heads } = model.info;
      const run = model.run({ ids });
      const expected = referenceForward(arch, checkpoint.config, checkpoint.tensors, ids, { trace: true });
      for (let layer = 0; layer < layers; layer++) {
        const steps = model.explain({ ids, layer, head: heads - 1 });
        assert.equal(steps.layer, layer);
        assert.equal(steps.head, heads - 1);
        const perLayer = heads * 5 * 5;
        assert.deepEqual(steps.weights, run.attention.slice(layer * perLayer, (layer + 1) * perLayer),
          'explain() and run() give the same weights bit for bit');
        // The record carries the options it was computed with, and they agree with its numbers:
        // a causal model's weights above the diagonal are zero, an encoder's are not.
        assert.deepEqual([steps.causal, run.causal], [model.info.causal, model.info.causal]);
        assert.deepEqual({ temperature: steps.temperature, crossAttention: steps.crossAttention, architecture: steps.architecture,
          kvHeads: steps.kvHeads, keyMask: steps.keyMask },
        { temperature: 1, crossAttention: false, architecture: arch, kvHeads: model.info.kvHeads, keyMask: null });
        let above = 0;
        for (let index = 0; index < steps.weights.length; index++) {
          const query = Math.floor(index / 5) % 5, key = index % 5;
          if (key > query) above += steps.weights[index];
        }
        assert.equal(above === 0, model.info.causal, `layer ${layer}: weight above the diagonal ${above}`);
        const reference = expected.layers[layer];
        for (const name of ['x', 'wq', 'wk', 'wv', 'wo', 'q', 'k', 'v', 'scores', 'scaledScores', 'weights',
          'concatenatedHeads', 'output', 'layerOutput']) {
          assertClose(steps[name], reference[name], { atol: 2e-4, rtol: 2e-4, label: `layer ${layer} ${name}` });
        }
      }
    } finally {
      model.dispose();
    }
  });
}

test('bert: a padding key mask hides the masked keys from every query', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'bert', dtype: 'F32', seed: 3 });
  const model = await simdLens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
  try {
    const ids = idsFor(model.info.vocabSize, 6, 1);
    const keyMask = Uint8Array.from([1, 1, 1, 1, 0, 0]);
    const actual = model.run({ ids, keyMask });
    assertMatchesReference(actual, referenceForward('bert', checkpoint.config, checkpoint.tensors, ids, { keyMask }), 'masked');
    for (let row = 0; row < actual.attention.length / 6; row++) {
      assert.equal(actual.attention[row * 6 + 4], 0);
      assert.equal(actual.attention[row * 6 + 5], 0);
    }
  } finally {
    model.dispose();
  }
});
