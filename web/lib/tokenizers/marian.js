// Marian (opus-mt) tokenizers, which no tokenizer.json describes: a folder
// holds source.spm and target.spm (sentencepiece models) and vocab.json (one
// piece -> id table for both sides). This does what transformers'
// MarianTokenizer does with them:
//   - text is split on the special tokens (</s>, <unk>, <pad> and any
//     additional_special_tokens), each kept whole, as the slow tokenizers' trie
//     does; no whitespace is stripped around them;
//   - in each other part, a leading language code (">>de<<": the part starts
//     with ">>", up to its first "<<") is one token, and the rest goes through
//     the sentencepiece model: source.spm for the source text, target.spm for
//     the target text (the decoder's side);
//   - a piece's id is its vocab.json entry, <unk>'s when it has none (an
//     unknown stretch of text is looked up as the text itself, as
//     sentencepiece returns it);
//   - </s> is appended;
//   - decode: special tokens are left out or written with a space after them,
//     the pieces between them are decoded as target.spm's decode_pieces does,
//     every "▁" becomes a space and the ends are stripped as Python's
//     str.strip() strips them; clean_up_tokenization_spaces as its config says.
// Sentencepiece's own tokenization is the tokenizer.json transformers'
// converter would write for the .model file (sentencepiece-model.js), without
// its control pieces: sentencepiece never reads "<s>" or "</s>" in text.
import { parseJsonText } from './legacy-files.js';
import { precompiledNormalizer } from './precompiled.js';
import { METASPACE, sentencepieceLabel } from './sentencepiece.js';
import { sentencepieceTokenizerJson } from './sentencepiece-model.js';
import { describeValue, readVocab } from './spec.js';
import { tokenContent } from './tokenizer-config.js';
import { withoutLoneSurrogates } from './unicode.js';
import { cleanUpTokenization } from './wordpiece.js';

