// Phi (PhiModel, PhiForCausalLM; phi-1, phi-1.5, phi-2): one input_layernorm
// whose output both attention and the MLP read, added to the residual in
// parallel (x + attn(ln(x)) + mlp(ln(x))), rotary on the first
// int(partial_rotary_factor * head_dim) columns of each head, biases on every
// projection, a final LayerNorm, and an untied lm_head with a bias.
import { GELU_TANH, HIDDEN_SIZES, rotaryWidthOf } from './activations.js';

export default Object.freeze({
  modelTypes: ['phi'],
  layout: 'phi',
  config: {
    ...HIDDEN_SIZES,
    kvHeads: { count: 'num_key_value_heads', fallback: ({ heads }) => heads },
    maxPositions: { count: 'max_position_embeddings', fallback: 2048 },
    normEpsilon: { number: 'layer_norm_eps', fallback: 1e-5 },
    rotaryWidth: { number: 'partial_rotary_factor', atMost: 1, fallback: 0.5, map: rotaryWidthOf('partial_rotary_factor') },
    ropeTheta: { number: 'rope_theta', fallback: 10000, above: 1 },
    activation: { choice: 'hidden_act', fallback: 'gelu_new', accepted: { ...GELU_TANH, gelu: 'gelu_erf' } },
    tiedLmHead: { flag: 'tie_word_embeddings', fallback: false },
  },
  refuse: [
    { field: 'rope_scaling', unless: null, what: 'attnlens applies plain rotary embeddings with rope_theta' },
    { field: 'qk_layernorm', unless: false, what: 'LayerNorms on the queries and keys' },
  ],
  math: {
    norm: 'layer', position: 'rotary', postNorm: false, causal: true, gatedMlp: false,
    embeddingNorm: false, finalNorm: true, hasLmHead: true, lmHeadBias: true,
    parallelResidual: true, sharedNorm: true, attentionBias: true, attentionOutputBias: true, mlpBias: true,
  },
  tensors: {
    // The core's names carry model. (PhiForCausalLM's files); PhiModel's lack it.
    prefix: 'model.',
    canonicalPrefix: true,
    outsidePrefix: ['lm_head.weight', 'lm_head.bias'],
    skip: [/\.rotary_emb\.inv_freq$/],
  },
});
