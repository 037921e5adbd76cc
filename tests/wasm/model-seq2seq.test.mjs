// Encoder-decoders (issue 23): BART and Marian in their hub layouts and
// every dtype against the float64 forward written from their modeling code
// (tests/support/model-reference-seq2seq.mjs); generate against greedy
// decoding done step by step with run; bad files and bad calls get clear
// errors, leave nothing allocated, and the module keeps working.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SEQ2SEQ_FAMILIES, seq2seqCheckpoint, seq2seqReference } from '../support/model-reference-seq2seq.mjs';
import { writeSafetensors } from '../support/safetensors.mjs';
import { assertClose, loadBoth, rowSums } from './helpers.mjs';
import { assertSeq2seqMatches, idsFor, loadCheckpoint } from './model-checks.mjs';

const [simdLens, scalarLens] = await loadBoth();


const argmax = (row) => row.reduce((best, value, i) => (value > row[best] ? i : best), 0);

for (const family of SEQ2SEQ_FAMILIES) {
  for (const dtype of ['F32', 'F16', 'BF16']) {
    test(`${family} / ${dtype}: run() matches the float64 forward`, async () => {
      const checkpoint = seq2seqCheckpoint({ family, dtype, seed: 3 });
      const model = await loadCheckpoint(simdLens, checkpoint);
      try {
        assert.equal(model.info.encoderDecoder, true);
        assert.equal(model.info.architecture, 'bart');
        assert.equal(model.info.decoderLayers, 2);
        assert.equal(model.info.decoderStartId, checkpoint.config.decoder_start_token_id);
        assert.equal(model.info.dtype, dtype);
        for (const [n, m, seed] of [[1, 1, 1], [7, 5, 2], [model.info.maxPositions, model.info.maxPositions, 3]]) {
          const ids = idsFor(40, n, seed), targetIds = idsFor(40, m, seed + 10);
          const result = model.run({ ids, targetIds });
          assert.equal(result.n, n);
          assert.equal(result.m, m);
          assert.deepEqual(Array.from(result.targetIds), targetIds);
          assertSeq2seqMatches(result, seq2seqReference(family, checkpoint.config, checkpoint.tensors, ids, targetIds), `n = ${n}, m = ${m}`);
          // Every cross-attention row is a distribution over the source.
          for (const sum of rowSums(result.crossAttention, 2 * 2 * m, n)) assert.ok(Math.abs(sum - 1) < 1e-5, `row sum ${sum}`);
        }
      } finally {
        model.dispose();
      }
    });
  }

  test(`${family}: generate() is greedy decoding done step by step with run(), cross-attention rows included`, async () => {
    const checkpoint = seq2seqCheckpoint({ family, seed: 7 });
    const model = await loadCheckpoint(simdLens, checkpoint);
    try {
      const ids = [3, 4, 5, 6, 7, 8];  // marian picks several different tokens from this source
      const seen = [];
      const generated = model.generate({ ids, maxTokens: 8, onToken: (token) => seen.push(token) });
      const k = generated.ids.length;
      assert.ok(k >= 1 && k <= 8);
      // Greedy by hand: each run's last row of logits picks the next token.
      const targetIds = [model.info.decoderStartId];
      for (let step = 0; step < k; step++) {
        const { logits } = model.run({ ids, targetIds });
        const next = argmax(logits.subarray(step * 40, (step + 1) * 40));
        assert.equal(generated.ids[step], next, `token ${step}`);
        if (next === checkpoint.config.eos_token_id) assert.equal(step, k - 1, 'generation stops after the end-of-sequence token');
        targetIds.push(next);
      }
      if (k < 8) assert.equal(generated.ids[k - 1], checkpoint.config.eos_token_id);
      const byRun = model.run({ ids, targetIds: targetIds.slice(0, k) });
      assertClose(generated.crossAttention, byRun.crossAttention, { atol: 1e-6, rtol: 0, label: 'cross-attention' });
      assert.deepEqual(seen.map((token) => token.id), Array.from(generated.ids));
      assert.deepEqual(seen.map((token) => token.index), [...Array(k).keys()]);
      assert.equal(seen[0].crossAttention.length, 2 * 2 * 6);
      assert.deepEqual(generated.tokens, Array.from(generated.ids, String));
      assert.equal(generated.text, null, 'no tokenizer: no text');
    } finally {
      model.dispose();
    }
  });

  test(`${family}: the scalar module computes the same model; tied and computed tables in the file are skipped`, async () => {
    const checkpoint = seq2seqCheckpoint({ family, dtype: 'BF16', seed: 6, embedTokens: true, sinusoidTables: family === 'marian' });
    const scalar = await loadCheckpoint(scalarLens, checkpoint);
    try {
      const ids = idsFor(40, 9, 4), targetIds = idsFor(40, 6, 5);
      assertSeq2seqMatches(scalar.run({ ids, targetIds }), seq2seqReference(family, checkpoint.config, checkpoint.tensors, ids, targetIds), 'scalar');
      const ignored = ['model.encoder.embed_tokens.weight', 'model.decoder.embed_tokens.weight'];
      if (family === 'marian') ignored.push('model.encoder.embed_positions.weight', 'model.decoder.embed_positions.weight');
      assert.deepEqual([...scalar.info.ignoredTensors].sort(), ignored.sort());
    } finally {
      scalar.dispose();
    }
  });
}

