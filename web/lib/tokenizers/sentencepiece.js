// The sentencepiece conventions of Llama-family tokenizer.json files:
//   "▁" (U+2581) stands for a space and starts each word, so "Hello world"
//   becomes "▁Hello▁world". Older files get there with normalizers
//   (Prepend "▁", Replace " " -> "▁"); newer ones with the Metaspace
//   pre-tokenizer (prepend_scheme "first": only at the very start).
//   Characters missing from the vocabulary fall back to their UTF-8 bytes as
//   tokens named "<0x00>".."<0xFF>" (byte_fallback), which decoding joins back
//   into characters.
import { regexRuns, splitText } from './splitting.js';
import { readBoolean, readOptionalString } from './spec.js';
import { byteEscape, utf8Bytes } from './unicode.js';

/** The metaspace character. */
export const METASPACE = '\u2581';

// prepend_scheme, also from the older add_prefix_space flag (false = never).
function readPrependScheme(spec, where) {
  if (spec.add_prefix_space === false) return 'never';
  const scheme = readOptionalString(spec, 'prepend_scheme', 'always', where);
  if (!['always', 'first', 'never'].includes(scheme)) {
    throw new Error(`${where} "prepend_scheme" must be "always", "first" or "never", got ${JSON.stringify(scheme)}`);
  }
  return scheme;
}

function readReplacement(spec, where) {
  const replacement = readOptionalString(spec, 'replacement', METASPACE, where);
  if ([...replacement].length !== 1) throw new Error(`${where} "replacement" must be one character`);
  return replacement;
}

function escapeRegex(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The Metaspace pre-tokenizer: spaces become "▁", a "▁" is put in front
 * (always, or only for the piece at the start of the input, or never), then
 * each "▁" starts a new piece (unless split is false).
 */
export function metaspacePreTokenizer(spec) {
  const where = 'Metaspace pre-tokenizer';
  const replacement = readReplacement(spec, where);
  const scheme = readPrependScheme(spec, where);
  const split = readBoolean(spec, 'split', true, where);
  const spaces = / /g;
  const marker = new RegExp(escapeRegex(replacement), 'gu');
  return (piece) => {
    let text = piece.replaceAll(spaces, replacement);
    const prepend = scheme === 'always' || (scheme === 'first' && text.originalStart === 0);
    if (prepend && !text.text.startsWith(replacement)) text = text.prepend(replacement);
    return split ? splitText(text, regexRuns(text.text, marker), 'MergedWithNext') : [text];
  };
}

/**
 * The Metaspace decoder: "▁" back to spaces, except that in the first token
 * every "▁" is dropped when the pre-tokenizer prepends one (Hugging Face drops
 * them all, not just the first; kept identical).
 */
export function metaspaceDecoder(spec) {
  const where = 'Metaspace decoder';
  const replacement = readReplacement(spec, where);
  const scheme = readPrependScheme(spec, where);
  return (tokens) => tokens.map((token, i) => {
    const space = i === 0 && scheme !== 'never' ? '' : ' ';
    return token.split(replacement).join(space);
  });
}

/** "<0xE2>": the name of a byte-fallback token. */
function byteFallbackName(byte) {
  return `<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`;
}

/**
 * The ids of the "<0xE2>"-style tokens of `piece`'s UTF-8 bytes, or null
 * unless all of them are in the vocabulary (then the model uses its unk).
 */
export function byteFallbackIds(tokenToId, piece) {
  const ids = [];
  for (const byte of utf8Bytes(piece)) {
    const id = tokenToId.get(byteFallbackName(byte));
    if (id === undefined) return null;
    ids.push(id);
  }
  return ids;
}

/** The byte of a byte-fallback token "<0xE2>", or -1. Parsed as Hugging Face parses it. */
function byteFallbackValue(token) {
  if (token.length !== 6 || !token.startsWith('<0x') || !token.endsWith('>')) return -1;
  const digits = token.slice(3, 5);
  if (!/^(\+[0-9A-Fa-f]|[0-9A-Fa-f]{2})$/.test(digits)) return -1;
  return parseInt(digits, 16);
}

const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The ByteFallback decoder: runs of "<0xNN>" tokens become the text their
 * bytes spell; a run that is not valid UTF-8 becomes one U+FFFD per byte.
 */
export function byteFallbackDecode(tokens) {
  const out = [];
  let bytes = [];
  const flush = () => {
    if (bytes.length === 0) return;
    try {
      out.push(strictDecoder.decode(Uint8Array.from(bytes)));
    } catch {
      for (let k = 0; k < bytes.length; k++) out.push('\uFFFD');
    }
    bytes = [];
  };
  for (const token of tokens) {
    const byte = byteFallbackValue(token);
    if (byte >= 0) {
      bytes.push(byte);
    } else {
      flush();
      out.push(token);
    }
  }
  flush();
  return out;
}

/**
 * A sentencepiece token as readable text: "▁the" -> " the"; a byte piece
 * shows its character when it is one on its own ("<0x41>" -> "A"), else its
 * escape ("<0xE2>" -> "\xE2").
 */
export function sentencepieceLabel(token, replacement = METASPACE, byteFallback = true) {
  if (byteFallback) {
    const byte = byteFallbackValue(token);
    if (byte >= 0) return byte < 0x80 ? String.fromCharCode(byte) : byteEscape(byte);
  }
  return token.split(replacement).join(' ');
}

