// Mistral (MistralModel, MistralForCausalLM): Llama's names and math without
// biases, and sliding-window attention: each token sees itself and the
// sliding_window - 1 tokens before it (masking_utils.sliding_window_overlay:
// key > query - window). MistralConfig's default window is 4096; null means none.
import llama from './llama.js';

const { attentionBias, attentionOutputBias, mlpBias, ...config } = llama.config;

export default Object.freeze({
  ...llama,
  modelTypes: ['mistral'],
  config: {
    ...config,
    maxPositions: { count: 'max_position_embeddings', fallback: 4096 * 32 },
    window: { count: 'sliding_window', fallback: 4096, nullMeans: 0 },
  },
  math: { ...llama.math, attentionBias: false, attentionOutputBias: false, mlpBias: false },
});
