// DistilBERT (DistilBertModel, DistilBertFor*): BERT's math without token
// types, in its own words. Its LayerNorms use eps 1e-12 whatever the config
// says (modeling_distilbert.py). DistilBertForMaskedLM's head
// (vocab_transform, the activation, vocab_layer_norm, then vocab_projector
// tied to the word embeddings) is BERT's cls.predictions in other words.
import { GELU_TANH } from './activations.js';
import bert from './bert.js';

const activation = { choice: 'activation', fallback: 'gelu', accepted: { gelu: 'gelu_erf', ...GELU_TANH } };

export default Object.freeze({
  modelTypes: ['distilbert'],
  layout: 'bert',
  config: {
    modelWidth: { count: 'dim' },
    heads: { count: 'n_heads' },
    layers: { count: 'n_layers' },
    mlpWidth: { count: 'hidden_dim' },
    vocabSize: { count: 'vocab_size' },
    maxPositions: { count: 'max_position_embeddings', fallback: 512 },
    activation,
    mlmActivation: activation,
    tiedLmHead: { flag: 'tie_word_embeddings', fallback: true },
  },
  // sinusoidal_pos_embds needs no refusal: the sinusoids are stored in
  // position_embeddings.weight like learned positions.
  refuse: [],
  math: { ...bert.math, normEpsilon: 1e-12 },
  tensors: {
    prefix: 'distilbert.',
    skip: [/^embeddings\.position_ids$/],
    headFrom: bert.tensors.headFrom,
    modules: [
      ['vocab_transform', 'cls.predictions.transform.dense'],
      ['vocab_layer_norm', 'cls.predictions.transform.LayerNorm'],
      ['vocab_projector', 'lm_head'],
      ['transformer.layer.{i}.attention.q_lin', 'encoder.layer.{i}.attention.self.query'],
      ['transformer.layer.{i}.attention.k_lin', 'encoder.layer.{i}.attention.self.key'],
      ['transformer.layer.{i}.attention.v_lin', 'encoder.layer.{i}.attention.self.value'],
      ['transformer.layer.{i}.attention.out_lin', 'encoder.layer.{i}.attention.output.dense'],
      ['transformer.layer.{i}.sa_layer_norm', 'encoder.layer.{i}.attention.output.LayerNorm'],
      ['transformer.layer.{i}.ffn.lin1', 'encoder.layer.{i}.intermediate.dense'],
      ['transformer.layer.{i}.ffn.lin2', 'encoder.layer.{i}.output.dense'],
      ['transformer.layer.{i}.output_layer_norm', 'encoder.layer.{i}.output.LayerNorm'],
    ],
  },
});