const where = 'Marian tokenizer';
// What sentencepiece writes for its <unk> piece when decoding.
const UNKNOWN_SURFACE = ' \u2047 ';
// Python's str.strip(): the characters str.isspace() accepts, at either end.
const PYTHON_STRIP = /^[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

function readBytes(value, key) {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (value instanceof Uint8Array) return value;
  throw new TypeError(`${where}: ${key} must be the bytes of a sentencepiece model (Uint8Array or ArrayBuffer), `
    + `got ${describeValue(value)}`);
}

/** One side's sentencepiece model: its pieces for a text, and decode_pieces. */
class SentencepieceSide {
  constructor(bytes, file, buildTokenizer) {
    const json = sentencepieceTokenizerJson(bytes);
    if (json.model.byte_fallback) throw new Error(`${where}: ${file} uses byte fallback, which opus-mt models do not; attnlens does not read it`);
    const unkPiece = json.model.vocab[json.model.unk_id][0];
    // piece -> 'control' | 'unknown' | 'user defined' | 'normal', for decode_pieces.
    this.types = new Map(json.model.vocab.map(([piece]) => [piece, 'normal']));
    for (const token of json.added_tokens) {
      this.types.set(token.content, token.content === unkPiece ? 'unknown' : token.special ? 'control' : 'user defined');
    }
    // sentencepiece never makes control pieces or <unk> from text, where
    // Hugging Face's Unigram lattice would: they get names no text holds (a
    // lone surrogate, which text never keeps), so ids stay in place. Only
    // user-defined pieces are matched whole in text.
    const hidden = new Set(json.added_tokens.filter((token) => token.special).map((token) => token.id));
    const vocab = json.model.vocab.map(([piece, score], id) => [hidden.has(id) ? `\uD800${id}` : piece, score]);
    // remove_extra_whitespaces strips and squeezes U+0020 only (what the
    // charsmap left as a space; trailing "▁" too, as sentencepiece strips
    // after escaping), not every Unicode space as the converter's Strip; and
    // the charsmap applies as sentencepiece applies it (precompiled.js).
    const extraSpaces = json.normalizer.normalizers.some((step) => step.type === 'Strip');
    const whitespace = extraSpaces ? [{ type: 'Replace', pattern: { Regex: '^ +|[ ▁]+$' }, content: '' },
      { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] : [];
    // The dummy prefix goes before any text, a "▁" it starts with too (Metaspace would not add one there).
    const dummyPrefix = json.pre_tokenizer.prepend_scheme === 'always';
    this.tokenizer = buildTokenizer({
      ...json,
      normalizer: { type: 'Sequence', normalizers: [...whitespace, ...(dummyPrefix ? [{ type: 'Prepend', prepend: METASPACE }] : [])] },
      pre_tokenizer: { ...json.pre_tokenizer, prepend_scheme: 'never' },
      model: { ...json.model, vocab },
      added_tokens: json.added_tokens.filter((token) => !token.special),
    });
    const charsmap = json.normalizer.normalizers.find((step) => step.type === 'Precompiled');
    if (charsmap) {
      const rules = precompiledNormalizer(charsmap, { sentencepiece: true });
      const spaces = this.tokenizer.normalizer ?? ((text) => text);
      this.tokenizer.normalizer = (text) => spaces(rules(text));
    }
    this.unkId = json.model.unk_id;
    this.bosSpace = dummyPrefix || extraSpaces;
  }

  /** Pieces as sentencepiece returns them (an unknown stretch as its text) and offsets into `text`. */
  encode(text) {
    const { ids, values, surfaces, offsets } = this.tokenizer.pieces(text);
    return { pieces: ids.map((id, i) => (id === this.unkId ? surfaces[i] : values[i])), offsets };
  }

  // sentencepiece's DecodePieces: control pieces vanish, <unk> reads " ⁇ ",
  // a piece the model lacks is kept as written, and the first piece that
  // writes anything loses one leading "▁" (the dummy prefix).
  decodePieces(pieces) {
    let out = '';
    for (const piece of pieces) {
      const type = this.types.get(piece);
      if (type === 'control') continue;
      if (type === 'unknown') out += UNKNOWN_SURFACE;
      else if (type === undefined) out += piece;
      else out += (out === '' && this.bosSpace && piece.startsWith(METASPACE) ? piece.slice(1) : piece).split(METASPACE).join(' ');
    }
    return out;
  }
}

function readConfig(config) {
  if (config === undefined || config === null) return {};
  if (typeof config !== 'object' || Array.isArray(config)) {
    throw new TypeError(`${where}: tokenizerConfig must be an object, got ${describeValue(config)}`);
  }
  if (config.separate_vocabs === true) {
    throw new Error(`${where}: tokenizer_config.json has separate_vocabs (a target_vocab.json for the decoder), `
      + 'which attnlens does not read; opus-mt models share one vocab.json');
  }
  return config;
}

/** A tokenizer for an opus-mt folder; made by createTokenizer (index.js) from { sourceSpm, targetSpm, vocabJson }. */
export class MarianTokenizer {
  /**
   * @param {{ sourceSpm: Uint8Array|ArrayBuffer, targetSpm: Uint8Array|ArrayBuffer, vocabJson: object|string }} files
   * @param {object} [config] tokenizer_config.json
   * @param {(json: object) => import('./pipeline.js').Tokenizer} buildTokenizer createTokenizer for a tokenizer.json
   */
  constructor({ sourceSpm, targetSpm, vocabJson }, config, buildTokenizer) {
    const settings = readConfig(config);
    const vocab = typeof vocabJson === 'string' ? parseJsonText(vocabJson, 'vocabJson') : vocabJson;
    ({ tokenToId: this.tokenToId, idToToken: this.idToToken } = readVocab(vocab, `${where} vocab.json`));
    const idOf = (key, fallback) => {
      const content = tokenContent(settings[key], fallback);
      if (!this.tokenToId.has(content)) throw new Error(`${where}: vocab.json has no ${JSON.stringify(content)} (the ${key})`);
      return this.tokenToId.get(content);
    };
    this.unkId = idOf('unk_token', '<unk>');
    this.eosId = idOf('eos_token', '</s>');
    const special = [['unk_token', '<unk>'], ['eos_token', '</s>'], ['pad_token', '<pad>']]
      .map(([key, fallback]) => tokenContent(settings[key], fallback));
    const additional = Array.isArray(settings.additional_special_tokens) ? settings.additional_special_tokens.map((token) => tokenContent(token)) : [];
    // Tokens that are special and in the vocabulary: matched whole in text, skipped when decoding.
    this.specialTokens = [...new Set([...special, ...additional])].filter((token) => token && this.tokenToId.has(token));
    this.specialIds = new Set(this.specialTokens.map((token) => this.tokenToId.get(token)));
    this.cleanUp = settings.clean_up_tokenization_spaces === true;
    this.source = new SentencepieceSide(readBytes(sourceSpm, 'sourceSpm'), 'source.spm', buildTokenizer);
    this.target = new SentencepieceSide(readBytes(targetSpm, 'targetSpm'), 'target.spm', buildTokenizer);
    this.kind = 'marian';
    this.vocabSize = Math.max(...this.idToToken.keys()) + 1;
    this.labels = new Map();
  }

  // The text cut at special tokens: leftmost first, the longest there.
  splitSpecial(text) {
    const parts = [];
    let start = 0;
    for (let at = 0; at < text.length;) {
      let found = null;
      for (const token of this.specialTokens) {
        if ((found === null || token.length > found.length) && text.startsWith(token, at)) found = token;
      }
      if (found === null) {
        at += 1;
        continue;
      }
      if (at > start) parts.push({ text: text.slice(start, at), start });
      parts.push({ text: found, start: at, special: true });
      at += found.length;
      start = at;
    }
    if (start < text.length) parts.push({ text: text.slice(start), start });
    return parts;
  }

  encodeWith(side, text) {
    if (typeof text !== 'string') throw new TypeError(`encode needs a string, got ${describeValue(text)}`);
    const ids = [];
    const offsets = [];
    const push = (piece, start, end) => {
      ids.push(this.tokenToId.get(piece) ?? this.unkId);
      offsets.push([start, end]);
    };
    for (const part of this.splitSpecial(withoutLoneSurrogates(text))) {
      let { text: rest, start } = part;
      if (part.special) {
        push(rest, start, start + rest.length);
        continue;
      }
      const codeEnd = rest.startsWith('>>') ? rest.indexOf('<<') : -1;
      if (codeEnd >= 0) {
        push(rest.slice(0, codeEnd + 2), start, start + codeEnd + 2);
        start += codeEnd + 2;
        rest = rest.slice(codeEnd + 2);
      }
      const { pieces, offsets: pieceOffsets } = side.encode(rest);
      pieces.forEach((piece, i) => push(piece, start + pieceOffsets[i][0], start + pieceOffsets[i][1]));
    }
    ids.push(this.eosId);
    offsets.push([0, 0]);
    return { ids: Int32Array.from(ids), tokens: ids.map((id) => this.tokenText(id)), offsets };
  }

  /** The source text's ids (source.spm), with </s>; offsets are UTF-16 [start, end) into `text`. */
  encode(text) {
    return this.encodeWith(this.source, text);
  }

  /** The target text's ids (target.spm), with </s>, as transformers' text_target gives them. */
  encodeTarget(text) {
    return this.encodeWith(this.target, text);
  }

  tokenOf(id, at) {
    if (!Number.isInteger(id) || id < 0) throw new RangeError(`${at}: token ids are non-negative integers, got ${describeValue(id)}`);
    const token = this.idToToken.get(id);
    if (token === undefined) throw new RangeError(`${at}: id ${id} has no token in this tokenizer (ids run from 0 to ${this.vocabSize - 1})`);
    return token;
  }

  /** Text for ids, read with target.spm (what the decoder writes); special tokens kept unless skipSpecialTokens. */
  decode(ids, { skipSpecialTokens = false } = {}) {
    if (ids === null || typeof ids !== 'object' || typeof ids.length !== 'number') {
      throw new TypeError(`decode needs an array of ids, got ${describeValue(ids)}`);
    }
    let out = '';
    let run = [];
    for (let i = 0; i < ids.length; i++) {
      const token = this.tokenOf(ids[i], `decode ids[${i}]`);
      if (!this.specialIds.has(ids[i])) run.push(token);
      else if (!skipSpecialTokens) {
        out += `${this.target.decodePieces(run)}${token} `;
        run = [];
      }
    }
    out = (out + this.target.decodePieces(run)).split(METASPACE).join(' ').replace(PYTHON_STRIP, '');
    return this.cleanUp ? cleanUpTokenization(out) : out;
  }

  /** A readable label for one id: "▁Haus" -> " Haus"; special tokens and language codes as written. */
  tokenText(id) {
    let text = this.labels.get(id);
    if (text === undefined) {
      const token = this.tokenOf(id, 'tokenText');
      text = this.specialIds.has(id) ? token : sentencepieceLabel(token, METASPACE, false);
      this.labels.set(id, text);
    }
    return text;
  }
}
