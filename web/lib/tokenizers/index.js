// createTokenizer: a Hugging Face tokenizer from the files of a hub folder.
//
// Accepts tokenizer.json (parsed or as text), or the older files: GPT-2's
// { vocabJson, mergesTxt }, BERT's { vocabTxt } (converted to the
// tokenizer.json Hugging Face would build from them, legacy-files.js), or a
// sentencepiece .model as { sentencepieceModel } (sentencepiece-model.js), or
// an opus-mt folder's { sourceSpm, targetSpm, vocabJson } (marian.js, kind
// 'marian': its own class, as transformers' MarianTokenizer). The five kinds
// of tokenizer.json attnlens supports, by its model and pre-tokenizer:
//   byte-level-bpe     BPE + ByteLevel (GPT-2, RoBERTa, SmolLM, Llama 3, Qwen2, ...)
//   sentencepiece-bpe  BPE + "▁" metaspace and byte fallback (Llama 2, Mistral, Gemma)
//   unigram            Unigram + Metaspace, often a Precompiled normalizer (XLM-R, T5, ALBERT)
//   wordpiece          WordPiece + BERT normalizer (BERT)
//   word-level         WordLevel (attnlens' sort-gpt2 test model)
// Anything else (BPE with neither the byte-level nor the "▁" convention,
// components not implemented) is refused with an Error naming what was found,
// never approximated: a tokenizer that is nearly right gives a model wrong ids
// without a sign.
import { AddedTokens } from './added-tokens.js';
import { byteLevelLabel } from './byte-level.js';
import { BpeModel } from './bpe.js';
import { createDecoder } from './decoders.js';
import { bertTokenizerJson, gpt2TokenizerJson, parseTokenizerJsonText } from './legacy-files.js';
import { MarianTokenizer } from './marian.js';
import { createNormalizer, normalizeString } from './normalizers.js';
import { Tokenizer } from './pipeline.js';
import { createPostProcessor } from './post-processors.js';
import { createPreTokenizer, hasPreTokenizer } from './pre-tokenizers.js';
import { METASPACE, sentencepieceLabel } from './sentencepiece.js';
import { sentencepieceTokenizerJson } from './sentencepiece-model.js';
import { describeType, describeValue } from './spec.js';
import { applyTokenizerConfig } from './tokenizer-config.js';
import { UnigramModel } from './unigram.js';
import { WordLevelModel } from './word-level.js';
import { WordPieceModel } from './wordpiece.js';

export { Tokenizer };

// The spec as a tokenizer.json object.
function readSpec(spec, tokenizerConfig) {
  if (typeof spec === 'string') return parseTokenizerJsonText(spec);
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
    throw new TypeError('createTokenizer needs tokenizer.json (object or text), { vocabJson, mergesTxt }, '
      + `{ vocabTxt } or { sentencepieceModel }, got ${describeValue(spec)}`);
  }
  if ('model' in spec) return spec;
  if ('vocabJson' in spec || 'mergesTxt' in spec) {
    if (spec.vocabJson === undefined || spec.mergesTxt === undefined) {
      throw new TypeError('GPT-2 style files need both vocabJson (vocab.json) and mergesTxt (merges.txt)');
    }
    return gpt2TokenizerJson(spec.vocabJson, spec.mergesTxt);
  }
  if ('vocabTxt' in spec) return bertTokenizerJson(spec.vocabTxt);
  if ('sentencepieceModel' in spec) {
    const bytes = spec.sentencepieceModel;
    if (!(bytes instanceof Uint8Array) && !(bytes instanceof ArrayBuffer)) {
      throw new TypeError(`sentencepieceModel must be the bytes of a .model file (Uint8Array or ArrayBuffer), got ${describeValue(bytes)}`);
    }
    const config = tokenizerConfig && typeof tokenizerConfig === 'object' ? tokenizerConfig : {};
    return sentencepieceTokenizerJson(bytes, config);
  }
  throw new TypeError('createTokenizer needs tokenizer.json (with a "model"), { vocabJson, mergesTxt }, '
    + `{ vocabTxt }, { sentencepieceModel } or { sourceSpm, targetSpm, vocabJson }; got an object with keys ${JSON.stringify(Object.keys(spec).slice(0, 8))}`);
}

function createModel(spec) {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
    throw new TypeError(`tokenizer.json "model" must be an object, got ${describeValue(spec)}`);
  }
  // Files written by old versions of `tokenizers` may leave out the type;
  // Hugging Face then guesses from the fields, and so do we.
  const type = spec.type ?? (spec.merges !== undefined ? 'BPE'
    : spec.continuing_subword_prefix !== undefined || spec.max_input_chars_per_word !== undefined ? 'WordPiece'
      : Array.isArray(spec.vocab) ? 'Unigram' : undefined);
  switch (type) {
    case 'BPE': return { type, model: new BpeModel(spec) };
    case 'WordPiece': return { type, model: new WordPieceModel(spec) };
    case 'WordLevel': return { type, model: new WordLevelModel(spec) };
    case 'Unigram': return { type, model: new UnigramModel(spec) };
    default:
      throw new Error(`unsupported tokenizer model ${describeType(type)}: attnlens reads BPE (byte-level or `
        + 'sentencepiece-style), Unigram, WordPiece and WordLevel tokenizers');
  }
}