test('bart: generate stops after the end-of-sequence token, which it returns', async () => {
  const checkpoint = seq2seqCheckpoint({ family: 'bart', seed: 7 });
  // final_logits_bias makes </s> (id 2) the most probable token from the second step on.
  const bias = checkpoint.entries.find((entry) => entry.name === 'final_logits_bias');
  const model = await loadCheckpoint(simdLens, checkpoint);
  try {
    const free = model.generate({ ids: [3, 4, 5], maxTokens: 3 });
    assert.equal(free.ids.length, 3, 'no end-of-sequence token: maxTokens tokens');
    assert.ok(!free.ids.includes(2));
    const eosFirst = writeSafetensors(checkpoint.entries.map((entry) => (entry === bias
      ? { ...entry, values: entry.values.map((value, id) => (id === 2 ? 100 : value)) } : entry)));
    const stopping = await simdLens.loadModel({ config: checkpoint.config, weights: eosFirst });
    try {
      const stopped = stopping.generate({ ids: [3, 4, 5], maxTokens: 5 });
      assert.deepEqual(Array.from(stopped.ids), [2]);
      assert.equal(stopped.crossAttention.length, 2 * 2 * 1 * 3);
    } finally {
      stopping.dispose();
    }
  } finally {
    model.dispose();
  }
});

