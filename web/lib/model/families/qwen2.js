// Qwen2 (Qwen2Model, Qwen2ForCausalLM): Llama's math and names, with biases
// on the Q, K and V projections only (modeling_qwen2.py: o_proj and the MLP
// have none). Sliding-window attention is refused until the core masks windows.
import llama from './llama.js';

const { attentionBias, attentionOutputBias, mlpBias, ...config } = llama.config;

export default Object.freeze({
  ...llama,
  modelTypes: ['qwen2'],
  config: {
    ...config,
    maxPositions: { count: 'max_position_embeddings', fallback: 32768 },
  },
  refuse: [
    ...llama.refuse,
    { field: 'use_sliding_window', unless: false, what: 'sliding-window attention' },
  ],
  math: { ...llama.math, attentionBias: true, attentionOutputBias: false, mlpBias: false },
});
