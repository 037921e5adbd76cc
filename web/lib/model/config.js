// Hugging Face config.json -> the core's ModelConfig (src/model/config.hpp).
//
// Each architecture reads its own field names (GPT-2's n_embd, BERT's
// hidden_size, ...) with the defaults the transformers library uses when a
// field is absent, and refuses settings the core does not compute (for
// example GPT-2's scale_attn_by_inverse_layer_idx) rather than computing
// something else. Errors name the field, what was expected and what came.
import { describe } from '../validation.js';

const WHERE = 'attnlens.loadModel';

/** The model_type values loadModel understands, and their core architecture. */
export const ARCHITECTURES = Object.freeze({ gpt2: 'gpt2', bert: 'bert', llama: 'llama' });

class ConfigReader {
  constructor(config) {
    this.config = config;
  }

  has(field) {
    return this.config[field] !== undefined && this.config[field] !== null;
  }

  // A positive integer field; `fallback` (a number or a function of the
  // reader) applies when the field is absent or null.
  count(field, fallback) {
    if (!this.has(field)) {
      if (fallback === undefined) throw new TypeError(`${WHERE}: config.${field} is required (a positive integer)`);
      return typeof fallback === 'function' ? fallback() : fallback;
    }
    const value = this.config[field];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
      throw new RangeError(`${WHERE}: config.${field} must be a positive integer, got ${describe(value)}`);
    }
    return value;
  }

  number(field, fallback, { above = 0 } = {}) {
    if (!this.has(field)) return fallback;
    const value = this.config[field];
    if (typeof value !== 'number' || !Number.isFinite(value) || !(value > above)) {
      throw new RangeError(`${WHERE}: config.${field} must be a finite number greater than ${above}, got ${describe(value)}`);
    }
    return value;
  }

  flag(field, fallback) {
    if (!this.has(field)) return fallback;
    const value = this.config[field];
    if (typeof value !== 'boolean') throw new TypeError(`${WHERE}: config.${field} must be true or false, got ${describe(value)}`);
    return value;
  }

  // A string field whose value must be one of `accepted` (a map from the
  // config's spelling to ours); anything else is a clear "not supported".
  choice(field, fallback, accepted, why) {
    const value = this.has(field) ? this.config[field] : fallback;
    if (typeof value !== 'string' || !Object.hasOwn(accepted, value)) {
      throw new RangeError(`${WHERE}: config.${field} = ${describe(value)} is not supported${why ? ` (${why})` : ''}; ` +
        `attnlens computes ${Object.keys(accepted).map((key) => JSON.stringify(key)).join(', ')}`);
    }
    return accepted[value];
  }

  // Settings whose non-default value would change the math the core does.
  refuse(field, defaultValue, what) {
    if (this.has(field) && this.config[field] !== defaultValue) {
      throw new RangeError(`${WHERE}: config.${field} = ${describe(this.config[field])} is not supported (${what})`);
    }
  }
}

const GELU_TANH = { gelu_new: 'gelu_tanh', gelu_pytorch_tanh: 'gelu_tanh', gelu_fast: 'gelu_tanh' };

function gpt2(read) {
  const modelWidth = read.count('n_embd');
  const heads = read.count('n_head');
  read.refuse('scale_attn_weights', true, 'attention without the 1/sqrt(headWidth) scale');
  read.refuse('scale_attn_by_inverse_layer_idx', false, 'scores divided by the layer index');
  read.refuse('add_cross_attention', false, 'GPT-2 with cross-attention layers');
  return {
    core: {
      layers: read.count('n_layer'),
      heads,
      kvHeads: heads,
      modelWidth,
      headWidth: modelWidth % heads === 0 ? modelWidth / heads : 0,
      mlpWidth: read.count('n_inner', () => 4 * modelWidth),
      vocabSize: read.count('vocab_size'),
      maxPositions: read.count('n_positions', () => read.count('n_ctx', 1024)),
      typeVocabSize: 0,
      normEpsilon: read.number('layer_norm_epsilon', 1e-5),
      ropeTheta: 10000,
      activation: read.choice('activation_function', 'gelu_new', { ...GELU_TANH, gelu: 'gelu_erf' }),
      hasLmHead: true,
      attentionBias: false,
      mlpBias: false,
      keep16Bit: false,
    },
    // GPT2Config ties the LM head to wte unless told otherwise.
    tiedLmHead: read.flag('tie_word_embeddings', true),
  };
}

function bert(read) {
  const modelWidth = read.count('hidden_size');
  const heads = read.count('num_attention_heads');
  read.choice('position_embedding_type', 'absolute', { absolute: true }, 'relative position embeddings');
  read.refuse('is_decoder', false, 'BERT as a decoder');
  return {
    core: {
      layers: read.count('num_hidden_layers'),
      heads,
      kvHeads: heads,
      modelWidth,
      headWidth: modelWidth % heads === 0 ? modelWidth / heads : 0,
      mlpWidth: read.count('intermediate_size'),
      vocabSize: read.count('vocab_size'),
      maxPositions: read.count('max_position_embeddings', 512),
      typeVocabSize: read.count('type_vocab_size', 2),
      normEpsilon: read.number('layer_norm_eps', 1e-12),
      ropeTheta: 10000,
      activation: read.choice('hidden_act', 'gelu', { gelu: 'gelu_erf', ...GELU_TANH }),
      hasLmHead: false,
      attentionBias: false,
      mlpBias: false,
      keep16Bit: false,
    },
    tiedLmHead: false,
  };
}

