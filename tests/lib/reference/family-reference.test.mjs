// The float64 references of the families added for issue 22 against the
// BERT and Llama references they generalize: each family's one difference,
// removed, gives the other reference's numbers; left in, it changes them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { modelDimensions, referenceForward, referenceTensorShapes, robertaPositionIds } from '../../support/model-reference.mjs';
import { canonicalName, familyCheckpointVariants, families, tinyCheckpoint } from '../../support/tiny-checkpoints.mjs';

const close = (a, b, tolerance = 1e-12) => a.length === b.length && a.every((value, i) => Math.abs(value - b[i]) <= tolerance);

test('distilbert is BERT without token types, under its own names', () => {
  const { config, tensors } = tinyCheckpoint({ arch: 'distilbert', seed: 3 });
  const d = config.dim;
  const bertConfig = {
    model_type: 'bert', hidden_size: d, num_attention_heads: config.n_heads, num_hidden_layers: config.n_layers,
    intermediate_size: config.hidden_dim, vocab_size: config.vocab_size, max_position_embeddings: config.max_position_embeddings,
    type_vocab_size: 1, layer_norm_eps: 1e-12, hidden_act: 'gelu',
  };
  const renames = [[/^transformer\.layer\./, 'encoder.layer.'], [/attention\.q_lin/, 'attention.self.query'],
    [/attention\.k_lin/, 'attention.self.key'], [/attention\.v_lin/, 'attention.self.value'],
    [/attention\.out_lin/, 'attention.output.dense'], [/sa_layer_norm/, 'attention.output.LayerNorm'],
    [/ffn\.lin1/, 'intermediate.dense'], [/ffn\.lin2/, 'output.dense'], [/output_layer_norm/, 'output.LayerNorm']];
  const bertTensors = { 'embeddings.token_type_embeddings.weight': new Float64Array(d) };
  for (const [name, values] of Object.entries(tensors)) {
    bertTensors[renames.reduce((renamed, [pattern, replacement]) => renamed.replace(pattern, replacement), name)] = values;
  }
  const ids = [3, 1, 4, 1, 5, 9];
  const distil = referenceForward('distilbert', config, tensors, ids, { trace: true });
  const bert = referenceForward('bert', bertConfig, bertTensors, ids, { trace: true });
  assert.ok(close(distil.hidden, bert.hidden) && close(distil.attention, bert.attention));
  assert.ok(close(distil.layers[1].wq, bert.layers[1].wq));
  assert.equal(distil.logits, null);
});

test('roberta numbers positions from pad_token_id + 1, skipping pads', () => {
  assert.deepEqual(robertaPositionIds([0, 5, 6, 2], 1), [2, 3, 4, 5]);
  assert.deepEqual(robertaPositionIds([1, 5, 1, 6], 1), [1, 2, 1, 3]);
  const { config, tensors } = tinyCheckpoint({ arch: 'roberta', seed: 3 });
  const d = config.hidden_size;
  const ids = [0, 8, 9, 2];
  // BERT numbering 0..n-1 over the position table shifted by padding_idx + 1 rows.
  const shifted = { ...tensors, 'embeddings.position_embeddings.weight': tensors['embeddings.position_embeddings.weight'].slice(2 * d) };
  const bert = referenceForward('bert', { ...config, model_type: 'bert', max_position_embeddings: config.max_position_embeddings - 2 }, shifted, ids);
  assert.ok(close(referenceForward('roberta', config, tensors, ids).hidden, bert.hidden));
  assert.ok(!close(referenceForward('bert', { ...config, model_type: 'bert' }, tensors, ids).hidden, bert.hidden, 1e-3));
  assert.throws(() => referenceForward('roberta', config, tensors, new Array(25).fill(5)), /25 tokens exceed 24 positions/);
});

