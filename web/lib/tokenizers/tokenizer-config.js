// tokenizer_config.json's say over special tokens.
//
// tokenizer.json alone decides the special tokens for Hugging Face
// `tokenizers`. `transformers` lets tokenizer_config.json override that for
// the Llama and Gemma tokenizer classes: their add_bos_token (default true)
// and add_eos_token (default false) rebuild the post-processor as
// "<bos> $A <eos>". When such a config is given, the same is done here, so
// ids match what `AutoTokenizer` gives for those models.
import { describeValue, requireObject } from './spec.js';

const CLASSES_WITH_BOS_FLAGS = /^(Llama|CodeLlama|Gemma)Tokenizer(Fast)?$/;

// bos_token / eos_token: a string or an AddedToken object { content }.
export function tokenContent(value, fallback) {
  if (value === undefined) return fallback;
  if (value === null) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && typeof value.content === 'string') return value.content;
  throw new TypeError(`tokenizerConfig special token must be a string or { content }, got ${describeValue(value)}`);
}

function idOf(json, content) {
  if (Array.isArray(json.added_tokens)) {
    const added = json.added_tokens.find((entry) => entry && entry.content === content);
    if (added && Number.isInteger(added.id)) return added.id;
  }
  const vocab = json.model?.vocab;
  if (Array.isArray(vocab)) { // Unigram: [piece, score] in id order
    const id = vocab.findIndex((entry) => Array.isArray(entry) && entry[0] === content);
    return id >= 0 ? id : undefined;
  }
  if (vocab && typeof vocab === 'object' && Object.hasOwn(vocab, content)) return vocab[content];
  return undefined;
}

function readFlag(config, key, fallback) {
  const value = config[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`tokenizerConfig "${key}" must be true or false, got ${describeValue(value)}`);
  return value;
}

/**
 * tokenizer.json with tokenizer_config.json's add_bos_token / add_eos_token
 * applied when its tokenizer_class is a Llama or Gemma one; otherwise unchanged.
 * @param {object} json tokenizer.json
 * @param {object|undefined} config tokenizer_config.json
 */
export function applyTokenizerConfig(json, config) {
  if (config === undefined || config === null) return json;
  requireObject(config, 'tokenizerConfig');
  if (typeof config.tokenizer_class !== 'string' || !CLASSES_WITH_BOS_FLAGS.test(config.tokenizer_class)) return json;
  const pieces = [];
  const after = [];
  const specialTokens = {};
  for (const [flag, key, fallbackFlag, fallbackToken, list] of [
    ['add_bos_token', 'bos_token', true, '<s>', pieces], ['add_eos_token', 'eos_token', false, '</s>', after]]) {
    if (!readFlag(config, flag, fallbackFlag)) continue;
    const content = tokenContent(config[key], fallbackToken);
    if (content === null) throw new Error(`tokenizerConfig has ${flag} but no ${key}`);
    const id = idOf(json, content);
    if (id === undefined) throw new Error(`tokenizerConfig ${key} ${JSON.stringify(content)} is not in the tokenizer's vocab`);
    list.push({ SpecialToken: { id: content, type_id: 0 } });
    specialTokens[content] = { id: content, ids: [id], tokens: [content] };
  }
  const single = [...pieces, { Sequence: { id: 'A', type_id: 0 } }, ...after];
  return { ...json, post_processor: { type: 'TemplateProcessing', single, special_tokens: specialTokens } };
}
