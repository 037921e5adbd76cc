// Pre-tokenizers: cutting normalized text into words, from tokenizer.json's
// "pre_tokenizer". Each is a function NormalizedText -> NormalizedText[];
// the model then tokenizes each word on its own.
import { byteLevelPreTokenizer } from './byte-level.js';
import { readPattern } from './oniguruma.js';
import { metaspacePreTokenizer } from './sentencepiece.js';
import { describeType, readBoolean, readString, requireObject } from './spec.js';
import {
  BEHAVIORS, characterRuns, regexRuns, splitText,
} from './splitting.js';
import { isBertPunctuation, NUMERIC, WHITESPACE } from './unicode.js';

const isWhitespace = (char) => WHITESPACE.test(char);

// BERT: split on whitespace (dropped), then every punctuation character alone.
function bertPreTokenizer(piece) {
  return splitText(piece, characterRuns(piece.text, isWhitespace), 'Removed')
    .flatMap((word) => splitText(word, characterRuns(word.text, isBertPunctuation), 'Isolated'));
}

function whitespaceSplit(piece) {
  return splitText(piece, characterRuns(piece.text, isWhitespace), 'Removed');
}

// Whitespace: runs of word characters, and runs of other non-space characters
// (Rust regex \w+|[^\w\s]+).
const WORDS_OR_SYMBOLS = /[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]+|[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}\p{White_Space}]+/gu;
function whitespace(piece) {
  return splitText(piece, regexRuns(piece.text, WORDS_OR_SYMBOLS, true), 'Removed');
}

function readBehavior(spec, where, fallback) {
  const behavior = spec.behavior ?? fallback;
  if (!BEHAVIORS.includes(behavior)) {
    throw new Error(`${where} "behavior" must be one of ${BEHAVIORS.join(', ')}, got ${JSON.stringify(behavior)}`);
  }
  return behavior;
}

function split(spec) {
  const pattern = readPattern(spec, 'Split pre-tokenizer');
  const behavior = readBehavior(spec, 'Split pre-tokenizer');
  const invert = readBoolean(spec, 'invert', false, 'Split pre-tokenizer');
  return (piece) => splitText(piece, regexRuns(piece.text, pattern, invert), behavior);
}

function punctuation(spec) {
  const behavior = readBehavior(spec, 'Punctuation pre-tokenizer', 'Isolated');
  return (piece) => splitText(piece, characterRuns(piece.text, isBertPunctuation), behavior);
}

function digits(spec) {
  const behavior = readBoolean(spec, 'individual_digits', false, 'Digits pre-tokenizer') ? 'Isolated' : 'Contiguous';
  return (piece) => splitText(piece, characterRuns(piece.text, (char) => NUMERIC.test(char)), behavior);
}

function charDelimiterSplit(spec) {
  const delimiter = readString(spec, 'delimiter', 'CharDelimiterSplit pre-tokenizer');
  if ([...delimiter].length !== 1) throw new Error('CharDelimiterSplit pre-tokenizer "delimiter" must be one character');
  return (piece) => splitText(piece, characterRuns(piece.text, (char) => char === delimiter), 'Removed');
}

function sequence(spec) {
  if (!Array.isArray(spec.pretokenizers)) {
    throw new Error('Sequence pre-tokenizer needs a "pretokenizers" array');
  }
  const steps = spec.pretokenizers.map((step) => createPreTokenizer(step));
  return (piece) => steps.reduce((pieces, step) => pieces.flatMap(step), [piece]);
}

/**
 * The pre-tokenizer a tokenizer.json "pre_tokenizer" entry describes, as a
 * function NormalizedText -> NormalizedText[]; null for none.
 * @throws {Error} for a type this library does not implement, naming it
 */
export function createPreTokenizer(spec) {
  if (spec === null || spec === undefined) return null;
  requireObject(spec, 'pre_tokenizer');
  switch (spec.type) {
    case 'ByteLevel': return byteLevelPreTokenizer(spec);
    case 'BertPreTokenizer': return bertPreTokenizer;
    case 'Whitespace': return whitespace;
    case 'WhitespaceSplit': return whitespaceSplit;
    case 'Metaspace': return metaspacePreTokenizer(spec);
    case 'Split': return split(spec);
    case 'Punctuation': return punctuation(spec);
    case 'Digits': return digits(spec);
    case 'CharDelimiterSplit': return charDelimiterSplit(spec);
    case 'Sequence': return sequence(spec);
    default:
      throw new Error(`unsupported pre_tokenizer ${describeType(spec.type)}: this library implements ByteLevel, `
        + 'BertPreTokenizer, Whitespace, WhitespaceSplit, Metaspace, Split, Punctuation, Digits, '
        + 'CharDelimiterSplit and Sequence');
  }
}

/** True when the pre-tokenizer (or one in its Sequence) has the given type. */
export function hasPreTokenizer(spec, type) {
  if (spec === null || typeof spec !== 'object') return false;
  if (spec.type === type) return true;
  return spec.type === 'Sequence' && Array.isArray(spec.pretokenizers)
    && spec.pretokenizers.some((step) => hasPreTokenizer(step, type));
}
