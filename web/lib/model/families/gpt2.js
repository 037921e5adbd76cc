// GPT-2 (GPT2Model, GPT2LMHeadModel): learned positions, pre-norm LayerNorm,
// a fused Conv1D [Q | K | V] projection, a GELU MLP, a head tied to wte.
// The shape of a family description: families/index.js.
import { GELU_TANH } from './activations.js';

export default Object.freeze({
  modelTypes: ['gpt2'],
  layout: 'gpt2',
  config: {
    modelWidth: { count: 'n_embd' },
    heads: { count: 'n_head' },
    layers: { count: 'n_layer' },
    mlpWidth: { count: 'n_inner', fallback: ({ modelWidth }) => 4 * modelWidth },
    vocabSize: { count: 'vocab_size' },
    maxPositions: { count: 'n_positions', fallback: { count: 'n_ctx', fallback: 1024 } },
    normEpsilon: { number: 'layer_norm_epsilon', fallback: 1e-5 },
    activation: { choice: 'activation_function', fallback: 'gelu_new', accepted: { ...GELU_TANH, gelu: 'gelu_erf' } },
    // GPT2Config ties the LM head to wte unless told otherwise.
    tiedLmHead: { flag: 'tie_word_embeddings', fallback: true },
  },
  refuse: [
    { field: 'scale_attn_weights', unless: true, what: 'attention without the 1/sqrt(headWidth) scale' },
    { field: 'scale_attn_by_inverse_layer_idx', unless: false, what: 'scores divided by the layer index' },
    { field: 'add_cross_attention', unless: false, what: 'GPT-2 with cross-attention layers' },
  ],
  math: {
    norm: 'layer', position: 'learned', postNorm: false, causal: true, gatedMlp: false,
    embeddingNorm: false, finalNorm: true, hasLmHead: true,
    attentionBias: true, attentionOutputBias: true, mlpBias: true,
  },
  tensors: {
    // GPT2LMHeadModel saves under transformer., GPT2Model without it.
    prefix: 'transformer.',
    // The causal-mask buffers older checkpoints saved.
    skip: [/^h\.\d+\.attn\.(bias|masked_bias)$/],
  },
});
