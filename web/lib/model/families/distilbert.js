// DistilBERT (DistilBertModel, DistilBertFor*): BERT's math without token
// types, in its own words. Its LayerNorms use eps 1e-12 whatever the config
// says (modeling_distilbert.py). The masked-LM head (vocab_transform,
// vocab_layer_norm, vocab_projector) is not run.
import { GELU_TANH } from './activations.js';
import bert from './bert.js';

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
    activation: { choice: 'activation', fallback: 'gelu', accepted: { gelu: 'gelu_erf', ...GELU_TANH } },
  },
  // sinusoidal_pos_embds needs no refusal: the sinusoids are stored in
  // position_embeddings.weight like learned positions.
  refuse: [],
  math: { ...bert.math, normEpsilon: 1e-12 },
  tensors: {
    prefix: 'distilbert.',
    skip: [/^embeddings\.position_ids$/, /^vocab_(transform|layer_norm|projector)\./],
    modules: [
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
