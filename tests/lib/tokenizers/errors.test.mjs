// Bad input gets an Error that names the problem, at createTokenizer time
// when the file is at fault, at encode / decode time when the call is.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTokenizer } from '../../../web/lib/tokenizers/index.js';
import { bertTokenizerJson, llamaTokenizerJson } from './fixtures.mjs';

// createTokenizer(spec) must throw `type` with a message matching `pattern`.
function rejects(spec, type, pattern) {
  assert.throws(() => createTokenizer(spec), (error) => {
    assert.ok(error instanceof type, `${error.constructor.name}: ${error.message}`);
    assert.match(error.message, pattern);
    return true;
  });
}

const llamaWith = (part) => ({ ...llamaTokenizerJson(), ...part });

describe('createTokenizer errors', () => {
  it('refuses unsupported models, naming the type found', () => {
    rejects({ model: { type: 'WordPieceLevel', vocab: [['a', 0]] } }, Error, /unsupported tokenizer model "WordPieceLevel"/);
    rejects({ model: { vocab: {} } }, Error, /unsupported tokenizer model \(no "type" field\)/);
    rejects({ model: { type: 'BPE', vocab: { a: 0 }, merges: [] } }, Error, /unsupported BPE tokenizer.*pre_tokenizer none/);
  });

  it('refuses unsupported components, naming the type found', () => {
    rejects(llamaWith({ normalizer: { type: 'ByteLevel' } }), Error, /unsupported normalizer "ByteLevel"/);
    rejects(llamaWith({ pre_tokenizer: { type: 'UnicodeScripts' } }), Error, /unsupported pre_tokenizer "UnicodeScripts"/);
    rejects(llamaWith({ decoder: { type: 'CTC' } }), Error, /unsupported decoder "CTC"/);
    rejects(llamaWith({ post_processor: { type: 'Foo' } }), Error, /unsupported post_processor "Foo"/);
    rejects(llamaWith({ pre_tokenizer: { type: 'Split', pattern: { Regex: 'a++' }, behavior: 'Isolated' } }),
      Error, /regex "a\+\+" cannot be used: possessive quantifiers/);
    rejects(llamaWith({ pre_tokenizer: { type: 'Split', pattern: { String: 'a' }, behavior: 'Sideways' } }),
      Error, /"behavior" must be one of .*got "Sideways"/);
    rejects(llamaWith({ post_processor: { type: 'TemplateProcessing', single: ['<x>', '$A'], special_tokens: {} } }),
      Error, /special token "<x>"/);
  });

  it('refuses malformed Unigram models and Precompiled charsmaps', () => {
    const unigram = (model) => ({ model: { type: 'Unigram', ...model } });
    rejects(unigram({ vocab: [] }), TypeError, /Unigram model "vocab" must be a non-empty array/);
    rejects(unigram({ vocab: [['a', 0], ['b', 'x']] }), TypeError, /Unigram model vocab\[1\] must be \[piece, score\]/);
    rejects(unigram({ vocab: [['a', 0]], unk_id: 5 }), RangeError, /"unk_id" 5 is outside the vocab \(1 pieces\)/);
    rejects(unigram({ vocab: [['a', 0]], unk_id: -1 }), RangeError, /"unk_id" must be a non-negative integer id/);
    const precompiled = (charsmap) => llamaWith({ normalizer: { type: 'Precompiled', precompiled_charsmap: charsmap } });
    rejects(precompiled('not base64!'), Error, /"precompiled_charsmap" is not valid base64/);
    rejects(precompiled(''), Error, /"precompiled_charsmap" is too short \(0 bytes\)/);
    rejects(precompiled(Buffer.from([64, 0, 0, 0, 1, 2]).toString('base64')), Error, /declares a 64-byte trie in 6 bytes/);
    rejects(precompiled(null), TypeError, /Precompiled normalizer "precompiled_charsmap" must be a string/);
    // Without unk_id, a character no piece covers cannot be encoded (Hugging Face refuses it too).
    const noUnk = createTokenizer(unigram({ vocab: [['a', -1], ['b', -2]] }));
    assert.deepEqual([...noUnk.encode('ab').ids], [0, 1]);
    assert.throws(() => noUnk.encode('abc'), /Unigram model has no unk_id, and "c" is in none of its pieces/);
  });

  it('refuses malformed JSON text', () => {
    rejects('{"model": ', Error, /tokenizer\.json text is not valid JSON/);
    rejects({ vocabJson: '{a', mergesTxt: '' }, Error, /vocabJson is not valid JSON/);
  });

  it('refuses a vocab that is not an object of integer ids', () => {
    rejects({ model: { type: 'BPE', vocab: ['a'], merges: [] } }, TypeError, /BPE model "vocab" must be an object.*got an array/);
    rejects({ model: { type: 'WordPiece', vocab: null } }, TypeError, /WordPiece model "vocab" must be an object.*got null/);
    rejects({ model: { type: 'WordLevel', vocab: { a: '0' } } }, RangeError, /vocab entry "a" must be a non-negative integer id, got "0"/);
    rejects({ model: { type: 'WordLevel', vocab: { a: -1 } } }, RangeError, /vocab entry "a"/);
    rejects({ vocabJson: [], mergesTxt: '' }, TypeError, /vocabJson must be an object/);
    rejects({ model: { type: 'WordPiece', vocab: { a: 0 }, unk_token: '[UNK]' } }, Error, /unk_token "\[UNK\]" is not in the vocab/);
  });

  it('refuses malformed merges, naming the merge', () => {
    const bpe = (merges, vocab = { a: 0, b: 1, ab: 2 }) => llamaWith({ model: { type: 'BPE', byte_fallback: true, vocab, merges } });
    rejects(bpe('a b'), TypeError, /"merges" must be an array, got "a b"/);
    rejects(bpe(['ab']), Error, /merge 0 "ab" is not two tokens separated by one space/);
    rejects(bpe(['a b', 'a  b']), Error, /merge 1 "a {2}b"/);
    rejects(bpe([['a']]), Error, /merge 0 must be "a b" or \["a", "b"\], got an array of 1/);
    rejects(bpe([5]), Error, /merge 0 must be/);
    rejects(bpe(['a c']), Error, /merge 0 \("a" "c"\) uses "c", which is not in the vocab/);
    rejects(bpe(['a b'], { a: 0, b: 1 }), Error, /merge 0 makes "ab", which is not in the vocab/);
    rejects({ vocabJson: { a: 0, b: 1, ab: 2 }, mergesTxt: '#version: 0.2\na b\nab\n' }, Error, /mergesTxt line 3/);
  });

  it('refuses the wrong kind of spec', () => {
    for (const spec of [5, null, [], true]) rejects(spec, TypeError, /createTokenizer needs tokenizer\.json/);
    rejects({}, TypeError, /got an object with keys \[\]/);
    rejects({ vocabJson: {} }, TypeError, /need both vocabJson .* and mergesTxt/);
    rejects({ vocabTxt: 5 }, TypeError, /vocabTxt must be a string/);
    rejects({ vocabTxt: '[UNK]\nhello\n' }, Error, /vocabTxt has no \[CLS\] line/);
    rejects({ ...bertTokenizerJson(), added_tokens: {} }, TypeError, /"added_tokens" must be an array/);
    rejects({ ...bertTokenizerJson(), added_tokens: [{ id: 1, content: '' }] }, TypeError, /added_tokens\[0\] "content"/);
  });

  it('refuses a bad tokenizer_config.json', () => {
    assert.throws(() => createTokenizer(llamaTokenizerJson(), 'x'), TypeError);
    assert.throws(() => createTokenizer(llamaTokenizerJson(), {
      tokenizer_class: 'LlamaTokenizer', add_eos_token: true, eos_token: '<eos>',
    }), /eos_token "<eos>" is not in the tokenizer's vocab/);
  });
});

describe('encode, decode and tokenText errors', () => {
  const tokenizer = createTokenizer(llamaTokenizerJson());

  it('encode needs a string', () => {
    assert.throws(() => tokenizer.encode(5), { name: 'TypeError', message: /encode needs a string, got 5/ });
    assert.throws(() => tokenizer.encode(), TypeError);
  });

  it('decode needs an array of known ids', () => {
    assert.throws(() => tokenizer.decode('abc'), { name: 'TypeError', message: /decode needs an array of ids/ });
    assert.throws(() => tokenizer.decode([1, -1]), { name: 'RangeError', message: /ids\[1\].*got -1/ });
    assert.throws(() => tokenizer.decode([1.5]), { name: 'RangeError', message: /got 1\.5/ });
    assert.throws(() => tokenizer.decode([99999]), { name: 'RangeError', message: /id 99999 has no token/ });
  });

  it('tokenText needs a known id', () => {
    assert.throws(() => tokenizer.tokenText(288), { name: 'RangeError', message: /id 288 has no token/ });
    assert.throws(() => tokenizer.tokenText('1'), RangeError);
  });

  it('keeps working after an error', () => {
    assert.throws(() => tokenizer.decode([99999]));
    assert.deepEqual([...tokenizer.encode('the').ids], [1, 284]);
  });
});
