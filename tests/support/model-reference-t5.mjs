// T5 for the tests: tiny random checkpoints in T5ForConditionalGeneration's
// layout, and an independent float64 forward written from modeling_t5.py:
//
//   h = shared(ids)                          (no scaling, no position embedding)
//   per block: h = h + SelfAttention(layer_norm(h), position_bias)
//              (decoder) h = h + EncDecAttention(layer_norm(h), encoder_out)
//              h = h + DenseReluDense(layer_norm(h))
//   encoder / decoder: final_layer_norm(h)
//   logits = (tied ? h * d_model^-0.5 : h) lm_head^T
//
// layer_norm is T5LayerNorm: h / sqrt(mean(h^2) + eps) * weight (no mean, no
// bias). Attention scores are not scaled; position_bias[head][i][j] =
// relative_attention_bias[bucket(j - i)][head], computed by block 0 of each
// side and shared by its blocks (bidirectional buckets in the encoder,
// unidirectional in the decoder; none in cross-attention).
import { seededRandom } from '../../web/lib/model/seeded-random.js';
import { add, applyEach, gatherRows, geluTanh, linearOutIn, rmsNorm } from './model-reference.mjs';
import { joinedWeights, sublayerStep } from './model-reference-seq2seq.mjs';
import { storedValue, writeSafetensors } from './safetensors.mjs';

/** config.json of a tiny T5: v1.0 (ReLU, tied head) or v1.1 (gated GELU, own head). Heads are 6 wide: 2 x 6 != d_model 16, as flan-t5-small's 6 x 64 != 512. */
export function t5Config(version = '1.0', overrides = {}) {
  return {
    model_type: 't5', d_model: 16, d_kv: 6, d_ff: 24, num_layers: 2, num_decoder_layers: 2, num_heads: 2,
    relative_attention_num_buckets: 8, relative_attention_max_distance: 20, layer_norm_epsilon: 1e-6,
    vocab_size: 40, pad_token_id: 0, eos_token_id: 1, decoder_start_token_id: 0, is_encoder_decoder: true,
    feed_forward_proj: version === '1.0' ? 'relu' : 'gated-gelu', tie_word_embeddings: version === '1.0',
    ...overrides,
  };
}

function tensorShapes(config) {
  const d = config.d_model, inner = config.num_heads * config.d_kv, F = config.d_ff;
  const gated = config.feed_forward_proj.startsWith('gated');
  const shapes = [['shared.weight', [config.vocab_size, d]]];
  for (const side of ['encoder', 'decoder']) {
    const blocks = side === 'encoder' ? config.num_layers : config.num_decoder_layers;
    const attentions = side === 'encoder' ? ['SelfAttention'] : ['SelfAttention', 'EncDecAttention'];
    for (let i = 0; i < blocks; i++) {
      const prefix = `${side}.block.${i}.layer.`;
      attentions.forEach((attention, a) => {
        for (const p of ['q', 'k', 'v']) shapes.push([`${prefix}${a}.${attention}.${p}.weight`, [inner, d]]);
        shapes.push([`${prefix}${a}.${attention}.o.weight`, [d, inner]]);
        if (i === 0 && attention === 'SelfAttention') {
          shapes.push([`${prefix}${a}.${attention}.relative_attention_bias.weight`, [config.relative_attention_num_buckets, config.num_heads]]);
        }
        shapes.push([`${prefix}${a}.layer_norm.weight`, [d]]);
      });
      const ff = `${prefix}${attentions.length}.`;
      for (const wi of gated ? ['wi_0', 'wi_1'] : ['wi']) shapes.push([`${ff}DenseReluDense.${wi}.weight`, [F, d]]);
      shapes.push([`${ff}DenseReluDense.wo.weight`, [d, F]], [`${ff}layer_norm.weight`, [d]]);
    }
    shapes.push([`${side}.final_layer_norm.weight`, [d]]);
  }
  if (!config.tie_word_embeddings) shapes.push(['lm_head.weight', [config.vocab_size, d]]);
  return shapes;
}

/** A tiny T5 checkpoint as the hub stores it (each side's tied embed_tokens too, which a loader skips). */
export function t5Checkpoint({ version = '1.0', dtype = 'F32', seed = 1, ...overrides } = {}) {
  const config = t5Config(version, overrides);
  const random = seededRandom(seed * 104729 + 3);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const tensors = {}, entries = [];
  for (const [name, shape] of tensorShapes(config)) {
    const count = shape.reduce((a, b) => a * b, 1);
    const values = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      const z = normal();
      values[i] = name.endsWith('layer_norm.weight') ? 1 + 0.1 * z
        : /relative_attention_bias/.test(name) ? z
          : /(shared|lm_head)\.weight$/.test(name) ? z
            : (0.45 * z) / Math.sqrt(shape[1]) * (/\.[qk]\.weight$/.test(name) ? 2.5 : 1);
    }
    tensors[name] = values.map((value) => storedValue(dtype, Math.fround(value)));
    entries.push({ name, dtype, shape, values: tensors[name] });
  }
  for (const side of ['encoder', 'decoder']) {
    entries.push({ name: `${side}.embed_tokens.weight`, dtype, shape: [config.vocab_size, config.d_model], values: tensors['shared.weight'] });
  }
  const files = { 'config.json': JSON.stringify(config, null, 2), 'model.safetensors': writeSafetensors(entries, { metadata: { format: 'pt' } }) };
  return { config, files, tensors, entries };
}

