// Normalizers: the first rewrite of the text, from tokenizer.json's "normalizer".
//
// Each is a function NormalizedText -> NormalizedText (see normalized-text.js:
// offsets survive every rewrite). The set is what BERT, GPT-2, Llama-family
// and sentencepiece Unigram (Precompiled) files use; any other type is
// refused by name rather than skipped, because a skipped normalizer
// silently gives different ids.
import { NormalizedText } from './normalized-text.js';
import { readPattern } from './oniguruma.js';
import { precompiledNormalizer } from './precompiled.js';
import {
  isBertControl, isBertWhitespace, isChineseCharacter, NONSPACING_MARK, WHITESPACE,
} from './unicode.js';
import { describeType, readBoolean, readString, requireObject } from './spec.js';

function lowercase(text) {
  // Per character, as Rust's char::to_lowercase: no final-sigma context rule.
  return text.mapCharacters((char) => char.toLowerCase());
}

function stripAccents(text) {
  return text.mapCharacters((char) => (NONSPACING_MARK.test(char) ? '' : char));
}

// BERT's clean-up: drop NUL, U+FFFD and control characters (Cc, Cf, Co; not
// unassigned code points, which stay and become [UNK]); every kind of
// whitespace becomes a plain space.
function cleanText(text) {
  return text.mapCharacters((char, codePoint) => {
    if (codePoint === 0 || codePoint === 0xFFFD || isBertControl(char)) return '';
    return isBertWhitespace(char) ? ' ' : char;
  });
}

// Spaces around each CJK ideograph, so the pre-tokenizer makes it a word.
function spaceChineseCharacters(text) {
  return text.mapCharacters((char, codePoint) => (isChineseCharacter(codePoint) ? ` ${char} ` : char));
}

// Nmt (sentencepiece's nmt_nfkc without the NFKC, as Hugging Face's Nmt
// normalizer does it): ASCII control characters other than whitespace are
// removed, and a few other spaces, zero-widths and "▁" become a plain space.
const NMT_REMOVED = /[\x01-\x08\x0B\x0E-\x1F\x7F\x8F\x9F]/u;
const NMT_SPACES = /[\t\n\f\r\u1680\u200B-\u200F\u2028\u2029\u2581\uFEFF\uFFFD]/u;
function nmt(text) {
  return text.mapCharacters((char) => {
    if (NMT_REMOVED.test(char)) return '';
    return NMT_SPACES.test(char) ? ' ' : char;
  });
}

function bertNormalizer(spec) {
  const cleanTextOn = readBoolean(spec, 'clean_text', true, 'BertNormalizer');
  const chinese = readBoolean(spec, 'handle_chinese_chars', true, 'BertNormalizer');
  const lower = readBoolean(spec, 'lowercase', true, 'BertNormalizer');
  // strip_accents: null means "whatever lowercase says" (bert-base-uncased strips, cased keeps).
  const strip = spec.strip_accents === null || spec.strip_accents === undefined ? lower
    : readBoolean(spec, 'strip_accents', lower, 'BertNormalizer');
  return (text) => {
    let out = text;
    if (cleanTextOn) out = cleanText(out);
    if (chinese) out = spaceChineseCharacters(out);
    if (strip) out = stripAccents(out.normalizeUnicode('NFD'));
    if (lower) out = lowercase(out);
    return out;
  };
}

function strip(spec) {
  const left = readBoolean(spec, 'strip_left', true, 'Strip');
  const right = readBoolean(spec, 'strip_right', true, 'Strip');
  return (text) => {
    let from = 0;
    let to = text.length;
    if (left) while (from < to && WHITESPACE.test(charAt(text.text, from))) from += charAt(text.text, from).length;
    if (right) {
      while (to > from) {
        const last = lastCharBefore(text.text, to);
        if (!WHITESPACE.test(last)) break;
        to -= last.length;
      }
    }
    return from === 0 && to === text.length ? text : text.slice(from, to);
  };
}

function charAt(text, index) {
  return String.fromCodePoint(text.codePointAt(index));
}

function lastCharBefore(text, end) {
  const low = text.charCodeAt(end - 1);
  if (end >= 2 && low >= 0xDC00 && low <= 0xDFFF) {
    const high = text.charCodeAt(end - 2);
    if (high >= 0xD800 && high <= 0xDBFF) return text.slice(end - 2, end);
  }
  return text[end - 1];
}

function replace(spec) {
  const pattern = readPattern(spec, 'Replace normalizer');
  const content = readString(spec, 'content', 'Replace normalizer');
  return (text) => text.replaceAll(pattern, content);
}

function prepend(spec) {
  const prefix = readString(spec, 'prepend', 'Prepend normalizer');
  return (text) => text.prepend(prefix);
}

function append(spec) {
  const suffix = readString(spec, 'append', 'Append normalizer');
  return (text) => text.append(suffix);
}

function sequence(spec) {
  if (!Array.isArray(spec.normalizers)) throw new Error('Sequence normalizer needs a "normalizers" array');
  const steps = spec.normalizers.map((step) => createNormalizer(step));
  return (text) => steps.reduce((out, step) => step(out), text);
}

const UNICODE_FORMS = { NFC: 'NFC', NFD: 'NFD', NFKC: 'NFKC', NFKD: 'NFKD' };

/**
 * The normalizer a tokenizer.json "normalizer" entry describes, as a function
 * NormalizedText -> NormalizedText; null for none.
 * @throws {Error} for a type this library does not implement, naming it
 */
export function createNormalizer(spec) {
  if (spec === null || spec === undefined) return null;
  requireObject(spec, 'normalizer');
  const type = spec.type;
  if (UNICODE_FORMS[type]) return (text) => text.normalizeUnicode(UNICODE_FORMS[type]);
  switch (type) {
    case 'BertNormalizer': return bertNormalizer(spec);
    case 'Lowercase': return lowercase;
    case 'StripAccents': return stripAccents;
    case 'Strip': return strip(spec);
    case 'Replace': return replace(spec);
    case 'Prepend': return prepend(spec);
    case 'Append': return append(spec);
    case 'Precompiled': return precompiledNormalizer(spec);
    case 'Nmt': return nmt;
    case 'Sequence': return sequence(spec);
    default:
      throw new Error(`unsupported normalizer ${describeType(type)}: this library implements BertNormalizer, `
        + 'Lowercase, NFC, NFD, NFKC, NFKD, Nmt, Precompiled, StripAccents, Strip, Replace, Prepend, Append and Sequence');
  }
}

/** Normalizes a plain string (used for added tokens marked "normalized"). */
export function normalizeString(normalizer, text) {
  return normalizer ? normalizer(NormalizedText.fromOriginal(text)).text : text;
}