test('qwen2 is Llama with q, k and v biases and no o_proj bias', () => {
  const { config, tensors } = tinyCheckpoint({ arch: 'qwen2', naming: 'untied', seed: 3 });
  const shapes = referenceTensorShapes('qwen2', config).map((spec) => spec.name);
  assert.ok(shapes.includes('model.layers.0.self_attn.v_proj.bias') && !shapes.includes('model.layers.0.self_attn.o_proj.bias'));
  assert.ok(!shapes.includes('model.layers.0.mlp.up_proj.bias'));
  const zeroBiases = Object.fromEntries(Object.entries(tensors).map(([name, values]) =>
    [name, name.endsWith('_proj.bias') ? new Float64Array(values.length) : values]));
  const ids = [4, 2, 7, 1];
  const llamaConfig = { ...config, model_type: 'llama', attention_bias: false };
  const llama = referenceForward('llama', llamaConfig, zeroBiases, ids);
  assert.ok(close(referenceForward('qwen2', config, zeroBiases, ids).logits, llama.logits));
  assert.ok(!close(referenceForward('qwen2', config, tensors, ids).logits, llama.logits, 1e-3));
});

test('mistral is Llama without biases whose causal attention stops sliding_window tokens back', () => {
  const { config, tensors } = tinyCheckpoint({ arch: 'mistral', naming: 'window', seed: 3 });
  const ids = [4, 2, 7, 1, 9, 3];
  const llamaConfig = { ...config, model_type: 'llama', sliding_window: undefined };
  const windowed = referenceForward('mistral', config, tensors, ids);
  // A window as long as the input hides nothing: Llama's numbers.
  assert.ok(close(referenceForward('mistral', { ...config, sliding_window: ids.length }, tensors, ids).logits,
    referenceForward('llama', llamaConfig, tensors, ids).logits));
  assert.ok(close(referenceForward('mistral', { ...config, sliding_window: null }, tensors, ids).logits,
    referenceForward('llama', llamaConfig, tensors, ids).logits));
  assert.ok(!close(windowed.logits, referenceForward('llama', llamaConfig, tensors, ids).logits, 1e-3));
  const n = ids.length;
  for (let row = 0; row < windowed.attention.length / n; row++) {
    const query = row % n;
    for (let key = 0; key < n; key++) assert.equal(windowed.attention[row * n + key] > 0, key <= query && key > query - 3);
  }
});

test('gpt_neox rotates only the first int(head_size * rotary_pct) columns of each head; its residuals are parallel or not', () => {
  const { config, tensors } = tinyCheckpoint({ arch: 'gpt_neox', naming: 'pythia', seed: 3 });
  const ids = [4, 2, 7, 1, 9];
  const n = ids.length;
  const hd = config.hidden_size / config.num_attention_heads;
  const rotated = referenceForward('gpt_neox', config, tensors, ids, { trace: true }).layers[0];
  // Unrotated: the same projection with no rotary columns at all (rotary_pct small enough to turn none).
  const plain = referenceForward('gpt_neox', { ...config, rotary_pct: 1e-9 }, tensors, ids, { trace: true }).layers[0];
  const width = config.hidden_size;
  for (let p = 0; p < n; p++) {
    for (let c = 0; c < width; c++) {
      const same = Math.abs(rotated.q[p * width + c] - plain.q[p * width + c]) < 1e-12;
      // Position 0 turns by angle 0; elsewhere exactly the first 2 columns of each head move.
      assert.equal(same, p === 0 || c % hd >= 2, `position ${p} column ${c}`);
    }
  }
  // Per head, the fused rows are [query | key | value]: head 1's query is rows 24..31 of query_key_value.
  const fused = tensors['gpt_neox.layers.0.attention.query_key_value.weight'];
  assert.ok(close(Array.from({ length: width }, (_, t) => plain.wq[t * width + hd]), fused.subarray(3 * hd * width, (3 * hd + 1) * width)));
  const sequential = referenceForward('gpt_neox', { ...config, use_parallel_residual: false }, tensors, ids);
  assert.ok(!close(sequential.hidden, referenceForward('gpt_neox', config, tensors, ids).hidden, 1e-3));
  assert.ok(close(sequential.attention.subarray(0, 4 * n * n), referenceForward('gpt_neox', config, tensors, ids).attention.subarray(0, 4 * n * n)));
});

