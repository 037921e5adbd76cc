// Llama (LlamaModel, LlamaForCausalLM): rotary positions, pre-norm RMSNorm,
// grouped-query attention, a SwiGLU MLP, biases only when the config asks.
import { HIDDEN_SIZES } from './activations.js';

export default Object.freeze({
  modelTypes: ['llama'],
  layout: 'llama',
  config: {
    ...HIDDEN_SIZES,
    kvHeads: { count: 'num_key_value_heads', fallback: ({ heads }) => heads },
    headWidth: { count: 'head_dim', fallback: ({ modelWidth, heads }) => (modelWidth % heads === 0 ? modelWidth / heads : 0) },
    maxPositions: { count: 'max_position_embeddings', fallback: 2048 },
    normEpsilon: { number: 'rms_norm_eps', fallback: 1e-6 },
    ropeTheta: { number: 'rope_theta', fallback: 10000, above: 1 },
    activation: { choice: 'hidden_act', fallback: 'silu', accepted: { silu: 'silu' } },
    // attention_bias gives q, k, v and o_proj biases alike (LlamaAttention).
    attentionBias: { flag: 'attention_bias', fallback: false },
    attentionOutputBias: { flag: 'attention_bias', fallback: false },
    mlpBias: { flag: 'mlp_bias', fallback: false },
    // LlamaConfig's default is an untied LM head.
    tiedLmHead: { flag: 'tie_word_embeddings', fallback: false },
  },
  refuse: [
    { field: 'rope_scaling', unless: null, what: 'attnlens applies plain rotary embeddings with rope_theta' },
  ],
  math: {
    norm: 'rms', position: 'rotary', postNorm: false, causal: true, gatedMlp: true,
    embeddingNorm: false, finalNorm: true, hasLmHead: true,
  },
  tensors: {
    // The core's names carry model. (LlamaForCausalLM's files); LlamaModel's lack it.
    prefix: 'model.',
    canonicalPrefix: true,
    outsidePrefix: ['lm_head.weight'],
    // The rotary frequencies older checkpoints saved as buffers.
    skip: [/\.rotary_emb\.inv_freq$/],
  },
});
