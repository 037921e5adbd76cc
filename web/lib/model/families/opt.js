// OPT (OPTModel, OPTForCausalLM): learned positions read two rows on
// (OPTLearnedPositionalEmbedding's offset, so the table has
// max_position_embeddings + 2 rows), LayerNorms before each half
// (do_layer_norm_before, OPT-125m and most sizes) or after it (OPT-350m, then
// without the decoder's final norm), ReLU, biases unless enable_bias is
// false, the head tied to embed_tokens. Positions count the tokens the key
// mask keeps (every token without one), as OPTLearnedPositionalEmbedding
// numbers them from the attention_mask. Word embeddings narrower than the
// model (word_embed_proj_dim, OPT-350m) go through project_in before the
// positions are added and the last hidden state through project_out before
// the head (OPTDecoder.forward), both Linears without biases.
import { GELU_TANH, RELU } from './activations.js';

export default Object.freeze({
  modelTypes: ['opt'],
  layout: 'opt',
  config: {
    modelWidth: { count: 'hidden_size' },
    heads: { count: 'num_attention_heads' },
    layers: { count: 'num_hidden_layers' },
    mlpWidth: { count: 'ffn_dim' },
    vocabSize: { count: 'vocab_size' },
    // OPTConfig's word_embed_proj_dim defaults to hidden_size (no projection).
    embeddingWidth: { count: 'word_embed_proj_dim', fallback: ({ modelWidth }) => modelWidth },
    // The core's table size: the embed_positions rows.
    maxPositions: { count: 'max_position_embeddings', fallback: 2048, map: (positions) => positions + 2 },
    activation: { choice: 'activation_function', fallback: 'relu', accepted: { ...RELU, ...GELU_TANH, gelu: 'gelu_erf' } },
    postNorm: { flag: 'do_layer_norm_before', fallback: true, map: (before) => !before },
    // OPTDecoder.final_layer_norm exists only with do_layer_norm_before and not _remove_final_layer_norm.
    finalNorm: { flag: '_remove_final_layer_norm', fallback: false, map: (removed, { postNorm }) => !postNorm && !removed },
    attentionBias: { flag: 'enable_bias', fallback: true },
    attentionOutputBias: { flag: 'enable_bias', fallback: true },
    mlpBias: { flag: 'enable_bias', fallback: true },
    tiedLmHead: { flag: 'tie_word_embeddings', fallback: true },
  },
  refuse: [
    { field: 'layer_norm_elementwise_affine', unless: true, what: 'LayerNorms without weights and biases' },
  ],
  math: {
    norm: 'layer', position: 'learned', positionOffset: 2, projectionBeforePositions: true, causal: true, gatedMlp: false,
    embeddingNorm: false, hasLmHead: true, normEpsilon: 1e-5,
  },
  tensors: {
    // The core's names carry model. (OPTForCausalLM's files); OPTModel's lack it.
    prefix: 'model.',
    canonicalPrefix: true,
    outsidePrefix: ['lm_head.weight'],
  },
});
