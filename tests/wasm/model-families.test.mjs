// The families that map onto the core's layouts (issue 22: DistilBERT,
// RoBERTa, XLM-RoBERTa, Qwen2, Mistral, GPT-NeoX, GPT-Neo, OPT, Gemma, Phi, ELECTRA), in their hub layouts and every dtype,
// against the float64 forward written from their modeling code
// (tests/support/model-reference.mjs); bad files of each get clear errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { referenceForward, robertaPositionIds } from '../support/model-reference.mjs';
import { writeSafetensors } from '../support/safetensors.mjs';
import { familyCheckpointVariants, families, tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertClose, loadBoth } from './helpers.mjs';
import { assertMatchesReference, idsFor } from './model-checks.mjs';

const [simdLens, scalarLens] = await loadBoth();

// The layout each family runs as (model.info.architecture).
const layoutOf = {
  distilbert: 'bert', roberta: 'bert', 'xlm-roberta': 'bert', qwen2: 'llama', mistral: 'llama', gpt_neox: 'gpt_neox',
  gpt_neo: 'gpt_neo', opt: 'opt', gemma: 'llama', phi: 'phi', electra: 'bert',
};

const load = (lens, checkpoint, weights = checkpoint.files['model.safetensors']) =>
  lens.loadModel({ config: checkpoint.files['config.json'], weights });

for (const { arch, naming, dtype } of familyCheckpointVariants) {
  test(`${arch} / ${naming} / ${dtype}: run() matches the float64 forward`, async () => {
    const checkpoint = tinyCheckpoint({ arch, naming, dtype, seed: 11 });
    const model = await load(simdLens, checkpoint);
    try {
      assert.equal(model.info.architecture, layoutOf[arch]);
      assert.equal(model.info.modelType, arch);
      assert.equal(model.info.dtype, dtype);
      assert.equal(model.info.causal, layoutOf[arch] !== 'bert');
      for (const [n, seed] of [[1, 1], [7, 2], [model.info.maxPositions, 3]]) {
        const ids = idsFor(model.info.vocabSize, n, seed);
        assertMatchesReference(model.run({ ids }), referenceForward(arch, checkpoint.config, checkpoint.tensors, ids), `n = ${n}`);
      }
    } finally {
      model.dispose();
    }
  });
}

for (const arch of families) {
  test(`${arch}: the scalar module computes the same model; a sharded checkpoint loads as the single file does`, async () => {
    const checkpoint = tinyCheckpoint({ arch, dtype: 'BF16', seed: 6, shards: true });
    const scalar = await load(scalarLens, checkpoint);
    const single = await load(simdLens, checkpoint);
    const sharded = await simdLens.loadModel({ config: checkpoint.config, weights: checkpoint.shards.map((s) => s.buffer) });
    try {
      const ids = idsFor(single.info.vocabSize, 9, 4);
      const expected = referenceForward(arch, checkpoint.config, checkpoint.tensors, ids);
      assertMatchesReference(scalar.run({ ids }), expected, 'scalar');
      assertMatchesReference(sharded.run({ ids }), expected, 'sharded');
      assert.deepEqual({ ...sharded.info, loadMs: 0 }, { ...single.info, loadMs: 0 });
      assert.deepEqual(sharded.run({ ids }).hidden, single.run({ ids }).hidden);
    } finally {
      for (const model of [scalar, single, sharded]) model.dispose();
    }
  });

  test(`${arch}: explain() gives each layer's steps as the reference defines them`, async () => {
    const checkpoint = tinyCheckpoint({ arch, dtype: 'F32', seed: 8 });
    const model = await load(simdLens, checkpoint);
    try {
      const ids = idsFor(model.info.vocabSize, 5, 12);
      const expected = referenceForward(arch, checkpoint.config, checkpoint.tensors, ids, { trace: true });
      for (let layer = 0; layer < model.info.layers; layer++) {
        const steps = model.explain({ ids, layer, head: 0 });
        assert.equal(steps.architecture, layoutOf[arch]);
        for (const name of ['x', 'wq', 'wk', 'wv', 'wo', 'q', 'k', 'v', 'scores', 'weights', 'output', 'layerOutput']) {
          assertClose(steps[name], expected.layers[layer][name], { atol: 2e-4, rtol: 2e-4, label: `layer ${layer} ${name}` });
        }
      }
    } finally {
      model.dispose();
    }
  });
}

