// What people type, read once for the page's matrices editor and
// <attnlens-matrices> (views/input.js): JSON and CSV to the exact arrays
// lens.explainMatrices takes, errors that say where, and token ids.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MatrixInputError, readMatrices, tokenIds } from '../../../web/views/input.js';

const eye = [[1, 0], [0, 1]];

test('JSON and CSV give the same row-major Float32Arrays; names match loosely; optional fields pass through', () => {
  const json = readMatrices(JSON.stringify({ X: [[1, 2], [3, 4], [5, 6]], wq: eye, 'W-K': eye, Wv: eye, heads: 2, causal: true, tokens: ['a', 'b', 'c'] }));
  assert.deepEqual(Array.from(json.options.x), [1, 2, 3, 4, 5, 6]);
  assert.equal(json.options.n, 3);
  assert.equal(json.options.dModel, 2);
  assert.equal(json.options.heads, 2);
  assert.equal(json.options.causal, true);
  assert.deepEqual(json.tokens, ['a', 'b', 'c']);
  assert.equal(json.contextTokens, null);
  const csv = readMatrices('X\n1, 2\n3;4\n5 6\nW_Q\n1,0\n0,1\nW_K:\n1,0\n0,1\n# W_V\n1,0\n0,1\nheads: 2');
  const { causal, ...withoutCausal } = json.options; // CSV has no causal line
  assert.deepEqual(csv.options, withoutCausal);
  const object = readMatrices({ X: eye, W_Q: eye, W_K: eye, W_V: eye, context: [[1, 1]], keyMask: [1] });
  assert.equal(object.options.nContext, 1);
  assert.deepEqual(Array.from(object.options.keyMask), [1]);
});

test('errors name the format, the line or the matrix, the row and the column', () => {
  const fails = (input, message, options) => assert.throws(() => readMatrices(input, options), (error) => error instanceof MatrixInputError && error.message === message);
  fails('X\n1, 2\n3\nW_Q\n1,0\n0,1\nW_K\n1,0\n0,1\nW_V\n1,0\n0,1', 'X: row 2 has 1 numbers, expected 2 numbers like row 1');
  fails('X\n1, 2\n3, abc', 'line 3: "abc" is not a number');
  fails('1, 2', 'line 1: numbers before any matrix name; start with a line "X"');
  fails('X\n1, 2\nheads\n2', 'line 3: heads is one number, not a matrix: write it on one line, "heads: 2"');
  fails('X\n1, 2\ncausal:\n1', 'line 3: causal is not a matrix; CSV holds the matrices and "heads: 2" only: write causal in JSON');
  fails('{"X": [[1, 0], [0]], "W_Q": [[1]], "W_K": [[1]], "W_V": [[1]]}', 'JSON: X: row 2 has 1 numbers, expected 2 numbers like row 1');
  fails('{"X": [[1, 0]], "W_Q": [[1, 0]], "W_K": [[1]], "W_V": [[1]]}', 'JSON: W_Q: expected 2 × 2 (d_model × d_model, d_model = columns of X), got 1 × 2');
  fails('{"X": [[1, null]], "W_Q": [[1]], "W_K": [[1]], "W_V": [[1]]}', 'JSON: X: row 1, column 2 is null, expected a finite number');
  fails('{"X": [[1]], "Y": 1}', 'JSON: unknown name "Y"; use X, W_Q, W_K, W_V, and optionally W_O, context, heads, causal, temperature, keyMask, tokens, contextTokens');
  fails('{"X": [[1]], "W_Q": [[1]], "W_K": [[1]]}', 'JSON: W_V is missing');
  fails('{"X": [[1]], "W_Q": [[1]], "W_K": [[1]], "W_V": [[1]], "keyMask": [2]}', 'JSON: keyMask must be a list of 1 entries, one per key, each 1 (keep) or 0 (hide), got [2]');
  fails('[1]', 'JSON: expected an object like {"X": [[1, 0], [0, 1]], "W_Q": [[...]], "W_K": [[...]], "W_V": [[...]]}', { format: 'json' });
  fails('   ', 'No matrices: write X, W_Q, W_K and W_V as JSON or CSV.');
  assert.throws(() => readMatrices('{"X": ', { format: 'json' }), /^MatrixInputError: JSON: /);
});

test('token ids: numbers separated by spaces or commas; anything else is not ids', () => {
  assert.deepEqual(tokenIds(' 464 3290,3332 , 7 '), [464, 3290, 3332, 7]);
  assert.equal(tokenIds('464 cat'), null);
  assert.equal(tokenIds('1.5'), null);
  assert.equal(tokenIds('-1'), null);
  assert.equal(tokenIds(''), null);
});
