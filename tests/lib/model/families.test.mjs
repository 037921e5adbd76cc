// The family descriptions (web/lib/model/families/) as the generic readers
// see them: every description yields the same ModelConfig fields (a typo in
// a description would add or drop one), transformers' defaults, refusals by
// field name, and names mapped both ways.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ARCHITECTURES, inHubTerms, readModelConfig, usablePositions } from '../../../web/lib/model/config.js';
import { FAMILIES } from '../../../web/lib/model/families/index.js';
import { canonicalTensorName, hubTensorName } from '../../../web/lib/model/tensor-names.js';
import { SEQ2SEQ_FAMILIES, seq2seqConfig } from '../../support/model-reference-seq2seq.mjs';
import { t5Config } from '../../support/model-reference-t5.mjs';
import { architectures, families, tinyCheckpoint } from '../../support/tiny-checkpoints.mjs';

const configOf = (arch, overrides = {}) => ({ ...tinyCheckpoint({ arch }).config, ...overrides });

test('every model_type gives a core config with exactly the ModelConfig fields, on one of the core\'s layouts', () => {
  const fields = Object.keys(readModelConfig(configOf('gpt2')).core).sort();
  assert.ok(fields.includes('window') && fields.includes('paddingIdx') && fields.includes('postNorm'));
  for (const arch of [...architectures, ...families]) {
    const { core, architecture } = readModelConfig(configOf(arch));
    assert.deepEqual(Object.keys(core).sort(), fields, arch);
    assert.equal(architecture, ARCHITECTURES[arch]);
    assert.ok(['gpt2', 'bert', 'llama', 'gpt_neox', 'gpt_neo', 'opt', 'phi'].includes(architecture), arch);
    assert.equal(core.decoderLayers, 0, arch);
  }
  for (const family of SEQ2SEQ_FAMILIES) {
    const { core, architecture } = readModelConfig(seq2seqConfig(family));
    assert.deepEqual(Object.keys(core).sort(), fields, family);
    assert.deepEqual([architecture, ARCHITECTURES[family], core.decoderLayers], ['bart', 'bart', 2], family);
  }
  const t5 = readModelConfig(t5Config());
  assert.deepEqual(Object.keys(t5.core).sort(), fields, 't5');
  assert.deepEqual([t5.architecture, t5.core.decoderLayers], ['t5', 2]);
  assert.deepEqual(Object.keys(FAMILIES),
    ['gpt2', 'bert', 'llama', 'distilbert', 'roberta', 'xlm-roberta', 'qwen2', 'mistral', 'gpt_neox', 'gpt_neo', 'opt', 'gemma', 'phi', 'electra',
      'bart', 'marian', 't5']);
});