test('roberta: positions count from pad_token_id + 1 over the non-pad tokens, pads sit at pad_token_id', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'roberta', naming: 'hub', dtype: 'F32', seed: 4 });
  const pad = checkpoint.config.pad_token_id;
  // The numbering itself, by hand: <s> a <pad> b c -> 2 3 1 4 5.
  assert.deepEqual(robertaPositionIds([0, 7, pad, 9, 4], pad), [2, 3, 1, 4, 5]);
  const model = await load(simdLens, checkpoint);
  try {
    // 24 of the 26 rows are usable: rows 0 and 1 are skipped, as roberta-base's 514 give 512 tokens.
    assert.equal(model.info.maxPositions, checkpoint.config.max_position_embeddings - pad - 1);
    assert.throws(() => model.run({ ids: new Array(model.info.maxPositions + 1).fill(5) }), /more than the model's 24 positions/);
    for (const ids of [[0, 7, pad, 9, 4], [pad, pad, 3, 8], [5, 6, 7, pad]]) {
      const keyMask = Uint8Array.from(ids, (id) => (id === pad ? 0 : 1));
      assertMatchesReference(model.run({ ids, keyMask }),
        referenceForward('roberta', checkpoint.config, checkpoint.tensors, ids, { keyMask }), `ids ${ids}`);
    }
    // Numbered from 0 instead, the hidden state would differ: the offset is observable.
    const plain = referenceForward('bert', { ...checkpoint.config, model_type: 'bert' }, checkpoint.tensors, [0, 7, 9]);
    const actual = model.run({ ids: [0, 7, 9] });
    assert.ok(actual.hidden.some((value, i) => Math.abs(value - plain.hidden[i]) > 1e-2));
  } finally {
    model.dispose();
  }
});

test('qwen2: q, k and v have biases, o_proj none; a tied or an own head', async () => {
  const tied = tinyCheckpoint({ arch: 'qwen2', naming: 'tied', dtype: 'F32', seed: 2 });
  assert.ok(tied.tensors['model.layers.0.self_attn.q_proj.bias'] && !tied.tensors['model.layers.0.self_attn.o_proj.bias']);
  const model = await load(simdLens, tied);
  try {
    assert.equal(model.info.tiedLmHead, true);
    assert.equal(model.info.kvHeads, 2);
  } finally {
    model.dispose();
  }
  const untied = tinyCheckpoint({ arch: 'qwen2', naming: 'untied', dtype: 'F32', seed: 2 });
  const own = await load(simdLens, untied);
  own.dispose();
  assert.equal(own.info.tiedLmHead, false);
});

test('mistral: each token attends to itself and the sliding_window - 1 tokens before it, in run() and explain()', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'mistral', naming: 'window', dtype: 'F32', seed: 7 });
  const window = checkpoint.config.sliding_window;
  const model = await load(simdLens, checkpoint);
  try {
    const n = 7;
    const ids = idsFor(model.info.vocabSize, n, 5);
    const { attention } = model.run({ ids });
    for (let row = 0; row < attention.length / n; row++) {
      const query = row % n;
      for (let key = 0; key < n; key++) {
        const seen = key <= query && key > query - window;
        assert.equal(attention[row * n + key] > 0, seen, `query ${query} key ${key}`);
      }
    }
    const steps = model.explain({ ids, layer: 1, head: 2 });
    assert.equal(steps.scaledScores[6 * n + 3], -Infinity, 'key 3 is outside query 6\'s window');
    assert.ok(Number.isFinite(steps.scaledScores[6 * n + 4]));
    // Without the window (sliding_window: null) the same weights give another forward.
    const full = referenceForward('mistral', { ...checkpoint.config, sliding_window: null }, checkpoint.tensors, ids);
    assert.ok(model.run({ ids }).hidden.some((value, i) => Math.abs(value - full.hidden[i]) > 1e-3));
  } finally {
    model.dispose();
  }
});

