// BART (BartModel, BartForConditionalGeneration): an encoder-decoder
// (src/model/seq2seq.hpp) with learned positions read two rows on
// (BartLearnedPositionalEmbedding's offset: the tables have
// max_position_embeddings + 2 rows), a LayerNorm on each side's summed
// embeddings (layernorm_embedding), LayerNorms after each half (post-norm),
// word embeddings shared by both sides (model.shared) and multiplied by
// sqrt(d_model) only with scale_embedding, the head tied to them, and
// final_logits_bias added to the logits. Both sides must have the same
// heads and MLP width (the core runs one shape).
import { GELU_TANH, RELU } from './activations.js';

// The encoder-decoder fields BART and Marian share.
export const SEQ2SEQ_CONFIG = Object.freeze({
  modelWidth: { count: 'd_model' },
  heads: { count: 'encoder_attention_heads' },
  layers: { count: 'encoder_layers' },
  decoderLayers: { count: 'decoder_layers' },
  mlpWidth: { count: 'encoder_ffn_dim' },
  vocabSize: { count: 'vocab_size' },
  activation: {
    choice: 'activation_function', fallback: 'gelu',
    accepted: { gelu: 'gelu_erf', ...GELU_TANH, ...RELU, swish: 'silu', silu: 'silu' },
  },
  tiedLmHead: { flag: 'tie_word_embeddings', fallback: true },
  // Generation's, not the core's (loadModel keeps them in model.info).
  decoderStartId: { index: 'decoder_start_token_id', fallback: { index: 'pad_token_id' } },
});

export const SEQ2SEQ_REFUSE = Object.freeze([
  { field: 'decoder_attention_heads', unless: ({ heads }) => heads, what: 'a decoder with other heads than the encoder' },
  { field: 'decoder_ffn_dim', unless: ({ mlpWidth }) => mlpWidth, what: 'a decoder with another MLP width than the encoder' },
  { field: 'add_final_layer_norm', unless: false, what: "mBART's final LayerNorms" },
  { field: 'normalize_before', unless: false, what: 'LayerNorms before each half' },
]);

export default Object.freeze({
  modelTypes: ['bart'],
  layout: 'bart',
  config: {
    ...SEQ2SEQ_CONFIG,
    maxPositions: { count: 'max_position_embeddings', fallback: 1024, map: (positions) => positions + 2 },
    embeddingScale: { flag: 'scale_embedding', fallback: false, map: (scaled, { modelWidth }) => (scaled ? Math.sqrt(modelWidth) : 0) },
  },
  refuse: [
    ...SEQ2SEQ_REFUSE,
    { field: 'normalize_embedding', unless: true, what: 'embeddings without layernorm_embedding' },
  ],
  math: {
    norm: 'layer', position: 'learned', positionOffset: 2, postNorm: true, causal: false, gatedMlp: false,
    embeddingNorm: true, finalNorm: false, hasLmHead: true, lmHeadBias: true, normEpsilon: 1e-5,
    attentionBias: true, attentionOutputBias: true, mlpBias: true,
  },
  tensors: {
    // BartForConditionalGeneration's names carry model.; BartModel's lack it.
    prefix: 'model.',
    canonicalPrefix: true,
    outsidePrefix: ['final_logits_bias', 'lm_head.weight'],
    // Each side's embed_tokens is model.shared, tied.
    skip: [/^(encoder|decoder)\.embed_tokens\.weight$/],
  },
});
