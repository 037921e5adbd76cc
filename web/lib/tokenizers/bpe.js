// The BPE model: a word's characters merged pair by pair, lowest merge rank
// first, as Hugging Face's BPE does it (shared by byte-level and
// sentencepiece-style files).
//
// Cost: the classic formulation rescans the whole word after each merge, which
// is quadratic in the word's length, and a single "word" can be a megabyte of
// emoji or punctuation. Here the word is a linked list of symbols and the
// candidate merges sit in a binary heap ordered by (rank, position), so a word
// of n characters costs O(n log n) however hostile it is; no length limit or
// fallback is needed, and the result is exactly Hugging Face's (same order of
// merges, same handling of stale heap entries). Words shorter than
// CACHE_WORD_LENGTH are cached, up to CACHE_SIZE entries.
import {
  describeValue, readBoolean, readOptionalString, readVocab, requireObject,
} from './spec.js';
import { byteFallbackIds } from './sentencepiece.js';

const CACHE_SIZE = 10000;
const CACHE_WORD_LENGTH = 256;

// Merges as "a b" strings or [a, b] pairs, checked.
function readMerges(merges, where) {
  if (merges === undefined || merges === null) return [];
  if (!Array.isArray(merges)) throw new TypeError(`${where} "merges" must be an array, got ${describeValue(merges)}`);
  return merges.map((merge, index) => {
    if (typeof merge === 'string') {
      const parts = merge.split(' ');
      if (parts.length !== 2 || parts[0] === '' || parts[1] === '') {
        throw new Error(`${where} merge ${index} ${JSON.stringify(merge)} is not two tokens separated by one space`);
      }
      return parts;
    }
    if (Array.isArray(merge) && merge.length === 2 && typeof merge[0] === 'string' && typeof merge[1] === 'string'
      && merge[0].length > 0 && merge[1].length > 0) {
      return merge;
    }
    throw new Error(`${where} merge ${index} must be "a b" or ["a", "b"], got ${describeValue(merge)}`);
  });
}

// A min-heap of candidate merges ordered by rank, then position.
class MergeHeap {
  constructor() {
    this.rank = [];
    this.pos = [];
    this.newId = [];
  }

  get size() {
    return this.rank.length;
  }

  less(a, b) {
    return this.rank[a] < this.rank[b] || (this.rank[a] === this.rank[b] && this.pos[a] < this.pos[b]);
  }

  swap(a, b) {
    for (const array of [this.rank, this.pos, this.newId]) {
      const t = array[a];
      array[a] = array[b];
      array[b] = t;
    }
  }

  push(rank, pos, newId) {
    this.rank.push(rank);
    this.pos.push(pos);
    this.newId.push(newId);
    let i = this.rank.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  // Removes the top; its fields are left in this.top*.
  pop() {
    this.topRank = this.rank[0];
    this.topPos = this.pos[0];
    this.topNewId = this.newId[0];
    const last = this.rank.length - 1;
    this.swap(0, last);
    this.rank.pop();
    this.pos.pop();
    this.newId.pop();
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < last && this.less(left, smallest)) smallest = left;
      if (right < last && this.less(right, smallest)) smallest = right;
      if (smallest === i) break;
      this.swap(i, smallest);
      i = smallest;
    }
  }
}