test('gpt_neox: the fused rows are read per head, only the first rotary_pct of each head turns, residuals in parallel', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'gpt_neox', naming: 'pythia', dtype: 'F32', seed: 5 });
  const model = await load(simdLens, checkpoint);
  try {
    assert.equal(model.info.tiedLmHead, false);
    const ids = idsFor(model.info.vocabSize, 6, 3);
    const steps = model.explain({ ids, layer: 0, head: 1 });
    // Head 1's query weights are rows 24..31 of query_key_value (head 0's query, key and value come first).
    const fused = checkpoint.tensors['gpt_neox.layers.0.attention.query_key_value.weight'];
    const d = model.info.dModel;
    for (const t of [0, 5, d - 1]) assert.ok(Math.abs(steps.wq[t * d + 8] - fused[24 * d + t]) < 1e-6, `wq row ${t}`);
    // Reading the rows as [Q | K | V] instead, or with sequential residuals, gives other numbers.
    const sequential = referenceForward('gpt_neox', { ...checkpoint.config, use_parallel_residual: false }, checkpoint.tensors, ids);
    assert.ok(model.run({ ids }).hidden.some((value, i) => Math.abs(value - sequential.hidden[i]) > 1e-3));
  } finally {
    model.dispose();
  }
  await assert.rejects(simdLens.loadModel({ config: { ...checkpoint.config, rotary_pct: 0.1 }, weights: checkpoint.files['model.safetensors'] }),
    /config\.rotary_pct = 0\.1 turns no column of the 8-wide heads/);
  await assert.rejects(simdLens.loadModel({ config: { ...checkpoint.config, rotary_pct: 0.375 }, weights: checkpoint.files['model.safetensors'] }),
    /config\.rotary_pct \(3\) must be even: rotary embeddings rotate pairs/);
});

test('gpt_neo: scores are not scaled, local layers see window_size keys, global ones every earlier key', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'gpt_neo', naming: 'tinystories', dtype: 'F32', seed: 7 });
  const window = checkpoint.config.window_size;
  const model = await load(simdLens, checkpoint);
  try {
    const n = 7;
    const ids = idsFor(model.info.vocabSize, n, 5);
    const { attention } = model.run({ ids });
    const perLayer = model.info.heads * n * n;
    for (const [layer, local] of [[0, false], [1, true]]) {
      for (let row = 0; row < perLayer / n; row++) {
        const query = row % n;
        for (let key = 0; key < n; key++) {
          const seen = key <= query && (!local || key > query - window);
          assert.equal(attention[layer * perLayer + row * n + key] > 0, seen, `layer ${layer} query ${query} key ${key}`);
        }
      }
    }
    const steps = model.explain({ ids, layer: 0, head: 1 });
    assert.equal(steps.scale, 1);
    assert.deepEqual(steps.scaledScores.filter(Number.isFinite), steps.scores.filter((_, i) => i % n <= Math.floor(i / n) % n));
  } finally {
    model.dispose();
  }
  await assert.rejects(simdLens.loadModel({ config: { ...checkpoint.config, attention_layers: ['global'] }, weights: checkpoint.files['model.safetensors'] }),
    /config\.attention_layers gives 1 layer types, but config\.num_layers is 2/);
  await assert.rejects(simdLens.loadModel({ config: { ...checkpoint.config, attention_layers: ['global', 'sparse'] }, weights: checkpoint.files['model.safetensors'] }),
    /config\.attention_layers holds "sparse"; GPT-Neo layers are "global" or "local"/);
});

test('opt: positions read the table two rows on; a config that contradicts the word embeddings and weightless norms are refused by name', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'opt', naming: '125m', dtype: 'F32', seed: 4 });
  const model = await load(simdLens, checkpoint);
  try {
    // 24 table rows, 22 positions (max_position_embeddings), as OPTLearnedPositionalEmbedding.
    assert.equal(model.info.maxPositions, checkpoint.config.max_position_embeddings);
    assert.throws(() => model.run({ ids: new Array(23).fill(5) }), /the input has 23 tokens, more than the model's 22 positions/);
    const ids = idsFor(model.info.vocabSize, 22, 6);
    assertMatchesReference(model.run({ ids }), referenceForward('opt', checkpoint.config, checkpoint.tensors, ids), 'every position');
    // Rows 0 and 1 are never read: changed, the model gives the same numbers.
    const d = checkpoint.config.hidden_size;
    const shifted = checkpoint.entries.map((entry) => (entry.name.endsWith('embed_positions.weight')
      ? { ...entry, values: entry.values.map((value, i) => (i < 2 * d ? value + 1 : value)) } : entry));
    const other = await simdLens.loadModel({ config: checkpoint.config, weights: writeSafetensors(shifted) });
    assert.deepEqual(other.run({ ids }).hidden, model.run({ ids }).hidden);
    other.dispose();
  } finally {
    model.dispose();
  }
  const weights = checkpoint.files['model.safetensors'];
  // word_embed_proj_dim is read now (OPT-350m's project_in/out): 16 contradicts these 32-wide embeddings.
  await assert.rejects(simdLens.loadModel({ config: { ...checkpoint.config, word_embed_proj_dim: 16 }, weights }),
    /tensor "model\.decoder\.embed_tokens\.weight" has shape \[50, 32\], but the config needs \[50, 16\]/);
  await assert.rejects(simdLens.loadModel({ config: { ...checkpoint.config, layer_norm_elementwise_affine: false }, weights }),
    /config\.layer_norm_elementwise_affine = false is not supported/);
});

