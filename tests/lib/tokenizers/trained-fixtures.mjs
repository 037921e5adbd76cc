// Tokenizers trained by Hugging Face `tokenizers` itself (its Node binding),
// laid out as the real files of XLM-R, T5, RoBERTa, Qwen2 and Gemma are
// (same model types, normalizers, pre-tokenizers, post-processors, decoders,
// special tokens), since those files cannot be downloaded here. Training on
// this repository's README plus a few lines of other scripts gives real
// vocabularies and scores; the tests then compare attnlens with the same
// library on text it was not trained on.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { huggingFace } from './hf-compare.mjs';

const README = new URL('../../../README.md', import.meta.url);
const EXTRA_LINES = [
  'Le café est très bon, naïve façade, über Straße, señor año.',
  '東京は日本の首都です。中文分词测试。한국어 문장입니다.',
  'Emoji 🤗 and 👍 and numbers 3.14 and 42, tabs\tand  double  spaces.',
];

function corpusFile(dir) {
  const file = join(dir, 'corpus.txt');
  writeFileSync(file, `${readFileSync(README, 'utf8')}\n${EXTRA_LINES.join('\n')}\n`);
  return file;
}

// Trains `model` (an empty Unigram or BPE) with `setUp(tokenizer)` applied,
// and returns the tokenizer.json it saves.
function train(model, setUp) {
  const dir = mkdtempSync(join(tmpdir(), 'attnlens-tokenizer-'));
  try {
    const tokenizer = new huggingFace.Tokenizer(model);
    setUp(tokenizer);
    tokenizer.train([corpusFile(dir)]);
    tokenizer.save(join(dir, 'tokenizer.json'));
    return JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const utf8 = (text) => [...new TextEncoder().encode(text)];

/**
 * A Precompiled normalizer's charsmap (base64) mapping each key to its
 * string, laid out as sentencepiece writes it: the trie's size, a darts-clone
 * double array over the keys' UTF-8 bytes (each node's children in a
 * 256-unit block of its own: wasteful, simple, valid), the NUL-ended strings.
 */
export function precompiledCharsmap(mapping) {
  const root = { children: new Map(), value: -1 };
  const strings = [];
  for (const [key, replacement] of mapping) {
    let node = root;
    for (const byte of utf8(key)) {
      if (!node.children.has(byte)) node.children.set(byte, { children: new Map(), value: -1 });
      node = node.children.get(byte);
    }
    node.value = strings.length;
    strings.push(...utf8(replacement), 0);
  }
  const units = [0];
  let blocks = 1;
  const place = (node, position) => {
    const base = 256 * blocks++;
    while (units.length < base + 256) units.push(0);
    units[position] |= ((position ^ base) << 10) | (node.value >= 0 ? 0x100 : 0);
    if (node.value >= 0) units[base] = node.value | 0x80000000;
    for (const [byte, child] of node.children) {
      units[base ^ byte] = byte;
      place(child, base ^ byte);
    }
  };
  place(root, 0);
  const bytes = new Uint8Array(4 + 4 * units.length + strings.length);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, 4 * units.length, true);
  units.forEach((unit, i) => view.setUint32(4 + 4 * i, unit >>> 0, true));
  bytes.set(strings, 4 + 4 * units.length);
  return Buffer.from(bytes).toString('base64');
}

/** A few of sentencepiece's nmt_nfkc rules, and its quirks: a key that is a prefix of a grapheme, a deletion, expansions. */
export const CHARSMAP_RULES = [
  ['ﬁ', 'fi'], ['①', '1'], ['Ⅻ', 'XII'], ['ｆ', 'f'], ['Ａ', 'A'], ['\u00a0', ' '], ['\u3000', ' '], ['\t', ' '],
  ['\n', ' '], ['e\u0301', 'é'], ['\u200b', ''], ['Å', 'A\u030a'], ['ß', 'ss'], ['n\u0303', 'ñ'], ['a', 'a'],
  ['²', '2'], ['…', '...'],
];

/**
 * A TemplateProcessing post-processor from Hugging Face's string form:
 * "<s> $A </s>", "$A:0 </s>:0 $B:1 </s>:1", with the special tokens' ids.
 */
export function templateProcessing(single, pair, ids) {
  const piece = (name) => {
    const [id, type = '0'] = name.split(':');
    const typeId = Number(type);
    return id.startsWith('$') ? { Sequence: { id: id.slice(1), type_id: typeId } } : { SpecialToken: { id, type_id: typeId } };
  };
  return {
    type: 'TemplateProcessing',
    single: single.split(' ').map(piece),
    pair: pair.split(' ').map(piece),
    special_tokens: Object.fromEntries(Object.entries(ids).map(([token, id]) => [token, { id: token, ids: [id], tokens: [token] }])),
  };
}

const SPECIAL = (id, content, extra = {}) => ({
  id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true, ...extra,
});

function trainedUnigram(preTokenizer) {
  return train(huggingFace.Unigram.empty(), (tokenizer) => tokenizer.setPreTokenizer(preTokenizer));
}

/**
 * XLM-R's layout: <s> <pad> </s> <unk> first (score 0), unk_id 3, Precompiled
 * + Replace(" {2,}") normalizer, Metaspace always, "<s> $A </s>", <mask> last
 * with lstrip.
 */
export function xlmrTokenizerJson() {
  const json = trainedUnigram(huggingFace.metaspacePreTokenizer());
  const specials = ['<s>', '<pad>', '</s>', '<unk>'];
  json.model.vocab = [...specials.map((token) => [token, 0]), ...json.model.vocab, ['<mask>', 0]];
  json.model.unk_id = 3;
  const mask = json.model.vocab.length - 1;
  json.added_tokens = [...specials.map((token, id) => SPECIAL(id, token)), SPECIAL(mask, '<mask>', { lstrip: true })];
  json.normalizer = {
    type: 'Sequence',
    normalizers: [{ type: 'Precompiled', precompiled_charsmap: precompiledCharsmap(CHARSMAP_RULES) },
      { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }],
  };
  json.pre_tokenizer = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true };
  json.post_processor = templateProcessing('<s> $A </s>', '<s> $A </s> </s> $B </s>', { '<s>': 0, '</s>': 2 });

  json.decoder = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true };
  return json;
}

