// Qwen2 (Qwen2Model, Qwen2ForCausalLM): Llama's math and names, with biases
// on the Q, K and V projections only (modeling_qwen2.py: o_proj and the MLP
// have none). Sliding-window attention as Qwen2Config sets it: only with
// use_sliding_window (then sliding_window, 4096 by default), on the layers
// layer_types calls "sliding_attention", or when the config has no
// layer_types on layer max_window_layers (28 by default) and after; each
// windowed token sees itself and the sliding_window - 1 tokens before it.
import llama from './llama.js';

const { attentionBias, attentionOutputBias, mlpBias, ...config } = llama.config;
const WHERE = 'attnlens.loadModel';

function slidingWindow(hub) {
  if (hub.use_sliding_window !== true) return 0;
  const window = hub.sliding_window ?? 4096;
  if (!Number.isInteger(window) || window < 1) {
    throw new RangeError(`${WHERE}: config.sliding_window must be a whole number of at least 1 with use_sliding_window, ` +
      `got ${JSON.stringify(window)}`);
  }
  return window;
}

// The windowed layers, as the core takes them: one '1' or '0' per layer ('' when none is windowed).
function windowLayers(hub, { layers }) {
  if (slidingWindow(hub) === 0) return '';
  if (Array.isArray(hub.layer_types)) {
    if (hub.layer_types.length !== layers) {
      throw new RangeError(`${WHERE}: config.layer_types gives ${hub.layer_types.length} layer types, but ` +
        `config.num_hidden_layers is ${layers}`);
    }
    const unknown = hub.layer_types.find((kind) => kind !== 'sliding_attention' && kind !== 'full_attention');
    if (unknown !== undefined) {
      throw new RangeError(`${WHERE}: config.layer_types holds ${JSON.stringify(unknown)}; Qwen2 layers are ` +
        '"full_attention" or "sliding_attention"');
    }
    return hub.layer_types.map((kind) => (kind === 'sliding_attention' ? '1' : '0')).join('');
  }
  const first = hub.max_window_layers ?? 28;
  if (!Number.isInteger(first) || first < 0) {
    throw new RangeError(`${WHERE}: config.max_window_layers must be a whole number of at least 0, got ${JSON.stringify(first)}`);
  }
  return Array.from({ length: layers }, (_, layer) => (layer >= first ? '1' : '0')).join('');
}

export default Object.freeze({
  ...llama,
  modelTypes: ['qwen2'],
  config: {
    ...config,
    maxPositions: { count: 'max_position_embeddings', fallback: 32768 },
    window: { custom: 'sliding_window', read: slidingWindow },
    windowLayers: { custom: 'max_window_layers', read: windowLayers },
  },
  math: { ...llama.math, attentionBias: true, attentionOutputBias: false, mlpBias: false },
});
