// The Precompiled normalizer of sentencepiece models (XLM-R, T5, ALBERT,
// mBART): sentencepiece's own normalization rules (NFKC plus its
// adjustments) compiled into a "charsmap", which tokenizer.json carries as
// base64. Its layout, from sentencepiece's normalizer and Hugging Face's
// spm_precompiled crate:
//   u32 little-endian   size of the trie in bytes
//   u32[size / 4]       a darts-clone double-array trie over UTF-8 bytes; a
//                       key's value is a byte offset into the strings below
//   bytes               the replacement strings, each ended by a NUL
// The text is rewritten grapheme by grapheme, as Hugging Face does it: a
// grapheme shorter than 6 UTF-8 bytes is looked up whole, and if some prefix
// of it is a key (the shortest one wins, the rest of the grapheme is then
// dropped, which is sentencepiece's behaviour kept on purpose) it becomes that
// key's string; otherwise each of its characters is looked up on its own.
import { readString } from './spec.js';

const where = 'Precompiled normalizer';

function decodeBase64(text) {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch {
    throw new Error(`${where} "precompiled_charsmap" is not valid base64`);
  }
}

// darts-clone unit fields.
const hasLeaf = (unit) => ((unit >>> 8) & 1) === 1;
const valueOf = (unit) => unit & 0x7FFFFFFF;
const labelOf = (unit) => unit & 0x800000FF;
const offsetOf = (unit) => ((unit >>> 10) << ((unit & 0x200) >>> 6)) >>> 0;

class Charsmap {
  constructor(bytes) {
    if (bytes.length < 4) throw new Error(`${where} "precompiled_charsmap" is too short (${bytes.length} bytes)`);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const trieBytes = view.getUint32(0, true);
    if (trieBytes % 4 !== 0 || 4 + trieBytes > bytes.length) {
      throw new Error(`${where} "precompiled_charsmap" declares a ${trieBytes}-byte trie in ${bytes.length} bytes`);
    }
    this.units = new Uint32Array(trieBytes / 4);
    for (let i = 0; i < this.units.length; i++) this.units[i] = view.getUint32(4 + 4 * i, true);
    this.strings = bytes.subarray(4 + trieBytes);
    this.decoded = new Map();
    this.decoder = new TextDecoder('utf-8', { fatal: true });
  }

  // The replacement for the shortest key that prefixes `text`, or null.
  lookup(text) {
    const { units } = this;
    if (units.length === 0) return null;
    let node = offsetOf(units[0]);
    for (const char of text) {
      for (const byte of utf8Bytes(char.codePointAt(0))) {
        if (byte === 0) return null;
        node ^= byte;
        if (node >= units.length || labelOf(units[node]) !== byte) return null;
        const unit = units[node];
        node ^= offsetOf(unit);
        if (hasLeaf(unit)) return node < units.length ? this.string(valueOf(units[node])) : null;
      }
    }
    return null;
  }

  // The longest key that prefixes text.slice(from), as sentencepiece's own
  // normalizer takes it: { replacement, end } (end in UTF-16 units), or null.
  longest(text, from) {
    const { units } = this;
    if (units.length === 0) return null;
    let node = offsetOf(units[0]);
    let found = null;
    for (let at = from; at < text.length;) {
      const codePoint = text.codePointAt(at);
      at += codePoint > 0xFFFF ? 2 : 1;
      let unit = 0;
      for (const byte of utf8Bytes(codePoint)) {
        if (byte === 0) return found;
        node ^= byte;
        if (node >= units.length || labelOf(units[node]) !== byte) return found;
        unit = units[node];
        node ^= offsetOf(unit);
      }
      // Keys end at characters: a leaf after a character's last byte.
      if (hasLeaf(unit) && node < units.length) found = { replacement: this.string(valueOf(units[node])), end: at };
    }
    return found;
  }

  string(start) {
    let text = this.decoded.get(start);
    if (text !== undefined) return text;
    if (start > this.strings.length) throw new Error(`${where} "precompiled_charsmap" points past its strings`);
    let end = start;
    while (end < this.strings.length && this.strings[end] !== 0) end++;
    try {
      text = this.decoder.decode(this.strings.subarray(start, end));
    } catch {
      throw new Error(`${where} "precompiled_charsmap" holds a string that is not UTF-8`);
    }
    this.decoded.set(start, text);
    return text;
  }
}