test('bart and marian: transformers\' defaults, the decoder start id, refusals and names', () => {
  const bart = (overrides) => readModelConfig(seq2seqConfig('bart', overrides));
  const marian = (overrides) => readModelConfig(seq2seqConfig('marian', overrides));
  // BartLearnedPositionalEmbedding: max_position_embeddings + 2 rows read from row 2.
  assert.deepEqual([bart({}).core.maxPositions, bart({}).core.positionOffset, usablePositions(bart({}).core)], [26, 2, 24]);
  assert.deepEqual([bart({}).core.embeddingScale, bart({ scale_embedding: true }).core.embeddingScale, marian({}).core.embeddingScale], [0, 4, 4]);
  assert.deepEqual([bart({}).core.activation, marian({}).core.activation, marian({ activation_function: undefined }).core.activation],
    ['gelu_erf', 'silu', 'silu']);
  assert.deepEqual([marian({}).core.position, marian({}).core.embeddingNorm, bart({}).core.embeddingNorm, bart({}).core.lmHeadBias],
    ['sinusoidal', false, true, true]);
  assert.deepEqual([bart({}).decoderStartId, marian({ decoder_start_token_id: undefined, pad_token_id: 7 }).decoderStartId], [2, 7]);
  assert.throws(() => bart({ decoder_start_token_id: undefined, pad_token_id: undefined }), /config\.decoder_start_token_id is required/);
  assert.throws(() => bart({ decoder_layers: 0 }), /config\.decoder_layers must be a positive integer/);
  assert.throws(() => bart({ add_final_layer_norm: true }), /config\.add_final_layer_norm = true is not supported \(mBART's final LayerNorms\)/);
  assert.equal(inHubTerms('bart', 'decoderLayers (0) and layers (2)'), 'config.decoder_layers (0) and config.encoder_layers (2)');
  for (const [family, hub, canonical] of [
    ['bart', 'model.decoder.layers.1.encoder_attn.q_proj.weight', 'model.decoder.layers.1.encoder_attn.q_proj.weight'],
    ['bart', 'decoder.layers.1.encoder_attn_layer_norm.bias', 'model.decoder.layers.1.encoder_attn_layer_norm.bias'],
    ['bart', 'final_logits_bias', 'final_logits_bias'],
    ['bart', 'shared.weight', 'model.shared.weight'],
    ['bart', 'model.encoder.embed_tokens.weight', null],
    ['marian', 'model.decoder.embed_positions.weight', null],
    ['marian', 'model.encoder.embed_positions.weight', null],
  ]) assert.equal(canonicalTensorName(family, hub), canonical, hub);
  assert.equal(hubTensorName('bart', 'model.shared.weight'), 'model.shared.weight');
});

test('t5: v1.0 and v1.1 settings, transformers\' defaults', () => {
  const t5 = (version, overrides) => readModelConfig(t5Config(version, overrides));
  const v10 = t5('1.0', {}), v11 = t5('1.1', {});
  assert.deepEqual([v10.core.activation, v10.core.gatedMlp, v10.tiedLmHead, v10.core.logitsScale], ['relu', false, true, 16 ** -0.5]);
  assert.deepEqual([v11.core.activation, v11.core.gatedMlp, v11.tiedLmHead, v11.core.logitsScale], ['gelu_tanh', true, false, 0]);
  assert.deepEqual([v10.core.headWidth, v10.core.modelWidth, v10.core.heads, v10.core.attentionScale], [6, 16, 2, 1]);
  const defaults = t5('1.0', { num_decoder_layers: undefined, num_layers: 3, relative_attention_num_buckets: undefined,
    relative_attention_max_distance: undefined, layer_norm_epsilon: undefined, feed_forward_proj: undefined, decoder_start_token_id: undefined });
  assert.deepEqual([defaults.core.decoderLayers, defaults.core.relativeBuckets, defaults.core.relativeMaxDistance, defaults.core.normEpsilon,
    defaults.core.activation, defaults.core.maxPositions, defaults.decoderStartId], [3, 32, 128, 1e-6, 'relu', 512, 0]);
  assert.equal(canonicalTensorName('t5', 'decoder.block.0.layer.1.EncDecAttention.k.weight'), 'decoder.block.0.layer.1.EncDecAttention.k.weight');
  assert.equal(canonicalTensorName('t5', 'encoder.embed_tokens.weight'), null);
});

test('defaults are transformers\': fallback chains, derived sizes, and a null that is not an absence', () => {
  const gpt2 = readModelConfig(configOf('gpt2', { n_positions: undefined, n_ctx: 16, n_inner: null })).core;
  assert.deepEqual([gpt2.maxPositions, gpt2.mlpWidth], [16, 4 * gpt2.modelWidth]);
  const mistral = (sliding_window) => readModelConfig(configOf('mistral', { sliding_window })).core.window;
  assert.deepEqual([mistral(3), mistral(null), mistral(undefined)], [3, 0, 4096]);
  const roberta = readModelConfig(configOf('roberta', { pad_token_id: undefined })).core;
  assert.equal(roberta.paddingIdx, 1);
  assert.equal(usablePositions(roberta), roberta.maxPositions - 2);
  assert.equal(readModelConfig(configOf('distilbert', { layer_norm_eps: 1e-3 })).core.normEpsilon, 1e-12);
  // GPT-NeoX: rotary_pct of an 8-wide head, int() as GPTNeoXAttention; the newer spellings as fallbacks.
  const neox = (overrides) => readModelConfig(configOf('gpt_neox', overrides)).core;
  assert.deepEqual([neox({}).rotaryWidth, neox({ rotary_pct: 0.5 }).rotaryWidth, neox({ rotary_pct: 0.3 }).rotaryWidth], [2, 4, 2]);
  assert.equal(neox({ rotary_pct: undefined, partial_rotary_factor: 1 }).rotaryWidth, 8);
  assert.equal(neox({ rotary_pct: undefined }).rotaryWidth, 2);
  assert.deepEqual([neox({ rotary_emb_base: undefined, rope_theta: 500 }).ropeTheta, neox({}).parallelResidual], [500, true]);
  assert.deepEqual([neox({ use_parallel_residual: false }).parallelResidual, gpt2.parallelResidual, gpt2.rotaryWidth], [false, false, 0]);
  // GPT-Neo: attention_layers as saved, else attention_types expanded (GPTNeoConfig's default: 12 x [global, local]).
  const neo = (overrides) => readModelConfig(configOf('gpt_neo', overrides)).core;
  assert.deepEqual([neo({}).windowLayers, neo({}).window, neo({}).attentionScale], ['01', 3, 1]);
  assert.equal(neo({ attention_layers: undefined, attention_types: [[['local'], 1], [['global'], 1]] }).windowLayers, '10');
  assert.equal(neo({ attention_layers: undefined, attention_types: undefined, num_layers: 24 }).windowLayers, '01'.repeat(12));
  assert.deepEqual([neo({ window_size: undefined }).window, gpt2.windowLayers, gpt2.attentionScale], [256, '', 0]);
  // OPT: a table of max_position_embeddings + 2 rows read from row 2; do_layer_norm_before false drops the final norm.
  const opt = (overrides) => readModelConfig(configOf('opt', overrides)).core;
  assert.deepEqual([opt({}).maxPositions, opt({}).positionOffset, usablePositions(opt({}))], [24, 2, 22]);
  assert.deepEqual([opt({}).postNorm, opt({}).finalNorm, opt({ do_layer_norm_before: false }).postNorm,
    opt({ do_layer_norm_before: false }).finalNorm, opt({ _remove_final_layer_norm: true }).finalNorm], [false, true, true, false, false]);
  assert.deepEqual([opt({ enable_bias: false }).mlpBias, opt({}).activation, opt({ word_embed_proj_dim: null }).modelWidth], [false, 'relu', 32]);
  // Gemma: hidden_activation (not hidden_act) picks GeGLU's activation; sqrt(hidden_size) scales embeddings.
  const gemma = (overrides) => readModelConfig(configOf('gemma', overrides)).core;
  assert.deepEqual([gemma({}).activation, gemma({ hidden_activation: undefined, hidden_act: 'silu' }).activation,
    gemma({ hidden_activation: 'gelu' }).activation], ['gelu_tanh', 'gelu_tanh', 'gelu_erf']);
  assert.deepEqual([gemma({}).embeddingScale, gemma({}).norm, gemma({}).headWidth, gemma({}).gatedMlp], [Math.sqrt(32), 'rms_plus_one', 12, true]);
  assert.equal(readModelConfig(configOf('gemma', { tie_word_embeddings: undefined })).tiedLmHead, true);
  // Phi: int(partial_rotary_factor * head_dim) rotated, one norm shared by both parallel halves, a biased head.
  const phi = (overrides) => readModelConfig(configOf('phi', overrides)).core;
  assert.deepEqual([phi({}).rotaryWidth, phi({ partial_rotary_factor: undefined }).rotaryWidth, phi({ partial_rotary_factor: 0.4 }).rotaryWidth], [4, 4, 3]);
  assert.deepEqual([phi({}).parallelResidual, phi({}).sharedNorm, phi({}).lmHeadBias, phi({ num_key_value_heads: 2 }).kvHeads], [true, true, true, 2]);
  const electra = (overrides) => readModelConfig(configOf('electra', overrides)).core;
  assert.deepEqual([electra({}).embeddingWidth, electra({ embedding_size: undefined }).embeddingWidth, gpt2.embeddingWidth], [16, 128, 0]);
  const qwen2 = readModelConfig(configOf('qwen2', { attention_bias: false })).core;
  assert.deepEqual([qwen2.attentionBias, qwen2.attentionOutputBias, qwen2.mlpBias], [true, false, false]);
  // Qwen2's window only with use_sliding_window, from max_window_layers on (or where layer_types says).
  const sliding = (overrides) => readModelConfig(configOf('qwen2', { use_sliding_window: true, ...overrides })).core;
  assert.deepEqual([qwen2.window, qwen2.windowLayers], [0, '']);
  assert.deepEqual([sliding({ max_window_layers: 1 }).window, sliding({ max_window_layers: 1 }).windowLayers], [32, '01']);
  assert.equal(sliding({ layer_types: ['sliding_attention', 'full_attention'] }).windowLayers, '10');
  assert.equal(sliding({ sliding_window: undefined, max_window_layers: 0 }).window, 4096);
  // OPT-350m: word embeddings word_embed_proj_dim wide, projected before the positions are added.
  assert.deepEqual([opt({ word_embed_proj_dim: 16 }).embeddingWidth, opt({}).embeddingWidth, opt({}).projectionBeforePositions], [16, 32, true]);
});

test('settings the core does not compute are refused by field name', () => {
  assert.throws(() => readModelConfig(configOf('llama', { rope_scaling: { rope_type: 'llama3', factor: 8 } })),
    /config\.rope_scaling = \{"rope_type":"llama3","factor":8\} is not supported \(attnlens applies plain rotary/);
  assert.throws(() => readModelConfig(configOf('roberta', { position_embedding_type: 'relative_key' })),
    /config\.position_embedding_type = "relative_key" is not supported \(relative position embeddings\)/);
  assert.throws(() => readModelConfig(configOf('distilbert', { activation: 'relu' })), /config\.activation = "relu" is not supported/);
  assert.throws(() => readModelConfig(configOf('roberta', { pad_token_id: -1 })), /config\.pad_token_id must be a whole number of at least 0, got -1/);
  assert.throws(() => readModelConfig(configOf('mistral', { sliding_window: 0 })), /config\.sliding_window must be a positive integer, got 0/);
  assert.throws(() => readModelConfig(configOf('gpt_neox', { rope_scaling: { type: 'linear', factor: 2 } })),
    /config\.rope_scaling = \{"type":"linear","factor":2\} is not supported/);
  assert.throws(() => readModelConfig(configOf('gpt_neox', { rotary_pct: 1.5 })),
    /config\.rotary_pct must be a finite number greater than 0 and at most 1, got 1\.5/);
  assert.throws(() => readModelConfig(configOf('gpt_neox', { rotary_pct: 0.1 })),
    /config\.rotary_pct = 0\.1 turns no column of the 8-wide heads/);
  assert.throws(() => readModelConfig(configOf('gpt_neox', { hidden_act: 'relu' })), /config\.hidden_act = "relu" is not supported/);
  assert.throws(() => readModelConfig(configOf('gpt_neo', { attention_layers: undefined, attention_types: [[['global', 'local'], 2]] })),
    /config\.attention_types gives 4 layer types, but config\.num_layers is 2/);
  assert.throws(() => readModelConfig(configOf('gpt_neo', { attention_layers: undefined, attention_types: 'global' })),
    /config\.attention_types must be a list of \[\[types\.\.\.\], repeat\] pairs, got "global"/);
  assert.throws(() => readModelConfig(configOf('gpt_neo', { attention_layers: ['local', 'dense'] })),
    /config\.attention_layers holds "dense"; GPT-Neo layers are "global" or "local"/);
  assert.throws(() => readModelConfig(configOf('opt', { activation_function: 'silu' })), /config\.activation_function = "silu" is not supported/);
});

test('the core\'s field names become each family\'s own in messages', () => {
  assert.equal(inHubTerms('distilbert', 'modelWidth (5) must be divisible by heads (2)'), 'config.dim (5) must be divisible by config.n_heads (2)');
  assert.equal(inHubTerms('gpt2', 'modelWidth 9 is too large'), 'config.n_embd 9 is too large');
  assert.equal(inHubTerms('mistral', 'window (4) needs causal attention'), 'config.sliding_window (4) needs causal attention');
});

test('tensor names map onto the layout and back to the family\'s spelling', () => {
  const cases = [
    ['distilbert', 'distilbert.transformer.layer.11.attention.out_lin.bias', 'encoder.layer.11.attention.output.dense.bias'],
    ['distilbert', 'transformer.layer.0.sa_layer_norm.weight', 'encoder.layer.0.attention.output.LayerNorm.weight'],
    ['distilbert', 'embeddings.LayerNorm.weight', 'embeddings.LayerNorm.weight'],
    ['roberta', 'roberta.encoder.layer.3.output.dense.weight', 'encoder.layer.3.output.dense.weight'],
    ['xlm-roberta', 'roberta.embeddings.word_embeddings.weight', 'embeddings.word_embeddings.weight'],
    ['qwen2', 'layers.1.self_attn.q_proj.bias', 'model.layers.1.self_attn.q_proj.bias'],
    ['mistral', 'lm_head.weight', 'lm_head.weight'],
    ['bert', 'bert.embeddings.LayerNorm.gamma', 'embeddings.LayerNorm.weight'],
    ['gpt_neox', 'gpt_neox.layers.0.attention.query_key_value.bias', 'gpt_neox.layers.0.attention.query_key_value.bias'],
    ['gpt_neox', 'layers.1.mlp.dense_4h_to_h.weight', 'gpt_neox.layers.1.mlp.dense_4h_to_h.weight'],
    ['gpt_neox', 'embed_out.weight', 'lm_head.weight'],
    ['gpt_neo', 'transformer.h.1.attn.attention.out_proj.bias', 'h.1.attn.attention.out_proj.bias'],
    ['gpt_neo', 'lm_head.weight', 'lm_head.weight'],
    ['opt', 'decoder.layers.0.fc1.bias', 'model.decoder.layers.0.fc1.bias'],
    ['opt', 'model.decoder.embed_positions.weight', 'model.decoder.embed_positions.weight'],
    ['phi', 'layers.0.self_attn.dense.bias', 'model.layers.0.self_attn.dense.bias'],
    ['phi', 'lm_head.bias', 'lm_head.bias'],
    ['electra', 'electra.embeddings_project.weight', 'embeddings_project.weight'],
    ['electra', 'electra.encoder.layer.0.attention.self.query.bias', 'encoder.layer.0.attention.self.query.bias'],
    // The masked-LM heads, on the bert layout's cls.predictions and lm_head.
    ['bert', 'cls.predictions.transform.LayerNorm.gamma', 'cls.predictions.transform.LayerNorm.weight'],
    ['bert', 'cls.predictions.bias', 'lm_head.bias'],
    ['distilbert', 'vocab_transform.weight', 'cls.predictions.transform.dense.weight'],
    ['distilbert', 'vocab_projector.bias', 'lm_head.bias'],
    ['roberta', 'lm_head.layer_norm.bias', 'cls.predictions.transform.LayerNorm.bias'],
    ['roberta', 'lm_head.bias', 'lm_head.bias'],
    ['electra', 'generator_predictions.dense.weight', 'cls.predictions.transform.dense.weight'],
    ['electra', 'generator_lm_head.bias', 'lm_head.bias'],
  ];
  for (const [type, hub, canonical] of cases) {
    assert.equal(canonicalTensorName(type, hub), canonical, hub);
    assert.equal(canonicalTensorName(type, hubTensorName(type, canonical)), canonical, canonical);
  }
  assert.equal(hubTensorName('distilbert', 'encoder.layer.2.intermediate.dense.weight'), 'transformer.layer.2.ffn.lin1.weight');
  assert.equal(hubTensorName('gpt_neox', 'lm_head.weight'), 'embed_out.weight');
  assert.equal(canonicalTensorName('bert', 'cls.predictions.decoder.weight'), 'lm_head.weight');
  assert.equal(canonicalTensorName('roberta', 'lm_head.decoder.weight'), 'lm_head.weight');
  assert.equal(canonicalTensorName('distilbert', 'vocab_projector.weight'), 'lm_head.weight');
  for (const [type, skipped] of [['distilbert', 'distilbert.embeddings.position_ids'],
    ['bert', 'cls.seq_relationship.weight'], ['bert', 'cls.predictions.decoder.bias'], ['roberta', 'lm_head.decoder.bias'],
    ['roberta', 'roberta.pooler.dense.bias'], ['mistral', 'model.layers.0.self_attn.rotary_emb.inv_freq'],
    ['gpt_neox', 'gpt_neox.layers.3.attention.bias'], ['gpt_neox', 'gpt_neox.layers.0.attention.masked_bias'],
    ['gpt_neox', 'layers.2.attention.rotary_emb.inv_freq'], ['gpt_neo', 'transformer.h.0.attn.attention.bias'],
    ['gpt_neo', 'h.1.attn.attention.masked_bias'], ['electra', 'discriminator_predictions.dense.weight'],
    ['electra', 'electra.embeddings.position_ids']]) {
    assert.equal(canonicalTensorName(type, skipped), null, `${type} ${skipped}`);
  }
});
