// T5 (issue 23): v1.0 (ReLU, the tied head scaled by d_model^-0.5) and v1.1
// (gated GELU, its own head) in T5ForConditionalGeneration's layout and every
// dtype against the float64 forward written from modeling_t5.py
// (tests/support/model-reference-t5.mjs): relative position buckets past
// max_distance, heads narrower than d_model / heads; generate against greedy
// decoding with run; refusals by field and tensor name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { relativeBucket, t5Checkpoint, t5Reference } from '../support/model-reference-t5.mjs';
import { writeSafetensors } from '../support/safetensors.mjs';
import { assertClose, loadBoth } from './helpers.mjs';
import { assertSeq2seqMatches, idsFor, loadCheckpoint } from './model-checks.mjs';

const [simdLens, scalarLens] = await loadBoth();


test('the reference\'s buckets are modeling_t5\'s: exact near, logarithmic far, capped', () => {
  // num_buckets 32, max_distance 128 (t5-small), bidirectional: 16 a side, 8 exact.
  assert.deepEqual([-1, 0, 1, 7, 8, 12, 100, 127, 128, 1000].map((r) => relativeBucket(r, true, 32, 128)),
    [1, 0, 17, 23, 24, 25, 31, 31, 31, 31]);
  assert.deepEqual([-1, -15, -16, -17, -127, 3].map((r) => relativeBucket(r, false, 32, 128)), [1, 15, 16, 16, 31, 0]);
});

for (const version of ['1.0', '1.1']) {
  for (const dtype of ['F32', 'F16', 'BF16']) {
    test(`t5 v${version} / ${dtype}: run() matches the float64 forward`, async () => {
      const checkpoint = t5Checkpoint({ version, dtype, seed: 3 });
      const model = await loadCheckpoint(simdLens, checkpoint);
      try {
        assert.deepEqual([model.info.architecture, model.info.encoderDecoder, model.info.decoderLayers, model.info.headWidth],
          ['t5', true, 2, 6]);
        assert.equal(model.info.tiedLmHead, version === '1.0');
        for (const [n, m, seed] of [[1, 1, 1], [7, 5, 2], [30, 26, 3]]) {
          const ids = idsFor(40, n, seed), targetIds = idsFor(40, m, seed + 10);
          assertSeq2seqMatches(model.run({ ids, targetIds }), t5Reference(checkpoint.config, checkpoint.tensors, ids, targetIds), `n = ${n}, m = ${m}`);
        }
      } finally {
        model.dispose();
      }
    });
  }

  test(`t5 v${version}: generate() is greedy decoding step by step with run(); the scalar module agrees`, async () => {
    const checkpoint = t5Checkpoint({ version, seed: 9, eos_token_id: null });
    const model = await loadCheckpoint(simdLens, checkpoint);
    const scalar = await loadCheckpoint(scalarLens, checkpoint);
    try {
      const ids = idsFor(40, 9, 4);
      const generated = model.generate({ ids, maxTokens: 10 });
      assert.equal(generated.ids.length, 10);
      const targetIds = [0, ...generated.ids.subarray(0, 9)];
      const run = model.run({ ids, targetIds });
      for (let step = 0; step < 10; step++) {
        const row = run.logits.subarray(step * 40, (step + 1) * 40);
        assert.equal(generated.ids[step], row.indexOf(Math.max(...row)), `token ${step}`);
      }
      assertClose(generated.crossAttention, run.crossAttention, { atol: 1e-6, rtol: 0, label: 'cross-attention' });
      assertSeq2seqMatches(scalar.run({ ids, targetIds }), t5Reference(checkpoint.config, checkpoint.tensors, ids, targetIds), 'scalar');
    } finally {
      model.dispose();
      scalar.dispose();
    }
  });
}

test('t5: unsupported settings and bad files are refused by name; the module keeps working', async () => {
  const checkpoint = t5Checkpoint({ version: '1.1', seed: 4 });
  for (const [overrides, message] of [
    [{ feed_forward_proj: 'gated-tanh' }, /config\.feed_forward_proj = "gated-tanh" is not supported \(T5 feed-forward kinds\)/],
    [{ is_decoder: true }, /config\.is_decoder = true is not supported \(T5 as a decoder alone\)/],
    [{ relative_attention_max_distance: 2 }, /config\.relative_attention_max_distance \(2\) must be more than config\.relative_attention_num_buckets \/ 2 \(4\)/],
  ]) {
    await assert.rejects(simdLens.loadModel({ config: { ...checkpoint.config, ...overrides }, weights: checkpoint.files['model.safetensors'] }), message);
  }
  const without = writeSafetensors(checkpoint.entries.filter((entry) => !/relative_attention_bias/.test(entry.name)));
  await assert.rejects(loadCheckpoint(simdLens, checkpoint, without),
    /lacks 2 tensors the config needs: "encoder\.block\.0\.layer\.0\.SelfAttention\.relative_attention_bias\.weight"/);
  const model = await loadCheckpoint(simdLens, checkpoint);
  try {
    const ids = [5, 6, 7], targetIds = [0, 9];
    assertSeq2seqMatches(model.run({ ids, targetIds }), t5Reference(checkpoint.config, checkpoint.tensors, ids, targetIds), 'after the refusals');
    assert.deepEqual(model.info.ignoredTensors, ['encoder.embed_tokens.weight', 'decoder.embed_tokens.weight']);
  } finally {
    model.dispose();
  }
});
