// Byte-level BPE (GPT-2 and its descendants): text as UTF-8 bytes, each byte
// written as one printable character so that BPE can work on strings.
//
// The byte alphabet: the 188 printable Latin-1 bytes ('!'..'~', '¡'..'¬',
// '®'..'ÿ') stand for themselves; the other 68 (controls, space, 0x7F-0xA0,
// 0xAD) are given the characters U+0100, U+0101, ... in byte order. So a space
// is "Ġ" (U+0120) and a newline "Ċ" (U+010A), and " café" is "ĠcafÃ©".
import { NormalizedText } from './normalized-text.js';
import { regexRuns, splitText } from './splitting.js';
import { bytesToLabel, utf8Bytes, utf8Decode } from './unicode.js';
import { readBoolean } from './spec.js';

function buildByteAlphabet() {
  const byteToChar = new Array(256);
  let next = 256;
  for (let byte = 0; byte < 256; byte++) {
    const printable = (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
    byteToChar[byte] = String.fromCharCode(printable ? byte : next++);
  }
  return byteToChar;
}

/** byte (0-255) -> its alphabet character. */
const BYTE_TO_CHAR = buildByteAlphabet();

// The reverse map, as a table indexed by char code (-1: not in the alphabet;
// the alphabet ends at U+0143).
const BYTE_OF_CODE = new Int16Array(0x144).fill(-1);
BYTE_TO_CHAR.forEach((char, byte) => { BYTE_OF_CODE[char.charCodeAt(0)] = byte; });

function byteOfCode(code) {
  return code < BYTE_OF_CODE.length ? BYTE_OF_CODE[code] : -1;
}

/**
 * GPT-2's pre-tokenization pattern: contractions, letter runs, digit runs and
 * other-symbol runs (each with an optional leading space), then whitespace
 * (a run of spaces gives up its last space to the word after it, which is
 * why " world" keeps its space). `\s` is Unicode White_Space, as in
 * Oniguruma, which Hugging Face uses; contractions are case-sensitive.
 */
const GPT2_PATTERN = new RegExp(
  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\p{White_Space}\\p{L}\\p{N}]+"
  + '|\\p{White_Space}+(?!\\P{White_Space})|\\p{White_Space}+', 'gu',
);

// ASCII characters are one byte each: their alphabet string is as long as
// they are, so the alignment arrays can be kept as they are.
const ASCII_ONLY = /^[\x00-\x7F]*$/;

/** A piece's characters as byte-alphabet characters; each byte keeps its character's original range. */
function toByteAlphabet(text) {
  if (ASCII_ONLY.test(text.text)) {
    let out = '';
    for (let i = 0; i < text.text.length; i++) out += BYTE_TO_CHAR[text.text.charCodeAt(i)];
    return new NormalizedText(out, text.starts, text.ends, text.originalStart, text.originalEnd);
  }
  return text.mapCharacters((char, codePoint) => {
    if (codePoint < 0x80) return BYTE_TO_CHAR[codePoint];
    let out = '';
    for (const byte of utf8Bytes(char)) out += BYTE_TO_CHAR[byte];
    return out;
  });
}

/**
 * The ByteLevel pre-tokenizer: optionally a space in front of each piece
 * (add_prefix_space, so a first word looks like every other), the GPT-2 split
 * (use_regex), then bytes.
 */
export function byteLevelPreTokenizer(spec) {
  const addPrefixSpace = readBoolean(spec, 'add_prefix_space', true, 'ByteLevel pre-tokenizer');
  const useRegex = readBoolean(spec, 'use_regex', true, 'ByteLevel pre-tokenizer');
  return (piece) => {
    let text = piece;
    if (addPrefixSpace && !text.text.startsWith(' ')) text = text.prepend(' ');
    const pieces = useRegex ? splitText(text, regexRuns(text.text, GPT2_PATTERN), 'Isolated') : [text];
    return pieces.map(toByteAlphabet);
  };
}