test('gemma: embeddings times sqrt(hidden_size) as the stored dtype rounds it, (1 + w) norms, GeGLU', async () => {
  for (const dtype of ['F32', 'F16', 'BF16']) {
    // hidden_size 48: sqrt(48) = 6.928..., 6.9296875 in F16 and 6.9375 in BF16.
    const checkpoint = tinyCheckpoint({ arch: 'gemma', naming: '2b', dtype, seed: 2, hidden_size: 48 });
    const model = await load(simdLens, checkpoint);
    try {
      const ids = idsFor(model.info.vocabSize, 6, 2);
      const actual = model.run({ ids });
      assertMatchesReference(actual, referenceForward('gemma', checkpoint.config, checkpoint.tensors, ids), dtype);
      if (dtype !== 'F32') {
        // The exact sqrt(48) gives numbers the run does not have: the rounding is observable.
        const exact = referenceForward('gemma', { ...checkpoint.config, torch_dtype: 'float32' }, checkpoint.tensors, ids);
        assert.ok(actual.hidden.some((value, i) => Math.abs(value - exact.hidden[i]) > 1e-3), dtype);
      }
    } finally {
      model.dispose();
    }
  }
});

test('phi: attention and the MLP read one norm in parallel, the head adds its bias, qk_layernorm is refused', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'phi', naming: 'phi-2', dtype: 'F32', seed: 3 });
  const model = await load(simdLens, checkpoint);
  try {
    const ids = idsFor(model.info.vocabSize, 5, 8);
    const { logits } = model.run({ ids });
    // Without lm_head.bias the logits would be these less the bias, row by row.
    const bias = checkpoint.tensors['lm_head.bias'];
    const unbiased = referenceForward('phi', checkpoint.config, { ...checkpoint.tensors, 'lm_head.bias': new Float64Array(bias.length) }, ids).logits;
    for (let i = 0; i < logits.length; i++) assert.ok(Math.abs(logits[i] - unbiased[i] - bias[i % bias.length]) < 1e-3, `logit ${i}`);
  } finally {
    model.dispose();
  }
  const weights = checkpoint.files['model.safetensors'];
  await assert.rejects(simdLens.loadModel({ config: { ...checkpoint.config, qk_layernorm: true }, weights }),
    /config\.qk_layernorm = true is not supported \(LayerNorms on the queries and keys\)/);
  const withoutBias = checkpoint.entries.filter((entry) => entry.name !== 'lm_head.bias');
  await assert.rejects(simdLens.loadModel({ config: checkpoint.config, weights: writeSafetensors(withoutBias) }),
    /lacks 1 tensor the config needs: "lm_head\.bias"/);
});

test('electra: embeddings embedding_size wide, projected to hidden_size by embeddings_project', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'electra', naming: 'discriminator', dtype: 'F32', seed: 6 });
  const model = await load(simdLens, checkpoint);
  try {
    assert.equal(model.info.dModel, checkpoint.config.hidden_size);
    assert.equal(model.run({ ids: [1, 2] }).logits, null);
    const ids = idsFor(model.info.vocabSize, 6, 4);
    const steps = model.explain({ ids, layer: 0, head: 0 });
    // Layer 0 reads the projected embeddings: x = LayerNorm(E-wide sum) W_project^T + b.
    const expected = referenceForward('electra', checkpoint.config, checkpoint.tensors, ids, { trace: true });
    assertClose(steps.x, expected.layers[0].x, { atol: 1e-5, rtol: 1e-5, label: 'x' });
  } finally {
    model.dispose();
  }
});

