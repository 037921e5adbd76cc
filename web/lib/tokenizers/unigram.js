// The Unigram model (XLM-R, T5, ALBERT, mBART): each vocabulary piece has a
// log-probability, and a word is cut into the pieces whose scores sum
// highest (Viterbi over every way of cutting it), as Hugging Face's
// Unigram::encode_optimized does, tie for tie:
//   - positions are visited left to right, candidate pieces at a position
//     shortest first, and a later candidate replaces the best path into its
//     end only when strictly better;
//   - a character that starts no single-character piece can still be
//     crossed as "unknown", scored min_score - 10;
//   - neighbouring unknowns fuse into one token; a token missing from the
//     vocabulary becomes its "<0xNN>" bytes (byte_fallback) or unk_id.
// Scores are float64 sums in the same order as Rust's, so ties fall alike.
import {
  describeValue, readBoolean, requireId, requireObject,
} from './spec.js';
import { byteFallbackIds } from './sentencepiece.js';

const UNKNOWN_PENALTY = 10;

// Piece lookup by prefix: one Map from (node, UTF-16 unit) to child node, and
// per node the id of the piece ending there (-1 for none). A flat map keeps a
// 250 000-piece vocabulary to one object instead of a Map per node.
class PieceTrie {
  constructor() {
    this.children = new Map();
    this.ids = [-1];
  }

  insert(piece, id) {
    let node = 0;
    for (let i = 0; i < piece.length; i++) {
      const key = node * 0x10000 + piece.charCodeAt(i);
      let child = this.children.get(key);
      if (child === undefined) {
        child = this.ids.length;
        this.ids.push(-1);
        this.children.set(key, child);
      }
      node = child;
    }
    this.ids[node] = id;
  }

  // Calls found(id, end) for each piece that starts at `start`, shortest first.
  prefixes(text, start, found) {
    let node = 0;
    for (let i = start; i < text.length; i++) {
      node = this.children.get(node * 0x10000 + text.charCodeAt(i));
      if (node === undefined) return;
      if (this.ids[node] >= 0) found(this.ids[node], i + 1);
    }
  }
}

/** The Unigram model of a tokenizer.json "model" entry. */
export class UnigramModel {
  /** @param {object} spec tokenizer.json "model" with type "Unigram": { vocab: [[piece, score]], unk_id, byte_fallback } */
  constructor(spec) {
    requireObject(spec, 'Unigram model');
    const where = 'Unigram model';
    if (!Array.isArray(spec.vocab) || spec.vocab.length === 0) {
      throw new TypeError(`${where} "vocab" must be a non-empty array of [piece, score], got ${describeValue(spec.vocab)}`);
    }
    this.tokenToId = new Map();
    this.idToToken = new Map();
    this.scores = new Float64Array(spec.vocab.length);
    this.trie = new PieceTrie();
    let minScore = Infinity;
    spec.vocab.forEach((entry, id) => {
      if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'string' || !Number.isFinite(entry[1])) {
        throw new TypeError(`${where} vocab[${id}] must be [piece, score] with a finite score, got ${describeValue(entry)}`);
      }
      const [piece, score] = entry;
      // A piece listed twice: the later id wins, as in Hugging Face.
      this.tokenToId.set(piece, id);
      this.idToToken.set(id, piece);
      this.scores[id] = score;
      if (piece.length > 0) this.trie.insert(piece, id);
      minScore = Math.min(minScore, score);
    });
    this.unknownScore = minScore - UNKNOWN_PENALTY;
    this.unkId = spec.unk_id === null || spec.unk_id === undefined ? null : requireId(spec.unk_id, `${where} "unk_id"`);
    if (this.unkId !== null && this.unkId >= spec.vocab.length) {
      throw new RangeError(`${where} "unk_id" ${this.unkId} is outside the vocab (${spec.vocab.length} pieces)`);
    }
    this.byteFallback = readBoolean(spec, 'byte_fallback', false, where);
  }

  requireUnk(word, at) {
    if (this.unkId !== null) return this.unkId;
    const char = String.fromCodePoint(word.codePointAt(at));
    throw new Error(`Unigram model has no unk_id, and ${JSON.stringify(char)} is in none of its pieces `
      + '(Hugging Face refuses this text too)');
  }

  // The best path as [start, end, id] segments, unknown runs fused.
  bestPath(word) {
    const n = word.length;
    const score = new Float64Array(n + 1);
    const from = new Int32Array(n + 1).fill(-1);
    const id = new Int32Array(n + 1);
    for (let start = 0; start < n;) {
      const width = word.codePointAt(start) > 0xFFFF ? 2 : 1;
      const base = score[start];
      let single = false;
      const offer = (pieceId, end, pieceScore) => {
        const candidate = base + pieceScore;
        if (from[end] < 0 || candidate > score[end]) {
          score[end] = candidate;
          from[end] = start;
          id[end] = pieceId;
        }
      };
      this.trie.prefixes(word, start, (pieceId, end) => {
        offer(pieceId, end, this.scores[pieceId]);
        if (end - start === width) single = true;
      });
      if (!single) offer(this.requireUnk(word, start), start + width, this.unknownScore);
      start += width;
    }
    const segments = [];
    for (let end = n; end > 0; end = from[end]) {
      const last = segments[segments.length - 1];
      const unknown = id[end] === this.unkId;
      if (unknown && last && last.unknown) last.start = from[end];
      else segments.push({ start: from[end], end, id: id[end], unknown });
    }
    return segments.reverse();
  }

  /** Tokens of one pre-tokenized word: [{ id, start, end }] in UTF-16 units of `word`. */
  tokenize(word) {
    if (word.length === 0) return [];
    const tokens = [];
    for (const { start, end, unknown } of this.bestPath(word)) {
      const piece = word.slice(start, end);
      // A piece the path found is in the vocab; a fused unknown run may be too.
      const known = this.tokenToId.get(piece);
      if (known !== undefined) {
        tokens.push({ id: known, start, end });
        continue;
      }
      const bytes = this.byteFallback ? byteFallbackIds(this.tokenToId, piece) : null;
      if (bytes) {
        for (const byteId of bytes) tokens.push({ id: byteId, start, end });
      } else {
        tokens.push({ id: unknown ? this.unkId : this.requireUnk(word, start), start, end });
      }
    }
    return tokens;
  }
}
