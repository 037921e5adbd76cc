// Hostile text must not hang and must come out sane: very long words (a
// single GPT-2 "word" can be a megabyte of one character class), 100k emoji,
// lone surrogates, NUL bytes, endless whitespace. Byte-level BPE merges a word
// with a heap (O(n log n), see bpe.js), so none of these is slow; each test
// still has a time limit so a regression fails instead of hanging.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTokenizer } from '../../../web/lib/tokenizers/index.js';
import {
  bertTokenizerJson, gpt2Files, gpt2TokenizerJson, llama3PreTokenizer, llamaTokenizerJson,
} from './fixtures.mjs';
import { xlmrTokenizerJson } from './trained-fixtures.mjs';

const files = gpt2Files();
const gpt2 = createTokenizer(gpt2TokenizerJson(files));
const bert = createTokenizer(bertTokenizerJson());
const llama = createTokenizer(llamaTokenizerJson());
const LIMIT = { timeout: 30000 };

// Every offset inside the text, in order (byte pieces of a character share its range).
function assertSaneOffsets(text, offsets) {
  for (const [start, end] of offsets) assert.ok(start >= 0 && start <= end && end <= text.length);
}

describe('hostile input', () => {
  it('a 200 000-letter word (one GPT-2 pre-token)', LIMIT, () => {
    const text = 'a'.repeat(200000);
    const { ids, offsets } = gpt2.encode(text);
    assert.equal(gpt2.decode(ids), text);
    assertSaneOffsets(text, offsets);
    // The same as the reference on a word it can still handle.
    const shorter = 'ab'.repeat(1000);
    assert.deepEqual([...gpt2.encode(shorter).ids], files.reference.encode(shorter));
  });

  it('100 000 emoji, and 20 000 ZWJ families', LIMIT, () => {
    for (const text of ['🤗'.repeat(100000), '👨‍👩‍👧'.repeat(20000)]) {
      const { ids, offsets } = gpt2.encode(text);
      assert.equal(gpt2.decode(ids), text);
      assertSaneOffsets(text, offsets);
      assert.equal(llama.decode(llama.encode(text.slice(0, 20000)).ids, { skipSpecialTokens: true }), text.slice(0, 20000));
      assert.equal(bert.encode(text).ids.length >= 2, true);
    }
  });

  it('lone surrogates read as U+FFFD, keeping every offset in place', LIMIT, () => {
    const text = `a\uD800b\uDC00c${'\uD83D'.repeat(1000)}`;
    const clean = text.replace(/\p{Cs}/gu, '\uFFFD');
    for (const tokenizer of [gpt2, bert, llama]) {
      const got = tokenizer.encode(text);
      assert.deepEqual(got, tokenizer.encode(clean));
      assertSaneOffsets(text, got.offsets);
    }
    assert.equal(gpt2.decode(gpt2.encode(text).ids), clean);
  });

  it('NUL and other control characters', LIMIT, () => {
    const text = `x${'\u0000'.repeat(50000)}\u0001\u001f\u007f y`;
    assert.equal(gpt2.decode(gpt2.encode(text).ids), text);
    assert.equal(llama.decode(llama.encode(text).ids, { skipSpecialTokens: true }), text);
    // BERT's clean-up removes control characters.
    assert.deepEqual([...bert.encode(text).ids], [2, 1, 1, 3]); // [CLS] x y [SEP] -> [UNK] [UNK]
  });

  it('Llama 3\'s Split pattern (backtracking alternatives) on long whitespace and symbol runs', LIMIT, () => {
    const json = gpt2TokenizerJson(files);
    json.pre_tokenizer = llama3PreTokenizer();
    const tokenizer = createTokenizer(json);
    for (const text of [`${' '.repeat(200000)}x`, ' \t'.repeat(100000), '\n '.repeat(100000), `${'!'.repeat(100000)}\n\n`]) {
      assert.equal(tokenizer.decode(tokenizer.encode(text).ids), text);
    }
  });

  it('a million spaces, and long runs of special-token look-alikes', LIMIT, () => {
    const spaces = `${' '.repeat(1000000)}x`;
    assert.equal(gpt2.decode(gpt2.encode(spaces).ids), spaces);
    const almost = '<|endoftext'.repeat(20000);
    assert.equal(gpt2.decode(gpt2.encode(almost).ids), almost);
    assert.equal(gpt2.encode('<|endoftext|>'.repeat(20000)).ids.length, 20000);
  });

  it('Unigram with a Precompiled normalizer (XLM-R) on long words, emoji, marks and spaces', LIMIT, () => {
    const xlmr = createTokenizer(xlmrTokenizerJson());
    for (const text of ['a'.repeat(200000), '🤗'.repeat(100000), '👨‍👩‍👧'.repeat(20000), 'e\u0301'.repeat(100000),
      `${' '.repeat(1000000)}x`, 'x\u0301'.repeat(50000)]) {
      const { ids, offsets } = xlmr.encode(text);
      assertSaneOffsets(text, offsets);
      assert.ok(ids.length >= 3 && ids[0] === 0 && ids[ids.length - 1] === 2);
    }
    // The decoded text of plain words is the text itself.
    const words = 'the quick brown fox '.repeat(20000).trim();
    assert.equal(xlmr.decode(xlmr.encode(words).ids, { skipSpecialTokens: true }), words);
  });
});