/** The BPE model of a tokenizer.json "model" entry. */
export class BpeModel {
  /** @param {object} spec tokenizer.json "model" with type "BPE" */
  constructor(spec) {
    requireObject(spec, 'BPE model');
    const { tokenToId, idToToken } = readVocab(spec.vocab, 'BPE model');
    this.tokenToId = tokenToId;
    this.idToToken = idToToken;
    this.unkToken = readOptionalString(spec, 'unk_token', null, 'BPE model');
    this.continuingSubwordPrefix = readOptionalString(spec, 'continuing_subword_prefix', '', 'BPE model');
    this.endOfWordSuffix = readOptionalString(spec, 'end_of_word_suffix', '', 'BPE model');
    this.fuseUnk = readBoolean(spec, 'fuse_unk', false, 'BPE model');
    this.byteFallback = readBoolean(spec, 'byte_fallback', false, 'BPE model');
    this.ignoreMerges = readBoolean(spec, 'ignore_merges', false, 'BPE model');
    if (this.unkToken !== null && !tokenToId.has(this.unkToken)) {
      throw new Error(`BPE model unk_token ${JSON.stringify(this.unkToken)} is not in the vocab`);
    }
    // Merge (left id, right id) -> rank and the id of the merged token. A
    // later duplicate of a pair overrides an earlier one, as in Hugging Face.
    this.merges = new Map();
    const prefixLength = this.continuingSubwordPrefix.length;
    readMerges(spec.merges, 'BPE model').forEach(([left, right], rank) => {
      const leftId = tokenToId.get(left);
      const rightId = tokenToId.get(right);
      if (leftId === undefined || rightId === undefined) {
        const missing = leftId === undefined ? left : right;
        throw new Error(`BPE model merge ${rank} (${JSON.stringify(left)} ${JSON.stringify(right)}) `
          + `uses ${JSON.stringify(missing)}, which is not in the vocab`);
      }
      const merged = left + (prefixLength > 0 && right.startsWith(this.continuingSubwordPrefix)
        ? right.slice(prefixLength) : right);
      const newId = tokenToId.get(merged);
      if (newId === undefined) {
        throw new Error(`BPE model merge ${rank} makes ${JSON.stringify(merged)}, which is not in the vocab`);
      }
      this.merges.set(pairKey(leftId, rightId), [rank, newId]);
    });
    this.cache = new Map();
  }

  /**
   * Tokens of one pre-tokenized word: [{ id, start, end }] with start/end in
   * UTF-16 units of `word`.
   */
  tokenize(word) {
    if (word.length === 0) return [];
    if (this.ignoreMerges) {
      const id = this.tokenToId.get(word);
      if (id !== undefined) return [{ id, start: 0, end: word.length }];
    }
    let symbols = this.cache.get(word);
    if (symbols === undefined) {
      symbols = this.mergeWord(word);
      if (word.length < CACHE_WORD_LENGTH) {
        if (this.cache.size >= CACHE_SIZE) this.cache.clear();
        this.cache.set(word, symbols);
      }
    }
    const tokens = [];
    for (let i = 0; i < symbols.ids.length; i++) {
      tokens.push({ id: symbols.ids[i], start: symbols.starts[i], end: symbols.ends[i] });
    }
    return tokens;
  }

  // The initial symbols: one per character, or its byte-fallback pieces, or
  // unk, each with the [start, end) of the UTF-16 units it covers (all the
  // byte pieces of one character cover the whole character).
  //
  // Hugging Face places symbols one after another by UTF-8 length instead,
  // so when it drops a character (no unk token) or emits byte pieces before a
  // pending unk, its later offsets shift. That is reproduced exactly: such a
  // word's symbols are placed by a byte cursor and converted to units at the
  // end (wordOffsetsFromBytes).
  initialSymbols(word) {
    const ids = [];
    const starts = [];
    const ends = [];
    const byteStarts = [];
    const byteEnds = [];
    let byteCursor = 0;
    let shifted = false;
    let pendingUnk = null; // { start, end, bytes } of an unknown run not yet emitted
    const unkId = this.unkToken === null ? undefined : this.tokenToId.get(this.unkToken);
    const emit = (id, start, end, bytes) => {
      ids.push(id);
      starts.push(start);
      ends.push(end);
      byteStarts.push(byteCursor);
      byteCursor += bytes;
      byteEnds.push(byteCursor);
    };
    const flushUnk = () => {
      if (pendingUnk === null) return;
      emit(unkId, pendingUnk.start, pendingUnk.end, pendingUnk.bytes);
      pendingUnk = null;
    };
    for (let i = 0; i < word.length;) {
      const start = i;
      const codePoint = word.codePointAt(i);
      const width = codePoint > 0xFFFF ? 2 : 1;
      const bytes = utf8Length(codePoint);
      let piece = word.slice(i, i + width);
      if (i > 0) piece = this.continuingSubwordPrefix + piece;
      if (i + width === word.length) piece += this.endOfWordSuffix;
      i += width;
      const id = this.tokenToId.get(piece);
      if (id !== undefined) {
        flushUnk();
        emit(id, start, i, bytes);
        continue;
      }
      // Hugging Face emits byte pieces without first emitting a pending unk.
      const byteIds = this.byteFallback ? byteFallbackIds(this.tokenToId, piece) : null;
      if (byteIds !== null) {
        if (pendingUnk !== null) shifted = true;
        for (const byteId of byteIds) emit(byteId, start, i, 1);
        continue;
      }
      if (unkId === undefined) { // without an unk token, Hugging Face drops the character
        shifted = true;
        continue;
      }
      if (pendingUnk !== null && this.fuseUnk) {
        pendingUnk.end = i;
        pendingUnk.bytes += bytes;
      } else {
        flushUnk();
        pendingUnk = { start, end: i, bytes };
      }
    }
    flushUnk();
    return shifted ? {
      ids, starts: byteStarts, ends: byteEnds, inBytes: true,
    } : {
      ids, starts, ends, inBytes: false,
    };
  }