// The UTF-8 bytes of one code point (no allocation for the ASCII case's caller loop).
function utf8Bytes(codePoint) {
  if (codePoint < 0x80) return [codePoint];
  if (codePoint < 0x800) return [0xC0 | (codePoint >> 6), 0x80 | (codePoint & 0x3F)];
  if (codePoint < 0x10000) {
    return [0xE0 | (codePoint >> 12), 0x80 | ((codePoint >> 6) & 0x3F), 0x80 | (codePoint & 0x3F)];
  }
  return [0xF0 | (codePoint >> 18), 0x80 | ((codePoint >> 12) & 0x3F), 0x80 | ((codePoint >> 6) & 0x3F),
    0x80 | (codePoint & 0x3F)];
}

function utf8Length(text) {
  let length = 0;
  for (const char of text) length += utf8Bytes(char.codePointAt(0)).length;
  return length;
}

// Hugging Face's list of (character, change) for one rewritten part: the
// new characters, the extra ones marked as insertions, or the last one
// removing what the part loses (which is lost when nothing precedes it: a
// deletion at the very start shifts later offsets, exactly as in Hugging Face).
function pushReplacement(chars, changes, oldPart, newPart) {
  const newChars = [...newPart];
  for (const char of newChars) {
    chars.push(char);
    changes.push(0);
  }
  const diff = newChars.length - [...oldPart].length;
  if (diff > 0) changes.fill(1, changes.length - diff);
  else if (diff < 0 && changes.length > 0) changes[changes.length - 1] += diff;
}

// The text's graphemes, segmented a few hundred units at a time: V8's
// Intl.Segmenter copies the whole input for every segment it returns, which
// makes one long text quadratic (a 200 000-letter word takes most of a
// minute). A chunk's last two graphemes are segmented again with the next
// chunk: the end of a chunk can cut a character or a cluster, which only
// disturbs the boundary before its last piece; every earlier boundary
// depends on nothing after it. A cluster longer than a chunk doubles it.
const CHUNK_UNITS = 256;

function* graphemes(segmenter, text) {
  let start = 0;
  let size = CHUNK_UNITS;
  while (start < text.length) {
    const end = Math.min(text.length, start + size);
    const pieces = [...segmenter.segment(text.slice(start, end))];
    if (end === text.length) {
      for (const { segment } of pieces) yield segment;
      return;
    }
    if (pieces.length > 2) {
      for (let k = 0; k < pieces.length - 2; k++) yield pieces[k].segment;
      start += pieces[pieces.length - 2].index;
      size = CHUNK_UNITS;
    } else {
      size *= 2;
    }
  }
}

// sentencepiece's normalization: the longest key at each place, else the character as it is.
function longestMatches(charsmap, text) {
  const chars = [];
  const changes = [];
  let modified = false;
  const source = text.text;
  for (let at = 0; at < source.length;) {
    const match = charsmap.longest(source, at);
    if (match === null) {
      const char = String.fromCodePoint(source.codePointAt(at));
      chars.push(char);
      changes.push(0);
      at += char.length;
      continue;
    }
    pushReplacement(chars, changes, source.slice(at, match.end), match.replacement);
    modified = true;
    at = match.end;
  }
  return modified ? text.transform(chars, changes) : text;
}

/**
 * The Precompiled normalizer of a tokenizer.json entry, as NormalizedText ->
 * NormalizedText. With `sentencepiece`, the rules are applied as the
 * sentencepiece library applies them (for tokenizers that run it, such as
 * transformers' MarianTokenizer): at each place the longest key wins, across
 * grapheme boundaries, and what follows it is read next.
 */
export function precompiledNormalizer(spec, { sentencepiece = false } = {}) {
  const charsmap = new Charsmap(decodeBase64(readString(spec, 'precompiled_charsmap', where)));
  if (sentencepiece) return (text) => longestMatches(charsmap, text);
  const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return (text) => {
    const chars = [];
    const changes = [];
    let modified = false;
    for (const segment of graphemes(segmenter, text.text)) {
      const whole = utf8Length(segment) < 6 ? charsmap.lookup(segment) : null;
      if (whole !== null) {
        pushReplacement(chars, changes, segment, whole);
        modified = true;
        continue;
      }
      for (const char of segment) {
        const replacement = charsmap.lookup(char);
        if (replacement === null) {
          chars.push(char);
          changes.push(0);
        } else {
          pushReplacement(chars, changes, char, replacement);
          modified = true;
        }
      }
    }
    return modified ? text.transform(chars, changes) : text;
  };
}
