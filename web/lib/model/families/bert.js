// BERT (BertModel, BertFor*): learned positions and token types, an
// embedding LayerNorm, post-norm layers, no final norm. BertForMaskedLM's
// and BertForPreTraining's masked-LM head (cls.predictions: a dense layer,
// hidden_act, a LayerNorm, then the decoder tied to the word embeddings
// plus a bias) runs when the checkpoint has it (tensors.headFrom); the
// pooler and the next-sentence head are not run.
import { GELU_TANH, HIDDEN_SIZES } from './activations.js';

const activation = { choice: 'hidden_act', fallback: 'gelu', accepted: { gelu: 'gelu_erf', ...GELU_TANH } };

// The fields BERT and the families on its layout read alike (RoBERTa's and
// ELECTRA's heads use exact GELU, not hidden_act: they leave mlmActivation out).
export const BERT_CONFIG = Object.freeze({
  ...HIDDEN_SIZES,
  maxPositions: { count: 'max_position_embeddings', fallback: 512 },
  typeVocabSize: { count: 'type_vocab_size', fallback: 2 },
  normEpsilon: { number: 'layer_norm_eps', fallback: 1e-12 },
  activation,
  // The decoder is the word embeddings unless the config unties them.
  tiedLmHead: { flag: 'tie_word_embeddings', fallback: true },
});

export default Object.freeze({
  modelTypes: ['bert'],
  layout: 'bert',
  // BertPredictionHeadTransform applies hidden_act too.
  config: { ...BERT_CONFIG, mlmActivation: activation },
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
    // The decoder's bias is cls.predictions.bias under a second name.
    skip: [/^pooler\./, /^cls\.seq_relationship\./, /^cls\.predictions\.decoder\.bias$/, /^embeddings\.position_ids$/],
    // The canonical tensor whose presence gives the model its masked-LM head (hasLmHead).
    headFrom: 'cls.predictions.transform.dense.weight',
    // cls.predictions first: messages name the bias as the files do.
    modules: [['cls.predictions', 'lm_head'], ['cls.predictions.decoder', 'lm_head']],
    // TensorFlow-era checkpoints name LayerNorm's parameters gamma and beta.
    renames: [[/\.LayerNorm\.gamma$/, '.LayerNorm.weight'], [/\.LayerNorm\.beta$/, '.LayerNorm.bias']],
  },
});