// T5Attention._relative_position_bucket, in float32 where torch computes in float32.
export function relativeBucket(relative, bidirectional, buckets, maxDistance) {
  let bucket = 0;
  let distance;
  if (bidirectional) {
    buckets = Math.floor(buckets / 2);
    if (relative > 0) bucket += buckets;
    distance = Math.abs(relative);
  } else {
    distance = -Math.min(relative, 0);
  }
  const maxExact = Math.floor(buckets / 2);
  if (distance < maxExact) return bucket + distance;
  const f = Math.fround;
  const scaled = f(f(f(Math.log(f(f(distance) / maxExact))) / f(Math.log(maxDistance / maxExact))) * (buckets - maxExact));
  return bucket + Math.min(maxExact + Math.trunc(scaled), buckets - 1);
}

/**
 * The float64 forward: { attention, decoderAttention, crossAttention, logits } as model.run returns them,
 * with the steps, decoderStreams and logitsOf of seq2seqReference (the logit lens: the decoder's final
 * norm, the tied head's d_model^-0.5, the LM head).
 */
export function t5Reference(config, tensors, sourceIds, targetIds) {
  const d = config.d_model, H = config.num_heads, hd = config.d_kv, inner = H * hd, F = config.d_ff, V = config.vocab_size;
  const t = (name) => {
    if (!tensors[name]) throw new Error(`t5 reference: missing tensor ${name}`);
    return tensors[name];
  };
  const norm = (x, rows, name) => rmsNorm(x, rows, d, t(name), config.layer_norm_epsilon);
  const gated = config.feed_forward_proj.startsWith('gated');
  const bias = (side, m, n, past) => {
    const table = t(`${side}.block.0.layer.0.SelfAttention.relative_attention_bias.weight`);
    const out = new Float64Array(H * m * n);
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          const bucket = relativeBucket(j - (i + past), side === 'encoder', config.relative_attention_num_buckets, config.relative_attention_max_distance);
          out[(h * m + i) * n + j] = table[bucket * H + h];
        }
      }
    }
    return out;
  };
  const attention = (prefix, x, m, keys, n, causal, positionBias, stepsOut) => {
    const project = (p, input, rows) => linearOutIn(input, rows, t(`${prefix}.${p}.weight`), d, inner);
    const step = sublayerStep({
      x, contextX: keys, q: project('q', x, m), k: project('k', keys, n), v: project('v', keys, n), m, n, heads: H, headWidth: hd,
      causal, scale: 1, bias: positionBias, wo: t(`${prefix}.o.weight`), project: (heads) => linearOutIn(heads, m, t(`${prefix}.o.weight`), inner, d),
    });
    stepsOut.push(step);
    return step.output;
  };
  const feedForward = (prefix, x, rows) => {
    const normed = norm(x, rows, `${prefix}layer_norm.weight`);
    const up = (name) => linearOutIn(normed, rows, t(`${prefix}DenseReluDense.${name}.weight`), d, F);
    let hidden;
    if (gated) {
      const gate = applyEach(geluTanh, up('wi_0')), linear = up('wi_1');
      hidden = gate.map((g, i) => g * linear[i]);
    } else {
      hidden = applyEach((value) => Math.max(value, 0), up('wi'));
    }
    return add(x, linearOutIn(hidden, rows, t(`${prefix}DenseReluDense.wo.weight`), F, d));
  };
  const n = sourceIds.length, m = targetIds.length;
  const steps = { encoder: [], decoder: [], cross: [] }, decoderStreams = [];
  let h = gatherRows(t('shared.weight'), sourceIds, d);
  const encoderBias = bias('encoder', n, n, 0);
  for (let i = 0; i < config.num_layers; i++) {
    const prefix = `encoder.block.${i}.layer.`;
    const normed = norm(h, n, `${prefix}0.layer_norm.weight`);
    h = add(h, attention(`${prefix}0.SelfAttention`, normed, n, normed, n, false, encoderBias, steps.encoder));
    h = steps.encoder[i].layerOutput = feedForward(`${prefix}1.`, h, n);
  }
  const encoded = norm(h, n, 'encoder.final_layer_norm.weight');
  h = gatherRows(t('shared.weight'), targetIds, d);
  const decoderBias = bias('decoder', m, m, 0);
  for (let i = 0; i < config.num_decoder_layers; i++) {
    const prefix = `decoder.block.${i}.layer.`;
    const normed = norm(h, m, `${prefix}0.layer_norm.weight`);
    h = add(h, attention(`${prefix}0.SelfAttention`, normed, m, normed, m, true, decoderBias, steps.decoder));
    h = add(h, attention(`${prefix}1.EncDecAttention`, norm(h, m, `${prefix}1.layer_norm.weight`), m, encoded, n, false, null, steps.cross));
    h = steps.decoder[i].layerOutput = steps.cross[i].layerOutput = feedForward(`${prefix}2.`, h, m);
    decoderStreams.push(h);
  }
  const logitsOf = (stream) => {
    let normed = norm(stream, m, 'decoder.final_layer_norm.weight');
    if (config.tie_word_embeddings) normed = applyEach((value) => value * d ** -0.5, normed);
    return linearOutIn(normed, m, t(config.tie_word_embeddings ? 'shared.weight' : 'lm_head.weight'), d, V);
  };
  return { ...joinedWeights(steps), logits: logitsOf(h), steps, decoderStreams, logitsOf };
}
