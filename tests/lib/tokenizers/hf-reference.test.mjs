// Differential test against Hugging Face `tokenizers` itself (the Rust
// library, through its official Node binding, npm package "tokenizers", a
// devDependency whose package ships its native binaries): ids, offsets and
// decoded text for thousands of random texts over every tokenizer shape the
// other tests use. ATTNLENS_HF_TOKENIZERS may point at another installed copy.
import { describe, it } from 'node:test';
import {
  bertTokenizerJson, gpt2Files, gpt2TokenizerJson, llama3PreTokenizer, llamaTokenizerJson,
} from './fixtures.mjs';
import { assertSameAsHuggingFace, poolTexts } from './hf-compare.mjs';
import {
  gemmaTokenizerJson, qwen2TokenizerJson, robertaTokenizerJson, t5TokenizerJson, xlmrTokenizerJson,
} from './trained-fixtures.mjs';

describe('against Hugging Face tokenizers', () => {
  const texts = poolTexts(1500, 2024);
  const files = gpt2Files();
  const gpt2 = (change = () => {}) => {
    const json = gpt2TokenizerJson(files);
    change(json);
    return json;
  };

  it('GPT-2 byte-level BPE, with added-token flags', async () => {
    await assertSameAsHuggingFace(gpt2(), texts);
    await assertSameAsHuggingFace(gpt2((json) => json.added_tokens.push(
      { id: 50257, content: 'hello', lstrip: true, rstrip: true, normalized: true, special: false, single_word: false },
      { id: 50258, content: 'the', lstrip: false, rstrip: false, normalized: false, special: false, single_word: true },
      { id: 50259, content: '[MASK]', lstrip: true, rstrip: false, normalized: false, special: true, single_word: false },
    )), texts);
  });

  it('SmolLM- and Llama-3-style byte-level pre-tokenizers, Roberta processing', async () => {
    await assertSameAsHuggingFace(gpt2((json) => {
      json.pre_tokenizer = {
        type: 'Sequence',
        pretokenizers: [{ type: 'Digits', individual_digits: true },
          { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }],
      };
    }), texts);
    await assertSameAsHuggingFace(gpt2((json) => {
      json.pre_tokenizer = llama3PreTokenizer();
      json.model.ignore_merges = true;
    }), texts);
    await assertSameAsHuggingFace(gpt2((json) => {
      json.pre_tokenizer.add_prefix_space = true;
      json.post_processor = {
        type: 'RobertaProcessing', sep: ['</s>', 50256], cls: ['<s>', 50256], trim_offsets: true, add_prefix_space: true,
      };
    }), texts);
  });

  it('Unicode normalizers', async () => {
    await assertSameAsHuggingFace(gpt2((json) => {
      json.normalizer = {
        type: 'Sequence',
        normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }, { type: 'NFC' }, { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' }],
      };
    }), texts);
    // NFKC can compose a compatibility decomposition with a following mark
    // ("ﬁ" + U+0301 -> "fí"); Hugging Face then points "í" at the mark, this
    // library at "ﬁ". Ids agree; offsets are compared elsewhere.
    await assertSameAsHuggingFace(gpt2((json) => {
      json.normalizer = { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Lowercase' }, { type: 'Strip', strip_left: true, strip_right: true }] };
    }), texts, { offsets: false });
  });

  it('BERT WordPiece, uncased, cased and accent-keeping', async () => {
    await assertSameAsHuggingFace(bertTokenizerJson(), texts);
    await assertSameAsHuggingFace(bertTokenizerJson({ lowercase: false }), texts);
    await assertSameAsHuggingFace(bertTokenizerJson({ stripAccents: false }), texts);
  });

  it('Llama sentencepiece BPE, both forms, with and without unk and byte fallback', async () => {
    await assertSameAsHuggingFace(llamaTokenizerJson(), texts);
    await assertSameAsHuggingFace(llamaTokenizerJson({ metaspace: true }), texts);
    const noFallback = llamaTokenizerJson();
    noFallback.model.byte_fallback = false;
    await assertSameAsHuggingFace(noFallback, texts);
    noFallback.model.unk_token = null;
    await assertSameAsHuggingFace(noFallback, texts);
  });

  it('XLM-R-style Unigram: Precompiled + Replace normalizer, Metaspace, <s> $A </s>, <mask> with lstrip', async () => {
    const json = xlmrTokenizerJson();
    await assertSameAsHuggingFace(json, texts);
    // Long texts: graphemes are segmented in chunks of a few hundred units
    // (precompiled.js), so clusters (ZWJ families, flags, marks) cross chunk ends.
    const long = Array.from({ length: 40 }, (_, k) => texts.slice(k * 30, k * 30 + 30).join(k % 2 ? '👨‍👩‍👧' : 'e\u0301'));
    await assertSameAsHuggingFace(json, long);
    // Byte fallback instead of <unk>, and the Metaspace variants Llama-era files use.
    const bytes = xlmrTokenizerJson();
    bytes.model.byte_fallback = true;
    for (let byte = 0; byte < 256; byte++) bytes.model.vocab.push([`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`, 0]);
    bytes.decoder = { type: 'Sequence', decoders: [{ type: 'ByteFallback' }, bytes.decoder] };
    await assertSameAsHuggingFace(bytes, texts);
    json.pre_tokenizer = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false };
    await assertSameAsHuggingFace(json, texts);
    // What transformers' SpmConverter writes today: Precompiled, Strip right, Replace " {2,}" -> "▁".
    const [precompiled] = json.normalizer.normalizers;
    json.normalizer.normalizers = [precompiled, { type: 'Strip', strip_left: false, strip_right: true },
      { type: 'Replace', pattern: { Regex: ' {2,}' }, content: '▁' }];
    json.pre_tokenizer = { type: 'Metaspace', replacement: '▁', add_prefix_space: true };
    await assertSameAsHuggingFace(json, texts);
    // SentencePieceUnigramTokenizer's (the tokenizers library's own): Nmt, NFKC, Replace " {2,}" -> " ".
    json.normalizer.normalizers = [{ type: 'Nmt' }, { type: 'NFKC' }, { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }];
    await assertSameAsHuggingFace(json, texts, { offsets: false });
    json.normalizer.normalizers = [{ type: 'Nmt' }, { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }];
    await assertSameAsHuggingFace(json, texts);
  });

  it('T5-style Unigram: Precompiled alone, WhitespaceSplit + Metaspace, $A </s>', async () => {
    await assertSameAsHuggingFace(t5TokenizerJson(), texts);
  });

  it('RoBERTa: trained byte-level BPE, RobertaProcessing <s> … </s> with trim_offsets, <mask> with lstrip', async () => {
    await assertSameAsHuggingFace(robertaTokenizerJson(), texts);
    await assertSameAsHuggingFace(robertaTokenizerJson({ addPrefixSpace: true }), texts);
  });

  it('Qwen2-style: NFC, Split with its pattern, ByteLevel without regex, chat special tokens', async () => {
    const json = qwen2TokenizerJson();
    await assertSameAsHuggingFace(json, texts);
    const chat = texts.slice(0, 200).map((text, i) => `<|im_start|>user\n${text}<|im_end|>\n<|im_start|>assistant${i % 7 ? '' : '<|endoftext|>'}`);
    await assertSameAsHuggingFace(json, chat);
  });

  it('Gemma-style: sentencepiece BPE with byte fallback, Replace " " -> "▁", no pre-tokenizer, <bos> $A', async () => {
    await assertSameAsHuggingFace(gemmaTokenizerJson(), texts);
  });
});
