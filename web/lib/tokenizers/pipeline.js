// The Tokenizer: Hugging Face's pipeline, one stage per module.
//
//   text ─ added tokens (raw) ─ normalizer ─ added tokens (normalized)
//        ─ pre-tokenizer ─ model (per word) ─ post-processor ─ ids
//
// Every stage keeps each piece's original offsets (normalized-text.js), so
// the result's offsets index the caller's string in UTF-16 units.
import { NormalizedText } from './normalized-text.js';
import { describeValue } from './spec.js';
import { withoutLoneSurrogates } from './unicode.js';

/** A ready tokenizer; made by createTokenizer (index.js). */
export class Tokenizer {
  /**
   * @param {object} parts
   * @param {string} parts.kind 'byte-level-bpe' | 'wordpiece' | 'word-level' | 'sentencepiece-bpe' | 'unigram'
   * @param {{ tokenize(word: string): Array<{id: number, start: number, end: number}>, idToToken: Map<number, string> }} parts.model
   * @param {import('./added-tokens.js').AddedTokens} parts.addedTokens
   * @param {Function|null} parts.normalizer NormalizedText -> NormalizedText
   * @param {Function|null} parts.preTokenizer NormalizedText -> NormalizedText[]
   * @param {Function|null} parts.postProcessor { ids, values, offsets, text } -> same
   * @param {Function|null} parts.decoder string[] -> string[]
   * @param {(value: string) => string} parts.label readable text of a model token
   */
  constructor({
    kind, model, addedTokens, normalizer, preTokenizer, postProcessor, decoder, label,
  }) {
    this.kind = kind;
    this.model = model;
    this.addedTokens = addedTokens;
    this.normalizer = normalizer;
    this.preTokenizer = preTokenizer;
    this.postProcessor = postProcessor;
    this.decoder = decoder;
    this.label = label;
    let largest = -1;
    for (const id of model.idToToken.keys()) largest = Math.max(largest, id);
    for (const id of addedTokens.byId.keys()) largest = Math.max(largest, id);
    this.labels = new Map();
    /** One past the largest id: the rows an embedding matrix for this tokenizer needs. */
    this.vocabSize = largest + 1;
  }

  /**
   * Tokenizes `text` as Hugging Face `tokenizers` does with its default special
   * tokens.
   * @param {string} text
   * @returns {{ ids: Int32Array, tokens: string[], offsets: Array<[number, number]> }}
   *   tokens are readable labels; offsets are UTF-16 [start, end) into `text`,
   *   [0, 0] for special tokens the post-processor added
   */
  encode(text) {
    let encoding = this.pieces(text);
    if (this.postProcessor) encoding = this.postProcessor(encoding);
    return {
      ids: Int32Array.from(encoding.ids),
      tokens: encoding.ids.map((id) => this.tokenText(id)),
      offsets: encoding.offsets,
    };
  }

  /**
   * The tokens of `text` before the post-processor: ids, vocabulary strings
   * (values), the normalized text each token covers (surfaces: what an
   * unknown token stood for) and UTF-16 offsets into `text`.
   * @param {string} text
   * @returns {{ ids: number[], values: string[], surfaces: string[], offsets: Array<[number, number]>, text: string }}
   */
  pieces(text) {
    if (typeof text !== 'string') throw new TypeError(`encode needs a string, got ${describeValue(text)}`);
    const clean = withoutLoneSurrogates(text);
    const root = NormalizedText.fromOriginal(clean);
    const ids = [];
    const values = [];
    const surfaces = [];
    const offsets = [];
    const pieces = this.addedTokens.split(root, false).flatMap((piece) => {
      if (piece.token) return [piece];
      const normalized = this.normalizer ? this.normalizer(piece.text) : piece.text;
      return this.addedTokens.split(normalized, true);
    });
    for (const piece of pieces) {
      if (piece.token) {
        ids.push(piece.token.id);
        // The matched text, with any whitespace lstrip / rstrip took, as
        // Hugging Face keeps it: offset trimming then leaves that out.
        values.push(piece.text.text);
        surfaces.push(piece.text.text);
        offsets.push(piece.text.originalRange(0, piece.text.length));
        continue;
      }
      const words = this.preTokenizer ? this.preTokenizer(piece.text) : [piece.text];
      for (const word of words) {
        for (const token of this.model.tokenize(word.text)) {
          ids.push(token.id);
          values.push(this.model.idToToken.get(token.id));
          surfaces.push(word.text.slice(token.start, token.end));
          offsets.push(word.originalRange(token.start, token.end));
        }
      }
    }
    return {
      ids, values, surfaces, offsets, text: clean,
    };
  }

  // The vocabulary string of an id (added tokens first, as Hugging Face looks them up).
  tokenOf(id, where) {
    if (!Number.isInteger(id) || id < 0) {
      throw new RangeError(`${where}: token ids are non-negative integers, got ${describeValue(id)}`);
    }
    const added = this.addedTokens.byId.get(id);
    if (added) return added.content;
    const token = this.model.idToToken.get(id);
    if (token === undefined) {
      throw new RangeError(`${where}: id ${id} has no token in this tokenizer (ids run from 0 to ${this.vocabSize - 1})`);
    }
    return token;
  }

  /**
   * Text for ids. Special tokens are kept unless skipSpecialTokens (the
   * default of `transformers`' decode).
   * @param {ArrayLike<number>} ids
   * @param {{ skipSpecialTokens?: boolean }} [options]
   * @returns {string}
   */
  decode(ids, { skipSpecialTokens = false } = {}) {
    if (ids === null || typeof ids !== 'object' || typeof ids.length !== 'number') {
      throw new TypeError(`decode needs an array of ids, got ${describeValue(ids)}`);
    }
    const tokens = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      const token = this.tokenOf(id, `decode ids[${i}]`);
      if (skipSpecialTokens && this.addedTokens.isSpecial(id)) continue;
      tokens.push(token);
    }
    return this.decoder ? this.decoder(tokens).join('') : tokens.join(' ');
  }

  /**
   * A readable label for one id: "Ġcafé" -> " café", "▁the" -> " the",
   * "##ing" stays, half a UTF-8 character -> "\xF0\x9F", special tokens as
   * written ("[CLS]", "<|endoftext|>").
   * @param {number} id
   * @returns {string}
   */
  tokenText(id) {
    let text = this.labels.get(id);
    if (text === undefined) {
      const token = this.tokenOf(id, 'tokenText');
      text = this.addedTokens.byId.has(id) ? token : this.label(token);
      this.labels.set(id, text); // at most one entry per vocabulary id
    }
    return text;
  }
}
