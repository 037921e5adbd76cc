// Decoders: token strings back to text, from tokenizer.json's "decoder". Each
// is a function string[] -> string[] (Hugging Face chains them the same
// way); decode() joins the final list.
import { byteLevelDecode } from './byte-level.js';
import { readPattern } from './oniguruma.js';
import { byteFallbackDecode, metaspaceDecoder } from './sentencepiece.js';
import {
  describeType, readCount, readOptionalString, readString, requireObject,
} from './spec.js';
import { wordPieceDecoder } from './wordpiece.js';

function replace(spec) {
  const pattern = readPattern(spec, 'Replace decoder');
  const content = readString(spec, 'content', 'Replace decoder');
  // A function replacement, so a "$&" in content stays literal.
  return (tokens) => tokens.map((token) => token.replace(pattern, () => content));
}

// Strip: up to `start` copies of `content` off each token's front, `stop` off its end.
function strip(spec) {
  const content = readString(spec, 'content', 'Strip decoder');
  const start = readCount(spec, 'start', 0, 'Strip decoder');
  const stop = readCount(spec, 'stop', 0, 'Strip decoder');
  return (tokens) => tokens.map((token) => {
    const chars = [...token];
    let from = 0;
    while (from < Math.min(start, chars.length) && chars[from] === content) from++;
    let to = chars.length;
    while (chars.length - to < stop && to > from && chars[to - 1] === content) to--;
    return chars.slice(from, to).join('');
  });
}

function bpeDecoder(spec) {
  const suffix = readOptionalString(spec, 'suffix', '</w>', 'BPEDecoder');
  return (tokens) => tokens.map((token, i) => token.split(suffix).join(i === tokens.length - 1 ? '' : ' '));
}

function sequence(spec) {
  if (!Array.isArray(spec.decoders)) throw new Error('Sequence decoder needs a "decoders" array');
  const steps = spec.decoders.map((step) => createDecoder(step));
  return (tokens) => steps.reduce((out, step) => step(out), tokens);
}

/**
 * The decoder a tokenizer.json "decoder" entry describes, as a function
 * string[] -> string[]; null for none (decode then joins tokens with spaces,
 * as Hugging Face does).
 * @throws {Error} for a type this library does not implement, naming it
 */
export function createDecoder(spec) {
  if (spec === null || spec === undefined) return null;
  requireObject(spec, 'decoder');
  switch (spec.type) {
    case 'ByteLevel': return byteLevelDecode;
    case 'WordPiece': return wordPieceDecoder(spec);
    case 'Metaspace': return metaspaceDecoder(spec);
    case 'Replace': return replace(spec);
    case 'ByteFallback': return byteFallbackDecode;
    case 'Fuse': return (tokens) => [tokens.join('')];
    case 'Strip': return strip(spec);
    case 'BPEDecoder': return bpeDecoder(spec);
    case 'Sequence': return sequence(spec);
    default:
      throw new Error(`unsupported decoder ${describeType(spec.type)}: this library implements ByteLevel, `
        + 'WordPiece, Metaspace, Replace, ByteFallback, Fuse, Strip, BPEDecoder and Sequence');
  }
}
