// BERT-family checkpoints that carry their masked-LM head (BertForMaskedLM's
// cls.predictions, DistilBertForMaskedLM's vocab_*, RobertaForMaskedLM's
// lm_head, ElectraForMaskedLM's generator_*): what model.info says, the
// decoder kept tied to the word embeddings, the logits against the float64
// reference (tests/support/model-reference-heads.mjs) in every dtype and in
// 16-bit storage, and clear errors for wrong or missing head tensors.
// (model-families.test.mjs and model-architectures.test.mjs compare the
// logits of every hub layout too.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { referenceForward } from '../support/model-reference.mjs';
import { writeSafetensors } from '../support/safetensors.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { loadBoth } from './helpers.mjs';
import { assertMatchesReference, idsFor } from './model-checks.mjs';

const [lens] = await loadBoth();

const withHead = [
  // TensorFlow-era gamma in the file; messages name the tensor as current files do.
  { arch: 'bert', naming: 'hub', bias: 'cls.predictions.bias', norm: 'cls.predictions.transform.LayerNorm.gamma', normNamed: 'cls.predictions.transform.LayerNorm.weight' },
  { arch: 'distilbert', naming: 'hub', bias: 'vocab_projector.bias', norm: 'vocab_layer_norm.weight' },
  { arch: 'roberta', naming: 'hub', bias: 'lm_head.bias', norm: 'lm_head.layer_norm.weight' },
  { arch: 'xlm-roberta', naming: 'hub', bias: 'lm_head.bias', norm: 'lm_head.layer_norm.weight' },
  { arch: 'electra', naming: 'generator', bias: 'generator_lm_head.bias', norm: 'generator_predictions.LayerNorm.weight' },
];

const load = (checkpoint, weights = checkpoint.files['model.safetensors'], options = {}) =>
  lens.loadModel({ config: checkpoint.files['config.json'], weights, ...options });

for (const { arch, naming, bias, norm, normNamed = norm } of withHead) {
  test(`${arch} / ${naming}: the masked-LM head runs, tied to the word embeddings, in F32, F16, BF16 and 16-bit storage`, async () => {
    for (const [dtype, weightStorage] of [['F32', 'float32'], ['F16', 'float32'], ['BF16', 'as-stored']]) {
      const checkpoint = tinyCheckpoint({ arch, naming, dtype, seed: 21 });
      const model = await load(checkpoint, undefined, { weightStorage });
      try {
        assert.equal(model.info.lmHead, 'masked');
        assert.equal(model.info.tiedLmHead, true);
        assert.equal(model.info.causal, false);
        assert.ok(!model.info.ignoredTensors.includes(bias), 'the head is not ignored');
        // The decoder is the word embeddings themselves: the head adds only its transform and bias.
        const V = model.info.vocabSize;
        const E = checkpoint.config.embedding_size ?? model.info.dModel;
        const d = model.info.dModel;
        const transform = E * d + E + 2 * E + V;
        const base = Object.entries(checkpoint.tensors).filter(([name]) => !/^(cls|vocab_|lm_head|generator_)/.test(name))
          .reduce((sum, [, values]) => sum + values.length, 0);
        assert.equal(model.info.parameters, base + transform);
        for (const n of [1, 6]) {
          const ids = idsFor(V, n, n + 3);
          const expected = referenceForward(arch, checkpoint.config, checkpoint.tensors, ids);
          assert.equal(expected.logits.length, n * V);
          assertMatchesReference(model.run({ ids }), expected, `${dtype} n = ${n}`);
          // 'last' is the last row of 'all', as for decoders.
          assert.deepEqual(model.run({ ids, logits: 'last' }).logits, model.run({ ids }).logits.subarray((n - 1) * V));
        }
      } finally {
        model.dispose();
      }
    }
  });

  test(`${arch} / ${naming}: a wrong-shaped or missing head tensor gets a clear error, and the module keeps working`, async () => {
    const checkpoint = tinyCheckpoint({ arch, naming, dtype: 'F32', seed: 22 });
    const before = lens.heapBytesInUse();
    const without = (name) => writeSafetensors(checkpoint.entries.filter((entry) => entry.name !== name));
    await assert.rejects(load(checkpoint, without(bias)),
      new RegExp(`lacks 1 tensor the config needs: "${bias.replace(/[.]/g, '\\.')}"`));
    await assert.rejects(load(checkpoint, without(norm)),
      new RegExp(`lacks 1 tensor the config needs: "${normNamed.replace(/[.]/g, '\\.')}"`));
    const shortBias = checkpoint.entries.map((entry) => (entry.name === bias
      ? { ...entry, shape: [entry.shape[0] - 1], values: entry.values.slice(1) } : entry));
    const V = checkpoint.config.vocab_size;
    await assert.rejects(load(checkpoint, writeSafetensors(shortBias)),
      new RegExp(`tensor "${bias.replace(/[.]/g, '\\.')}" has shape \\[${V - 1}\\], but the config needs \\[${V}\\]`));
    assert.equal(lens.heapBytesInUse(), before, 'a refused checkpoint leaves no memory behind');
    const model = await load(checkpoint);
    try {
      assert.equal(model.run({ ids: [1, 2, 3] }).logits.length, 3 * V);
    } finally {
      model.dispose();
    }
  });
}

test('the same encoders saved without their head: no logits, lmHead null, nothing refused', async () => {
  for (const [arch, naming] of [['bert', 'bare'], ['distilbert', 'bare'], ['roberta', 'bare'], ['electra', 'discriminator']]) {
    const model = await load(tinyCheckpoint({ arch, naming, dtype: 'F32', seed: 23 }));
    try {
      assert.equal(model.info.lmHead, null, arch);
      assert.equal(model.run({ ids: [1, 2] }).logits, null, arch);
    } finally {
      model.dispose();
    }
  }
  const gpt2 = await load(tinyCheckpoint({ arch: 'gpt2', dtype: 'F32', seed: 23 }));
  assert.equal(gpt2.info.lmHead, 'next-token');
  gpt2.dispose();
});

test('an ELECTRA generator whose embedding_size exceeds hidden_size is refused by name', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'electra', naming: 'generator', dtype: 'F32', seed: 24, embedding_size: 40 });
  await assert.rejects(load(checkpoint), /the LM head reads rows config\.embedding_size wide: config\.embedding_size \(40\) must be at most config\.hidden_size \(32\)/);
});
