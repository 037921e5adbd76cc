// Float64 forward passes of GPT-2, BERT, Llama, DistilBERT, RoBERTa (and
// XLM-RoBERTa), Qwen2 and Mistral (and, in model-reference-decoders.mjs,
// GPT-NeoX), written straight from the math (the transformers
// modeling_*.py of each) with plain loops: the independent reference the production loader and
// C++ forward are tested against. Nothing here is shared with web/lib or src.
//
// Data layout, once: every matrix is a row-major Float64Array; activations
// are n x width (row i = token i at position i). Weights keep the orientation
// the hub files store (see the contract): GPT-2's Conv1D is [in, out],
// torch Linear (BERT, Llama) is [out, in]. `tensors` maps the canonical
// names (no transformer./bert. prefix, Llama with model.) to their values.
//
// referenceForward returns
//   attention: [layer][head][query][key]  (layers x heads x n x n)
//   hidden:    n x d, Hugging Face's last_hidden_state (after ln_f / the final
//              norm for GPT-2 and Llama, the last layer's output for BERT)
//   logits:    n x V for GPT-2 and Llama, null for BERT
//   layers:    with { trace: true }, each layer's steps in the shape of the
//              production explain() (see traceLayer below)

import { decoderDimensions, decoderForward, decoderTensorShapes, DECODERS } from './model-reference-decoders.mjs';
import { maskedLmHeadShapes, maskedLmLogits } from './model-reference-heads.mjs';

// ---------------------------------------------------------------------------
// Configuration

