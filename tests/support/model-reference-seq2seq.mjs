// Encoder-decoders for the tests: tiny random BART and Marian checkpoints in
// the hub's layout (BartForConditionalGeneration's and MarianMTModel's
// state_dict names), and an independent float64 forward pass written from
// transformers' modeling_bart.py / modeling_marian.py:
//
//   encoder: h = embed_tokens(ids) * embed_scale + embed_positions(0..n-1)
//            (BART: learned rows 2.. (offset 2); Marian: the sinusoid table)
//            BART: h = layernorm_embedding(h)
//            per layer: h = self_attn_layer_norm(h + self_attn(h))
//                       h = final_layer_norm(h + fc2(act(fc1(h))))
//   decoder: the same embeddings of the target (its own position table),
//            per layer: causal self-attention, then
//                       h = encoder_attn_layer_norm(h + encoder_attn(h, encoder_out)), then the MLP
//   logits = h shared^T + final_logits_bias
import { seededRandom } from '../../web/lib/model/seeded-random.js';
import {
  add, applyEach, gatherRows, geluErf, layerNorm, linearOutIn, silu,
} from './model-reference.mjs';
import { storedValue, writeSafetensors } from './safetensors.mjs';

export const SEQ2SEQ_FAMILIES = ['bart', 'marian'];

/** config.json of a tiny model of `family` (d 16, 2 heads, 2 + 2 layers, vocab 40). */
export function seq2seqConfig(family, overrides = {}) {
  const shared = {
    model_type: family, d_model: 16, encoder_layers: 2, decoder_layers: 2, encoder_attention_heads: 2,
    decoder_attention_heads: 2, encoder_ffn_dim: 24, decoder_ffn_dim: 24, vocab_size: 40,
    max_position_embeddings: 24, pad_token_id: 1, bos_token_id: 0, eos_token_id: 2, is_encoder_decoder: true,
  };
  const own = family === 'bart'
    ? { activation_function: 'gelu', scale_embedding: false, decoder_start_token_id: 2 }
    : { activation_function: 'swish', scale_embedding: true, decoder_start_token_id: 1, share_encoder_decoder_embeddings: true };
  return { ...shared, ...own, ...overrides };
}

// Every tensor the hub's files hold: [name, shape].
function tensorShapes(family, config) {
  const d = config.d_model, I = config.encoder_ffn_dim, V = config.vocab_size, P = config.max_position_embeddings + (family === 'bart' ? 2 : 0);
  const shapes = [['model.shared.weight', [V, d]]];
  const norm = (name) => shapes.push([`${name}.weight`, [d]], [`${name}.bias`, [d]]);
  const linear = (name, out, inWidth) => shapes.push([`${name}.weight`, [out, inWidth]], [`${name}.bias`, [out]]);
  for (const side of ['encoder', 'decoder']) {
    if (family === 'bart') {
      shapes.push([`model.${side}.embed_positions.weight`, [P, d]]);
      norm(`model.${side}.layernorm_embedding`);
    }
    for (let i = 0; i < config[`${side}_layers`]; i++) {
      const prefix = `model.${side}.layers.${i}.`;
      const attentions = side === 'decoder' ? ['self_attn', 'encoder_attn'] : ['self_attn'];
      for (const attention of attentions) {
        for (const projection of ['k_proj', 'v_proj', 'q_proj', 'out_proj']) linear(`${prefix}${attention}.${projection}`, d, d);
        norm(`${prefix}${attention}_layer_norm`);
      }
      linear(`${prefix}fc1`, I, d);
      linear(`${prefix}fc2`, d, I);
      norm(`${prefix}final_layer_norm`);
    }
  }
  shapes.push(['final_logits_bias', [1, V]]);
  return shapes;
}

function initialValues(name, count, random) {
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const values = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const z = normal();
    if (/norm(_embedding)?\.weight$/.test(name)) values[i] = 1 + 0.1 * z;
    else if (name.endsWith('.bias') || name === 'final_logits_bias') values[i] = 0.1 * z;
    else if (/(shared|embed_positions)\.weight$/.test(name)) values[i] = 0.5 * z;
    else values[i] = (1.2 * z) / 4;  // fan-in 16 or 24: queries and keys large enough for uneven attention
  }
  return values;
}

/**
 * A tiny checkpoint as the hub stores it. Marian's files may also hold the
 * sinusoid tables (sinusoidTables: true) and each side's tied embed_tokens
 * (embedTokens: true), both of which a loader skips.
 * @returns {{ config, files, tensors, entries }} tensors: hub name -> the stored values (float64)
 */
