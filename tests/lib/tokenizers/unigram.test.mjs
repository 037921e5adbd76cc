// The Unigram model on tiny vocabularies whose best paths are worked out by
// hand (sums of the scores below); Hugging Face comparisons on trained
// vocabularies are in hf-reference.test.mjs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTokenizer } from '../../../web/lib/tokenizers/index.js';

function unigram(vocab, extra = {}) {
  return createTokenizer({
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: 0, vocab, ...extra },
  });
}

describe('Unigram', () => {
  it('takes the path with the highest total score', () => {
    // "▁ab": ▁ab = -10; ▁ + ab = -1 - 3 = -4; ▁ + a + b = -1 - 2 - 2 = -5: ▁ + ab wins.
    const tokenizer = unigram([['<unk>', 0], ['▁', -1], ['a', -2], ['b', -2], ['ab', -3], ['▁ab', -10]]);
    const { ids, tokens, offsets } = tokenizer.encode('ab');
    assert.deepEqual([...ids], [1, 4]);
    assert.deepEqual(tokens, [' ', 'ab']);
    assert.deepEqual(offsets, [[0, 1], [0, 2]]); // the "▁" put in front takes the first character's range
    assert.equal(tokenizer.kind, 'unigram');
    assert.equal(tokenizer.decode(ids), 'ab');
  });

  it('keeps the first path found on a tie (shorter start visited first)', () => {
    // "▁ab": ▁ + ab = -1 - 2 = -3 is found before ▁ + a + b = -1 - 1 - 1 = -3.
    const tokenizer = unigram([['<unk>', 0], ['▁', -1], ['a', -1], ['b', -1], ['ab', -2]]);
    assert.deepEqual([...tokenizer.encode('ab').ids], [1, 4]);
  });

  it('fuses neighbouring unknown characters into one <unk>, or spells them in bytes with byte_fallback', () => {
    const vocab = [['<unk>', 0], ['▁', -1], ['a', -1], ['b', -1]];
    const { ids, offsets } = unigram(vocab).encode('axyb');
    assert.deepEqual([...ids], [1, 2, 0, 3]);
    assert.deepEqual(offsets, [[0, 1], [0, 1], [1, 3], [3, 4]]);
    const bytes = [...vocab, ['<0x78>', -1], ['<0x79>', -1], ['<0xC3>', -1], ['<0xA9>', -1]];
    const fallback = unigram(bytes, { byte_fallback: true });
    // "xy" becomes the bytes 0x78 0x79 (ids 4 5); "é" 0xC3 0xA9 (6 7), both covering the whole run.
    assert.deepEqual([...fallback.encode('axyb').ids], [1, 2, 4, 5, 3]);
    assert.deepEqual([...fallback.encode('é').ids], [1, 6, 7]);
    assert.deepEqual(fallback.encode('é').tokens, [' ', '\\xC3', '\\xA9']);
    // A run with a byte that has no piece falls back to <unk>.
    assert.deepEqual([...fallback.encode('z').ids], [1, 0]);
  });
});