// The numbers a forward needs, read from a Hugging Face config.json object
// with the same defaults the transformers config classes use.
export function modelDimensions(arch, config) {
  const need = (key) => {
    const value = config[key];
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${arch} config: ${key} must be a positive integer, got ${value}`);
    return value;
  };
  if (arch === 'gpt2') {
    const width = need('n_embd');
    const heads = need('n_head');
    const activation = config.activation_function ?? 'gelu_new';
    if (activation !== 'gelu_new' && activation !== 'gelu_pytorch_tanh') {
      throw new Error(`gpt2 reference: activation_function ${activation} is not implemented`);
    }
    if (config.scale_attn_by_inverse_layer_idx || config.scale_attn_weights === false) {
      throw new Error('gpt2 reference: only the standard 1/sqrt(head width) attention scale is implemented');
    }
    if (width % heads !== 0) throw new Error(`gpt2 config: ${heads} heads do not divide n_embd ${width}`);
    return {
      layers: need('n_layer'), heads, kvHeads: heads, width, headWidth: width / heads,
      mlpWidth: config.n_inner ?? 4 * width, vocabSize: need('vocab_size'),
      maxPositions: config.n_positions ?? need('n_ctx'), epsilon: config.layer_norm_epsilon ?? 1e-5,
      activation: 'gelu_tanh',
    };
  }
  if (arch === 'bert') {
    const width = need('hidden_size');
    const heads = need('num_attention_heads');
    const hiddenAct = config.hidden_act ?? 'gelu';
    const activations = { gelu: 'gelu_erf', gelu_new: 'gelu_tanh', gelu_pytorch_tanh: 'gelu_tanh' };
    if (!(hiddenAct in activations)) throw new Error(`bert reference: hidden_act ${hiddenAct} is not implemented`);
    if ((config.position_embedding_type ?? 'absolute') !== 'absolute') {
      throw new Error('bert reference: only absolute position embeddings are implemented');
    }
    if (width % heads !== 0) throw new Error(`bert config: ${heads} heads do not divide hidden_size ${width}`);
    return {
      layers: need('num_hidden_layers'), heads, kvHeads: heads, width, headWidth: width / heads,
      mlpWidth: need('intermediate_size'), vocabSize: need('vocab_size'),
      maxPositions: need('max_position_embeddings'), typeVocabSize: config.type_vocab_size ?? 2,
      epsilon: config.layer_norm_eps ?? 1e-12, activation: activations[hiddenAct],
    };
  }
  if (arch === 'llama') {
    const width = need('hidden_size');
    const heads = need('num_attention_heads');
    if ((config.hidden_act ?? 'silu') !== 'silu') throw new Error(`llama reference: hidden_act ${config.hidden_act} is not implemented`);
    if (config.rope_scaling) throw new Error('llama reference: rope_scaling is not implemented');
    const kvHeads = config.num_key_value_heads ?? heads;
    const headWidth = config.head_dim ?? width / heads;
    if (!Number.isInteger(headWidth) || headWidth % 2 !== 0) {
      throw new Error(`llama config: head width ${headWidth} must be an even integer (rotary pairs its halves)`);
    }
    if (heads % kvHeads !== 0) throw new Error(`llama config: ${kvHeads} kv heads do not divide ${heads} heads`);
    return {
      layers: need('num_hidden_layers'), heads, kvHeads,
      width, headWidth, mlpWidth: need('intermediate_size'),
      vocabSize: need('vocab_size'), maxPositions: config.max_position_embeddings ?? Infinity,
      epsilon: config.rms_norm_eps ?? 1e-6, ropeTheta: config.rope_theta ?? 10000,
      // LlamaAttention: attention_bias puts a bias on q, k, v and o_proj alike.
      attentionBias: config.attention_bias === true, outputBias: config.attention_bias === true,
      mlpBias: config.mlp_bias === true, activation: 'silu',
    };
  }
  if (arch === 'qwen2') {
    // Qwen2Attention: q, k and v have biases, o_proj none; Qwen2MLP has none.
    const llama = modelDimensions('llama', { ...config, attention_bias: false, mlp_bias: false });
    // Qwen2Config: sliding_window (4096 by default) only with use_sliding_window; the layers layer_types
    // calls "sliding_attention", else those from max_window_layers (28 by default) on, use it.
    const sliding = config.use_sliding_window ? (config.sliding_window ?? 4096) : null;
    const types = config.layer_types ?? Array.from({ length: llama.layers },
      (_, i) => (sliding !== null && i >= (config.max_window_layers ?? 28) ? 'sliding_attention' : 'full_attention'));
    const layerWindows = types.map((type) => (type === 'sliding_attention' && sliding !== null ? sliding : 0));
    return { ...llama, maxPositions: config.max_position_embeddings ?? 32768, attentionBias: true, outputBias: false, layerWindows };
  }
  if (arch === 'mistral') {
    // MistralConfig: sliding_window 4096 unless given, null for none; no biases anywhere.
    const llama = modelDimensions('llama', { ...config, attention_bias: false, mlp_bias: false });
    const window = config.sliding_window === undefined ? 4096 : config.sliding_window ?? 0;
    return { ...llama, maxPositions: config.max_position_embeddings ?? 4096 * 32, window };
  }
  if (arch === 'roberta' || arch === 'xlm-roberta') {
    // RobertaEmbeddings: padding_idx = pad_token_id; positions count from padding_idx + 1.
    const bert = modelDimensions('bert', config);
    const paddingIdx = config.pad_token_id ?? 1;
    return { ...bert, paddingIdx, usablePositions: bert.maxPositions - paddingIdx - 1 };
  }
  if (arch === 'electra') {
    // ElectraConfig: embeddings embedding_size wide (128 by default), projected to hidden_size when they differ.
    const bert = modelDimensions('bert', config);
    return { ...bert, embeddingWidth: config.embedding_size ?? 128 };
  }
  if (arch === 'distilbert') {
    const width = need('dim');
    const heads = need('n_heads');
    const activation = config.activation ?? 'gelu';
    if (activation !== 'gelu') throw new Error(`distilbert reference: activation ${activation} is not implemented`);
    if (width % heads !== 0) throw new Error(`distilbert config: ${heads} heads do not divide dim ${width}`);
    // Its LayerNorms are built with eps=1e-12, not from the config.
    return {
      layers: need('n_layers'), heads, kvHeads: heads, width, headWidth: width / heads,
      mlpWidth: need('hidden_dim'), vocabSize: need('vocab_size'),
      maxPositions: config.max_position_embeddings ?? 512, epsilon: 1e-12, activation: 'gelu_erf',
    };
  }
  if (DECODERS.includes(arch)) return decoderDimensions(arch, config);
  throw new Error(`reference: unknown architecture ${arch}`);
}

// The canonical tensors a config needs, with the shapes the hub stores:
// [{ name, shape, optional }] (optional: the LM head, which may be tied).
// maskedLmHead: an encoder checkpoint that carries its masked-LM head.
export function referenceTensorShapes(arch, config, { maskedLmHead = false } = {}) {
  if (DECODERS.includes(arch)) return decoderTensorShapes(arch, config);
  const dims = modelDimensions(arch, config);
  const { layers, width: d, mlpWidth: I, vocabSize: V } = dims;
  const specs = [];
  const add = (name, shape, optional = false) => specs.push({ name, shape, optional });
  if (arch === 'gpt2') {
    add('wte.weight', [V, d]);
    add('wpe.weight', [dims.maxPositions, d]);
    for (let i = 0; i < layers; i++) {
      const p = `h.${i}.`;
      add(`${p}ln_1.weight`, [d]); add(`${p}ln_1.bias`, [d]);
      add(`${p}attn.c_attn.weight`, [d, 3 * d]); add(`${p}attn.c_attn.bias`, [3 * d]);
      add(`${p}attn.c_proj.weight`, [d, d]); add(`${p}attn.c_proj.bias`, [d]);
      add(`${p}ln_2.weight`, [d]); add(`${p}ln_2.bias`, [d]);
      add(`${p}mlp.c_fc.weight`, [d, I]); add(`${p}mlp.c_fc.bias`, [I]);
      add(`${p}mlp.c_proj.weight`, [I, d]); add(`${p}mlp.c_proj.bias`, [d]);
    }
    add('ln_f.weight', [d]); add('ln_f.bias', [d]);
    add('lm_head.weight', [V, d], true);
  } else if (arch === 'distilbert') {
    add('embeddings.word_embeddings.weight', [V, d]);
    add('embeddings.position_embeddings.weight', [dims.maxPositions, d]);
    add('embeddings.LayerNorm.weight', [d]); add('embeddings.LayerNorm.bias', [d]);
    for (let i = 0; i < layers; i++) {
      const p = `transformer.layer.${i}.`;
      for (const part of ['q_lin', 'k_lin', 'v_lin', 'out_lin']) {
        add(`${p}attention.${part}.weight`, [d, d]); add(`${p}attention.${part}.bias`, [d]);
      }
      add(`${p}sa_layer_norm.weight`, [d]); add(`${p}sa_layer_norm.bias`, [d]);
      add(`${p}ffn.lin1.weight`, [I, d]); add(`${p}ffn.lin1.bias`, [I]);
      add(`${p}ffn.lin2.weight`, [d, I]); add(`${p}ffn.lin2.bias`, [d]);
      add(`${p}output_layer_norm.weight`, [d]); add(`${p}output_layer_norm.bias`, [d]);
    }
    if (maskedLmHead) specs.push(...maskedLmHeadShapes(arch, d, d, V));
  } else if (['bert', 'roberta', 'xlm-roberta', 'electra'].includes(arch)) {
    const E = dims.embeddingWidth ?? d;
    add('embeddings.word_embeddings.weight', [V, E]);
    add('embeddings.position_embeddings.weight', [dims.maxPositions, E]);
    add('embeddings.token_type_embeddings.weight', [dims.typeVocabSize, E]);
    add('embeddings.LayerNorm.weight', [E]); add('embeddings.LayerNorm.bias', [E]);
    if (E !== d) { add('embeddings_project.weight', [d, E]); add('embeddings_project.bias', [d]); }
    for (let i = 0; i < layers; i++) {
      const p = `encoder.layer.${i}.`;
      for (const part of ['query', 'key', 'value']) {
        add(`${p}attention.self.${part}.weight`, [d, d]); add(`${p}attention.self.${part}.bias`, [d]);
      }
      add(`${p}attention.output.dense.weight`, [d, d]); add(`${p}attention.output.dense.bias`, [d]);
      add(`${p}attention.output.LayerNorm.weight`, [d]); add(`${p}attention.output.LayerNorm.bias`, [d]);
      add(`${p}intermediate.dense.weight`, [I, d]); add(`${p}intermediate.dense.bias`, [I]);
      add(`${p}output.dense.weight`, [d, I]); add(`${p}output.dense.bias`, [d]);
      add(`${p}output.LayerNorm.weight`, [d]); add(`${p}output.LayerNorm.bias`, [d]);
    }
    if (maskedLmHead) specs.push(...maskedLmHeadShapes(arch, d, E, V));
  } else {
    const q = dims.heads * dims.headWidth;
    const kv = dims.kvHeads * dims.headWidth;
    add('model.embed_tokens.weight', [V, d]);
    for (let i = 0; i < layers; i++) {
      const p = `model.layers.${i}.`;
      add(`${p}input_layernorm.weight`, [d]);
      add(`${p}self_attn.q_proj.weight`, [q, d]);
      add(`${p}self_attn.k_proj.weight`, [kv, d]);
      add(`${p}self_attn.v_proj.weight`, [kv, d]);
      add(`${p}self_attn.o_proj.weight`, [d, q]);
      if (dims.attentionBias) {
        add(`${p}self_attn.q_proj.bias`, [q]); add(`${p}self_attn.k_proj.bias`, [kv]); add(`${p}self_attn.v_proj.bias`, [kv]);
      }
      if (dims.outputBias) add(`${p}self_attn.o_proj.bias`, [d]);
      add(`${p}post_attention_layernorm.weight`, [d]);
      add(`${p}mlp.gate_proj.weight`, [I, d]); add(`${p}mlp.up_proj.weight`, [I, d]);
      add(`${p}mlp.down_proj.weight`, [d, I]);
      if (dims.mlpBias) {
        add(`${p}mlp.gate_proj.bias`, [I]); add(`${p}mlp.up_proj.bias`, [I]); add(`${p}mlp.down_proj.bias`, [d]);
      }
    }
    add('model.norm.weight', [d]);
    add('lm_head.weight', [V, d], true);
  }
  return specs;
}

// ---------------------------------------------------------------------------
// Small kernels

// y = x W + b, W stored [in, out] (GPT-2's Conv1D): y[i][o] = b[o] + sum_t x[i][t] W[t][o].
export function linearInOut(x, rows, weight, inWidth, outWidth, bias) {
  const y = new Float64Array(rows * outWidth);
  for (let i = 0; i < rows; i++) {
    for (let o = 0; o < outWidth; o++) {
      let sum = bias ? bias[o] : 0;
      for (let t = 0; t < inWidth; t++) sum += x[i * inWidth + t] * weight[t * outWidth + o];
      y[i * outWidth + o] = sum;
    }
  }
  return y;
}

// y = x W^T + b, W stored [out, in] (torch Linear): y[i][o] = b[o] + sum_t x[i][t] W[o][t].
export function linearOutIn(x, rows, weight, inWidth, outWidth, bias) {
  const y = new Float64Array(rows * outWidth);
  for (let i = 0; i < rows; i++) {
    for (let o = 0; o < outWidth; o++) {
      let sum = bias ? bias[o] : 0;
      for (let t = 0; t < inWidth; t++) sum += x[i * inWidth + t] * weight[o * inWidth + t];
      y[i * outWidth + o] = sum;
    }
  }
  return y;
}

// LayerNorm over each row: (x - mean) / sqrt(var + eps) * w + b, var biased (divide by d).
export function layerNorm(x, rows, d, weight, bias, epsilon) {
  const y = new Float64Array(rows * d);
  for (let i = 0; i < rows; i++) {
    let mean = 0;
    for (let c = 0; c < d; c++) mean += x[i * d + c];
    mean /= d;
    let variance = 0;
    for (let c = 0; c < d; c++) variance += (x[i * d + c] - mean) ** 2;
    variance /= d;
    const inverse = 1 / Math.sqrt(variance + epsilon);
    for (let c = 0; c < d; c++) y[i * d + c] = (x[i * d + c] - mean) * inverse * weight[c] + bias[c];
  }
  return y;
}

// RMSNorm over each row (Llama): x / sqrt(mean(x^2) + eps) * w; no centering, no bias.
export function rmsNorm(x, rows, d, weight, epsilon) {
  const y = new Float64Array(rows * d);
  for (let i = 0; i < rows; i++) {
    let meanSquare = 0;
    for (let c = 0; c < d; c++) meanSquare += x[i * d + c] ** 2;
    meanSquare /= d;
    const inverse = 1 / Math.sqrt(meanSquare + epsilon);
    for (let c = 0; c < d; c++) y[i * d + c] = x[i * d + c] * inverse * weight[c];
  }
  return y;
}

// erf(x) = 2/sqrt(pi) e^(-x^2) sum_{k>=0} 2^k x^(2k+1) / (1*3*5*...*(2k+1)).
// Every term has the sign of x, so nothing cancels: the sum is good to a few
// ulps, and so is erf (relative error ~1e-15). Past |x| = 6, 1 - erf(|x|) <
// 3e-17, below float64's resolution at 1.
export function erf(x) {
  if (Number.isNaN(x)) return NaN;
  const a = Math.abs(x);
  if (a >= 6) return Math.sign(x);
  let term = a;
  let sum = a;
  for (let k = 0; term > sum * 1e-17; k++) {
    term *= (2 * a * a) / (2 * k + 3);
    sum += term;
  }
  return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * Math.exp(-a * a) * sum;
}

// GPT-2's gelu_new: the tanh approximation.
export function geluTanh(x) {
  return 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x)));
}

// BERT's gelu: exact, x * Phi(x).
export function geluErf(x) {
  return 0.5 * x * (1 + erf(x / Math.SQRT2));
}

export function silu(x) {
  return x / (1 + Math.exp(-x));
}

const activations = { gelu_tanh: geluTanh, gelu_erf: geluErf, silu };

// Rotary position embedding as Hugging Face's Llama applies it (rotate_half):
// in each head the pairs are (i, i + hd/2), not neighbours. Row p of x is the
// token at position p; x holds `heads` heads of `headWidth` columns each.
// Returns a new array.
export function applyRotary(x, rows, heads, headWidth, theta, positions) {
  const half = headWidth / 2;
  const width = heads * headWidth;
  const y = Float64Array.from(x);
  for (let i = 0; i < rows; i++) {
    const position = positions ? positions[i] : i;
    for (let h = 0; h < heads; h++) {
      const base = i * width + h * headWidth;
      for (let c = 0; c < half; c++) {
        const inverseFrequency = theta ** (-(2 * c) / headWidth);
        const angle = position * inverseFrequency;
        const cos = Math.cos(angle);
        const sin = Math.sin(angle);
        const first = x[base + c];
        const second = x[base + c + half];
        y[base + c] = first * cos - second * sin;
        y[base + c + half] = second * cos + first * sin;
      }
    }
  }
  return y;
}

// Multi-head attention over n tokens. q is n x (H*hd); k and v are n x (G*hd)
// (G = kv heads; query head h reads kv head floor(h / (H/G))). Query i sees
// key j unless causal and j > i, or keyMask[j] is 0. Returns per head
// H x n x n scores (raw q.k), scaled scores (x scale, hidden = -inf) and
// weights (softmax; a row with every key hidden stays all zero), and the
// heads' outputs concatenated, n x (H*hd).
// window (with causal): query i sees only keys j > i - window (transformers'
// sliding_window_overlay); 0 or undefined: every earlier key.
// scale: what raw scores are multiplied by (1/sqrt(headWidth) unless given).
export function multiHeadAttention({ q, k, v, n, heads, kvHeads, headWidth, causal, keyMask, window = 0, scale = 1 / Math.sqrt(headWidth) }) {
  if (heads % kvHeads !== 0) throw new Error(`attention: ${heads} heads do not split into ${kvHeads} kv groups`);
  const group = heads / kvHeads;
  const qWidth = heads * headWidth;
  const kvWidth = kvHeads * headWidth;
  const scores = new Float64Array(heads * n * n);
  const scaledScores = new Float64Array(heads * n * n);
  const weights = new Float64Array(heads * n * n);
  const concatenated = new Float64Array(n * qWidth);
  for (let h = 0; h < heads; h++) {
    const kvHead = Math.floor(h / group);
    for (let i = 0; i < n; i++) {
      const row = (h * n + i) * n;
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let c = 0; c < headWidth; c++) dot += q[i * qWidth + h * headWidth + c] * k[j * kvWidth + kvHead * headWidth + c];
        scores[row + j] = dot;
        const visible = !(causal && j > i) && !(causal && window > 0 && j <= i - window) && !(keyMask && keyMask[j] === 0);
        scaledScores[row + j] = visible ? dot * scale : -Infinity;
        max = Math.max(max, scaledScores[row + j]);
      }
      if (max === -Infinity) continue;
      // Subtract the row maximum before exp so nothing overflows.
      let sum = 0;
      for (let j = 0; j < n; j++) {
        weights[row + j] = Math.exp(scaledScores[row + j] - max);
        sum += weights[row + j];
      }
      for (let j = 0; j < n; j++) weights[row + j] /= sum;
      for (let c = 0; c < headWidth; c++) {
        let acc = 0;
        for (let j = 0; j < n; j++) acc += weights[row + j] * v[j * kvWidth + kvHead * headWidth + c];
        concatenated[i * qWidth + h * headWidth + c] = acc;
      }
    }
  }
  return { scores, scaledScores, weights, concatenated };
}

// ---------------------------------------------------------------------------
// Helpers for the forward passes

function tensorGetter(tensors, arch) {
  return (name, length) => {
    const values = tensors[name];
    if (!values) throw new Error(`${arch} reference: missing tensor ${name}`);
    if (values.length !== length) throw new Error(`${arch} reference: ${name} has ${values.length} values, expected ${length}`);
    return values;
  };
}

// f on every element (a plain loop: Float64Array.prototype.map is slow in V8).
export function applyEach(f, a) {
  const y = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) y[i] = f(a[i]);
  return y;
}

export function add(a, b) {
  const y = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) y[i] = a[i] + b[i];
  return y;
}

// Rows of a row-major matrix gathered by index (embedding lookup).
export function gatherRows(table, ids, width) {
  const y = new Float64Array(ids.length * width);
  for (let i = 0; i < ids.length; i++) {
    for (let c = 0; c < width; c++) y[i * width + c] = table[ids[i] * width + c];
  }
  return y;
}

// Columns [from, from + count) of a rows x width matrix.
function columns(x, rows, width, from, count) {
  const y = new Float64Array(rows * count);
  for (let i = 0; i < rows; i++) {
    for (let c = 0; c < count; c++) y[i * count + c] = x[i * width + from + c];
  }
  return y;
}

export function transpose(x, rows, cols) {
  const y = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) y[j * rows + i] = x[i * cols + j];
  }
  return y;
}

// For grouped-query attention traces: a matrix with kvHeads blocks of
// headWidth columns -> heads blocks, each query head getting its kv head's.
export function repeatKvColumns(x, rows, heads, kvHeads, headWidth) {
  const group = heads / kvHeads;
  const y = new Float64Array(rows * heads * headWidth);
  for (let i = 0; i < rows; i++) {
    for (let h = 0; h < heads; h++) {
      const kvHead = Math.floor(h / group);
      for (let c = 0; c < headWidth; c++) {
        y[i * heads * headWidth + h * headWidth + c] = x[i * kvHeads * headWidth + kvHead * headWidth + c];
      }
    }
  }
  return y;
}

function checkIds(arch, dims, ids) {
  if (ids.length === 0) throw new Error(`${arch} reference: no tokens`);
  for (const id of ids) {
    if (!Number.isInteger(id) || id < 0 || id >= dims.vocabSize) throw new Error(`${arch} reference: id ${id} outside [0, ${dims.vocabSize})`);
  }
  const positions = dims.usablePositions ?? dims.maxPositions;
  if (ids.length > positions) throw new Error(`${arch} reference: ${ids.length} tokens exceed ${positions} positions`);
}

// The attention part of a layer trace, under the production explain() names.
export function attentionTrace({ scores, scaledScores, weights, concatenated }) {
  return { scores, scaledScores, weights, concatenatedHeads: concatenated };
}

// logits = hidden lmHead^T, lmHead [V, d].
function lmLogits(hidden, n, lmHead, d, V) {
  return linearOutIn(hidden, n, lmHead, d, V, null);
}

// ---------------------------------------------------------------------------
// The forward passes

// What every forward starts with: the config's numbers, the ids checked
// against them, and a getter of tensors by name and length.
export function forwardSetup(arch, config, tensors, ids) {
  const dims = modelDimensions(arch, config);
  checkIds(arch, dims, ids);
  return { dims, n: ids.length, get: tensorGetter(tensors, arch) };
}

function gpt2Forward(config, tensors, ids, { keyMask, trace }) {
  const { dims, n, get } = forwardSetup('gpt2', config, tensors, ids);
  const { layers, heads, width: d, headWidth: hd, mlpWidth: I, vocabSize: V, epsilon } = dims;
  // x = wte[id] + wpe[position]
  const positions = Array.from({ length: n }, (_, i) => i);
  let x = add(gatherRows(get('wte.weight', V * d), ids, d), gatherRows(get('wpe.weight', dims.maxPositions * d), positions, d));
  const attention = new Float64Array(layers * heads * n * n);
  const steps = [];
  for (let layer = 0; layer < layers; layer++) {
    const p = `h.${layer}.`;
    const a = layerNorm(x, n, d, get(`${p}ln_1.weight`, d), get(`${p}ln_1.bias`, d), epsilon);
    const cAttn = get(`${p}attn.c_attn.weight`, d * 3 * d);
    const qkv = linearInOut(a, n, cAttn, d, 3 * d, get(`${p}attn.c_attn.bias`, 3 * d));
    // q, k, v are the column blocks [0, d), [d, 2d), [2d, 3d); head h is columns h*hd.. of each.
    const q = columns(qkv, n, 3 * d, 0, d);
    const k = columns(qkv, n, 3 * d, d, d);
    const v = columns(qkv, n, 3 * d, 2 * d, d);
    const attended = multiHeadAttention({ q, k, v, n, heads, kvHeads: heads, headWidth: hd, causal: true, keyMask });
    attention.set(attended.weights, layer * heads * n * n);
    const cProj = get(`${p}attn.c_proj.weight`, d * d);
    const output = linearInOut(attended.concatenated, n, cProj, d, d, get(`${p}attn.c_proj.bias`, d));
    x = add(x, output);
    const m = layerNorm(x, n, d, get(`${p}ln_2.weight`, d), get(`${p}ln_2.bias`, d), epsilon);
    const inner = applyEach(geluTanh, linearInOut(m, n, get(`${p}mlp.c_fc.weight`, d * I), d, I, get(`${p}mlp.c_fc.bias`, I)));
    x = add(x, linearInOut(inner, n, get(`${p}mlp.c_proj.weight`, I * d), I, d, get(`${p}mlp.c_proj.bias`, d)));
    if (trace) {
      steps.push({
        x: a, wq: columns(cAttn, d, 3 * d, 0, d), wk: columns(cAttn, d, 3 * d, d, d), wv: columns(cAttn, d, 3 * d, 2 * d, d),
        wo: Float64Array.from(cProj), q, k, v, ...attentionTrace(attended), output, layerOutput: x,
      });
    }
  }
  const hidden = layerNorm(x, n, d, get('ln_f.weight', d), get('ln_f.bias', d), epsilon);
  // Tied unless the file has its own head and the config says it is not tied.
  const tied = !tensors['lm_head.weight'] || config.tie_word_embeddings !== false;
  const lmHead = tied ? get('wte.weight', V * d) : get('lm_head.weight', V * d);
  return { attention, hidden, logits: lmLogits(hidden, n, lmHead, d, V), ...(trace ? { layers: steps } : {}) };
}

// RoBERTa's create_position_ids_from_input_ids: mask = (id != padding_idx),
// position = cumsum(mask) * mask + padding_idx.
export function robertaPositionIds(ids, paddingIdx) {
  let count = 0;
  return ids.map((id) => {
    const mask = id !== paddingIdx ? 1 : 0;
    count += mask;
    return count * mask + paddingIdx;
  });
}

// BERT, RoBERTa (arch 'roberta' / 'xlm-roberta': its position numbering) and
// ELECTRA (arch 'electra': embeddings embedding_size wide, then embeddings_project).
function bertForward(config, tensors, ids, { keyMask, trace }, arch = 'bert') {
  const { dims, n, get } = forwardSetup(arch, config, tensors, ids);
  const { layers, heads, width: d, headWidth: hd, mlpWidth: I, vocabSize: V, epsilon } = dims;
  const activation = activations[dims.activation];
  // x = LayerNorm(word[id] + position[i] + tokenType[0])
  const E = dims.embeddingWidth ?? d;
  const word = gatherRows(get('embeddings.word_embeddings.weight', V * E), ids, E);
  const positionIds = dims.paddingIdx === undefined ? [...Array(n).keys()] : robertaPositionIds(ids, dims.paddingIdx);
  const position = gatherRows(get('embeddings.position_embeddings.weight', dims.maxPositions * E), positionIds, E);
  const tokenType = gatherRows(get('embeddings.token_type_embeddings.weight', dims.typeVocabSize * E), new Array(n).fill(0), E);
  let x = layerNorm(add(add(word, position), tokenType), n, E,
    get('embeddings.LayerNorm.weight', E), get('embeddings.LayerNorm.bias', E), epsilon);
  if (E !== d) x = linearOutIn(x, n, get('embeddings_project.weight', d * E), E, d, get('embeddings_project.bias', d));
  const attention = new Float64Array(layers * heads * n * n);
  const steps = [];
  for (let layer = 0; layer < layers; layer++) {
    const p = `encoder.layer.${layer}.`;
    const wq = get(`${p}attention.self.query.weight`, d * d);
    const wk = get(`${p}attention.self.key.weight`, d * d);
    const wv = get(`${p}attention.self.value.weight`, d * d);
    const q = linearOutIn(x, n, wq, d, d, get(`${p}attention.self.query.bias`, d));
    const k = linearOutIn(x, n, wk, d, d, get(`${p}attention.self.key.bias`, d));
    const v = linearOutIn(x, n, wv, d, d, get(`${p}attention.self.value.bias`, d));
    const attended = multiHeadAttention({ q, k, v, n, heads, kvHeads: heads, headWidth: hd, causal: false, keyMask });
    attention.set(attended.weights, layer * heads * n * n);
    const wo = get(`${p}attention.output.dense.weight`, d * d);
    const output = linearOutIn(attended.concatenated, n, wo, d, d, get(`${p}attention.output.dense.bias`, d));
    const input = x;
    // Post-LN: the norm comes after each residual sum.
    x = layerNorm(add(x, output), n, d, get(`${p}attention.output.LayerNorm.weight`, d), get(`${p}attention.output.LayerNorm.bias`, d), epsilon);
    const inner = applyEach(activation, linearOutIn(x, n, get(`${p}intermediate.dense.weight`, I * d), d, I, get(`${p}intermediate.dense.bias`, I)));
    const mlp = linearOutIn(inner, n, get(`${p}output.dense.weight`, d * I), I, d, get(`${p}output.dense.bias`, d));
    x = layerNorm(add(x, mlp), n, d, get(`${p}output.LayerNorm.weight`, d), get(`${p}output.LayerNorm.bias`, d), epsilon);
    if (trace) {
      steps.push({
        x: input, wq: transpose(wq, d, d), wk: transpose(wk, d, d), wv: transpose(wv, d, d), wo: transpose(wo, d, d),
        q, k, v, ...attentionTrace(attended), output, layerOutput: x,
      });
    }
  }
  return { attention, hidden: x, logits: maskedLmLogits(arch, tensors, x, n, dims), ...(trace ? { layers: steps } : {}) };
}

// Llama, Qwen2 (arch 'qwen2': its biases) and Mistral (arch 'mistral': its window).
function llamaForward(config, tensors, ids, { keyMask, trace }, arch = 'llama') {
  const { dims, n, get } = forwardSetup(arch, config, tensors, ids);
  const { layers, heads, kvHeads, width: d, headWidth: hd, mlpWidth: I, vocabSize: V, epsilon, ropeTheta } = dims;
  const qWidth = heads * hd;
  const kvWidth = kvHeads * hd;
  const bias = (name, length, present) => (present ? get(name, length) : null);
  let x = gatherRows(get('model.embed_tokens.weight', V * d), ids, d);
  const attention = new Float64Array(layers * heads * n * n);
  const steps = [];
  for (let layer = 0; layer < layers; layer++) {
    const p = `model.layers.${layer}.`;
    const a = rmsNorm(x, n, d, get(`${p}input_layernorm.weight`, d), epsilon);
    const wq = get(`${p}self_attn.q_proj.weight`, qWidth * d);
    const wk = get(`${p}self_attn.k_proj.weight`, kvWidth * d);
    const wv = get(`${p}self_attn.v_proj.weight`, kvWidth * d);
    const wo = get(`${p}self_attn.o_proj.weight`, d * qWidth);
    const ab = dims.attentionBias;
    // Rotary on q and k (after their biases), per head, position = row index.
    const q = applyRotary(linearOutIn(a, n, wq, d, qWidth, bias(`${p}self_attn.q_proj.bias`, qWidth, ab)), n, heads, hd, ropeTheta);
    const k = applyRotary(linearOutIn(a, n, wk, d, kvWidth, bias(`${p}self_attn.k_proj.bias`, kvWidth, ab)), n, kvHeads, hd, ropeTheta);
    const v = linearOutIn(a, n, wv, d, kvWidth, bias(`${p}self_attn.v_proj.bias`, kvWidth, ab));
    const window = dims.layerWindows ? dims.layerWindows[layer] : dims.window;
    const attended = multiHeadAttention({ q, k, v, n, heads, kvHeads, headWidth: hd, causal: true, keyMask, window });
    attention.set(attended.weights, layer * heads * n * n);
    const output = linearOutIn(attended.concatenated, n, wo, qWidth, d, bias(`${p}self_attn.o_proj.bias`, d, dims.outputBias));
    x = add(x, output);
    const m = rmsNorm(x, n, d, get(`${p}post_attention_layernorm.weight`, d), epsilon);
    const mb = dims.mlpBias;
    // SwiGLU: silu(m Wg^T) * (m Wu^T), then down.
    const gate = linearOutIn(m, n, get(`${p}mlp.gate_proj.weight`, I * d), d, I, bias(`${p}mlp.gate_proj.bias`, I, mb));
    const up = linearOutIn(m, n, get(`${p}mlp.up_proj.weight`, I * d), d, I, bias(`${p}mlp.up_proj.bias`, I, mb));
    const inner = new Float64Array(n * I);
    for (let i = 0; i < n * I; i++) inner[i] = silu(gate[i]) * up[i];
    x = add(x, linearOutIn(inner, n, get(`${p}mlp.down_proj.weight`, d * I), I, d, bias(`${p}mlp.down_proj.bias`, d, mb)));
    if (trace) {
      steps.push({
        x: a,
        wq: transpose(wq, qWidth, d),
        wk: repeatKvColumns(transpose(wk, kvWidth, d), d, heads, kvHeads, hd),
        wv: repeatKvColumns(transpose(wv, kvWidth, d), d, heads, kvHeads, hd),
        wo: transpose(wo, d, qWidth),
        q, k: repeatKvColumns(k, n, heads, kvHeads, hd), v: repeatKvColumns(v, n, heads, kvHeads, hd),
        ...attentionTrace(attended), output, layerOutput: x,
      });
    }
  }
  const hidden = rmsNorm(x, n, d, get('model.norm.weight', d), epsilon);
  // Llama's config default is untied; absent lm_head means tied (contract).
  const tied = !tensors['lm_head.weight'] || config.tie_word_embeddings === true;
  const lmHead = tied ? get('model.embed_tokens.weight', V * d) : get('lm_head.weight', V * d);
  return { attention, hidden, logits: lmLogits(hidden, n, lmHead, d, V), ...(trace ? { layers: steps } : {}) };
}

// DistilBERT, as modeling_distilbert.py computes it: embeddings
// LayerNorm(word + position) (no token types), then per layer
// sa = sa_layer_norm(out_lin(attention(x)) + x), x = output_layer_norm(lin2(gelu(lin1(sa))) + sa).
function distilbertForward(config, tensors, ids, { keyMask, trace }) {
  const { dims, n, get } = forwardSetup('distilbert', config, tensors, ids);
  const { layers, heads, width: d, headWidth: hd, mlpWidth: I, vocabSize: V, epsilon } = dims;
  const norm = (x, name) => layerNorm(x, n, d, get(`${name}.weight`, d), get(`${name}.bias`, d), epsilon);
  const linear = (x, name, inWidth, outWidth) =>
    linearOutIn(x, n, get(`${name}.weight`, inWidth * outWidth), inWidth, outWidth, get(`${name}.bias`, outWidth));
  const word = gatherRows(get('embeddings.word_embeddings.weight', V * d), ids, d);
  const position = gatherRows(get('embeddings.position_embeddings.weight', dims.maxPositions * d), [...Array(n).keys()], d);
  let x = norm(add(word, position), 'embeddings.LayerNorm');
  const attention = new Float64Array(layers * heads * n * n);
  const steps = [];
  for (let layer = 0; layer < layers; layer++) {
    const p = `transformer.layer.${layer}.`;
    const [q, k, v] = ['q_lin', 'k_lin', 'v_lin'].map((part) => linear(x, `${p}attention.${part}`, d, d));
    const attended = multiHeadAttention({ q, k, v, n, heads, kvHeads: heads, headWidth: hd, causal: false, keyMask });
    attention.set(attended.weights, layer * heads * n * n);
    const output = linear(attended.concatenated, `${p}attention.out_lin`, d, d);
    const input = x;
    const sa = norm(add(output, x), `${p}sa_layer_norm`);
    const ffn = linear(applyEach(geluErf, linear(sa, `${p}ffn.lin1`, d, I)), `${p}ffn.lin2`, I, d);
    x = norm(add(ffn, sa), `${p}output_layer_norm`);
    if (trace) {
      const [wq, wk, wv, wo] = ['q_lin', 'k_lin', 'v_lin', 'out_lin'].map((part) => transpose(get(`${p}attention.${part}.weight`, d * d), d, d));
      steps.push({ x: input, wq, wk, wv, wo, q, k, v, ...attentionTrace(attended), output, layerOutput: x });
    }
  }
  return { attention, hidden: x, logits: maskedLmLogits('distilbert', tensors, x, n, dims), ...(trace ? { layers: steps } : {}) };
}

// referenceForward(arch, config, tensors, ids, { keyMask, trace })
//   arch: 'gpt2' | 'bert' | 'llama' | 'distilbert' | 'roberta' | 'xlm-roberta' | 'qwen2' | 'mistral'; config: the config.json object;
//   tensors: canonical name -> array of the stored values; ids: token ids;
//   keyMask: optional, per key, 0 = hidden (padding), nonzero = keep.
// trace: also return `layers`, per layer { x, wq, wk, wv, wo, q, k, v,
// scores, scaledScores, weights, concatenatedHeads, output, layerOutput } as
// the production explain() defines them (wq/wk/wv d x H*hd [in, out], k and v
// with each kv head's columns repeated for its query heads).
export function referenceForward(arch, config, tensors, ids, { keyMask, trace = false } = {}) {
  const idList = Array.from(ids, Number);
  if (keyMask && keyMask.length !== idList.length) throw new Error('reference: keyMask length differs from the number of ids');
  const options = { keyMask, trace };
  if (arch === 'gpt2') return gpt2Forward(config, tensors, idList, options);
  if (arch === 'bert') return bertForward(config, tensors, idList, options);
  if (arch === 'llama' || arch === 'qwen2' || arch === 'mistral') return llamaForward(config, tensors, idList, options, arch);
  if (['roberta', 'xlm-roberta', 'electra'].includes(arch)) return bertForward(config, tensors, idList, options, arch);
  if (arch === 'distilbert') return distilbertForward(config, tensors, idList, options);
  if (DECODERS.includes(arch)) return decoderForward(arch, config, tensors, idList, options);
  throw new Error(`reference: unknown architecture ${arch}`);
}
