// The pipeline's parts as other hub files combine them: added-token flags,
// the pre-tokenizers of SmolLM and Llama 3, Roberta offsets, Unicode
// normalizers, decoders, Oniguruma patterns. The expected ids use GPT-2's real
// vocabulary; each was checked by hand against the vocabulary (and agrees with
// Hugging Face `tokenizers`, see hf-reference.test.mjs).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDecoder } from '../../../web/lib/tokenizers/decoders.js';
import { createTokenizer } from '../../../web/lib/tokenizers/index.js';
import { NormalizedText } from '../../../web/lib/tokenizers/normalized-text.js';
import { translateOnigurumaPattern } from '../../../web/lib/tokenizers/oniguruma.js';
import { bytesToLabel } from '../../../web/lib/tokenizers/unicode.js';
import { gpt2Files, gpt2TokenizerJson, llama3PreTokenizer } from './fixtures.mjs';

const files = gpt2Files();
const gpt2With = (change) => {
  const json = gpt2TokenizerJson(files);
  change(json);
  return createTokenizer(json);
};
const added = (id, content, flags) => ({
  id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: false, ...flags,
});

describe('added tokens', () => {
  const tokenizer = gpt2With((json) => json.added_tokens.push(
    added(50257, '<mask>', { lstrip: true, special: true }),
    added(50258, '[x]', { single_word: true }),
    added(50259, '<pad>', { rstrip: true, special: true }),
  ));

  it('lstrip takes the whitespace before the token, rstrip the whitespace after', () => {
    assert.deepEqual(tokenizer.encode('a <mask> b'), {
      ids: Int32Array.from([64, 50257, 275]), tokens: ['a', '<mask>', ' b'], offsets: [[0, 1], [1, 8], [8, 10]],
    });
    assert.deepEqual(tokenizer.encode('a  <mask>').offsets, [[0, 1], [1, 9]]);
    assert.deepEqual(tokenizer.encode('p<pad>  q'), {
      ids: Int32Array.from([79, 50259, 80]), tokens: ['p', '<pad>', 'q'], offsets: [[0, 1], [1, 8], [8, 9]],
    });
  });

  it('single_word matches only when not inside a word', () => {
    assert.deepEqual([...tokenizer.encode('x[x]y').ids], [87, 58, 87, 60, 88]); // "x", "[", "x", "]", "y"
    assert.deepEqual([...tokenizer.encode('x [x] y').ids], [87, 220, 50258, 331]);
    assert.deepEqual([...tokenizer.encode('[x]').ids], [50258]);
  });

  it('adjacent tokens, longest match first', () => {
    assert.deepEqual([...tokenizer.encode('<mask><pad>').ids], [50257, 50259]);
    const longest = gpt2With((json) => json.added_tokens.push(added(50257, '<a>'), added(50258, '<a><b>')));
    assert.deepEqual([...longest.encode('<a><b><a>').ids], [50258, 50257]);
  });

  it('gets its id as Hugging Face assigns it: a token already in the vocabulary keeps its id', () => {
    // "hello" is GPT-2 token 31373 whatever the file says; a new token takes the next free id.
    const tokenizer2 = gpt2With((json) => json.added_tokens.push(added(99, 'hello'), added(7, '<new>')));
    assert.deepEqual([...tokenizer2.encode('say hello<new>').ids], [16706, 220, 31373, 50257]);
    assert.equal(tokenizer2.vocabSize, 50258);
  });

  it('normalized tokens match after the normalizer', () => {
    const tokenizer2 = gpt2With((json) => {
      json.normalizer = { type: 'Lowercase' };
      json.added_tokens.push(added(60000, 'Qwerty', { normalized: true }));
    });
    // Lowercased text, lowercased token: "qwerty" matches; it is new, so it gets 50257 (not the file's 60000).
    assert.deepEqual([...tokenizer2.encode('x yesterday Yesterday QWERTY').ids], [87, 7415, 7415, 220, 50257]);
    assert.equal(tokenizer2.tokenText(50257), 'Qwerty');
  });
});

describe('pre-tokenizers of other hub files', () => {
  it('SmolLM: individual digits, then byte-level', () => {
    const tokenizer = gpt2With((json) => {
      json.pre_tokenizer = {
        type: 'Sequence',
        pretokenizers: [{ type: 'Digits', individual_digits: true },
          { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }],
      };
    });
    assert.deepEqual([...tokenizer.encode('abc 12345').ids], [39305, 220, 16, 17, 18, 19, 20]);
    assert.deepEqual(tokenizer.encode('x1 y22').tokens, ['x', '1', ' y', '2', '2']);
  });

  it('Llama 3: Split with an Oniguruma pattern, byte-level without regex, ignore_merges', () => {
    const tokenizer = gpt2With((json) => {
      json.pre_tokenizer = llama3PreTokenizer();
      json.model.ignore_merges = true;
    });
    // Digits in groups of three; " HELLO" is one piece.
    const { ids, tokens } = tokenizer.encode("I'M 12345 HELLO");
    assert.deepEqual([...ids], [40, 6, 44, 220, 10163, 2231, 47899, 46]);
    assert.deepEqual(tokens, ['I', "'", 'M', ' ', '123', '45', ' HELL', 'O']);
    assert.deepEqual([...tokenizer.encode("they'LL go\n\n  x").ids], [9930, 6, 3069, 467, 628, 220, 2124]);
  });

  it('Roberta: <s> ... </s>, offsets trimmed of the spaces byte-level tokens carry', () => {
    const tokenizer = gpt2With((json) => {
      json.pre_tokenizer.add_prefix_space = true;
      json.post_processor = {
        type: 'RobertaProcessing', sep: ['</s>', 50256], cls: ['<s>', 50256], trim_offsets: true, add_prefix_space: true,
      };
    });
    assert.deepEqual(tokenizer.encode('Hello world').offsets, [[0, 0], [0, 5], [6, 11], [0, 0]]);
    assert.deepEqual(tokenizer.encode('  Hello'), {
      ids: Int32Array.from([50256, 220, 18435, 50256]),
      tokens: ['<|endoftext|>', ' ', ' Hello', '<|endoftext|>'],
      offsets: [[0, 0], [0, 0], [2, 7], [0, 0]],
    });
  });
});

