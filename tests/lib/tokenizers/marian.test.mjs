// Marian (opus-mt) tokenization: source.spm, target.spm and vocab.json of
// tests/fixtures/marian, tiny sentencepiece models trained by the
// sentencepiece library itself, and the ids and decoded text transformers'
// MarianTokenizer gives for them, computed with sentencepiece by
// make_marian.py on the hostile strings the Hugging Face comparisons use
// (fixture.mjs), plus language codes and special tokens inside the text.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createTokenizer } from '../../../web/lib/tokenizers/index.js';
import { marianFiles, marianReference, marianTexts } from '../../fixtures/marian/fixture.mjs';

const cases = marianReference();
const texts = cases.map((entry) => entry.text);
const reference = cases;

describe('Marian tokenizer (source.spm, target.spm, vocab.json)', () => {
  const tokenizer = createTokenizer(marianFiles());

  it('the fixture strings are the shared hostile pool', () => {
    assert.deepEqual(texts, marianTexts());
  });

  it('source text: source.spm pieces, vocab.json ids, language codes, </s> appended', () => {
    assert.equal(tokenizer.kind, 'marian');
    texts.forEach((text, i) => assert.deepEqual([...tokenizer.encode(text).ids], reference[i].ids, JSON.stringify(text)));
  });

  it('target text: target.spm pieces', () => {
    texts.forEach((text, i) => assert.deepEqual([...tokenizer.encodeTarget(text).ids], reference[i].targetIds, JSON.stringify(text)));
  });

  it('decode reads target.spm, with and without special tokens', () => {
    reference.forEach(({ targetIds, decoded, decodedSkipping }, i) => {
      const label = JSON.stringify(texts[i]);
      assert.equal(tokenizer.decode(targetIds), decoded, label);
      assert.equal(tokenizer.decode(targetIds, { skipSpecialTokens: true }), decodedSkipping, label);
    });
  });

  it('offsets point at the text each token came from; labels read as text', () => {
    const text = '>>de<< the cat</s>';
    const { ids, tokens, offsets } = tokenizer.encode(text);
    assert.equal(tokens[0], '>>de<<');
    assert.deepEqual(offsets[0], [0, 6]);
    assert.equal(tokens.at(-2), '</s>');
    assert.deepEqual(offsets.at(-2), [14, 18]);
    assert.deepEqual(offsets.at(-1), [0, 0]); // the appended </s>
    assert.equal(tokens.slice(1, -2).join(''), ' the cat');
    assert.equal(ids.length, tokens.length);
  });

  it('a sentencepiece model without dummy prefix or whitespace clean-up: its pieces and decode_pieces', () => {
    const plain = createTokenizer({ ...marianFiles(), targetSpm: new Uint8Array(readFileSync(new URL('../../fixtures/marian/plain.spm', import.meta.url))) });
    const expected = JSON.parse(readFileSync(new URL('../../fixtures/marian/plain-reference.json', import.meta.url), 'utf8'));
    texts.forEach((text, i) => {
      const { pieces } = plain.target.encode(text);
      assert.deepEqual(pieces, expected[i].pieces, JSON.stringify(text));
      assert.equal(plain.target.decodePieces(pieces), expected[i].decoded, JSON.stringify(text));
    });
  });

  it('bad files and settings get errors that name them', () => {
    const files = marianFiles();
    assert.throws(() => createTokenizer({ ...files, targetSpm: undefined }), /need sourceSpm \(source.spm\), targetSpm/);
    assert.throws(() => createTokenizer({ ...files, sourceSpm: 'text' }), /sourceSpm must be the bytes of a sentencepiece model/);
    assert.throws(() => createTokenizer({ ...files, vocabJson: '{' }), /vocabJson is not valid JSON/);
    assert.throws(() => createTokenizer({ ...files, vocabJson: { '</s>': 0 } }), /vocab.json has no "<unk>"/);
    assert.throws(() => createTokenizer(files, { separate_vocabs: true }), /separate_vocabs/);
    assert.throws(() => createTokenizer({ ...files, targetSpm: Uint8Array.of(7, 7, 7) }), /sentencepiece model/);
    assert.throws(() => tokenizer.decode([999]), /id 999 has no token/);
  });

  it('tokenizer_config.json: clean_up_tokenization_spaces and additional special tokens', () => {
    const vocab = JSON.parse(marianFiles().vocabJson);
    const cleaning = createTokenizer(marianFiles(), { clean_up_tokenization_spaces: true });
    const ids = [...tokenizer.encodeTarget('wo ist der Bahnhof ?').ids];
    assert.equal(tokenizer.decode(ids, { skipSpecialTokens: true }), 'wo ist der Bahnhof ?');
    assert.equal(cleaning.decode(ids, { skipSpecialTokens: true }), 'wo ist der Bahnhof?');
    const withCode = createTokenizer(marianFiles(), { additional_special_tokens: ['>>de<<'] });
    assert.equal(withCode.decode([vocab['>>de<<'], ...ids], { skipSpecialTokens: true }), 'wo ist der Bahnhof ?');
    assert.deepEqual([...withCode.encode('x>>de<<').ids].slice(-2), [vocab['>>de<<'], vocab['</s>']]);
  });
});
