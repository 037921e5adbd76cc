// Hugging Face config.json -> the core's ModelConfig (src/model/config.hpp),
// through the family description of its model_type (families/).
//
// Each family reads its own field names (GPT-2's n_embd, BERT's hidden_size,
// ...) with the defaults the transformers library uses when a field is
// absent, and refuses settings the core does not compute (for example
// GPT-2's scale_attn_by_inverse_layer_idx) rather than computing something
// else. Errors name the field, what was expected and what came.
import { describe } from '../validation.js';
import { FAMILIES } from './families/index.js';

const WHERE = 'attnlens.loadModel';

/** The model_type values loadModel understands, and the core's tensor layout of each. */
export const ARCHITECTURES = Object.freeze(Object.fromEntries(
  Object.entries(FAMILIES).map(([type, family]) => [type, family.layout]),
));

class ConfigReader {
  constructor(config) {
    this.config = config;
  }

  has(field) {
    return this.config[field] !== undefined && this.config[field] !== null;
  }

  // A positive integer field; `fallback` (a number or a function) applies
  // when the field is absent or null.
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

  // A whole number of at least 0 (a token id).
  index(field, fallback) {
    if (!this.has(field)) return fallback;
    const value = this.config[field];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      throw new RangeError(`${WHERE}: config.${field} must be a whole number of at least 0, got ${describe(value)}`);
    }
    return value;
  }

  number(field, fallback, { above = 0, atMost = Infinity } = {}) {
    if (!this.has(field)) return fallback;
    const value = this.config[field];
    if (typeof value !== 'number' || !Number.isFinite(value) || !(value > above) || value > atMost) {
      const bound = atMost === Infinity ? '' : ` and at most ${atMost}`;
      throw new RangeError(`${WHERE}: config.${field} must be a finite number greater than ${above}${bound}, got ${describe(value)}`);
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

  // Settings whose value other than `unless` would change the math the core does.
  refuse(field, unless, what) {
    const value = this.config[field];
    if (this.has(field) && value !== unless) {
      const shown = value !== null && typeof value === 'object' && !Array.isArray(value) ? JSON.stringify(value) : describe(value);
      throw new RangeError(`${WHERE}: config.${field} = ${shown} is not supported (${what})`);
    }
  }
}

// The config.json field a spec reads.
const fieldOf = (spec) => spec.count ?? spec.number ?? spec.index ?? spec.flag ?? spec.choice ?? spec.custom;

// One field of a description's config (see families/index.js), given the
// fields read so far, through the spec's `map` when it has one.
function readField(read, spec, core) {
  const value = readValue(read, spec, core);
  return spec.map ? spec.map(value, core) : value;
}

function readValue(read, spec, core) {
  // A field no generic reader reads (GPT-Neo's attention_layers): the description's own.
  if (spec.custom !== undefined) return spec.read(read.config, core);
  // A field whose null means something else than its absence (Mistral's sliding_window).
  if (spec.nullMeans !== undefined && read.config[fieldOf(spec)] === null) return spec.nullMeans;
  const fallback = typeof spec.fallback === 'function' ? () => spec.fallback(core)
    : spec.fallback !== null && typeof spec.fallback === 'object' ? () => readField(read, spec.fallback, core)
      : () => spec.fallback;
  if (spec.count !== undefined) return read.count(spec.count, spec.fallback === undefined ? undefined : fallback);
  if (spec.choice !== undefined) return read.choice(spec.choice, spec.fallback, spec.accepted, spec.why);
  const value = read.has(fieldOf(spec)) ? undefined : fallback();
  if (spec.number !== undefined) return read.number(spec.number, value, { above: spec.above ?? 0, atMost: spec.atMost });
  if (spec.index !== undefined) return read.index(spec.index, value);
  return read.flag(spec.flag, value);
}

// What a description leaves out: one key-value head per head, d / H wide
// (0 when H does not divide d: refused below), no token types, plain
// position numbering, the default rotary base turning whole heads, no
// attention window (or one on every layer), scores scaled by 1/sqrt(head
// width), sequential residuals.
const DEFAULTS = Object.freeze({
  decoderLayers: 0, relativeBuckets: 0, relativeMaxDistance: 0, logitsScale: 0, typeVocabSize: 0, embeddingWidth: 0, ropeTheta: 10000, paddingIdx: -1, positionOffset: 0, window: 0, windowLayers: '', attentionScale: 0, embeddingScale: 0,
  rotaryWidth: 0, parallelResidual: false, sharedNorm: false, lmHeadBias: false, mlmActivation: 'gelu_erf', projectionBeforePositions: false, keep16Bit: false,
});

function readFamily(family, read) {
  const core = { architecture: family.layout, ...DEFAULTS, ...family.math };
  for (const [key, spec] of Object.entries(family.config)) core[key] = readField(read, spec, core);
  core.kvHeads ??= core.heads;
  core.headWidth ??= core.modelWidth % core.heads === 0 ? core.modelWidth / core.heads : 0;
  for (const rule of family.refuse ?? []) {
    if (rule.choice !== undefined) readField(read, rule, core);
    else read.refuse(rule.field, typeof rule.unless === 'function' ? rule.unless(core) : rule.unless, rule.what);
  }
  // Read as config fields, but loadModel's (the head's tying, generation's start id), not the core's.
  const { tiedLmHead = false, decoderStartId = null, ...rest } = core;
  return { core: rest, tiedLmHead, decoderStartId };
}

/** The core's message about a ModelConfig, with its field names replaced by the config.json ones of `modelType`. */
export function inHubTerms(modelType, message) {
  const fields = Object.fromEntries(Object.entries(FAMILIES[modelType]?.config ?? {})
    .map(([key, spec]) => [key, fieldOf(spec)]));
  return message.replace(/\b[a-z][A-Za-z]+\b/g, (word) => (Object.hasOwn(fields, word) ? `config.${fields[word]}` : word));
}

/** Token positions the model numbers: its table less the ones RoBERTa's numbering or OPT's offset skips. */
export function usablePositions(core) {
  return core.maxPositions - (core.paddingIdx >= 0 ? core.paddingIdx + 1 : 0) - core.positionOffset;
}

/**
 * Parses and maps a config.json (object or JSON text).
 * @returns {{ architecture: string, core: object, tiedLmHead: boolean, decoderStartId: number|null, hub: object }}
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
  const supported = Object.keys(FAMILIES).join(', ');
  if (typeof type !== 'string') {
    throw new TypeError(`${WHERE}: config.model_type is required (one of ${supported}), got ${describe(type)}`);
  }
  if (!Object.hasOwn(FAMILIES, type)) {
    throw new RangeError(`${WHERE}: config.model_type = ${JSON.stringify(type)} is not supported; attnlens runs ${supported}`);
  }
  const { core, tiedLmHead, decoderStartId } = readFamily(FAMILIES[type], new ConfigReader(hub));
  if (core.headWidth === 0) {
    throw new RangeError(`${WHERE}: the model width (${core.modelWidth}) must be divisible by the number of heads ` +
      `(${core.heads})`);
  }
  if (core.decoderLayers > 0 && decoderStartId === null) {
    throw new TypeError(`${WHERE}: config.decoder_start_token_id is required for an encoder-decoder (or config.pad_token_id)`);
  }
  return { architecture: core.architecture, core, tiedLmHead, decoderStartId, hub };
}