export function seq2seqCheckpoint({ family = 'bart', dtype = 'F32', seed = 1, sinusoidTables = false, embedTokens = false, ...overrides } = {}) {
  const config = seq2seqConfig(family, overrides);
  const random = seededRandom(seed * 7919 + (family === 'bart' ? 1 : 2));
  const tensors = {};
  const entries = [];
  for (const [name, shape] of tensorShapes(family, config)) {
    const values = initialValues(name, shape.reduce((a, b) => a * b, 1), random);
    tensors[name] = values.map((value) => storedValue(dtype, Math.fround(value)));
    entries.push({ name, dtype, shape, values: tensors[name] });
  }
  const d = config.d_model;
  if (embedTokens) {
    for (const side of ['encoder', 'decoder']) {
      entries.push({ name: `model.${side}.embed_tokens.weight`, dtype, shape: [config.vocab_size, d], values: tensors['model.shared.weight'] });
    }
  }
  if (sinusoidTables) {
    const P = config.max_position_embeddings;
    const table = sinusoids(P, d);
    for (const side of ['encoder', 'decoder']) entries.push({ name: `model.${side}.embed_positions.weight`, dtype: 'F32', shape: [P, d], values: table });
  }
  const files = { 'config.json': JSON.stringify(config, null, 2), 'model.safetensors': writeSafetensors(entries, { metadata: { format: 'pt' } }) };
  return { config, files, tensors, entries };
}

// MarianSinusoidalPositionalEmbedding._init_weight: position_enc[p][j] =
// p / 10000^(2 (j // 2) / d); columns [0, d/2) the sines of the even j,
// [d/2, d) the cosines of the odd j; float64, then stored as float32.
export function sinusoids(positions, d) {
  const table = new Float64Array(positions * d);
  const half = d / 2;
  for (let p = 0; p < positions; p++) {
    for (let j = 0; j < d; j++) {
      const angle = p / 10000 ** ((2 * Math.floor(j / 2)) / d);
      const column = j % 2 === 0 ? j / 2 : half + (j - 1) / 2;
      table[p * d + column] = Math.fround(j % 2 === 0 ? Math.sin(angle) : Math.cos(angle));
    }
  }
  return table;
}

/**
 * Multi-head attention of m queries over n keys (q, k, v: rows of heads x
 * headWidth): softmax((q k^T + bias) * scale) v per head, causal: key j <= query i.
 * @returns {{ heads: Float64Array, weights: Float64Array }} heads m x (heads x headWidth); weights [head][query][key]
 */
export function attendHeads({ q, k, v, m, n, heads, headWidth, causal, scale, bias = null }) {
  const width = heads * headWidth;
  const weights = new Float64Array(heads * m * n), out = new Float64Array(m * width);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < m; i++) {
      const row = weights.subarray((h * m + i) * n, (h * m + i + 1) * n);
      for (let j = 0; j < n; j++) {
        let dot = bias ? bias[(h * m + i) * n + j] : 0;
        for (let c = 0; c < headWidth; c++) dot += q[i * width + h * headWidth + c] * k[j * width + h * headWidth + c];
        row[j] = causal && j > i ? -Infinity : dot * scale;
      }
      const max = Math.max(...row);
      let sum = 0;
      for (let j = 0; j < n; j++) sum += (row[j] = Math.exp(row[j] - max));
      for (let j = 0; j < n; j++) row[j] /= sum;
      for (let c = 0; c < headWidth; c++) {
        let acc = 0;
        for (let j = 0; j < n; j++) acc += row[j] * v[j * width + h * headWidth + c];
        out[i * width + h * headWidth + c] = acc;
      }
    }
  }
  return { heads: out, weights };
}

/**
 * One attention sublayer's steps, as model.explain records them: its inputs
 * (x: the queries' rows, contextX: the keys'), q, k and v (biases added, q
 * before any scale), the scale, the score bias (T5's position bias or null),
 * the weights, the output, and wo: the output projection as stored ([out][in],
 * in = heads x headWidth), for value-weighted attention.
 */
export function sublayerStep({ x, contextX, q, k, v, m, n, heads, headWidth, causal, scale, bias = null, wo, project }) {
  const attended = attendHeads({ q, k, v, m, n, heads, headWidth, causal, scale, bias });
  return { x, contextX, q, k, v, m, n, causal, scale, bias, weights: attended.weights, output: project(attended.heads), wo };
}

