// Added and special tokens ("<|endoftext|>", "[CLS]", "<s>"): found in the
// text before anything else runs, and kept whole, each mapping straight to
// its id.
//
// As in Hugging Face, tokens marked normalized:false (special tokens usually)
// are matched in the raw text first; the pieces between them are normalized,
// and then tokens marked normalized:true are matched in the normalized text
// (so a lowercasing model still finds "Yesterday" for an added "yesterday").
// Matching is leftmost-longest: at the first position where any token starts,
// the longest one wins. The flags:
//   single_word  match only when not glued to a word character on either side
//   lstrip       the match takes the whitespace before it
//   rstrip       the match takes the whitespace after it
import { describeValue, readBoolean, requireId } from './spec.js';
import { WHITESPACE, WORD_CHARACTER } from './unicode.js';

/** One entry of tokenizer.json's "added_tokens", checked. */
function readAddedToken(entry, index) {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    throw new TypeError(`added_tokens[${index}] must be an object, got ${describeValue(entry)}`);
  }
  const where = `added_tokens[${index}]`;
  if (typeof entry.content !== 'string' || entry.content.length === 0) {
    throw new TypeError(`${where} "content" must be a non-empty string, got ${describeValue(entry.content)}`);
  }
  const special = readBoolean(entry, 'special', false, where);
  return {
    id: requireId(entry.id, `${where} "id"`),
    content: entry.content,
    special,
    normalized: readBoolean(entry, 'normalized', !special, where),
    lstrip: readBoolean(entry, 'lstrip', false, where),
    rstrip: readBoolean(entry, 'rstrip', false, where),
    singleWord: readBoolean(entry, 'single_word', false, where),
  };
}

// A character trie over UTF-16 units, for leftmost-longest matching in time
// proportional to text length x longest token.
class Trie {
  constructor() {
    this.root = new Map();
    this.size = 0;
  }

  add(pattern, token) {
    let node = this.root;
    for (let i = 0; i < pattern.length; i++) {
      const unit = pattern.charCodeAt(i);
      let child = node.get(unit);
      if (!child) {
        child = new Map();
        node.set(unit, child);
      }
      node = child;
    }
    if (!node.has('token')) this.size++;
    if (!node.has('token')) node.set('token', token); // the first entry with this text wins
  }

  // The longest token starting at `at`: [token, end] or null.
  longestAt(text, at) {
    let node = this.root;
    let best = null;
    for (let i = at; i < text.length; i++) {
      node = node.get(text.charCodeAt(i));
      if (!node) break;
      const token = node.get('token');
      if (token) best = [token, i + 1];
    }
    return best;
  }
}

function codePointBefore(text, at) {
  if (at <= 0) return '';
  const low = text.charCodeAt(at - 1);
  if (at >= 2 && low >= 0xDC00 && low <= 0xDFFF) {
    const high = text.charCodeAt(at - 2);
    if (high >= 0xD800 && high <= 0xDBFF) return text.slice(at - 2, at);
  }
  return text[at - 1];
}

function codePointAt(text, at) {
  return at < text.length ? String.fromCodePoint(text.codePointAt(at)) : '';
}

/** The added-token vocabulary of a tokenizer. */
export class AddedTokens {
  /**
   * @param {Array<object>|undefined} entries tokenizer.json "added_tokens"
   * @param {(text: string) => string} normalize the tokenizer's normalizer, for normalized tokens
   * @param {Map<string, number>} modelVocab the model's token -> id
   */
  constructor(entries, normalize, modelVocab) {
    if (entries !== undefined && entries !== null && !Array.isArray(entries)) {
      throw new TypeError(`"added_tokens" must be an array, got ${describeValue(entries)}`);
    }
    this.byId = new Map();
    this.byContent = new Map();
    this.specialContents = new Set();
    this.assignIds((entries ?? []).map(readAddedToken), modelVocab);
    this.rawTrie = new Trie();
    this.normalizedTrie = new Trie();
    for (const token of this.byContent.values()) {
      if (token.normalized) {
        const pattern = normalize(token.content);
        if (pattern.length > 0) this.normalizedTrie.add(pattern, token);
      } else {
        this.rawTrie.add(token.content, token);
      }
    }
  }

  // Ids as Hugging Face gives them when it loads the file: a token already in
  // the model's vocabulary (or added before) keeps that id; a new one gets the
  // next id after the vocabulary. The "id" written in the file is only a
  // check for Hugging Face (it warns when it differs), so it is not used
  // here either: real files always agree, and when one does not, the ids
  // below are the ones Hugging Face encodes with.
  assignIds(tokens, modelVocab) {
    const modelSize = modelVocab.size;
    let largest = -1;
    for (const token of tokens) {
      if (token.special) this.specialContents.add(token.content);
      let id = this.byContent.get(token.content)?.id ?? modelVocab.get(token.content);
      if (id === undefined) id = largest >= modelSize || modelSize === 0 ? largest + 1 : modelSize;
      largest = Math.max(largest, id);
      const assigned = { ...token, id };
      this.byContent.set(token.content, assigned);
      this.byId.set(id, assigned);
    }
  }

  /** True when the id belongs to a special added token (skipped by decode when asked). */
  isSpecial(id) {
    const token = this.byId.get(id);
    return token !== undefined && this.specialContents.has(token.content);
  }

  /**
   * Splits a NormalizedText around the added tokens it holds: returns
   * [{ text, token }] where token is the added token of that piece or null.
   * `normalized` picks the set: tokens matched after normalization or before.
   */
  split(piece, normalized) {
    const trie = normalized ? this.normalizedTrie : this.rawTrie;
    if (trie.size === 0 || piece.length === 0) return [{ text: piece, token: null }];
    const text = piece.text;
    const out = [];
    let consumed = 0; // end of the last piece emitted
    for (let at = 0; at < text.length;) {
      const found = trie.longestAt(text, at);
      if (!found) {
        at += 1;
        continue;
      }
      const [token] = found;
      let start = at;
      let stop = found[1];
      at = stop; // matches never overlap; the scan goes on after this one even if it is discarded
      if (token.singleWord) {
        const before = codePointBefore(text, start);
        const after = codePointAt(text, stop);
        if ((before && WORD_CHARACTER.test(before)) || (after && WORD_CHARACTER.test(after))) continue;
      }
      if (start < consumed) continue; // inside whitespace an rstrip already took
      if (token.lstrip) {
        while (start > consumed && WHITESPACE.test(codePointBefore(text, start))) {
          start -= codePointBefore(text, start).length;
        }
      }
      if (token.rstrip) {
        while (stop < text.length && WHITESPACE.test(codePointAt(text, stop))) stop += codePointAt(text, stop).length;
        at = Math.max(at, stop);
      }
      if (consumed < start) out.push({ text: piece.slice(consumed, start), token: null });
      out.push({ text: piece.slice(start, stop), token });
      consumed = stop;
    }
    if (consumed < text.length) out.push({ text: piece.slice(consumed, text.length), token: null });
    return out;
  }
}
