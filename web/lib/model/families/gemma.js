// Gemma (GemmaModel, GemmaForCausalLM): Llama's names and rotary attention
// with RMSNorms that scale by (1 + weight) (GemmaRMSNorm), embeddings
// multiplied by sqrt(hidden_size) as a tensor of the hidden dtype (the core
// rounds it to the word embedding's stored dtype, as a model run in its
// torch_dtype does: sqrt(2048) = 45.25 becomes 45.25 in BF16, sqrt(3072)
// 55.5), a GeGLU MLP (gelu_pytorch_tanh unless hidden_activation says
// otherwise; hidden_act is not read), head_dim possibly wider than
// hidden_size / heads, and the head tied to embed_tokens.
import { GELU_TANH } from './activations.js';
import llama from './llama.js';

const { mlpBias, tiedLmHead, activation, ...config } = llama.config;

export default Object.freeze({
  ...llama,
  modelTypes: ['gemma'],
  config: {
    ...config,
    maxPositions: { count: 'max_position_embeddings', fallback: 8192 },
    activation: { choice: 'hidden_activation', fallback: 'gelu_pytorch_tanh', accepted: { ...GELU_TANH, gelu: 'gelu_erf' } },
    embeddingScale: { count: 'hidden_size', map: Math.sqrt },
    tiedLmHead: { flag: 'tie_word_embeddings', fallback: true },
  },
  math: { ...llama.math, norm: 'rms_plus_one', mlpBias: false },
});