test('bart: bad calls get clear errors and leave nothing allocated', async () => {
  const model = await loadCheckpoint(simdLens, seq2seqCheckpoint({ family: 'bart', seed: 2 }));
  try {
    const before = simdLens.heapBytesInUse();
    const refused = [
      [() => model.run({ ids: [3, 4] }), /pass exactly one of target and targetIds/],
      [() => model.run({ ids: [3, 4], targetIds: [] }), /targetIds must hold at least one token id/],
      [() => model.run({ ids: [3, 40], targetIds: [2] }), /ids\[1\] must be an integer from 0 to 39/],
      [() => model.run({ ids: [3], targetIds: [2, -1] }), /targetIds\[1\] must be an integer from 0 to 39/],
      [() => model.run({ ids: [3], targetIds: idsFor(40, 25, 1) }), /25 tokens, more than the model's 24 positions/],
      [() => model.run({ ids: [3], target: 'x' }), /loaded without a tokenizer/],
      [() => model.generate({ ids: [3] }), /maxTokens must be an integer from 1 to 24/],
      [() => model.generate({ ids: [3], maxTokens: 0 }), /maxTokens must be an integer from 1 to 24/],
      [() => model.generate({ ids: [3], maxTokens: 1e9 }), /maxTokens must be an integer from 1 to 24/],
      [() => model.generate({ ids: [3], maxTokens: 2, onToken: 5 }), /onToken must be a function/],
      [() => model.generate({ ids: [3], maxTokens: 2, onToken: () => model.run({ ids: [3], targetIds: [2] }) }), /this model is generating/],
      [() => model.generate({ ids: [3], maxTokens: 2, onToken: () => { throw new Error('stop here'); } }), /stop here/],
      [() => model.explain({ ids: [3] }), /model\.explain: kind must be 'encoder', 'decoder' or 'cross'/],
      [() => model.explain({ ids: [3], kind: 'decoder' }), /model\.explain: the decoder kind needs the decoder's inputs/],
      [() => model.analyze({ ids: [3] }), /model\.analyze: an encoder-decoder is analyzed over a source and a target/],
      [() => model.inductionScores(), /model\.inductionScores: encoder-decoder models are not scored on repeated random tokens/],
    ];
    for (const [call, message] of refused) {
      assert.throws(call, message);
      assert.equal(simdLens.heapBytesInUse(), before, `nothing left allocated after ${message}`);
    }
    const run = model.run({ ids: [3, 4], targetIds: [2, 5] });
    const kept = simdLens.heapBytesInUse() - before;
    assert.ok(kept >= run.cacheBytes && kept < run.cacheBytes + 1024, 'run keeps its session (for headWeights) and frees the rest');
    model.generate({ ids: [3, 4], maxTokens: 3 });
    assert.equal(simdLens.heapBytesInUse(), before, 'generate frees the session run kept, and what it allocates');
  } finally {
    model.dispose();
  }
});

test('bart and marian: unsupported settings and bad files are refused by name; the module keeps working', async () => {
  const checkpoint = seq2seqCheckpoint({ family: 'bart', seed: 4 });
  const config = checkpoint.config;
  const refusedConfigs = [
    [{ ...config, decoder_attention_heads: 4 }, /config\.decoder_attention_heads = 4 is not supported/],
    [{ ...config, decoder_ffn_dim: 32 }, /config\.decoder_ffn_dim = 32 is not supported/],
    [{ ...config, activation_function: 'tanh' }, /config\.activation_function = "tanh" is not supported/],
    [{ ...seq2seqCheckpoint({ family: 'marian' }).config, share_encoder_decoder_embeddings: false }, /share_encoder_decoder_embeddings = false is not supported/],
  ];
  for (const [bad, message] of refusedConfigs) {
    await assert.rejects(simdLens.loadModel({ config: bad, weights: checkpoint.files['model.safetensors'] }), message);
  }
  const without = (pattern) => writeSafetensors(checkpoint.entries.filter((entry) => !pattern.test(entry.name)));
  await assert.rejects(loadCheckpoint(simdLens, checkpoint, without(/encoder_attn\.k_proj\.weight$/)),
    /lacks 2 tensors the config needs: "model\.decoder\.layers\.0\.encoder_attn\.k_proj\.weight"/);
  await assert.rejects(loadCheckpoint(simdLens, checkpoint, without(/^final_logits_bias$/)), /lacks 1 tensor the config needs: "final_logits_bias"/);
  const reshaped = writeSafetensors(checkpoint.entries.map((entry) => (entry.name === 'model.decoder.layers.1.encoder_attn_layer_norm.weight'
    ? { ...entry, shape: [8], values: entry.values.slice(0, 8) } : entry)));
  await assert.rejects(loadCheckpoint(simdLens, checkpoint, reshaped),
    /tensor "model\.decoder\.layers\.1\.encoder_attn_layer_norm\.weight" has shape \[8\], but the config needs \[16\]/);
  const model = await loadCheckpoint(simdLens, checkpoint);
  try {
    const ids = [5, 6, 7], targetIds = [2, 9];
    assertSeq2seqMatches(model.run({ ids, targetIds }), seq2seqReference('bart', config, checkpoint.tensors, ids, targetIds), 'after the refusals');
  } finally {
    model.dispose();
  }
});