test('gpt_neo is GPT-2 with Linear weights, unscaled scores and windows on its local layers', () => {
  const { config, tensors } = tinyCheckpoint({ arch: 'gpt_neo', naming: 'tinystories', seed: 3 });
  const d = config.hidden_size;
  const hd = d / config.num_heads;
  const I = 4 * d;
  const transposed = (name, rows, cols) => {
    const values = tensors[name];
    const out = new Float64Array(rows * cols);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[j * rows + i] = values[i * cols + j];
    return out;
  };
  // GPT-2's Conv1D [in, out] = Linear weight^T; its c_attn is [q | k | v], with q times sqrt(hd) so that
  // GPT-2's 1/sqrt(hd) scale gives GPT-Neo's unscaled scores; q, k and v biases zero.
  const gpt2Tensors = { 'wte.weight': tensors['wte.weight'], 'wpe.weight': tensors['wpe.weight'], 'ln_f.weight': tensors['ln_f.weight'], 'ln_f.bias': tensors['ln_f.bias'] };
  for (let i = 0; i < config.num_layers; i++) {
    const p = `h.${i}.`;
    const [q, k, v] = ['q_proj', 'k_proj', 'v_proj'].map((part) => transposed(`${p}attn.attention.${part}.weight`, d, d));
    const cAttn = new Float64Array(d * 3 * d);
    for (let t = 0; t < d; t++) {
      for (let c = 0; c < d; c++) {
        cAttn[t * 3 * d + c] = q[t * d + c] * Math.sqrt(hd);
        cAttn[t * 3 * d + d + c] = k[t * d + c];
        cAttn[t * 3 * d + 2 * d + c] = v[t * d + c];
      }
    }
    Object.assign(gpt2Tensors, {
      [`${p}ln_1.weight`]: tensors[`${p}ln_1.weight`], [`${p}ln_1.bias`]: tensors[`${p}ln_1.bias`],
      [`${p}ln_2.weight`]: tensors[`${p}ln_2.weight`], [`${p}ln_2.bias`]: tensors[`${p}ln_2.bias`],
      [`${p}attn.c_attn.weight`]: cAttn, [`${p}attn.c_attn.bias`]: new Float64Array(3 * d),
      [`${p}attn.c_proj.weight`]: transposed(`${p}attn.attention.out_proj.weight`, d, d), [`${p}attn.c_proj.bias`]: tensors[`${p}attn.attention.out_proj.bias`],
      [`${p}mlp.c_fc.weight`]: transposed(`${p}mlp.c_fc.weight`, I, d), [`${p}mlp.c_fc.bias`]: tensors[`${p}mlp.c_fc.bias`],
      [`${p}mlp.c_proj.weight`]: transposed(`${p}mlp.c_proj.weight`, d, I), [`${p}mlp.c_proj.bias`]: tensors[`${p}mlp.c_proj.bias`],
    });
  }
  const gpt2Config = { model_type: 'gpt2', n_embd: d, n_head: config.num_heads, n_layer: config.num_layers, vocab_size: config.vocab_size, n_positions: config.max_position_embeddings };
  const ids = [4, 2, 7, 1, 9, 3];
  const global = { ...config, attention_layers: ['global', 'global'] };
  assert.ok(close(referenceForward('gpt_neo', global, tensors, ids).logits, referenceForward('gpt2', gpt2Config, gpt2Tensors, ids).logits, 1e-9));
  // Its local layer (layer 1, window 3) changes the numbers and hides keys 3 or more tokens back.
  const neo = referenceForward('gpt_neo', config, tensors, ids);
  assert.ok(!close(neo.logits, referenceForward('gpt2', gpt2Config, gpt2Tensors, ids).logits, 1e-3));
  const n = ids.length;
  const layer1 = neo.attention.subarray(config.num_heads * n * n);
  for (let row = 0; row < layer1.length / n; row++) {
    for (let key = 0; key < n; key++) assert.equal(layer1[row * n + key] > 0, key <= row % n && key > row % n - 3);
  }
});