// Whether a component (normalizer, pre-tokenizer, decoder, with their
// sequences) uses the metaspace: a Metaspace step or a "▁" in its settings.
function mentionsMetaspace(spec) {
  if (spec === null || typeof spec !== 'object') return false;
  const text = JSON.stringify(spec);
  return text.includes(METASPACE) || text.includes('"type":"Metaspace"');
}

function metaspaceReplacement(json) {
  for (const part of [json.pre_tokenizer, json.decoder]) {
    const found = findComponent(part, 'Metaspace', part === json.pre_tokenizer ? 'pretokenizers' : 'decoders');
    if (found && typeof found.replacement === 'string') return found.replacement;
  }
  return METASPACE;
}

function findComponent(spec, type, listKey) {
  if (spec === null || typeof spec !== 'object') return null;
  if (spec.type === type) return spec;
  if (spec.type === 'Sequence' && Array.isArray(spec[listKey])) {
    for (const step of spec[listKey]) {
      const found = findComponent(step, type, listKey);
      if (found) return found;
    }
  }
  return null;
}

function componentType(spec) {
  return spec === null || spec === undefined ? 'none' : describeType(spec.type);
}

// The kind, and how its tokens read as text.
function kindOf(json, modelType, model) {
  if (modelType === 'WordPiece') return { kind: 'wordpiece', label: (token) => token };
  if (modelType === 'WordLevel') return { kind: 'word-level', label: (token) => token };
  if (modelType === 'Unigram') {
    const replacement = metaspaceReplacement(json);
    return { kind: 'unigram', label: (token) => sentencepieceLabel(token, replacement, model.byteFallback) };
  }
  if (hasPreTokenizer(json.pre_tokenizer, 'ByteLevel') || findComponent(json.decoder, 'ByteLevel', 'decoders')) {
    return { kind: 'byte-level-bpe', label: byteLevelLabel };
  }
  if (model.byteFallback || mentionsMetaspace(json.pre_tokenizer) || mentionsMetaspace(json.normalizer)
    || mentionsMetaspace(json.decoder)) {
    const replacement = metaspaceReplacement(json);
    const byteFallback = model.byteFallback;
    return { kind: 'sentencepiece-bpe', label: (token) => sentencepieceLabel(token, replacement, byteFallback) };
  }
  throw new Error('unsupported BPE tokenizer: attnlens reads byte-level BPE (a ByteLevel pre-tokenizer or '
    + 'decoder) and sentencepiece-style BPE (a "▁" metaspace or byte_fallback); this file has neither '
    + `(pre_tokenizer ${componentType(json.pre_tokenizer)}, decoder ${componentType(json.decoder)})`);
}

/**
 * A tokenizer that gives exactly the ids Hugging Face `tokenizers` gives.
 *
 * @param {object|string} spec tokenizer.json (parsed, or its text); or
 *   { vocabJson, mergesTxt } (GPT-2's vocab.json as object or text, and
 *   merges.txt); or { vocabTxt } (BERT's vocab.txt, uncased BERT defaults);
 *   or { sentencepieceModel } (the bytes of a sentencepiece .model file:
 *   tokenizer.model, spiece.model, sentencepiece.bpe.model); or
 *   { sourceSpm, targetSpm, vocabJson } (an opus-mt folder's source.spm and
 *   target.spm bytes and vocab.json: a MarianTokenizer, marian.js)
 * @param {object} [tokenizerConfig] tokenizer_config.json (parsed), optional:
 *   for Llama / Gemma tokenizer classes its add_bos_token / add_eos_token
 *   decide the special tokens around the text, as `transformers` does; for a
 *   .model file its tokenizer_class picks transformers' converter
 *   (XLMRobertaTokenizer's fairseq ids and <s> … </s>, T5Tokenizer's
 *   <extra_id_N> and … </s>)
 * @returns {Tokenizer} { kind, vocabSize, encode(text), decode(ids, { skipSpecialTokens }), tokenText(id) }
 * @throws {TypeError|RangeError|Error} naming the problem: unsupported model
 *   or component type, malformed JSON, vocab or merges
 */
export function createTokenizer(spec, tokenizerConfig) {
  if (spec !== null && typeof spec === 'object' && ('sourceSpm' in spec || 'targetSpm' in spec)) {
    if (spec.sourceSpm === undefined || spec.targetSpm === undefined || spec.vocabJson === undefined) {
      throw new TypeError('Marian files need sourceSpm (source.spm), targetSpm (target.spm) and vocabJson (vocab.json)');
    }
    return new MarianTokenizer(spec, tokenizerConfig, createTokenizer);
  }
  const json = applyTokenizerConfig(readSpec(spec, tokenizerConfig), tokenizerConfig);
  const { type, model } = createModel(json.model);
  const normalizer = createNormalizer(json.normalizer);
  const preTokenizer = createPreTokenizer(json.pre_tokenizer);
  const postProcessor = createPostProcessor(json.post_processor);
  const decoder = createDecoder(json.decoder);
  const addedTokens = new AddedTokens(json.added_tokens, (text) => normalizeString(normalizer, text),
    model.tokenToId);
  const { kind, label } = kindOf(json, type, model);
  return new Tokenizer({
    kind, model, addedTokens, normalizer, preTokenizer, postProcessor, decoder, label,
  });
}