function llama(read) {
  const modelWidth = read.count('hidden_size');
  const heads = read.count('num_attention_heads');
  if (read.has('rope_scaling')) {
    throw new RangeError(`${WHERE}: config.rope_scaling = ${JSON.stringify(read.config.rope_scaling)} is not supported ` +
      '(attnlens applies plain rotary embeddings with rope_theta)');
  }
  return {
    core: {
      layers: read.count('num_hidden_layers'),
      heads,
      kvHeads: read.count('num_key_value_heads', heads),
      modelWidth,
      headWidth: read.count('head_dim', () => (modelWidth % heads === 0 ? modelWidth / heads : 0)),
      mlpWidth: read.count('intermediate_size'),
      vocabSize: read.count('vocab_size'),
      maxPositions: read.count('max_position_embeddings', 2048),
      typeVocabSize: 0,
      normEpsilon: read.number('rms_norm_eps', 1e-6),
      ropeTheta: read.number('rope_theta', 10000, { above: 1 }),
      activation: read.choice('hidden_act', 'silu', { silu: 'silu' }),
      hasLmHead: true,
      attentionBias: read.flag('attention_bias', false),
      mlpBias: read.flag('mlp_bias', false),
      keep16Bit: false,
    },
    // LlamaConfig's default is an untied LM head.
    tiedLmHead: read.flag('tie_word_embeddings', false),
  };
}

const readers = { gpt2, bert, llama };

// The config.json field behind each ModelConfig field, per architecture, so
// the core's messages ("modelWidth 3145728 is too large") can name what the
// user wrote ("config.n_embd").
const hubFields = {
  gpt2: { layers: 'n_layer', heads: 'n_head', modelWidth: 'n_embd', mlpWidth: 'n_inner', vocabSize: 'vocab_size',
    maxPositions: 'n_positions', normEpsilon: 'layer_norm_epsilon' },
  bert: { layers: 'num_hidden_layers', heads: 'num_attention_heads', modelWidth: 'hidden_size',
    mlpWidth: 'intermediate_size', vocabSize: 'vocab_size', maxPositions: 'max_position_embeddings',
    typeVocabSize: 'type_vocab_size', normEpsilon: 'layer_norm_eps' },
  llama: { layers: 'num_hidden_layers', heads: 'num_attention_heads', kvHeads: 'num_key_value_heads',
    modelWidth: 'hidden_size', headWidth: 'head_dim', mlpWidth: 'intermediate_size', vocabSize: 'vocab_size',
    maxPositions: 'max_position_embeddings', normEpsilon: 'rms_norm_eps', ropeTheta: 'rope_theta' },
};

/** The core's message about a ModelConfig, with its field names replaced by the config.json ones. */
export function inHubTerms(architecture, message) {
  const fields = hubFields[architecture];
  return message.replace(/\b[a-z][A-Za-z]+\b/g, (word) => (Object.hasOwn(fields, word) ? `config.${fields[word]}` : word));
}

/**
 * Parses and maps a config.json (object or JSON text).
 * @returns {{ architecture: string, core: object, tiedLmHead: boolean, hub: object }}
 *   `core` is the Embind ModelConfig; `hub` the parsed config as given.
 */
export function readModelConfig(config) {
  let hub = config;
  if (typeof config === 'string') {
    try {
      hub = JSON.parse(config);
    } catch (error) {
      throw new SyntaxError(`${WHERE}: config is not valid JSON: ${error.message}`);
    }
  }
  if (hub === null || typeof hub !== 'object' || Array.isArray(hub)) {
    throw new TypeError(`${WHERE}: config must be the parsed config.json object or its text, got ${describe(config)}`);
  }
  const type = hub.model_type;
  if (typeof type !== 'string') {
    throw new TypeError(`${WHERE}: config.model_type is required (one of ${Object.keys(readers).join(', ')}), got ${describe(type)}`);
  }
  if (!Object.hasOwn(readers, type)) {
    throw new RangeError(`${WHERE}: config.model_type = ${JSON.stringify(type)} is not supported; ` +
      `attnlens runs ${Object.keys(readers).join(', ')}`);
  }
  const read = new ConfigReader(hub);
  const { core, tiedLmHead } = readers[type](read);
  if (core.headWidth === 0) {
    throw new RangeError(`${WHERE}: the model width (${core.modelWidth}) must be divisible by the number of heads ` +
      `(${core.heads})`);
  }
  return { architecture: ARCHITECTURES[type], core: { architecture: ARCHITECTURES[type], ...core }, tiedLmHead, hub };
}