// Bad files of each family: errors name the tensor as the family's files spell it.
const badCases = {
  distilbert: { tensor: 'transformer.layer.1.ffn.lin1.weight', field: 'hidden_dim', contradiction: { hidden_dim: 40 } },
  roberta: { tensor: 'encoder.layer.1.attention.self.key.weight', field: 'hidden_size', contradiction: { intermediate_size: 40 } },
  'xlm-roberta': { tensor: 'encoder.layer.0.output.dense.bias', field: 'hidden_size', contradiction: { type_vocab_size: 2 } },
  qwen2: { tensor: 'model.layers.1.self_attn.k_proj.bias', field: 'hidden_size', contradiction: { num_key_value_heads: 4 } },
  mistral: { tensor: 'model.layers.0.mlp.gate_proj.weight', field: 'hidden_size', contradiction: { head_dim: 4 } },
  gpt_neox: { tensor: 'gpt_neox.layers.1.attention.query_key_value.weight', field: 'hidden_size', contradiction: { intermediate_size: 40 } },
  gpt_neo: { tensor: 'h.1.attn.attention.q_proj.weight', field: 'hidden_size', contradiction: { intermediate_size: 40 } },
  opt: { tensor: 'model.decoder.layers.1.fc1.weight', field: 'hidden_size', contradiction: { ffn_dim: 40 } },
  gemma: { tensor: 'model.layers.0.self_attn.q_proj.weight', field: 'hidden_size', contradiction: { head_dim: 8 } },
  phi: { tensor: 'model.layers.1.mlp.fc1.bias', field: 'hidden_size', contradiction: { num_key_value_heads: 2 } },
  electra: { tensor: 'embeddings_project.weight', field: 'hidden_size', contradiction: { embedding_size: 24 } },
};

for (const arch of families) {
  test(`${arch}: a missing tensor, a wrong shape and a config the weights contradict are refused, and the module keeps working`, async () => {
    const checkpoint = tinyCheckpoint({ arch, dtype: 'F16', seed: 9 });
    const { tensor, contradiction } = badCases[arch];
    const hubName = checkpoint.hubNames[tensor];
    const before = simdLens.heapBytesInUse();
    const rejects = async (options, pattern) => {
      await assert.rejects(simdLens.loadModel(options), (error) => {
        assert.ok(error instanceof RangeError, `${error.constructor.name}: ${error.message}`);
        assert.match(error.message, pattern);
        return true;
      });
      assert.equal(simdLens.heapBytesInUse(), before, 'a failed load left memory allocated');
    };
    const escaped = tensor.replace(/\./g, '\\.');
    const without = checkpoint.entries.filter((entry) => entry.name !== hubName);
    await rejects({ config: checkpoint.config, weights: writeSafetensors(without) },
      new RegExp(`lacks 1 tensor the config needs: "${escaped}"`));
    const reshaped = checkpoint.entries.map((entry) => (entry.name === hubName
      ? { ...entry, shape: [entry.values.length / 2, 2] } : entry));
    const halves = checkpoint.entries.find((entry) => entry.name === hubName).values.length / 2;
    await rejects({ config: checkpoint.config, weights: writeSafetensors(reshaped) },
      new RegExp(`tensor "${hubName.replace(/\./g, '\\.')}" has shape \\[${halves}, 2\\], but the config needs`));
    await rejects({ config: { ...checkpoint.config, ...contradiction }, weights: checkpoint.files['model.safetensors'] },
      /has shape \[.*\], but the config needs/);
    // Afterwards the module loads and runs the good file.
    const model = await load(simdLens, checkpoint);
    const ids = idsFor(model.info.vocabSize, 4, 1);
    assertMatchesReference(model.run({ ids }), referenceForward(arch, checkpoint.config, checkpoint.tensors, ids), 'after errors');
    model.dispose();
    assert.equal(simdLens.heapBytesInUse(), before);
  });
}

test('an unknown model_type lists every family attnlens runs', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'distilbert', dtype: 'F32' });
  await assert.rejects(simdLens.loadModel({ config: { ...checkpoint.config, model_type: 'mbart' }, weights: checkpoint.files['model.safetensors'] }),
    /model_type = "mbart" is not supported; attnlens runs gpt2, bert, llama, distilbert, roberta, xlm-roberta, qwen2, mistral, gpt_neox, gpt_neo, opt, gemma, phi, electra, bart, marian/);
});
