// Float64 forward passes of the decoder families issue 22 added beyond the
// Llama variants, each written from its transformers modeling file with the
// plain-loop helpers of model-reference.mjs (which dispatches here):
//   gpt_neox  modeling_gpt_neox.py (Pythia)
//   gpt_neo   modeling_gpt_neo.py (GPT-Neo, TinyStories)
//   opt       modeling_opt.py
//   gemma     modeling_gemma.py
//   phi       modeling_phi.py
// Canonical tensor names are the core's: the hub's under the family's
// prefix (GPT-Neo's without transformer., as GPT-2's; OPT's with model.), with the LM head
// named lm_head.weight (GPT-NeoX's embed_out).
import {
  add, applyEach, applyRotary, attentionTrace, forwardSetup, gatherRows, geluErf, geluTanh, layerNorm, linearOutIn, silu,
  multiHeadAttention, repeatKvColumns, transpose,
} from './model-reference.mjs';
import { storedValue } from './safetensors.mjs';

export const DECODERS = ['gpt_neox', 'gpt_neo', 'opt', 'gemma', 'phi'];

const activations = { relu: (x) => Math.max(x, 0), silu, gelu: geluErf, gelu_new: geluTanh, gelu_pytorch_tanh: geluTanh, gelu_fast: geluTanh };

