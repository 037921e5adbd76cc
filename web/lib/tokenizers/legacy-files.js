// Older hub folders have no tokenizer.json: GPT-2's vocab.json + merges.txt,
// BERT's vocab.txt. Each is turned into the tokenizer.json that Hugging Face's
// converters (GPT2TokenizerFast, BertTokenizerFast) build from the same files
// with default settings, so one code path serves both.
import { describeValue } from './spec.js';

export function parseJsonText(text, what) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${what} is not valid JSON: ${error.message}`);
  }
}

/**
 * merges.txt: an optional "#version" line, then one "left right" merge per
 * line. A line that is not two tokens is an error naming its line number.
 */
function parseMergesText(text) {
  if (typeof text !== 'string') throw new TypeError(`mergesTxt must be a string, got ${describeValue(text)}`);
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop(); // the final newline
  const merges = [];
  lines.forEach((raw, index) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.startsWith('#version')) return;
    const parts = line.split(' ');
    if (parts.length !== 2 || parts[0] === '' || parts[1] === '') {
      throw new Error(`mergesTxt line ${index + 1} is not two tokens separated by one space: ${JSON.stringify(line)}`);
    }
    merges.push(parts);
  });
  return merges;
}

/** GPT-2's vocab.json (object or text) + merges.txt as a tokenizer.json object. */
export function gpt2TokenizerJson(vocabJson, mergesTxt) {
  const vocab = typeof vocabJson === 'string' ? parseJsonText(vocabJson, 'vocabJson') : vocabJson;
  if (vocab === null || typeof vocab !== 'object' || Array.isArray(vocab)) {
    throw new TypeError(`vocabJson must be an object mapping tokens to ids (or its JSON text), got ${describeValue(vocab)}`);
  }
  const endOfText = '<|endoftext|>';
  const added = Object.hasOwn(vocab, endOfText) ? [{
    id: vocab[endOfText], content: endOfText, special: true, normalized: true, lstrip: false, rstrip: false, single_word: false,
  }] : [];
  return {
    version: '1.0',
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE', vocab, merges: parseMergesText(mergesTxt), unk_token: null, continuing_subword_prefix: '',
      end_of_word_suffix: '', fuse_unk: false, byte_fallback: false,
    },
  };
}

const BERT_SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

/**
 * BERT's vocab.txt (one token per line, id = line number) as the tokenizer.json
 * of an uncased BERT: lowercasing and accent-stripping normalizer, whitespace
 * and punctuation pre-tokenizer, WordPiece, [CLS] ... [SEP].
 */
export function bertTokenizerJson(vocabTxt) {
  if (typeof vocabTxt !== 'string') throw new TypeError(`vocabTxt must be a string, got ${describeValue(vocabTxt)}`);
  const lines = vocabTxt.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const vocab = Object.create(null); // a "__proto__" line is a token like any other
  lines.forEach((line, id) => {
    vocab[line.replace(/\p{White_Space}+$/u, '')] = id; // Hugging Face trims the end of each line
  });
  for (const required of ['[UNK]', '[CLS]', '[SEP]']) {
    if (!Object.hasOwn(vocab, required)) throw new Error(`vocabTxt has no ${required} line, which BERT needs`);
  }
  return {
    version: '1.0',
    added_tokens: BERT_SPECIAL_TOKENS.filter((token) => Object.hasOwn(vocab, token)).map((token) => ({
      id: vocab[token], content: token, special: true, normalized: false, lstrip: false, rstrip: false, single_word: false,
    })),
    normalizer: {
      type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab,
    },
  };
}

/** tokenizer.json given as text, parsed; a clear Error when it is not JSON. */
export function parseTokenizerJsonText(text) {
  return parseJsonText(text, 'tokenizer.json text');
}