// BartAttention: q = q_proj(h) * d_head^-0.5, k and v of the keys' states,
// softmax over keys (causal: key j <= query i), weights [head][query][key].
function attention(t, prefix, queries, m, keys, n, config, causal) {
  const d = config.d_model, H = config.encoder_attention_heads, hd = d / H;
  const project = (name, x, rows) => linearOutIn(x, rows, t(`${prefix}.${name}.weight`), d, d, t(`${prefix}.${name}.bias`));
  return sublayerStep({
    x: queries, contextX: keys, q: project('q_proj', queries, m), k: project('k_proj', keys, n), v: project('v_proj', keys, n),
    m, n, heads: H, headWidth: hd, causal, scale: 1 / Math.sqrt(hd), wo: t(`${prefix}.out_proj.weight`),
    project: (heads) => project('out_proj', heads, m),
  });
}

const ACTIVATIONS = { gelu: geluErf, swish: silu, relu: (x) => Math.max(x, 0) };

/**
 * The float64 forward of a tiny checkpoint: weights [layer][head][query][key]
 * of the encoder, the decoder's self-attention and its cross-attention, and
 * the logits (targetIds.length x vocab). Also every sublayer's steps
 * (`steps.encoder / decoder / cross`, one per layer, each with its
 * layerOutput: the stream after that whole layer), the decoder's stream
 * after each layer (`decoderStreams`) and `logitsOf(h)`: the LM head on a
 * decoder stream (the logit lens).
 */
export function seq2seqReference(family, config, tensors, sourceIds, targetIds) {
  const d = config.d_model, I = config.encoder_ffn_dim, V = config.vocab_size, eps = 1e-5;
  const t = (name) => {
    if (!tensors[name]) throw new Error(`seq2seq reference: missing tensor ${name}`);
    return tensors[name];
  };
  const norm = (x, rows, name) => layerNorm(x, rows, d, t(`${name}.weight`), t(`${name}.bias`), eps);
  const act = ACTIVATIONS[config.activation_function];
  const scale = config.scale_embedding ? Math.sqrt(d) : 1;
  const embed = (side, ids) => {
    const words = applyEach((x) => x * scale, gatherRows(t('model.shared.weight'), ids, d));
    const positions = family === 'bart'
      ? gatherRows(t(`model.${side}.embed_positions.weight`), ids.map((_, i) => i + 2), d)
      : sinusoids(ids.length, d);
    const h = add(words, positions);
    return family === 'bart' ? norm(h, ids.length, `model.${side}.layernorm_embedding`) : h;
  };
  const mlp = (h, rows, prefix) => {
    const up = applyEach(act, linearOutIn(h, rows, t(`${prefix}fc1.weight`), d, I, t(`${prefix}fc1.bias`)));
    const down = linearOutIn(up, rows, t(`${prefix}fc2.weight`), I, d, t(`${prefix}fc2.bias`));
    return norm(add(h, down), rows, `${prefix}final_layer_norm`);
  };
  const n = sourceIds.length, m = targetIds.length;
  let h = embed('encoder', sourceIds);
  const steps = { encoder: [], decoder: [], cross: [] }, decoderStreams = [];
  for (let i = 0; i < config.encoder_layers; i++) {
    const prefix = `model.encoder.layers.${i}.`;
    const self = attention(t, `${prefix}self_attn`, h, n, h, n, config, false);
    steps.encoder.push(self);
    h = self.layerOutput = mlp(norm(add(h, self.output), n, `${prefix}self_attn_layer_norm`), n, prefix);
  }
  const encoded = h;
  h = embed('decoder', targetIds);
  for (let i = 0; i < config.decoder_layers; i++) {
    const prefix = `model.decoder.layers.${i}.`;
    const self = attention(t, `${prefix}self_attn`, h, m, h, m, config, true);
    h = norm(add(h, self.output), m, `${prefix}self_attn_layer_norm`);
    const cross = attention(t, `${prefix}encoder_attn`, h, m, encoded, n, config, false);
    h = mlp(norm(add(h, cross.output), m, `${prefix}encoder_attn_layer_norm`), m, prefix);
    steps.decoder.push(self);
    steps.cross.push(cross);
    self.layerOutput = cross.layerOutput = h;
    decoderStreams.push(h);
  }
  const logitsOf = (stream) => linearOutIn(stream, m, t('model.shared.weight'), d, V, t('final_logits_bias'));
  return { ...joinedWeights(steps), logits: logitsOf(h), steps, decoderStreams, logitsOf };
}

/** The three kinds' weights of every layer, each as one array [layer][head][query][key], as model.run returns them. */
export function joinedWeights(steps) {
  const joined = (list) => Float64Array.from(list.flatMap((step) => Array.from(step.weights)));
  return { attention: joined(steps.encoder), decoderAttention: joined(steps.decoder), crossAttention: joined(steps.cross) };
}
