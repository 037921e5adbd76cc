// WordPiece (BERT) on a small hand-written vocabulary (fixtures.mjs,
// BERT_VOCAB: id = position). Every expected id below is worked out by hand
// from that list: lowercase and strip accents, split on whitespace and
// punctuation, CJK characters alone, then the longest vocabulary piece first.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTokenizer } from '../../../web/lib/tokenizers/index.js';
import { BERT_VOCAB, bertTokenizerJson } from './fixtures.mjs';

const bert = createTokenizer(bertTokenizerJson());
const id = (token) => {
  const at = BERT_VOCAB.indexOf(token);
  assert.ok(at >= 0, `no ${token} in the test vocabulary`);
  return at;
};
const CLS = id('[CLS]');
const SEP = id('[SEP]');
const UNK = id('[UNK]');

function idsOf(tokenizer, text) {
  return [...tokenizer.encode(text).ids];
}

describe('WordPiece (BERT uncased)', () => {
  it('is a wordpiece tokenizer with the vocabulary size of its file', () => {
    assert.equal(bert.kind, 'wordpiece');
    assert.equal(bert.vocabSize, BERT_VOCAB.length);
  });

  it('adds [CLS] and [SEP] and lowercases', () => {
    const { ids, tokens, offsets } = bert.encode('The quick brown fox');
    assert.deepEqual([...ids], [CLS, id('the'), id('quick'), id('brown'), id('fox'), SEP]);
    assert.deepEqual(tokens, ['[CLS]', 'the', 'quick', 'brown', 'fox', '[SEP]']);
    assert.deepEqual(offsets, [[0, 0], [0, 3], [4, 9], [10, 15], [16, 19], [0, 0]]);
  });

  it('cuts a word into the longest pieces, "##" after the first', () => {
    const { ids, tokens, offsets } = bert.encode('unaffable');
    assert.deepEqual([...ids], [CLS, id('un'), id('##aff'), id('##able'), SEP]);
    assert.deepEqual(tokens, ['[CLS]', 'un', '##aff', '##able', '[SEP]']);
    assert.deepEqual(offsets, [[0, 0], [0, 2], [2, 5], [5, 9], [0, 0]]);
    assert.deepEqual(idsOf(bert, 'running runs bbb'),
      [CLS, id('run'), id('##ning'), id('run'), id('##s'), id('b'), id('##b'), id('##b'), SEP]);
    assert.deepEqual(idsOf(bert, '123'), [CLS, id('1'), id('##2'), id('##3'), SEP]);
  });

  it('strips accents after lowercasing rules of the BERT normalizer', () => {
    // "über" -> "uber" (not in the vocabulary: the whole word is [UNK]),
    // "naïve" -> "naive", "CAFÉ" -> "cafe".
    const { ids, offsets } = bert.encode('Über naïve CAFÉ');
    assert.deepEqual([...ids], [CLS, UNK, id('naive'), id('cafe'), SEP]);
    assert.deepEqual(offsets, [[0, 0], [0, 4], [5, 10], [11, 15], [0, 0]]);
    // Decomposed input gives the same ids.
    assert.deepEqual(idsOf(bert, 'U\u0308ber nai\u0308ve CAFE\u0301'), [CLS, UNK, id('naive'), id('cafe'), SEP]);
  });

  it('keeps accents when strip_accents is false', () => {
    const keep = createTokenizer(bertTokenizerJson({ stripAccents: false }));
    assert.deepEqual(idsOf(keep, 'Über naïve CAFÉ'), [CLS, id('über'), UNK, UNK, SEP]);
  });

  it('keeps case in a cased model', () => {
    const cased = createTokenizer(bertTokenizerJson({ lowercase: false }));
    assert.deepEqual(idsOf(cased, 'Hello hello'), [CLS, UNK, id('hello'), SEP]);
  });

  it('splits punctuation (ASCII symbols included) into tokens of their own', () => {
    const { ids, offsets } = bert.encode('Hello, world!');
    assert.deepEqual([...ids], [CLS, id('hello'), id(','), id('world'), id('!'), SEP]);
    assert.deepEqual(offsets, [[0, 0], [0, 5], [5, 6], [7, 12], [12, 13], [0, 0]]);
    assert.deepEqual(idsOf(bert, '$1 ?'), [CLS, id('$'), id('1'), id('?'), SEP]);
    // "don't": "don" has no "##n" piece, so the word is [UNK]; "'" and "t" stand alone.
    assert.deepEqual(idsOf(bert, "don't"), [CLS, UNK, id("'"), id('t'), SEP]);
  });

  it('makes unknown words [UNK], and words over max_input_chars_per_word too', () => {
    assert.deepEqual(idsOf(bert, 'zebra'), [CLS, UNK, SEP]);
    assert.equal(bert.encode('b'.repeat(100)).ids.length, 102); // b ##b ... (100 pieces)
    const { ids, offsets } = bert.encode('b'.repeat(101));
    assert.deepEqual([...ids], [CLS, UNK, SEP]);
    assert.deepEqual(offsets[1], [0, 101]);
  });

  it('splits CJK ideographs one per token', () => {
    const { ids, tokens, offsets } = bert.encode('中文abc');
    assert.deepEqual([...ids], [CLS, id('中'), id('文'), id('ab'), id('##c'), SEP]);
    assert.deepEqual(tokens, ['[CLS]', '中', '文', 'ab', '##c', '[SEP]']);
    assert.deepEqual(offsets, [[0, 0], [0, 1], [1, 2], [2, 4], [4, 5], [0, 0]]);
  });

  it('removes control characters and treats every whitespace as a space', () => {
    assert.deepEqual(idsOf(bert, 'hel\u0000lo'), [CLS, id('hello'), SEP]);
    assert.deepEqual(bert.encode('hel\u0000lo').offsets[1], [0, 6]);
    assert.deepEqual(idsOf(bert, 'hello\u00a0world\u2003!'), [CLS, id('hello'), id('world'), id('!'), SEP]);
    assert.deepEqual(idsOf(bert, ' \t\n '), [CLS, SEP]);
    assert.deepEqual(idsOf(bert, ''), [CLS, SEP]);
  });

  it('matches special tokens written in the text as single tokens', () => {
    const { ids, offsets } = bert.encode('[CLS] hello [SEP]');
    assert.deepEqual([...ids], [CLS, CLS, id('hello'), SEP, SEP]);
    assert.deepEqual(offsets, [[0, 0], [0, 5], [6, 11], [12, 17], [0, 0]]);
    assert.deepEqual(idsOf(bert, 'a [MASK]!'), [CLS, id('a'), id('[MASK]'), id('!'), SEP]);
  });

  it('decodes: "##" pieces glued, spaces before punctuation cleaned up', () => {
    assert.equal(bert.decode(bert.encode('Hello, world!').ids), '[CLS] hello, world! [SEP]');
    assert.equal(bert.decode(bert.encode('Hello, world!').ids, { skipSpecialTokens: true }), 'hello, world!');
    assert.equal(bert.decode([id('run'), id('##ning'), id('un'), id('##aff'), id('##able')]), 'running unaffable');
  });

  it('labels tokens as BERT shows them ("##" kept)', () => {
    assert.equal(bert.tokenText(id('##ning')), '##ning');
    assert.equal(bert.tokenText(CLS), '[CLS]');
  });
});

describe('WordPiece from vocab.txt', () => {
  it('gives the same ids as the tokenizer.json of bert-base-uncased', () => {
    const fromText = createTokenizer({ vocabTxt: `${BERT_VOCAB.join('\n')}\n` });
    assert.equal(fromText.kind, 'wordpiece');
    for (const text of ['The quick brown fox', 'unaffable', 'Über naïve CAFÉ', '中文abc', '[CLS] a [MASK]', '']) {
      assert.deepEqual(fromText.encode(text), bert.encode(text), text);
    }
  });

  it('reads Windows line ends and trailing spaces as Hugging Face does', () => {
    const fromText = createTokenizer({ vocabTxt: `${BERT_VOCAB.join(' \r\n')}\r\n` });
    assert.deepEqual(fromText.encode('unaffable').ids, bert.encode('unaffable').ids);
  });
});