/**
 * T5's layout: <pad> </s> <unk> first, unk_id 2, Precompiled alone,
 * WhitespaceSplit then Metaspace, "$A </s>".
 */
export function t5TokenizerJson() {
  const json = trainedUnigram(huggingFace.metaspacePreTokenizer());
  const specials = ['<pad>', '</s>', '<unk>'];
  json.model.vocab = [...specials.map((token) => [token, 0]), ...json.model.vocab];
  json.model.unk_id = 2;
  json.added_tokens = specials.map((token, id) => SPECIAL(id, token));
  json.normalizer = { type: 'Precompiled', precompiled_charsmap: precompiledCharsmap(CHARSMAP_RULES) };
  json.pre_tokenizer = {
    type: 'Sequence',
    pretokenizers: [{ type: 'WhitespaceSplit' }, { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true }],
  };
  json.post_processor = templateProcessing('$A </s>', '$A </s> $B </s>', { '</s>': 1 });

  json.decoder = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true };
  return json;
}

// A trained BPE's tokenizer.json with `specials` given the first ids, as
// RoBERTa's and Gemma's files have them.
function trainedBpe(setUp, specials) {
  const json = train(huggingFace.BPE.empty(), setUp);
  const shifted = Object.entries(json.model.vocab).map(([token, id]) => [token, id + specials.length]);
  json.model.vocab = Object.fromEntries([...specials.map((token, id) => [token, id]), ...shifted]);
  json.added_tokens = specials.map((token, id) => SPECIAL(id, token));
  return json;
}

/**
 * RoBERTa's layout: byte-level BPE, <s> <pad> </s> <unk> first, <mask> last
 * with lstrip, RobertaProcessing "<s> … </s>" with trim_offsets.
 */
export function robertaTokenizerJson({ addPrefixSpace = false } = {}) {
  const json = trainedBpe((tokenizer) => tokenizer.setPreTokenizer(huggingFace.byteLevelPreTokenizer(false)),
    ['<s>', '<pad>', '</s>', '<unk>']);
  const mask = Object.keys(json.model.vocab).length;
  json.model.vocab['<mask>'] = mask;
  json.added_tokens.push(SPECIAL(mask, '<mask>', { lstrip: true }));
  json.pre_tokenizer = {
    type: 'ByteLevel', add_prefix_space: addPrefixSpace, trim_offsets: true, use_regex: true,
  };
  json.post_processor = {
    type: 'RobertaProcessing', sep: ['</s>', 2], cls: ['<s>', 0], trim_offsets: true, add_prefix_space: addPrefixSpace,
  };
  json.decoder = {
    type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true,
  };
  return json;
}

/** Qwen2's pre-tokenizer pattern, as its tokenizer.json spells it. */
export const QWEN2_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/**
 * Qwen2's layout: NFC, Split(its pattern, Isolated) then ByteLevel without
 * its own regex, ByteLevel post-processor and decoder, chat special tokens.
 */
export function qwen2TokenizerJson() {
  const preTokenizer = {
    type: 'Sequence',
    pretokenizers: [
      { type: 'Split', pattern: { Regex: QWEN2_PATTERN }, behavior: 'Isolated', invert: false },
      {
        type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false,
      },
    ],
  };
  const json = trainedBpe((tokenizer) => tokenizer.setPreTokenizer(huggingFace.byteLevelPreTokenizer(false)), []);
  const size = Object.keys(json.model.vocab).length;
  json.added_tokens = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'].map((token, k) => {
    json.model.vocab[token] = size + k;
    return SPECIAL(size + k, token);
  });
  json.normalizer = { type: 'NFC' };
  json.pre_tokenizer = preTokenizer;
  json.post_processor = {
    type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false,
  };
  json.decoder = {
    type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false,
  };
  return json;
}

/**
 * Gemma's layout: sentencepiece BPE with byte_fallback, the Replace " " -> "▁"
 * normalizer and no pre-tokenizer (a whole line is one word), <pad> <eos>
 * <bos> <unk> first, "<bos> $A", and the Replace / ByteFallback / Fuse decoder.
 */
export function gemmaTokenizerJson() {
  const json = trainedBpe((tokenizer) => tokenizer.setNormalizer(huggingFace.replace(' ', '▁')),
    ['<pad>', '<eos>', '<bos>', '<unk>']);
  let next = Object.keys(json.model.vocab).length;
  for (let byte = 0; byte < 256; byte++) json.model.vocab[`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`] = next++;
  json.model.vocab['<start_of_turn>'] = next;
  json.added_tokens.push(SPECIAL(next, '<start_of_turn>'));
  Object.assign(json.model, { unk_token: '<unk>', byte_fallback: true, fuse_unk: true });
  json.normalizer = { type: 'Replace', pattern: { String: ' ' }, content: '▁' };
  json.pre_tokenizer = null;
  json.post_processor = templateProcessing('<bos> $A', '<bos> $A <bos>:1 $B:1', { '<bos>': 2 });

  json.decoder = {
    type: 'Sequence',
    decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }],
  };
  return json;
}
