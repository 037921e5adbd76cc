// BERT (BertModel, BertFor*): learned positions and token types, an
// embedding LayerNorm, post-norm layers, no final norm. Its pooler and
// cls.* heads are not run.
import { GELU_TANH, HIDDEN_SIZES } from './activations.js';

export default Object.freeze({
  modelTypes: ['bert'],
  layout: 'bert',
  config: {
    ...HIDDEN_SIZES,
    maxPositions: { count: 'max_position_embeddings', fallback: 512 },
    typeVocabSize: { count: 'type_vocab_size', fallback: 2 },
    normEpsilon: { number: 'layer_norm_eps', fallback: 1e-12 },
    activation: { choice: 'hidden_act', fallback: 'gelu', accepted: { gelu: 'gelu_erf', ...GELU_TANH } },
  },
  refuse: [
    { choice: 'position_embedding_type', fallback: 'absolute', accepted: { absolute: true }, why: 'relative position embeddings' },
    { field: 'is_decoder', unless: false, what: 'BERT as a decoder' },
  ],
  math: {
    norm: 'layer', position: 'learned', postNorm: true, causal: false, gatedMlp: false,
    embeddingNorm: true, finalNorm: false, hasLmHead: false,
    attentionBias: true, attentionOutputBias: true, mlpBias: true,
  },
  tensors: {
    prefix: 'bert.',
    skip: [/^pooler\./, /^cls\./, /^embeddings\.position_ids$/],
    // TensorFlow-era checkpoints name LayerNorm's parameters gamma and beta.
    renames: [[/\.LayerNorm\.gamma$/, '.LayerNorm.weight'], [/\.LayerNorm\.beta$/, '.LayerNorm.bias']],
  },
});