/** The bytes a byte-level token spells, or null when it holds characters outside the alphabet. */
function tokenBytes(token) {
  const bytes = new Uint8Array(token.length);
  for (let i = 0; i < token.length; i++) {
    const byte = byteOfCode(token.charCodeAt(i));
    if (byte < 0) return null;
    bytes[i] = byte;
  }
  return bytes;
}

/**
 * The ByteLevel decoder: every token's bytes, joined, read as UTF-8 (invalid
 * bytes become U+FFFD). A token with a character outside the byte alphabet
 * (an added token such as "<|im_start|>" may have one) contributes its own
 * UTF-8, as Hugging Face does.
 */
export function byteLevelDecode(tokens) {
  let bytes = new Uint8Array(1024);
  let length = 0;
  const reserve = (extra) => {
    if (length + extra <= bytes.length) return;
    const grown = new Uint8Array(Math.max(length + extra, bytes.length * 2));
    grown.set(bytes.subarray(0, length));
    bytes = grown;
  };
  for (const token of tokens) {
    reserve(token.length);
    let i = 0;
    for (; i < token.length; i++) {
      const byte = byteOfCode(token.charCodeAt(i));
      if (byte < 0) break;
      bytes[length + i] = byte;
    }
    if (i === token.length) {
      length += token.length;
    } else {
      const own = utf8Bytes(token);
      reserve(own.length);
      bytes.set(own, length);
      length += own.length;
    }
  }
  return [utf8Decode(bytes.subarray(0, length))];
}

/** A byte-level token as readable text: "Ġcafé" -> " café"; half a character -> "\xF0\x9F". */
export function byteLevelLabel(token) {
  const bytes = tokenBytes(token);
  return bytes === null ? token : bytesToLabel(bytes);
}

const SPACE_CHAR = BYTE_TO_CHAR[0x20];
const WHITESPACE = /\p{White_Space}/u;

function isSpaceLike(char) {
  return char === SPACE_CHAR || WHITESPACE.test(char);
}

// `count` code points on from UTF-16 index `at` in `text` (backwards for a
// negative count); null when the text ends first.
function stepCodePoints(text, at, count) {
  let index = at;
  for (let k = 0; k < Math.abs(count); k++) {
    if (count > 0) {
      if (index >= text.length) return null;
      index += text.codePointAt(index) > 0xFFFF ? 2 : 1;
    } else {
      if (index <= 0) return null;
      const low = text.charCodeAt(index - 1);
      index -= low >= 0xDC00 && low <= 0xDFFF && index >= 2 ? 2 : 1;
    }
  }
  return index;
}

/**
 * ByteLevel's trim_offsets (also RobertaProcessing's): a token's offsets leave
 * out its leading and trailing spaces, so " world" points at "world". The
 * first token keeps one leading space when add_prefix_space put it there.
 * `offsets` (UTF-16, into `text`) is changed in place; `values` are the
 * tokens' vocabulary strings. Hugging Face trims offsets already counted in
 * characters (code points), one per space, even where an added prefix space
 * took the range of a 4-byte character, so this steps by code points.
 */
export function trimOffsets(values, offsets, addPrefixSpace, text) {
  for (let i = 0; i < values.length; i++) {
    const chars = [...values[i]];
    let leading = 0;
    while (leading < chars.length && isSpaceLike(chars[leading])) leading++;
    let trailing = 0;
    while (trailing < chars.length && isSpaceLike(chars[chars.length - 1 - trailing])) trailing++;
    const offset = offsets[i];
    if (leading > 0) {
      const isFirst = i === 0 || offset[0] === 0;
      if (!(isFirst && addPrefixSpace && leading === 1)) {
        const start = stepCodePoints(text, offset[0], leading);
        offset[0] = start === null ? offset[1] : Math.min(start, offset[1]);
      }
    }
    const end = trailing > 0 ? stepCodePoints(text, offset[1], -trailing) : null;
    if (end !== null) offset[1] = Math.max(end, offset[0]);
  }
}
