// GPT-Neo (GPTNeoModel, GPTNeoForCausalLM; TinyStories): GPT-2's embeddings,
// norms and tied head with Linear q/k/v (no biases) and MLP, scores not
// scaled by 1/sqrt(head width) (GPTNeoSelfAttention._attn), and
// attention_layers alternating global and local layers: a local layer's query
// sees itself and the window_size - 1 keys before it (its causal bias XOR
// tril(bias, -window_size)).
import { GELU_TANH } from './activations.js';

const WHERE = 'attnlens.loadModel';

// GPTNeoConfig.expand_attention_types_params: [[types, repeat], ...] -> one type per layer.
function expand(types) {
  if (!Array.isArray(types) || !types.every((entry) => Array.isArray(entry) && Array.isArray(entry[0]) &&
    Number.isInteger(entry[1]) && entry[1] >= 0)) {
    throw new TypeError(`${WHERE}: config.attention_types must be a list of [[types...], repeat] pairs, got ${JSON.stringify(types)}`);
  }
  return types.flatMap(([kinds, repeat]) => Array.from({ length: repeat }, () => kinds).flat());
}

// The layers a window applies to, as the core takes them: one '1' (local)
// or '0' (global) per layer. attention_layers, when saved, is what the model
// uses (it overrides the expansion of attention_types).
function windowLayers(config, { layers }) {
  const field = Array.isArray(config.attention_layers) ? 'attention_layers' : 'attention_types';
  const kinds = field === 'attention_layers' ? config.attention_layers : expand(config.attention_types ?? [[['global', 'local'], 12]]);
  if (kinds.length !== layers) {
    throw new RangeError(`${WHERE}: config.${field} gives ${kinds.length} layer types, but config.num_layers is ${layers}`);
  }
  const unknown = kinds.find((kind) => kind !== 'global' && kind !== 'local');
  if (unknown !== undefined) {
    throw new RangeError(`${WHERE}: config.${field} holds ${JSON.stringify(unknown)}; GPT-Neo layers are "global" or "local"`);
  }
  return kinds.map((kind) => (kind === 'local' ? '1' : '0')).join('');
}

export default Object.freeze({
  modelTypes: ['gpt_neo'],
  layout: 'gpt_neo',
  config: {
    modelWidth: { count: 'hidden_size' },
    heads: { count: 'num_heads' },
    layers: { count: 'num_layers' },
    mlpWidth: { count: 'intermediate_size', fallback: ({ modelWidth }) => 4 * modelWidth },
    vocabSize: { count: 'vocab_size' },
    maxPositions: { count: 'max_position_embeddings', fallback: 2048 },
    normEpsilon: { number: 'layer_norm_epsilon', fallback: 1e-5 },
    activation: { choice: 'activation_function', fallback: 'gelu_new', accepted: { ...GELU_TANH, gelu: 'gelu_erf' } },
    window: { count: 'window_size', fallback: 256 },
    windowLayers: { custom: 'attention_layers', read: windowLayers },
    tiedLmHead: { flag: 'tie_word_embeddings', fallback: true },
  },
  refuse: [],
  math: {
    norm: 'layer', position: 'learned', postNorm: false, causal: true, gatedMlp: false,
    embeddingNorm: false, finalNorm: true, hasLmHead: true, attentionScale: 1,
    attentionBias: false, attentionOutputBias: true, mlpBias: true,
  },
  tensors: {
    // GPTNeoForCausalLM saves under transformer., GPTNeoModel without it.
    prefix: 'transformer.',
    // The causal-mask buffers (local layers' with their window cut out).
    skip: [/^h\.\d+\.attn\.attention\.(bias|masked_bias)$/],
  },
});