test('opt with norms before each half is GPT-2 with Linear weights, ReLU and positions two rows on', () => {
  const { config, tensors } = tinyCheckpoint({ arch: 'opt', naming: '125m', seed: 3 });
  const d = config.hidden_size;
  const I = config.ffn_dim;
  const transposed = (name, rows, cols) => {
    const out = new Float64Array(rows * cols);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[j * rows + i] = tensors[name][i * cols + j];
    return out;
  };
  const p0 = 'model.decoder.';
  const gpt2Tensors = {
    'wte.weight': tensors[`${p0}embed_tokens.weight`], 'wpe.weight': tensors[`${p0}embed_positions.weight`].slice(2 * d),
    'ln_f.weight': tensors[`${p0}final_layer_norm.weight`], 'ln_f.bias': tensors[`${p0}final_layer_norm.bias`],
  };
  for (let i = 0; i < config.num_hidden_layers; i++) {
    const p = `${p0}layers.${i}.`;
    const g = `h.${i}.`;
    const [q, k, v] = ['q_proj', 'k_proj', 'v_proj'].map((part) => transposed(`${p}self_attn.${part}.weight`, d, d));
    const cAttn = new Float64Array(d * 3 * d);
    for (let t = 0; t < d; t++) for (let c = 0; c < d; c++) [q, k, v].forEach((w, part) => { cAttn[t * 3 * d + part * d + c] = w[t * d + c]; });
    Object.assign(gpt2Tensors, {
      [`${g}ln_1.weight`]: tensors[`${p}self_attn_layer_norm.weight`], [`${g}ln_1.bias`]: tensors[`${p}self_attn_layer_norm.bias`],
      [`${g}ln_2.weight`]: tensors[`${p}final_layer_norm.weight`], [`${g}ln_2.bias`]: tensors[`${p}final_layer_norm.bias`],
      [`${g}attn.c_attn.weight`]: cAttn,
      [`${g}attn.c_attn.bias`]: Float64Array.from([...tensors[`${p}self_attn.q_proj.bias`], ...tensors[`${p}self_attn.k_proj.bias`], ...tensors[`${p}self_attn.v_proj.bias`]]),
      [`${g}attn.c_proj.weight`]: transposed(`${p}self_attn.out_proj.weight`, d, d), [`${g}attn.c_proj.bias`]: tensors[`${p}self_attn.out_proj.bias`],
      [`${g}mlp.c_fc.weight`]: transposed(`${p}fc1.weight`, I, d), [`${g}mlp.c_fc.bias`]: tensors[`${p}fc1.bias`],
      [`${g}mlp.c_proj.weight`]: transposed(`${p}fc2.weight`, d, I), [`${g}mlp.c_proj.bias`]: tensors[`${p}fc2.bias`],
    });
  }
  const gpt2Config = { model_type: 'gpt2', n_embd: d, n_head: config.num_attention_heads, n_layer: config.num_hidden_layers, n_inner: I, vocab_size: config.vocab_size, n_positions: config.max_position_embeddings };
  const ids = [4, 2, 7, 1, 9, 3];
  // The first layer's attention comes before any MLP: the two agree there. After it OPT's ReLU is not
  // GPT-2's GELU, so the hidden states differ.
  const opt = referenceForward('opt', config, tensors, ids, { trace: true });
  const gpt2 = referenceForward('gpt2', gpt2Config, gpt2Tensors, ids, { trace: true });
  assert.ok(close(opt.layers[0].weights, gpt2.layers[0].weights, 1e-9));
  assert.ok(close(opt.layers[0].output, gpt2.layers[0].output, 1e-9));
  assert.ok(!close(opt.hidden, gpt2.hidden, 1e-3), 'ReLU is not GELU');
  // Post-norm (do_layer_norm_before false): another forward from the same weights.
  assert.ok(!close(referenceForward('opt', { ...config, do_layer_norm_before: false }, tensors, ids).hidden, opt.hidden, 1e-3));
});