  mergeWord(word) {
    const symbols = this.mergeSymbols(this.initialSymbols(word));
    return symbols.inBytes ? wordOffsetsFromBytes(word, symbols) : symbols;
  }

  mergeSymbols({
    ids, starts, ends, inBytes,
  }) {
    const n = ids.length;
    if (n < 2 || this.merges.size === 0) {
      return {
        ids, starts, ends, inBytes,
      };
    }
    const prev = new Int32Array(n);
    const next = new Int32Array(n);
    const alive = new Uint8Array(n).fill(1);
    for (let i = 0; i < n; i++) {
      prev[i] = i - 1;
      next[i] = i + 1 < n ? i + 1 : -1;
    }
    const heap = new MergeHeap();
    for (let i = 0; i + 1 < n; i++) {
      const merge = this.merges.get(pairKey(ids[i], ids[i + 1]));
      if (merge) heap.push(merge[0], i, merge[1]);
    }
    while (heap.size > 0) {
      heap.pop();
      const pos = heap.topPos;
      if (!alive[pos] || next[pos] < 0) continue;
      const right = next[pos];
      // A stale entry: the pair at `pos` no longer makes this token.
      const current = this.merges.get(pairKey(ids[pos], ids[right]));
      if (!current || current[1] !== heap.topNewId) continue;
      ids[pos] = heap.topNewId;
      ends[pos] = ends[right];
      alive[right] = 0;
      next[pos] = next[right];
      if (next[pos] >= 0) prev[next[pos]] = pos;
      if (prev[pos] >= 0) {
        const merge = this.merges.get(pairKey(ids[prev[pos]], ids[pos]));
        if (merge) heap.push(merge[0], prev[pos], merge[1]);
      }
      if (next[pos] >= 0) {
        const merge = this.merges.get(pairKey(ids[pos], ids[next[pos]]));
        if (merge) heap.push(merge[0], pos, merge[1]);
      }
    }
    const out = {
      ids: [], starts: [], ends: [], inBytes,
    };
    for (let i = 0; i >= 0; i = next[i]) {
      out.ids.push(ids[i]);
      out.starts.push(starts[i]);
      out.ends.push(ends[i]);
    }
    return out;
  }
}

function utf8Length(codePoint) {
  if (codePoint < 0x80) return 1;
  if (codePoint < 0x800) return 2;
  return codePoint < 0x10000 ? 3 : 4;
}

// Symbols placed in UTF-8 bytes of `word` as UTF-16 unit ranges: a start
// byte maps to the start of its character, an end byte to the end of the
// character holding the byte before it.
function wordOffsetsFromBytes(word, symbols) {
  const charStart = [];
  const charEnd = [];
  for (let i = 0; i < word.length;) {
    const codePoint = word.codePointAt(i);
    const width = codePoint > 0xFFFF ? 2 : 1;
    for (let k = utf8Length(codePoint); k > 0; k--) {
      charStart.push(i);
      charEnd.push(i + width);
    }
    i += width;
  }
  const unitStart = (byte) => (byte < charStart.length ? charStart[byte] : word.length);
  const unitEnd = (byte) => (byte > 0 ? charEnd[Math.min(byte, charEnd.length) - 1] : 0);
  return {
    ids: symbols.ids,
    starts: symbols.starts.map(unitStart),
    ends: symbols.ends.map((end, k) => Math.max(unitEnd(end), unitStart(symbols.starts[k]))),
    inBytes: false,
  };
}

// One Map key per id pair: a number while both ids are below 2^21 (two million,
// more than any vocabulary has; the product stays an exact integer), else a string.
function pairKey(a, b) {
  return a < 0x200000 && b < 0x200000 ? a * 0x200000 + b : `${a} ${b}`;
}
