// OPT beyond opt-125m: positions with a padded batch row
// (OPTLearnedPositionalEmbedding numbers the tokens the attention mask keeps,
// cumsum(mask) * mask - 1 read two rows on, so a left- or right-padded input
// gives its real tokens the numbers they have unpadded), and OPT-350m's
// narrower word embeddings (project_in, project_out). Checked against the
// float64 reference (tests/support/model-reference-decoders.mjs) and against
// the same tokens run without padding.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { referenceForward } from '../support/model-reference.mjs';
import { writeSafetensors } from '../support/safetensors.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertClose, loadBoth } from './helpers.mjs';
import { assertMatchesReference, idsFor } from './model-checks.mjs';

const [lens] = await loadBoth();

test('opt: a key mask renumbers the positions as transformers does, for left and right padding', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'opt', naming: '125m', dtype: 'F32', seed: 31 });
  const model = await lens.loadModel({ config: checkpoint.files['config.json'], weights: checkpoint.files['model.safetensors'] });
  try {
    const d = model.info.dModel;
    const real = idsFor(model.info.vocabSize, 5, 9);
    const pad = checkpoint.config.pad_token_id ?? 1;
    const alone = model.run({ ids: real });
    for (const [label, ids, keyMask, first] of [
      ['left', [pad, pad, ...real], [0, 0, 1, 1, 1, 1, 1], 2],
      ['right', [...real, pad, pad], [1, 1, 1, 1, 1, 0, 0], 0],
      ['inside', [real[0], pad, ...real.slice(1)], [1, 0, 1, 1, 1, 1], null],
    ]) {
      const mask = Uint8Array.from(keyMask);
      const run = model.run({ ids, keyMask: mask });
      assertMatchesReference(run, referenceForward('opt', checkpoint.config, checkpoint.tensors, ids, { keyMask: mask }), label);
      // The real tokens see only each other at their unpadded positions: the unpadded run's hidden states.
      if (first !== null) {
        assertClose(run.hidden.subarray(first * d, (first + real.length) * d), alone.hidden,
          { atol: 1e-5, rtol: 1e-5, label: `${label}: the real tokens as unpadded` });
      }
    }
  } finally {
    model.dispose();
  }
});

// The k largest logits' ids of each row, ties to the smaller id.
function topIds(logits, rows, vocab, k) {
  const ids = [];
  for (let r = 0; r < rows; r++) {
    const row = Array.from(logits.subarray(r * vocab, (r + 1) * vocab));
    ids.push(...row.map((_, id) => id).sort((a, b) => row[b] - row[a] || a - b).slice(0, k));
  }
  return ids;
}

for (const before of [false, true]) {
  test(`opt-350m-like (norms ${before ? 'before' : 'after'} each half): project_in before the positions, project_out before the tied head`, async () => {
    const checkpoint = tinyCheckpoint({ arch: 'opt', naming: '350m', dtype: 'F32', seed: 32, do_layer_norm_before: before });
    const model = await lens.loadModel({ config: checkpoint.files['config.json'], weights: checkpoint.files['model.safetensors'] });
    try {
      assert.equal(model.info.dModel, checkpoint.config.hidden_size);
      assert.equal(model.info.lmHead, 'next-token');
      assert.equal(model.info.tiedLmHead, true);
      const V = model.info.vocabSize;
      const ids = idsFor(V, 9, 5);
      const keyMask = Uint8Array.from([0, 1, 1, 1, 1, 1, 1, 1, 0]);
      for (const options of [{}, { keyMask }]) {
        const expected = referenceForward('opt', checkpoint.config, checkpoint.tensors, ids, options);
        // hidden: the last layer's state (after the final norm when there is one), before project_out.
        assert.equal(expected.hidden.length, ids.length * model.info.dModel);
        assertMatchesReference(model.run({ ids, ...options }), expected, options.keyMask ? 'masked' : 'all');
      }
      // The logit lens goes through the same head: after the last layer it is run()'s top k.
      const { logitLens } = model.analyze({ ids, topK: 3 });
      const last = (model.info.layers - 1) * ids.length * 3;
      assert.deepEqual(Array.from(logitLens.ids.subarray(last)), topIds(model.run({ ids }).logits, ids.length, V, 3));
    } finally {
      model.dispose();
    }
  });
}

test('opt-350m-like: a missing or wrong-shaped projection is refused by name, and the module keeps working', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'opt', naming: '350m', dtype: 'F32', seed: 33 });
  const load = (entries) => lens.loadModel({ config: checkpoint.config, weights: writeSafetensors(entries) });
  const before = lens.heapBytesInUse();
  await assert.rejects(load(checkpoint.entries.filter(({ name }) => name !== 'model.decoder.project_out.weight')),
    /lacks 1 tensor the config needs: "model\.decoder\.project_out\.weight"/);
  const transposed = checkpoint.entries.map((entry) => (entry.name === 'model.decoder.project_in.weight'
    ? { ...entry, shape: [16, 32] } : entry));
  await assert.rejects(load(transposed), /tensor "model\.decoder\.project_in\.weight" has shape \[16, 32\], but the config needs \[32, 16\]/);
  assert.equal(lens.heapBytesInUse(), before);
  const model = await load(checkpoint.entries);
  assert.equal(model.run({ ids: [3, 4] }).logits.length, 2 * checkpoint.config.vocab_size);
  model.dispose();
});