test('gemma is Llama with (1 + w) norms and embeddings scaled by sqrt(d) in the stored dtype, its gate activated by hidden_activation', () => {
  const { config, tensors } = tinyCheckpoint({ arch: 'gemma', naming: '7b', seed: 3, hidden_activation: 'silu', attention_bias: false });
  const d = config.hidden_size;
  // Llama's norms are Gemma's with 1 added to the weights; its embeddings Gemma's times sqrt(d).
  const llamaTensors = Object.fromEntries(Object.entries(tensors).map(([name, values]) => [name,
    /norm\.weight$/.test(name) ? values.map((value) => 1 + value) : values]));
  llamaTensors['model.embed_tokens.weight'] = tensors['model.embed_tokens.weight'].map((value) => value * Math.fround(Math.sqrt(d)));
  const llamaConfig = { ...config, model_type: 'llama', hidden_act: 'silu', tie_word_embeddings: true };
  const ids = [4, 2, 7, 1, 9];
  const gemma = referenceForward('gemma', config, tensors, ids);
  const llama = referenceForward('llama', llamaConfig, llamaTensors, ids);
  assert.ok(close(gemma.hidden, llama.hidden, 1e-9));
  assert.ok(close(gemma.attention, llama.attention, 1e-9));
  // The head is tied to the unscaled embeddings: logits differ from Llama's (tied to the scaled ones) by sqrt(d).
  assert.ok(close(gemma.logits.map((value) => value * Math.fround(Math.sqrt(d))), llama.logits, 1e-9));
  // BF16 rounds sqrt(32) = 5.65685... to 5.65625.
  assert.equal(modelDimensions('gemma', { ...config, torch_dtype: 'bfloat16' }).normalizer, 5.65625);
});