function need(arch, config, key) {
  const value = config[key];
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${arch} config: ${key} must be a positive integer, got ${value}`);
  return value;
}

// GPTNeoXConfig's defaults.
function gptNeoxDimensions(config) {
  const width = need('gpt_neox', config, 'hidden_size');
  const heads = need('gpt_neox', config, 'num_attention_heads');
  if (width % heads !== 0) throw new Error(`gpt_neox config: ${heads} heads do not divide hidden_size ${width}`);
  if (config.rope_scaling) throw new Error('gpt_neox reference: rope_scaling is not implemented');
  const hiddenAct = config.hidden_act ?? 'gelu';
  if (!(hiddenAct in activations)) throw new Error(`gpt_neox reference: hidden_act ${hiddenAct} is not implemented`);
  const headWidth = width / heads;
  return {
    layers: need('gpt_neox', config, 'num_hidden_layers'), heads, kvHeads: heads, width, headWidth,
    mlpWidth: need('gpt_neox', config, 'intermediate_size'), vocabSize: need('gpt_neox', config, 'vocab_size'),
    maxPositions: config.max_position_embeddings ?? 2048, epsilon: config.layer_norm_eps ?? 1e-5,
    // GPTNeoXAttention.rotary_ndims = int(head_size * rotary_pct).
    rotaryWidth: Math.trunc(headWidth * (config.rotary_pct ?? 0.25)), ropeTheta: config.rotary_emb_base ?? 10000,
    parallel: config.use_parallel_residual ?? true, bias: config.attention_bias ?? true, activation: activations[hiddenAct],
  };
}

// GPTNeoConfig's defaults; attention_layers as saved, else attention_types expanded.
function gptNeoDimensions(config) {
  const width = need('gpt_neo', config, 'hidden_size');
  const heads = need('gpt_neo', config, 'num_heads');
  const layers = need('gpt_neo', config, 'num_layers');
  if (width % heads !== 0) throw new Error(`gpt_neo config: ${heads} heads do not divide hidden_size ${width}`);
  const hiddenAct = config.activation_function ?? 'gelu_new';
  if (!(hiddenAct in activations)) throw new Error(`gpt_neo reference: activation_function ${hiddenAct} is not implemented`);
  const types = config.attention_layers ??
    (config.attention_types ?? [[['global', 'local'], 12]]).flatMap(([kinds, repeat]) => Array(repeat).fill(kinds).flat());
  if (types.length !== layers) throw new Error(`gpt_neo config: ${types.length} attention layer types for ${layers} layers`);
  return {
    layers, heads, kvHeads: heads, width, headWidth: width / heads,
    mlpWidth: config.intermediate_size ?? 4 * width, vocabSize: need('gpt_neo', config, 'vocab_size'),
    maxPositions: config.max_position_embeddings ?? 2048, epsilon: config.layer_norm_epsilon ?? 1e-5,
    windowSize: config.window_size ?? 256, local: types.map((kind) => kind === 'local'), activation: activations[hiddenAct],
  };
}

// OPTConfig's defaults.
function optDimensions(config) {
  const width = need('opt', config, 'hidden_size');
  const heads = need('opt', config, 'num_attention_heads');
  if (width % heads !== 0) throw new Error(`opt config: ${heads} heads do not divide hidden_size ${width}`);
  const act = config.activation_function ?? 'relu';
  if (!(act in activations)) throw new Error(`opt reference: activation_function ${act} is not implemented`);
  const before = config.do_layer_norm_before ?? true;
  return {
    layers: need('opt', config, 'num_hidden_layers'), heads, kvHeads: heads, width, headWidth: width / heads,
    mlpWidth: need('opt', config, 'ffn_dim'), vocabSize: need('opt', config, 'vocab_size'),
    // OPTLearnedPositionalEmbedding: max_position_embeddings + 2 rows, read at position + 2.
    maxPositions: config.max_position_embeddings ?? 2048, epsilon: 1e-5, before,
    finalNorm: before && !config._remove_final_layer_norm, bias: config.enable_bias ?? true, activation: activations[act],
    // word_embed_proj_dim: the word embeddings' width (project_in / project_out when it differs).
    embedWidth: config.word_embed_proj_dim ?? width,
  };
}

// GemmaConfig's defaults. GemmaMLP reads hidden_activation (gelu_pytorch_tanh when absent), not hidden_act.
function gemmaDimensions(config) {
  const width = need('gemma', config, 'hidden_size');
  const heads = need('gemma', config, 'num_attention_heads');
  const act = config.hidden_activation ?? 'gelu_pytorch_tanh';
  if (!(act in activations)) throw new Error(`gemma reference: hidden_activation ${act} is not implemented`);
  if (config.rope_scaling) throw new Error('gemma reference: rope_scaling is not implemented');
  return {
    layers: need('gemma', config, 'num_hidden_layers'), heads, kvHeads: config.num_key_value_heads ?? heads, width,
    headWidth: config.head_dim ?? 256, mlpWidth: need('gemma', config, 'intermediate_size'),
    vocabSize: need('gemma', config, 'vocab_size'), maxPositions: config.max_position_embeddings ?? 8192,
    epsilon: config.rms_norm_eps ?? 1e-6, ropeTheta: config.rope_theta ?? 10000, bias: config.attention_bias ?? false,
    activation: activations[act],
    // GemmaModel: torch.tensor(hidden_size ** 0.5, dtype=hidden_states.dtype), the dtype the model runs in.
    normalizer: storedValue({ float32: 'F32', float16: 'F16', bfloat16: 'BF16' }[config.torch_dtype ?? 'float32'], Math.sqrt(width)),
  };
}

// PhiConfig's defaults.
function phiDimensions(config) {
  const width = need('phi', config, 'hidden_size');
  const heads = need('phi', config, 'num_attention_heads');
  if (width % heads !== 0) throw new Error(`phi config: ${heads} heads do not divide hidden_size ${width}`);
  const act = config.hidden_act ?? 'gelu_new';
  if (!(act in activations)) throw new Error(`phi reference: hidden_act ${act} is not implemented`);
  if (config.rope_scaling || config.qk_layernorm) throw new Error('phi reference: rope_scaling and qk_layernorm are not implemented');
  const headWidth = width / heads;
  return {
    layers: need('phi', config, 'num_hidden_layers'), heads, kvHeads: config.num_key_value_heads ?? heads, width, headWidth,
    mlpWidth: need('phi', config, 'intermediate_size'), vocabSize: need('phi', config, 'vocab_size'),
    maxPositions: config.max_position_embeddings ?? 2048, epsilon: config.layer_norm_eps ?? 1e-5,
    // PhiAttention.rotary_ndims = int(partial_rotary_factor * head_dim).
    rotaryWidth: Math.trunc(headWidth * (config.partial_rotary_factor ?? 0.5)), ropeTheta: config.rope_theta ?? 10000,
    activation: activations[act],
  };
}

export function decoderDimensions(arch, config) {
  if (arch === 'phi') return phiDimensions(config);
  if (arch === 'gemma') return gemmaDimensions(config);
  if (arch === 'opt') return optDimensions(config);
  if (arch === 'gpt_neox') return gptNeoxDimensions(config);
  if (arch === 'gpt_neo') return gptNeoDimensions(config);
  throw new Error(`reference: unknown decoder ${arch}`);
}

export function decoderTensorShapes(arch, config) {
  const dims = decoderDimensions(arch, config);
  const { layers, width: d, mlpWidth: I, vocabSize: V } = dims;
  const specs = [];
  const add1 = (name, shape, optional = false) => specs.push({ name, shape, optional });
  if (arch === 'phi') {
    const kv = dims.kvHeads * dims.headWidth;
    add1('model.embed_tokens.weight', [V, d]);
    for (let i = 0; i < layers; i++) {
      const p = `model.layers.${i}.`;
      add1(`${p}input_layernorm.weight`, [d]); add1(`${p}input_layernorm.bias`, [d]);
      for (const [part, rows] of [['q_proj', d], ['k_proj', kv], ['v_proj', kv], ['dense', d]]) {
        add1(`${p}self_attn.${part}.weight`, [rows, d]); add1(`${p}self_attn.${part}.bias`, [rows]);
      }
      add1(`${p}mlp.fc1.weight`, [I, d]); add1(`${p}mlp.fc1.bias`, [I]);
      add1(`${p}mlp.fc2.weight`, [d, I]); add1(`${p}mlp.fc2.bias`, [d]);
    }
    add1('model.final_layernorm.weight', [d]); add1('model.final_layernorm.bias', [d]);
    add1('lm_head.weight', [V, d], true);
    add1('lm_head.bias', [V]);
    return specs;
  }
  if (arch === 'gemma') {
    const q = dims.heads * dims.headWidth;
    const kv = dims.kvHeads * dims.headWidth;
    add1('model.embed_tokens.weight', [V, d]);
    for (let i = 0; i < layers; i++) {
      const p = `model.layers.${i}.`;
      add1(`${p}input_layernorm.weight`, [d]);
      for (const [part, rows] of [['q_proj', q], ['k_proj', kv], ['v_proj', kv]]) {
        add1(`${p}self_attn.${part}.weight`, [rows, d]);
        if (dims.bias) add1(`${p}self_attn.${part}.bias`, [rows]);
      }
      add1(`${p}self_attn.o_proj.weight`, [d, q]);
      if (dims.bias) add1(`${p}self_attn.o_proj.bias`, [d]);
      add1(`${p}post_attention_layernorm.weight`, [d]);
      add1(`${p}mlp.gate_proj.weight`, [I, d]); add1(`${p}mlp.up_proj.weight`, [I, d]); add1(`${p}mlp.down_proj.weight`, [d, I]);
    }
    add1('model.norm.weight', [d]);
    add1('lm_head.weight', [V, d], true);
    return specs;
  }
  if (arch === 'opt') {
    const p0 = 'model.decoder.';
    const E = dims.embedWidth;
    add1(`${p0}embed_tokens.weight`, [V, E]);
    add1(`${p0}embed_positions.weight`, [dims.maxPositions + 2, d]);
    if (E !== d) add1(`${p0}project_in.weight`, [d, E]);
    for (let i = 0; i < layers; i++) {
      const p = `${p0}layers.${i}.`;
      for (const part of ['k_proj', 'v_proj', 'q_proj', 'out_proj']) {
        add1(`${p}self_attn.${part}.weight`, [d, d]);
        if (dims.bias) add1(`${p}self_attn.${part}.bias`, [d]);
      }
      add1(`${p}self_attn_layer_norm.weight`, [d]); add1(`${p}self_attn_layer_norm.bias`, [d]);
      add1(`${p}fc1.weight`, [I, d]); if (dims.bias) add1(`${p}fc1.bias`, [I]);
      add1(`${p}fc2.weight`, [d, I]); if (dims.bias) add1(`${p}fc2.bias`, [d]);
      add1(`${p}final_layer_norm.weight`, [d]); add1(`${p}final_layer_norm.bias`, [d]);
    }
    if (dims.finalNorm) { add1(`${p0}final_layer_norm.weight`, [d]); add1(`${p0}final_layer_norm.bias`, [d]); }
    if (E !== d) add1(`${p0}project_out.weight`, [E, d]);
    add1('lm_head.weight', [V, E], true);
    return specs;
  }
  if (arch === 'gpt_neo') {
    add1('wte.weight', [V, d]);
    add1('wpe.weight', [dims.maxPositions, d]);
    for (let i = 0; i < layers; i++) {
      const p = `h.${i}.`;
      add1(`${p}ln_1.weight`, [d]); add1(`${p}ln_1.bias`, [d]);
      for (const part of ['k_proj', 'v_proj', 'q_proj']) add1(`${p}attn.attention.${part}.weight`, [d, d]);
      add1(`${p}attn.attention.out_proj.weight`, [d, d]); add1(`${p}attn.attention.out_proj.bias`, [d]);
      add1(`${p}ln_2.weight`, [d]); add1(`${p}ln_2.bias`, [d]);
      add1(`${p}mlp.c_fc.weight`, [I, d]); add1(`${p}mlp.c_fc.bias`, [I]);
      add1(`${p}mlp.c_proj.weight`, [d, I]); add1(`${p}mlp.c_proj.bias`, [d]);
    }
    add1('ln_f.weight', [d]); add1('ln_f.bias', [d]);
    add1('lm_head.weight', [V, d], true);
    return specs;
  }
  add1('gpt_neox.embed_in.weight', [V, d]);
  for (let i = 0; i < layers; i++) {
    const p = `gpt_neox.layers.${i}.`;
    for (const norm of ['input_layernorm', 'post_attention_layernorm']) {
      add1(`${p}${norm}.weight`, [d]); add1(`${p}${norm}.bias`, [d]);
    }
    add1(`${p}attention.query_key_value.weight`, [3 * d, d]);
    if (dims.bias) add1(`${p}attention.query_key_value.bias`, [3 * d]);
    add1(`${p}attention.dense.weight`, [d, d]);
    if (dims.bias) add1(`${p}attention.dense.bias`, [d]);
    add1(`${p}mlp.dense_h_to_4h.weight`, [I, d]); add1(`${p}mlp.dense_h_to_4h.bias`, [I]);
    add1(`${p}mlp.dense_4h_to_h.weight`, [d, I]); add1(`${p}mlp.dense_4h_to_h.bias`, [d]);
  }
  add1('gpt_neox.final_layer_norm.weight', [d]); add1('gpt_neox.final_layer_norm.bias', [d]);
  add1('lm_head.weight', [V, d], true);
  return specs;
}

// apply_rotary_pos_emb on query[..., :rotary_ndims] (rotate_half within those
// columns, inv_freq = base^(-2i / rotary_ndims)); the rest of each head passes.
export function partialRotary(x, rows, heads, headWidth, rotaryWidth, theta) {
  const y = Float64Array.from(x);
  const half = rotaryWidth / 2;
  for (let p = 0; p < rows; p++) {
    for (let h = 0; h < heads; h++) {
      const base = (p * heads + h) * headWidth;
      for (let i = 0; i < half; i++) {
        const angle = p * theta ** (-(2 * i) / rotaryWidth);
        const first = x[base + i];
        const second = x[base + i + half];
        y[base + i] = first * Math.cos(angle) - second * Math.sin(angle);
        y[base + i + half] = second * Math.cos(angle) + first * Math.sin(angle);
      }
    }
  }
  return y;
}

// GPTNeoXForCausalLM: embed_in, per layer GPTNeoXLayer.forward, final_layer_norm, embed_out.
function gptNeoxForward(config, tensors, ids, { keyMask, trace }) {
  const { dims, n, get } = forwardSetup('gpt_neox', config, tensors, ids);
  const { layers, heads, width: d, headWidth: hd, mlpWidth: I, vocabSize: V, epsilon } = dims;
  const norm = (x, name) => layerNorm(x, n, d, get(`${name}.weight`, d), get(`${name}.bias`, d), epsilon);
  const linear = (x, name, inWidth, outWidth, bias = true) =>
    linearOutIn(x, n, get(`${name}.weight`, inWidth * outWidth), inWidth, outWidth, bias ? get(`${name}.bias`, outWidth) : null);
  let x = gatherRows(get('gpt_neox.embed_in.weight', V * d), ids, d);
  const attention = new Float64Array(layers * heads * n * n);
  const steps = [];
  for (let layer = 0; layer < layers; layer++) {
    const p = `gpt_neox.layers.${layer}.`;
    const a = norm(x, `${p}input_layernorm`);
    // qkv.view(..., heads, 3 * head_size): query, key, value are thirds of each head's slice.
    const qkv = linear(a, `${p}attention.query_key_value`, d, 3 * d, dims.bias);
    const [q0, k0, v] = [0, 1, 2].map((part) => {
      const y = new Float64Array(n * d);
      for (let i = 0; i < n; i++) {
        for (let h = 0; h < heads; h++) {
          for (let c = 0; c < hd; c++) y[i * d + h * hd + c] = qkv[i * 3 * d + h * 3 * hd + part * hd + c];
        }
      }
      return y;
    });
    const q = partialRotary(q0, n, heads, hd, dims.rotaryWidth, dims.ropeTheta);
    const k = partialRotary(k0, n, heads, hd, dims.rotaryWidth, dims.ropeTheta);
    const attended = multiHeadAttention({ q, k, v, n, heads, kvHeads: heads, headWidth: hd, causal: true, keyMask });
    attention.set(attended.weights, layer * heads * n * n);
    const output = linear(attended.concatenated, `${p}attention.dense`, d, d, dims.bias);
    const afterAttention = add(x, output);
    // use_parallel_residual: mlp(post_attention_layernorm(x)) + attn + x; else mlp(ln(attn + x)) + attn + x.
    const mlpInput = norm(dims.parallel ? x : afterAttention, `${p}post_attention_layernorm`);
    const mlp = linear(applyEach(dims.activation, linear(mlpInput, `${p}mlp.dense_h_to_4h`, d, I)), `${p}mlp.dense_4h_to_h`, I, d);
    x = add(afterAttention, mlp);
    if (trace) {
      // The fused weight's rows of each part, per head, as [in, out] columns.
      const fused = get(`${p}attention.query_key_value.weight`, 3 * d * d);
      const [wq, wk, wv] = [0, 1, 2].map((part) => {
        const rows = new Float64Array(d * d);
        for (let h = 0; h < heads; h++) {
          for (let c = 0; c < hd; c++) rows.set(fused.subarray((h * 3 * hd + part * hd + c) * d, (h * 3 * hd + part * hd + c + 1) * d), (h * hd + c) * d);
        }
        return transpose(rows, d, d);
      });
      const wo = transpose(get(`${p}attention.dense.weight`, d * d), d, d);
      steps.push({ x: a, wq, wk, wv, wo, q, k, v, ...attentionTrace(attended), output, layerOutput: x });
    }
  }
  const hidden = norm(x, 'gpt_neox.final_layer_norm');
  // GPTNeoXConfig's default is an untied embed_out; a file without one is tied (as the core does).
  const tied = !tensors['lm_head.weight'] || config.tie_word_embeddings === true;
  const lmHead = tied ? get('gpt_neox.embed_in.weight', V * d) : get('lm_head.weight', V * d);
  return { attention, hidden, logits: linearOutIn(hidden, n, lmHead, d, V, null), ...(trace ? { layers: steps } : {}) };
}

// GPTNeoForCausalLM: wte + wpe, per layer GPTNeoBlock.forward, ln_f, lm_head (tied to wte).
function gptNeoForward(config, tensors, ids, { keyMask, trace }) {
  const { dims, n, get } = forwardSetup('gpt_neo', config, tensors, ids);
  const { layers, heads, width: d, headWidth: hd, mlpWidth: I, vocabSize: V, epsilon } = dims;
  const norm = (x, name) => layerNorm(x, n, d, get(`${name}.weight`, d), get(`${name}.bias`, d), epsilon);
  const linear = (x, name, inWidth, outWidth, bias = true) =>
    linearOutIn(x, n, get(`${name}.weight`, inWidth * outWidth), inWidth, outWidth, bias ? get(`${name}.bias`, outWidth) : null);
  let x = add(gatherRows(get('wte.weight', V * d), ids, d), gatherRows(get('wpe.weight', dims.maxPositions * d), [...Array(n).keys()], d));
  const attention = new Float64Array(layers * heads * n * n);
  const steps = [];
  for (let layer = 0; layer < layers; layer++) {
    const p = `h.${layer}.`;
    const a = norm(x, `${p}ln_1`);
    const [q, k, v] = ['q_proj', 'k_proj', 'v_proj'].map((part) => linear(a, `${p}attn.attention.${part}`, d, d, false));
    // _attn: torch.matmul(query, key^T) with no scaling; a local layer's bias hides keys j <= i - window_size.
    const window = dims.local[layer] ? dims.windowSize : 0;
    const attended = multiHeadAttention({ q, k, v, n, heads, kvHeads: heads, headWidth: hd, causal: true, keyMask, window, scale: 1 });
    attention.set(attended.weights, layer * heads * n * n);
    const output = linear(attended.concatenated, `${p}attn.attention.out_proj`, d, d);
    x = add(x, output);
    const inner = applyEach(dims.activation, linear(norm(x, `${p}ln_2`), `${p}mlp.c_fc`, d, I));
    x = add(x, linear(inner, `${p}mlp.c_proj`, I, d));
    if (trace) {
      const [wq, wk, wv, wo] = ['q_proj', 'k_proj', 'v_proj', 'out_proj'].map((part) => transpose(get(`${p}attn.attention.${part}.weight`, d * d), d, d));
      steps.push({ x: a, wq, wk, wv, wo, q, k, v, ...attentionTrace(attended), output, layerOutput: x });
    }
  }
  const hidden = norm(x, 'ln_f');
  // GPTNeoConfig ties lm_head to wte unless tie_word_embeddings is false.
  const tied = !tensors['lm_head.weight'] || config.tie_word_embeddings !== false;
  const lmHead = tied ? get('wte.weight', V * d) : get('lm_head.weight', V * d);
  return { attention, hidden, logits: linearOutIn(hidden, n, lmHead, d, V, null), ...(trace ? { layers: steps } : {}) };
}

// OPTForCausalLM: embed_tokens + embed_positions[position + 2], OPTDecoderLayer
// per layer (norms before or after each residual add), the decoder's
// final_layer_norm when it has one, lm_head (tied to embed_tokens).
function optForward(config, tensors, ids, { keyMask, trace }) {
  const { dims, n, get } = forwardSetup('opt', config, tensors, ids);
  const { layers, heads, width: d, headWidth: hd, mlpWidth: I, vocabSize: V, epsilon } = dims;
  const norm = (x, name) => layerNorm(x, n, d, get(`${name}.weight`, d), get(`${name}.bias`, d), epsilon);
  const linear = (x, name, inWidth, outWidth) =>
    linearOutIn(x, n, get(`${name}.weight`, inWidth * outWidth), inWidth, outWidth, dims.bias ? get(`${name}.bias`, outWidth) : null);
  // OPTLearnedPositionalEmbedding: cumsum(attention_mask) * attention_mask - 1, read 2 rows on
  // (all ones without a mask: 2, 3, ...; a padding token reads row 1).
  const mask = Array.from({ length: n }, (_, i) => (keyMask && !keyMask[i] ? 0 : 1));
  let kept = 0;
  const positions = mask.map((m) => { kept += m; return kept * m - 1 + 2; });
  // OPTDecoder.forward: project_in on the word embeddings (E wide), then the d-wide positions added.
  const E = dims.embedWidth;
  let words = gatherRows(get('model.decoder.embed_tokens.weight', V * E), ids, E);
  if (E !== d) words = linearOutIn(words, n, get('model.decoder.project_in.weight', d * E), E, d, null);
  let x = add(words, gatherRows(get('model.decoder.embed_positions.weight', (dims.maxPositions + 2) * d), positions, d));
  const attention = new Float64Array(layers * heads * n * n);
  const steps = [];
  for (let layer = 0; layer < layers; layer++) {
    const p = `model.decoder.layers.${layer}.`;
    const input = x;
    const a = dims.before ? norm(x, `${p}self_attn_layer_norm`) : x;
    const [q, k, v] = ['q_proj', 'k_proj', 'v_proj'].map((part) => linear(a, `${p}self_attn.${part}`, d, d));
    const attended = multiHeadAttention({ q, k, v, n, heads, kvHeads: heads, headWidth: hd, causal: true, keyMask });
    attention.set(attended.weights, layer * heads * n * n);
    const output = linear(attended.concatenated, `${p}self_attn.out_proj`, d, d);
    x = add(input, output);
    if (!dims.before) x = norm(x, `${p}self_attn_layer_norm`);
    const m = dims.before ? norm(x, `${p}final_layer_norm`) : x;
    x = add(x, linear(applyEach(dims.activation, linear(m, `${p}fc1`, d, I)), `${p}fc2`, I, d));
    if (!dims.before) x = norm(x, `${p}final_layer_norm`);
    if (trace) {
      const [wq, wk, wv, wo] = ['q_proj', 'k_proj', 'v_proj', 'out_proj'].map((part) => transpose(get(`${p}self_attn.${part}.weight`, d * d), d, d));
      steps.push({ x: a, wq, wk, wv, wo, q, k, v, ...attentionTrace(attended), output, layerOutput: x });
    }
  }
  const hidden = dims.finalNorm ? norm(x, 'model.decoder.final_layer_norm') : x;
  // project_out after the final norm; attnlens' hidden is the state before it (dModel wide).
  const out = E !== d ? linearOutIn(hidden, n, get('model.decoder.project_out.weight', E * d), d, E, null) : hidden;
  const tied = !tensors['lm_head.weight'] || config.tie_word_embeddings !== false;
  const lmHead = tied ? get('model.decoder.embed_tokens.weight', V * E) : get('lm_head.weight', V * E);
  return { attention, hidden, logits: linearOutIn(out, n, lmHead, E, V, null), ...(trace ? { layers: steps } : {}) };
}

// GemmaRMSNorm: x / sqrt(mean(x^2) + eps) * (1 + weight).
function gemmaNorm(x, rows, d, weight, epsilon) {
  const y = new Float64Array(rows * d);
  for (let i = 0; i < rows; i++) {
    let meanSquare = 0;
    for (let c = 0; c < d; c++) meanSquare += x[i * d + c] ** 2 / d;
    const inverse = 1 / Math.sqrt(meanSquare + epsilon);
    for (let c = 0; c < d; c++) y[i * d + c] = x[i * d + c] * inverse * (1 + weight[c]);
  }
  return y;
}

// GemmaForCausalLM: embed_tokens * normalizer, GemmaDecoderLayer per layer
// (Llama's, with GemmaRMSNorm and act(gate) * up), model.norm, lm_head (tied).
function gemmaForward(config, tensors, ids, { keyMask, trace }) {
  const { dims, n, get } = forwardSetup('gemma', config, tensors, ids);
  const { layers, heads, kvHeads, width: d, headWidth: hd, mlpWidth: I, vocabSize: V, epsilon, ropeTheta } = dims;
  const qWidth = heads * hd;
  const kvWidth = kvHeads * hd;
  const linear = (x, name, inWidth, outWidth, bias) =>
    linearOutIn(x, n, get(`${name}.weight`, inWidth * outWidth), inWidth, outWidth, bias ? get(`${name}.bias`, outWidth) : null);
  let x = applyEach((value) => value * dims.normalizer, gatherRows(get('model.embed_tokens.weight', V * d), ids, d));
  const attention = new Float64Array(layers * heads * n * n);
  const steps = [];
  for (let layer = 0; layer < layers; layer++) {
    const p = `model.layers.${layer}.`;
    const a = gemmaNorm(x, n, d, get(`${p}input_layernorm.weight`, d), epsilon);
    const q = applyRotary(linear(a, `${p}self_attn.q_proj`, d, qWidth, dims.bias), n, heads, hd, ropeTheta);
    const k = applyRotary(linear(a, `${p}self_attn.k_proj`, d, kvWidth, dims.bias), n, kvHeads, hd, ropeTheta);
    const v = linear(a, `${p}self_attn.v_proj`, d, kvWidth, dims.bias);
    const attended = multiHeadAttention({ q, k, v, n, heads, kvHeads, headWidth: hd, causal: true, keyMask });
    attention.set(attended.weights, layer * heads * n * n);
    const output = linear(attended.concatenated, `${p}self_attn.o_proj`, qWidth, d, dims.bias);
    x = add(x, output);
    const m = gemmaNorm(x, n, d, get(`${p}post_attention_layernorm.weight`, d), epsilon);
    const gate = applyEach(dims.activation, linear(m, `${p}mlp.gate_proj`, d, I, false));
    const up = linear(m, `${p}mlp.up_proj`, d, I, false);
    for (let i = 0; i < gate.length; i++) gate[i] *= up[i];
    x = add(x, linear(gate, `${p}mlp.down_proj`, I, d, false));
    if (trace) {
      const weight = (part, rows) => transpose(get(`${p}self_attn.${part}.weight`, rows * d), rows, d);
      steps.push({
        x: a, wq: weight('q_proj', qWidth),
        wk: repeatKvColumns(weight('k_proj', kvWidth), d, heads, kvHeads, hd), wv: repeatKvColumns(weight('v_proj', kvWidth), d, heads, kvHeads, hd),
        wo: transpose(get(`${p}self_attn.o_proj.weight`, d * qWidth), d, qWidth),
        q, k: repeatKvColumns(k, n, heads, kvHeads, hd), v: repeatKvColumns(v, n, heads, kvHeads, hd),
        ...attentionTrace(attended), output, layerOutput: x,
      });
    }
  }
  const hidden = gemmaNorm(x, n, d, get('model.norm.weight', d), epsilon);
  const tied = !tensors['lm_head.weight'] || config.tie_word_embeddings !== false;
  const lmHead = tied ? get('model.embed_tokens.weight', V * d) : get('lm_head.weight', V * d);
  return { attention, hidden, logits: linearOutIn(hidden, n, lmHead, d, V, null), ...(trace ? { layers: steps } : {}) };
}

// PhiForCausalLM: embed_tokens, PhiDecoderLayer per layer (attention and the
// MLP both read input_layernorm(x); x + attn + mlp), final_layernorm, lm_head with its bias.
function phiForward(config, tensors, ids, { keyMask, trace }) {
  const { dims, n, get } = forwardSetup('phi', config, tensors, ids);
  const { layers, heads, kvHeads, width: d, headWidth: hd, mlpWidth: I, vocabSize: V, epsilon } = dims;
  const kvWidth = kvHeads * hd;
  const linear = (x, name, inWidth, outWidth) =>
    linearOutIn(x, n, get(`${name}.weight`, inWidth * outWidth), inWidth, outWidth, get(`${name}.bias`, outWidth));
  let x = gatherRows(get('model.embed_tokens.weight', V * d), ids, d);
  const attention = new Float64Array(layers * heads * n * n);
  const steps = [];
  for (let layer = 0; layer < layers; layer++) {
    const p = `model.layers.${layer}.`;
    const h = layerNorm(x, n, d, get(`${p}input_layernorm.weight`, d), get(`${p}input_layernorm.bias`, d), epsilon);
    const q = partialRotary(linear(h, `${p}self_attn.q_proj`, d, d), n, heads, hd, dims.rotaryWidth, dims.ropeTheta);
    const k = partialRotary(linear(h, `${p}self_attn.k_proj`, d, kvWidth), n, kvHeads, hd, dims.rotaryWidth, dims.ropeTheta);
    const v = linear(h, `${p}self_attn.v_proj`, d, kvWidth);
    const attended = multiHeadAttention({ q, k, v, n, heads, kvHeads, headWidth: hd, causal: true, keyMask });
    attention.set(attended.weights, layer * heads * n * n);
    const output = linear(attended.concatenated, `${p}self_attn.dense`, d, d);
    const mlp = linear(applyEach(dims.activation, linear(h, `${p}mlp.fc1`, d, I)), `${p}mlp.fc2`, I, d);
    x = add(add(output, mlp), x);
    if (trace) {
      const weight = (part, rows) => transpose(get(`${p}self_attn.${part}.weight`, rows * d), rows, d);
      steps.push({
        x: h, wq: weight('q_proj', d), wk: repeatKvColumns(weight('k_proj', kvWidth), d, heads, kvHeads, hd),
        wv: repeatKvColumns(weight('v_proj', kvWidth), d, heads, kvHeads, hd), wo: weight('dense', d),
        q, k: repeatKvColumns(k, n, heads, kvHeads, hd), v: repeatKvColumns(v, n, heads, kvHeads, hd),
        ...attentionTrace(attended), output, layerOutput: x,
      });
    }
  }
  const hidden = layerNorm(x, n, d, get('model.final_layernorm.weight', d), get('model.final_layernorm.bias', d), epsilon);
  const tied = !tensors['lm_head.weight'] || config.tie_word_embeddings === true;
  const lmHead = tied ? get('model.embed_tokens.weight', V * d) : get('lm_head.weight', V * d);
  return { attention, hidden, logits: linearOutIn(hidden, n, lmHead, d, V, get('lm_head.bias', V)), ...(trace ? { layers: steps } : {}) };
}

export function decoderForward(arch, config, tensors, ids, options) {
  if (arch === 'phi') return phiForward(config, tensors, ids, options);
  if (arch === 'gemma') return gemmaForward(config, tensors, ids, options);
  if (arch === 'opt') return optForward(config, tensors, ids, options);
  if (arch === 'gpt_neox') return gptNeoxForward(config, tensors, ids, options);
  if (arch === 'gpt_neo') return gptNeoForward(config, tensors, ids, options);
  throw new Error(`reference: unknown decoder ${arch}`);
}
