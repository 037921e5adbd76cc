// WordPiece (BERT): each word is cut greedily into the longest vocabulary
// pieces, left to right; every piece after the first carries the "##"
// continuing prefix. A word with any part that no piece covers, or longer
// than max_input_chars_per_word, becomes the single unknown token.
import {
  readBoolean, readCount, readOptionalString, readVocab, requireObject,
} from './spec.js';

/** The WordPiece model of a tokenizer.json "model" entry. */
export class WordPieceModel {
  /** @param {object} spec tokenizer.json "model" with type "WordPiece" */
  constructor(spec) {
    requireObject(spec, 'WordPiece model');
    const { tokenToId, idToToken } = readVocab(spec.vocab, 'WordPiece model');
    this.tokenToId = tokenToId;
    this.idToToken = idToToken;
    this.unkToken = readOptionalString(spec, 'unk_token', '[UNK]', 'WordPiece model');
    this.prefix = readOptionalString(spec, 'continuing_subword_prefix', '##', 'WordPiece model');
    this.maxInputChars = readCount(spec, 'max_input_chars_per_word', 100, 'WordPiece model');
    this.unkId = tokenToId.get(this.unkToken);
    if (this.unkId === undefined) {
      throw new Error(`WordPiece model unk_token ${JSON.stringify(this.unkToken)} is not in the vocab`);
    }
    // No piece is longer than this, so the search for the longest match never
    // needs to look further: each word costs O(length x longest piece), even
    // when a file sets max_input_chars_per_word absurdly high.
    this.longestPiece = 0;
    for (const token of tokenToId.keys()) this.longestPiece = Math.max(this.longestPiece, token.length);
  }

  /** Tokens of one word: [{ id, start, end }] in UTF-16 units of `word`. */
  tokenize(word) {
    if (word.length === 0) return [];
    const unknown = [{ id: this.unkId, start: 0, end: word.length }];
    let characters = 0;
    for (let i = 0; i < word.length; i += word.codePointAt(i) > 0xFFFF ? 2 : 1) characters++;
    if (characters > this.maxInputChars) return unknown;
    const tokens = [];
    let start = 0;
    while (start < word.length) {
      const prefix = start > 0 ? this.prefix : '';
      let end = Math.min(word.length, start + Math.max(0, this.longestPiece - prefix.length));
      let found = -1;
      while (end > start) {
        if (!isCutInsidePair(word, end)) {
          const id = this.tokenToId.get(prefix + word.slice(start, end));
          if (id !== undefined) {
            found = id;
            break;
          }
        }
        end -= 1;
      }
      if (found < 0) return unknown;
      tokens.push({ id: found, start, end });
      start = end;
    }
    return tokens;
  }
}

// True when `at` falls between the two halves of a surrogate pair.
function isCutInsidePair(text, at) {
  if (at <= 0 || at >= text.length) return false;
  const high = text.charCodeAt(at - 1);
  const low = text.charCodeAt(at);
  return high >= 0xD800 && high <= 0xDBFF && low >= 0xDC00 && low <= 0xDFFF;
}

/**
 * The WordPiece decoder: pieces joined, "##" pieces glued to the one before,
 * others after a space; with cleanup, spaces before punctuation and inside
 * common English contractions are removed, token by token, as Hugging Face
 * does.
 */
export function wordPieceDecoder(spec) {
  const prefix = readOptionalString(spec, 'prefix', '##', 'WordPiece decoder');
  const cleanup = readBoolean(spec, 'cleanup', true, 'WordPiece decoder');
  return (tokens) => tokens.map((token, i) => {
    let out = token;
    if (i !== 0) out = out.startsWith(prefix) ? out.slice(prefix.length) : ` ${out}`;
    return cleanup ? cleanUpTokenization(out) : out;
  });
}

const CLEANUPS = [
  [' .', '.'], [' ?', '?'], [' !', '!'], [' ,', ','], [" ' ", "'"], [" n't", "n't"], [" 'm", "'m"],
  [' do not', " don't"], [" 's", "'s"], [" 've", "'ve"], [" 're", "'re"],
];

// BERT's decode clean-up ("hello ." -> "hello.").
export function cleanUpTokenization(text) {
  return CLEANUPS.reduce((out, [from, to]) => out.split(from).join(to), text);
}