test('phi is GPT-NeoX\'s parallel layer with one norm for both halves, and a biased head', () => {
  const { config, tensors } = tinyCheckpoint({ arch: 'phi', naming: 'phi-2', seed: 3 });
  const d = config.hidden_size;
  const hd = d / config.num_attention_heads;
  // GPT-NeoX with post_attention_layernorm = input_layernorm, q/k/v fused per head, no head bias.
  const neoxTensors = {
    'gpt_neox.embed_in.weight': tensors['model.embed_tokens.weight'], 'lm_head.weight': tensors['lm_head.weight'],
    'gpt_neox.final_layer_norm.weight': tensors['model.final_layernorm.weight'], 'gpt_neox.final_layer_norm.bias': tensors['model.final_layernorm.bias'],
  };
  for (let i = 0; i < config.num_hidden_layers; i++) {
    const p = `model.layers.${i}.`;
    const x = `gpt_neox.layers.${i}.`;
    const fused = new Float64Array(3 * d * d);
    const fusedBias = new Float64Array(3 * d);
    ['q_proj', 'k_proj', 'v_proj'].forEach((part, s) => {
      for (let h = 0; h < config.num_attention_heads; h++) {
        for (let c = 0; c < hd; c++) {
          const row = (h * 3 + s) * hd + c;
          fused.set(tensors[`${p}self_attn.${part}.weight`].subarray((h * hd + c) * d, (h * hd + c + 1) * d), row * d);
          fusedBias[row] = tensors[`${p}self_attn.${part}.bias`][h * hd + c];
        }
      }
    });
    for (const norm of ['input_layernorm', 'post_attention_layernorm']) {
      neoxTensors[`${x}${norm}.weight`] = tensors[`${p}input_layernorm.weight`];
      neoxTensors[`${x}${norm}.bias`] = tensors[`${p}input_layernorm.bias`];
    }
    Object.assign(neoxTensors, {
      [`${x}attention.query_key_value.weight`]: fused, [`${x}attention.query_key_value.bias`]: fusedBias,
      [`${x}attention.dense.weight`]: tensors[`${p}self_attn.dense.weight`], [`${x}attention.dense.bias`]: tensors[`${p}self_attn.dense.bias`],
      [`${x}mlp.dense_h_to_4h.weight`]: tensors[`${p}mlp.fc1.weight`], [`${x}mlp.dense_h_to_4h.bias`]: tensors[`${p}mlp.fc1.bias`],
      [`${x}mlp.dense_4h_to_h.weight`]: tensors[`${p}mlp.fc2.weight`], [`${x}mlp.dense_4h_to_h.bias`]: tensors[`${p}mlp.fc2.bias`],
    });
  }
  const neoxConfig = {
    model_type: 'gpt_neox', hidden_size: d, num_attention_heads: config.num_attention_heads, num_hidden_layers: config.num_hidden_layers,
    intermediate_size: config.intermediate_size, vocab_size: config.vocab_size, max_position_embeddings: config.max_position_embeddings,
    rotary_pct: config.partial_rotary_factor, rotary_emb_base: config.rope_theta, hidden_act: 'gelu_new', use_parallel_residual: true,
  };
  const ids = [4, 2, 7, 1, 9];
  const phi = referenceForward('phi', config, tensors, ids);
  const neox = referenceForward('gpt_neox', neoxConfig, neoxTensors, ids);
  assert.ok(close(phi.hidden, neox.hidden, 1e-9) && close(phi.attention, neox.attention, 1e-9));
  const bias = tensors['lm_head.bias'];
  assert.ok(close(phi.logits, neox.logits.map((value, i) => value + bias[i % bias.length]), 1e-9));
});

test('electra is BERT under electra., with narrower embeddings projected by embeddings_project', () => {
  const { config, tensors } = tinyCheckpoint({ arch: 'electra', naming: 'no-projection', seed: 3 });
  const ids = [4, 2, 7, 1, 9];
  // embedding_size = hidden_size: no projection, BERT's numbers.
  assert.ok(close(referenceForward('electra', config, tensors, ids).hidden, referenceForward('bert', { ...config, model_type: 'bert' }, tensors, ids).hidden));
  const projected = tinyCheckpoint({ arch: 'electra', naming: 'discriminator', seed: 3 });
  const E = projected.config.embedding_size;
  assert.equal(projected.tensors['embeddings.word_embeddings.weight'].length, projected.config.vocab_size * E);
  // With the projection the layers read hidden_size-wide rows all the same.
  const out = referenceForward('electra', projected.config, projected.tensors, ids, { trace: true });
  assert.equal(out.layers[0].x.length, ids.length * projected.config.hidden_size);
});

test('every family checkpoint holds exactly its reference tensors under the hub names, plus what a loader ignores', () => {
  for (const { arch, naming } of familyCheckpointVariants.filter((variant) => variant.dtype === 'F32')) {
    const { config, entries, tensors } = tinyCheckpoint({ arch, naming });
    const kept = entries.map((entry) => canonicalName(arch, entry.name)).filter((name) => name !== null).sort();
    assert.deepEqual(kept, Object.keys(tensors).sort(), `${arch} / ${naming}`);
    const required = referenceTensorShapes(arch, config).filter((spec) => !spec.optional).map((spec) => spec.name);
    for (const name of required) assert.ok(name in tensors, `${arch} / ${naming}: ${name}`);
  }
  assert.deepEqual(families, ['distilbert', 'roberta', 'xlm-roberta', 'qwen2', 'mistral', 'gpt_neox', 'gpt_neo', 'opt', 'gemma', 'phi', 'electra']);
});