describe('normalizers', () => {
  it('NFKC and per-character lowercase', () => {
    const tokenizer = gpt2With((json) => {
      json.normalizer = { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Lowercase' }] };
    });
    const { ids, offsets } = tokenizer.encode('ﬁne Ⅻ ＡＢＣ');
    assert.deepEqual([...ids], [38125, 2124, 4178, 450, 66]); // "fine", " x", "ii", " ab", "c"
    assert.deepEqual(offsets, [[0, 3], [3, 5], [4, 5], [5, 8], [8, 9]]);
    // Σ lowercases to σ even at the end of a word (character by character, as Rust's char::to_lowercase).
    assert.deepEqual([...tokenizer.encode('ΣΑΣ').ids], [38392, 17394, 38392]);
  });

  it('keep offsets through rewrites: composition, removal, replacement', () => {
    const source = NormalizedText.fromOriginal('xe\u0301y  z');
    const composed = source.normalizeUnicode('NFC');
    assert.equal(composed.text, 'xéy  z');
    assert.deepEqual([...composed.starts], [0, 1, 3, 4, 5, 6]); // "é" keeps the range of its base "e"
    const replaced = composed.replaceAll(/ +/gu, '_');
    assert.equal(replaced.text, 'xéy_z');
    assert.deepEqual(replaced.originalRange(3, 4), [5, 6]); // the replacement points at the last space
    const prepended = replaced.prepend('▁');
    assert.deepEqual(prepended.originalRange(0, 2), [0, 1]);
  });
});

describe('decoders', () => {
  it('ByteFallback: byte runs become text, invalid runs one U+FFFD per byte', () => {
    const decode = createDecoder({ type: 'ByteFallback' });
    assert.deepEqual(decode(['a', '<0xE2>', '<0x82>', 'b', '<0xE2>', '<0x82>', '<0xAC>', '<0x41>', '<0xZZ>']),
      ['a', '\uFFFD', '\uFFFD', 'b', '€A', '<0xZZ>']);
  });

  it('Strip, Replace, Fuse and Metaspace as Llama files chain them', () => {
    assert.deepEqual(createDecoder({ type: 'Strip', content: ' ', start: 2, stop: 1 })(['   a  ', ' b ']), [' a ', 'b']);
    assert.deepEqual(createDecoder({ type: 'Replace', pattern: { String: '▁' }, content: '$&' })(['▁a▁']), ['$&a$&']);
    assert.deepEqual(createDecoder({ type: 'Metaspace', replacement: '▁', prepend_scheme: 'always' })(['▁a▁b', '▁c']), ['ab', ' c']);
    assert.deepEqual(createDecoder({ type: 'Metaspace', replacement: '▁', prepend_scheme: 'never' })(['▁a', '▁c']), [' a', ' c']);
    assert.deepEqual(createDecoder({ type: 'Fuse' })(['a', 'b']), ['ab']);
  });

  it('WordPiece cleans up token by token', () => {
    // "not" alone is never " do not", so that clean-up cannot apply; " ." can.
    assert.deepEqual(createDecoder({ type: 'WordPiece', prefix: '##', cleanup: true })(['##a', 'b', '##c', 'do', 'not', '.']),
      ['##a', ' b', 'c', ' do', ' not', '.']);
  });
});

describe('Oniguruma patterns', () => {
  it('translate Unicode classes and inline case-insensitive groups', () => {
    assert.equal(translateOnigurumaPattern("(?i:'s|'t)|\\s+(?!\\S)", 'test').source,
      "(?:'[sS]|'[tT])|\\p{White_Space}+(?!\\P{White_Space})");
    const words = translateOnigurumaPattern('\\w+', 'test');
    assert.deepEqual('naïve_1 ٣'.match(words), ['naïve_1', '٣']);
    assert.deepEqual('x\u0085y'.split(translateOnigurumaPattern('\\s', 'test')), ['x', 'y']);
    assert.ok(translateOnigurumaPattern('\\p{Han}+', 'test').test('中文'));
  });

  it('refuse what JavaScript cannot express', () => {
    assert.throws(() => translateOnigurumaPattern('a++', 'Split'), /possessive/);
    assert.throws(() => translateOnigurumaPattern('(?>a)', 'Split'), /atomic groups/);
    assert.throws(() => translateOnigurumaPattern('[a[b]]', 'Split'), /nested character classes/);
    assert.throws(() => translateOnigurumaPattern('\\q', 'Split'), /escape \\q/);
  });
});

describe('labels', () => {
  it('decode whole UTF-8 characters and escape the rest', () => {
    assert.equal(bytesToLabel(new TextEncoder().encode(' café 🤗')), ' café 🤗');
    assert.equal(bytesToLabel(Uint8Array.from([0x20, 0xF0, 0x9F])), ' \\xF0\\x9F');
    assert.equal(bytesToLabel(Uint8Array.from([0xC0, 0xAF, 0xED, 0xA0, 0x80])), '\\xC0\\xAF\\xED\\xA0\\x80'); // overlong, surrogate
    assert.equal(bytesToLabel(Uint8Array.from([0x41, 0x00])), 'A\u0000');
  });
});
