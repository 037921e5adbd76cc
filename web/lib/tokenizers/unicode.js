// Character classes and UTF-8 helpers the tokenizers share.
//
// Hugging Face `tokenizers` is Rust: its character tests are Rust's `char`
// methods, the `unicode_categories` crate and Oniguruma / `regex` classes. The
// JavaScript spelling of each is chosen to match those, not JavaScript's own
// shorthands: JS `\s` differs from Oniguruma's `\s` (Unicode White_Space) on
// U+0085 and U+FEFF, so nothing here uses `\s`.

/** Rust `char::is_whitespace` and Oniguruma's `\s`: the Unicode White_Space property. */
export const WHITESPACE = /\p{White_Space}/u;

// Hugging Face's "other" characters (the unicode_categories crate's is_other):
// control, format, private use and surrogates. Unassigned code points (Cn)
// are not among them: BERT's clean-up keeps those, and WordPiece makes them [UNK].
const OTHER = /[\p{Cc}\p{Cf}\p{Co}\p{Cs}]/u;

/** Unicode punctuation (P*), as `unicode_categories`' is_punctuation. */
const PUNCTUATION = /\p{P}/u;

/** Nonspacing marks (Mn): what BERT's accent stripping removes after NFD. */
export const NONSPACING_MARK = /\p{Mn}/u;

/** Rust `char::is_numeric`: Nd, Nl and No. */
export const NUMERIC = /\p{N}/u;

/** Rust `regex`'s Unicode `\w` (UTS #18): alphabetic, marks, decimal digits, connector punctuation, joiners. */
export const WORD_CHARACTER = /[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]/u;

const ASCII_PUNCTUATION = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');

/** BERT's whitespace: tab, newline and carriage return count, as does every White_Space character. */
export function isBertWhitespace(char) {
  return WHITESPACE.test(char);
}

/** BERT's control characters: Cc, Cf, Co (and Cs) except tab, newline and carriage return. */
export function isBertControl(char) {
  if (char === '\t' || char === '\n' || char === '\r') return false;
  return OTHER.test(char);
}

/** BERT's punctuation: ASCII punctuation (which includes symbols such as `$` and `^`) or Unicode P*. */
export function isBertPunctuation(char) {
  return ASCII_PUNCTUATION.has(char) || PUNCTUATION.test(char);
}

// The CJK blocks BERT surrounds with spaces (so each ideograph is a word of its
// own). Hangul, Hiragana and Katakana are deliberately not in the list: those
// scripts separate words with spaces already.
const CJK_RANGES = [
  [0x4E00, 0x9FFF], [0x3400, 0x4DBF], [0x20000, 0x2A6DF], [0x2A700, 0x2B73F],
  [0x2B740, 0x2B81F], [0x2B920, 0x2CEAF], [0xF900, 0xFAFF], [0x2F800, 0x2FA1F],
];

/** True for a code point in the CJK ideograph blocks BERT splits character by character. */
export function isChineseCharacter(codePoint) {
  for (const [low, high] of CJK_RANGES) if (codePoint >= low && codePoint <= high) return true;
  return false;
}

/**
 * Replaces lone UTF-16 surrogates with U+FFFD, as TextEncoder would. Rust
 * strings cannot hold them, so this is the one reading of such input that
 * keeps every index in place (one code unit in, one out).
 */
export function withoutLoneSurrogates(text) {
  return text.replace(/\p{Cs}/gu, '\uFFFD');
}

const encoder = new TextEncoder();

/** The UTF-8 bytes of a string. */
export function utf8Bytes(text) {
  return encoder.encode(text);
}

function hexByte(byte) {
  return byte.toString(16).toUpperCase().padStart(2, '0');
}

/** `\xE2`: the label of a byte that is not (part of) a whole UTF-8 character. */
export function byteEscape(byte) {
  return `\\x${hexByte(byte)}`;
}

// Length of the UTF-8 sequence that `lead` starts, or 0 for a byte that cannot lead.
function sequenceLength(lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// The code point of the well-formed sequence at bytes[at..at+length), or -1.
function decodeSequence(bytes, at, length) {
  if (at + length > bytes.length) return -1;
  let codePoint = bytes[at] & (length === 1 ? 0x7F : 0xFF >> (length + 1));
  for (let i = 1; i < length; i++) {
    const byte = bytes[at + i];
    if ((byte & 0xC0) !== 0x80) return -1;
    codePoint = (codePoint << 6) | (byte & 0x3F);
  }
  const smallest = [0, 0, 0x80, 0x800, 0x10000][length];
  if (codePoint < smallest || codePoint > 0x10FFFF) return -1; // overlong or too large
  if (codePoint >= 0xD800 && codePoint <= 0xDFFF) return -1; // surrogates are not characters
  return codePoint;
}

/**
 * Bytes as readable text for a label: whole UTF-8 characters decode to
 * themselves, any other byte shows as a `\xNN` escape. A token that holds half
 * of an emoji therefore reads "\xF0\x9F" rather than replacement characters.
 */
export function bytesToLabel(bytes) {
  let label = '';
  let at = 0;
  while (at < bytes.length) {
    const length = sequenceLength(bytes[at]);
    const codePoint = length === 0 ? -1 : decodeSequence(bytes, at, length);
    if (codePoint < 0) {
      label += byteEscape(bytes[at]);
      at += 1;
    } else {
      label += String.fromCodePoint(codePoint);
      at += length;
    }
  }
  return label;
}

// ignoreBOM: a leading U+FEFF is text like any other (TextDecoder drops it by default).
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** UTF-8 bytes to text, each invalid byte becoming U+FFFD (Rust's from_utf8_lossy). */
export function utf8Decode(bytes) {
  return decoder.decode(bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes));
}
