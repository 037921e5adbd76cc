// WordLevel: every pre-tokenized word is looked up whole; a word missing from
// the vocabulary becomes unk_token (the sort-gpt2 test model's digits are
// this kind).
import { readOptionalString, readVocab, requireObject } from './spec.js';

/** The WordLevel model of a tokenizer.json "model" entry. */
export class WordLevelModel {
  /** @param {object} spec tokenizer.json "model" with type "WordLevel" */
  constructor(spec) {
    requireObject(spec, 'WordLevel model');
    const { tokenToId, idToToken } = readVocab(spec.vocab, 'WordLevel model');
    this.tokenToId = tokenToId;
    this.idToToken = idToToken;
    this.unkToken = readOptionalString(spec, 'unk_token', null, 'WordLevel model');
    this.unkId = this.unkToken === null ? undefined : tokenToId.get(this.unkToken);
  }

  /** The token of one word: [{ id, start, end }] in UTF-16 units of `word`. */
  tokenize(word) {
    if (word.length === 0) return [];
    const id = this.tokenToId.get(word) ?? this.unkId;
    if (id === undefined) {
      const shown = word.length > 40 ? `${word.slice(0, 40)}…` : word;
      throw new Error(`WordLevel model: ${JSON.stringify(shown)} is not in the vocab and the model has no `
        + 'unk_token in its vocab');
    }
    return [{ id, start: 0, end: word.length }];
  }
}
