// WordLevel on the real tokenizer.json of attnlens' sort-gpt2 test model
// (../shared/models/sort-gpt2): digits split on whitespace, "0" doubling as
// the unknown token.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { createTokenizer } from '../../../web/lib/tokenizers/index.js';

const file = new URL('../../../../shared/models/sort-gpt2/tokenizer.json', import.meta.url);
const text = readFileSync(file, 'utf8');

describe('WordLevel (sort-gpt2)', () => {
  const tokenizer = createTokenizer(text);

  it('reads the file as text and as an object alike', () => {
    assert.equal(tokenizer.kind, 'word-level');
    assert.equal(tokenizer.vocabSize, 3);
    assert.deepEqual(createTokenizer(JSON.parse(text)).encode('2 0 1'), tokenizer.encode('2 0 1'));
  });

  it('encodes "2 0 1" as [2, 0, 1]', () => {
    const { ids, tokens, offsets } = tokenizer.encode('2 0 1');
    assert.deepEqual([...ids], [2, 0, 1]);
    assert.deepEqual(tokens, ['2', '0', '1']);
    assert.deepEqual(offsets, [[0, 1], [2, 3], [4, 5]]);
  });

  it('splits on any whitespace and maps unknown words to unk_token "0"', () => {
    assert.deepEqual([...tokenizer.encode('  1\t2\n\n0 ').ids], [1, 2, 0]);
    assert.deepEqual([...tokenizer.encode('1 7 12').ids], [1, 0, 0]);
    assert.deepEqual([...tokenizer.encode('').ids], []);
  });

  it('decodes with spaces (the file has no decoder)', () => {
    assert.equal(tokenizer.decode([2, 0, 1]), '2 0 1');
    assert.equal(tokenizer.decode(new Int32Array([1, 1])), '1 1');
  });
});
