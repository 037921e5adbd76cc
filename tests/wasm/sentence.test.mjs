// explainSentence: the text pipeline's invariants and hostile text.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertBitIdentical, assertClose, loadBoth, rowSums } from './helpers.mjs';
import { positionalEncoding } from './reference.mjs';

const [simdLens, scalarLens] = await loadBoth();

const row = (matrix, i, width) => matrix.subarray(i * width, (i + 1) * width);

for (const lens of [simdLens, scalarLens]) {
  describe(`${lens.simd ? 'SIMD' : 'scalar'} module: explainSentence`, () => {
    test('defaults, shapes and tokens', () => {
      const result = lens.explainSentence({ text: 'The cat saw the dog.' });
      assert.deepEqual(result.tokens, ['The', 'cat', 'saw', 'the', 'dog', '.']);
      assert.deepEqual(result.contextTokens, result.tokens);
      const { n, nContext, dModel, heads, headWidth } = result;
      assert.deepEqual([n, nContext, dModel, heads, headWidth], [6, 6, 64, 4, 16]);
      assert.equal(result.scale, 1 / 4);
      const sizes = {
        x: n * dModel, contextX: n * dModel, wq: dModel * dModel, wk: dModel * dModel, wv: dModel * dModel, wo: dModel * dModel,
        q: n * dModel, k: n * dModel, v: n * dModel, scores: heads * n * n, scaledScores: heads * n * n, weights: heads * n * n,
        concatenatedHeads: n * dModel, output: n * dModel,
      };
      for (const [name, size] of Object.entries(sizes)) {
        assert.ok(result[name] instanceof Float32Array, `${name} is a Float32Array`);
        assert.equal(result[name].length, size, `${name} length`);
      }
      for (const sum of rowSums(result.weights, heads * n, n)) assert.ok(Math.abs(sum - 1) < 1e-5);
      assert.equal(typeof result.elapsedMs, 'number');
      assert.equal(lens.maxTokens, 1024);
    });

    test('the same word (any case) gets the same embedding row; positions follow the sinusoid formula', () => {
      const dModel = 32;
      const { x, tokens } = lens.explainSentence({ text: 'the cat and THE dog and the end', dModel, heads: 2 });
      const embedding = (i) => Array.from(row(x, i, dModel), (value, j) => value - positionalEncoding(i, j, dModel));
      // "the" at 0, 3 (as THE) and 6; "and" at 2 and 5.
      for (const [a, b] of [[0, 3], [0, 6], [2, 5]]) {
        assertClose(embedding(b), embedding(a), { atol: 1e-6, rtol: 0, label: `${tokens[a]} vs ${tokens[b]}` });
        // x_b - x_a is exactly the difference of the two position encodings.
        const difference = Array.from(row(x, b, dModel), (value, j) => value - x[a * dModel + j]);
        const expected = Array.from({ length: dModel }, (_, j) => positionalEncoding(b, j, dModel) - positionalEncoding(a, j, dModel));
        assertClose(difference, expected, { atol: 2e-6, rtol: 0, label: `PE(${b}) - PE(${a})` });
      }
      // Different words get different vectors with entries in [-sqrt(3), sqrt(3)) (unit variance).
      const cat = embedding(1), dog = embedding(4);
      assert.ok(cat.some((value, j) => Math.abs(value - dog[j]) > 0.1));
      for (const value of [...cat, ...dog]) assert.ok(Math.abs(value) <= Math.sqrt(3) + 1e-6);
    });

    test('weights and output equal multiHeadAttention on the returned x and W matrices', () => {
      for (const options of [
        { text: 'Attention is all you need, they said.', dModel: 16, heads: 4 },
        { text: 'a b c d e f', dModel: 12, heads: 3, causal: true, temperature: 0.5, seed: 7 },
        { text: 'the query side', context: 'a longer context sentence for keys', dModel: 8, heads: 2 },
      ]) {
        const explained = lens.explainSentence(options);
        const cross = options.context !== undefined;
        const direct = lens.multiHeadAttention({
          x: explained.x, n: explained.n, dModel: explained.dModel, heads: explained.heads,
          wq: explained.wq, wk: explained.wk, wv: explained.wv, wo: explained.wo,
          context: cross ? explained.contextX : undefined, nContext: cross ? explained.nContext : undefined,
          causal: options.causal, temperature: options.temperature,
        });
        assertBitIdentical(explained.weights, direct.weights, `${options.text}: weights`);
        assertBitIdentical(explained.output, direct.output, `${options.text}: output`);
        const matrices = lens.explainMatrices({ x: explained.x, n: explained.n, dModel: explained.dModel, heads: explained.heads,
          wq: explained.wq, wk: explained.wk, wv: explained.wv, wo: explained.wo,
          context: cross ? explained.contextX : undefined, nContext: cross ? explained.nContext : undefined,
          causal: options.causal, temperature: options.temperature });
        for (const name of ['q', 'k', 'v', 'scores', 'scaledScores', 'concatenatedHeads']) {
          assertBitIdentical(explained[name], matrices[name], `${options.text}: ${name}`);
        }
      }
    });

    test('cross-attention: keys come from the context sentence', () => {
      const result = lens.explainSentence({ text: 'le chat', context: 'the cat sat down', dModel: 8, heads: 2 });
      assert.deepEqual(result.tokens, ['le', 'chat']);
      assert.deepEqual(result.contextTokens, ['the', 'cat', 'sat', 'down']);
      assert.equal(result.nContext, 4);
      assert.equal(result.weights.length, 2 * 2 * 4);
      assert.equal(result.contextX.length, 4 * 8);
      const alone = lens.explainSentence({ text: 'the cat sat down', dModel: 8, heads: 2 });
      assertBitIdentical(result.contextX, alone.x, 'context embeddings');
    });

    test('seed and identity choose the projections; the same options give bit-identical results', () => {
      const a = lens.explainSentence({ text: 'one two three', seed: 1 });
      const b = lens.explainSentence({ text: 'one two three', seed: 1 });
      const c = lens.explainSentence({ text: 'one two three', seed: 2 });
      for (const name of ['wq', 'weights', 'output']) assertBitIdentical(a[name], b[name], name);
      assert.ok(a.wq.some((value, i) => value !== c.wq[i]));
      assertBitIdentical(a.x, c.x, 'x does not depend on the seed');
      const identity = lens.explainSentence({ text: 'one two three', identity: true, dModel: 8, heads: 1 });
      const eye = Float32Array.from({ length: 64 }, (_, i) => (i % 9 === 0 ? 1 : 0));
      for (const name of ['wq', 'wk', 'wv', 'wo']) assertBitIdentical(identity[name], eye, name);
      assertClose(identity.q, identity.x, { atol: 0, rtol: 0, label: 'q = x' });
    });

    test('hostile text: HTML, emoji, lone surrogates and control characters', () => {
      const html = lens.explainSentence({ text: '<script>alert("x")</script>' });
      assert.deepEqual(html.tokens, ['<', 'script', '>', 'alert', '(', '"', 'x', '"', ')', '<', '/', 'script', '>']);
      const emoji = lens.explainSentence({ text: 'I ❤️ 🐈 café 日本 👨‍👩‍👧!' });
      assert.deepEqual(emoji.tokens, ['I', '❤️', '🐈', 'café', '日本', '👨‍👩‍👧', '!']);
      const surrogates = lens.explainSentence({ text: 'a \uD800 b \uDC00c' });
      assert.deepEqual(surrogates.tokens, ['a', '\uFFFD', 'b', '\uFFFDc']);
      const control = lens.explainSentence({ text: 'a\u0000b\u0007c\td\r\ne\u007f\u001bf' });
      assert.deepEqual(control.tokens, ['a', 'b', 'c', 'd', 'e', 'f']);
      for (const result of [html, emoji, surrogates, control]) {
        assert.ok(result.weights.every(Number.isFinite) && result.output.every(Number.isFinite));
      }
    });

    test('token limits: maxTokens works, one more is a RangeError naming the argument', () => {
      const full = lens.explainSentence({ text: 'w '.repeat(lens.maxTokens), dModel: 4, heads: 1 });
      assert.equal(full.n, lens.maxTokens);
      assert.equal(full.weights.length, lens.maxTokens ** 2);
      assert.throws(() => lens.explainSentence({ text: 'word '.repeat(2000) }),
        (error) => error instanceof RangeError && /explainSentence: text must have at most maxTokens = 1024 tokens, got 2000 tokens/.test(error.message));
      assert.throws(() => lens.explainSentence({ text: 'ok', context: '. '.repeat(1025) }),
        (error) => error instanceof RangeError && /context must have at most maxTokens = 1024 tokens, got 1025 tokens/.test(error.message));
      for (const text of ['', '   \n\t ', '\u0000\u0001']) {
        assert.throws(() => lens.explainSentence({ text }), (error) => error instanceof RangeError && /text must contain at least one word or symbol, got /.test(error.message));
      }
      assert.throws(() => lens.explainSentence({ text: 'ok', context: '' }), (error) => error instanceof RangeError && /context must contain at least one word or symbol, got ""/.test(error.message));
      assert.throws(() => lens.explainSentence({ text: 'x'.repeat(2 ** 20 + 1) }),
        (error) => error instanceof RangeError && /text must be at most 1048576 characters long, got 1048577 characters/.test(error.message));
      assert.deepEqual(lens.explainSentence({ text: 'still works' }).tokens, ['still', 'works']);
    });
  });
}

test('SIMD and scalar modules: identical pipeline inputs, matching attention', () => {
  const options = { text: 'Every head sees every token, differently.', dModel: 24, heads: 3, causal: true };
  const a = simdLens.explainSentence(options), b = scalarLens.explainSentence(options);
  assert.deepEqual(a.tokens, b.tokens);
  for (const name of ['x', 'wq', 'wk', 'wv', 'wo']) assertBitIdentical(a[name], b[name], name);
  for (const name of ['q', 'scores', 'weights', 'output']) assertClose(a[name], b[name], { atol: 1e-5, label: name });
});

test('every record carries the options it was computed with, and its numbers agree with them', () => {
  const sentence = simdLens.explainSentence({ text: 'the cat sat on the mat', context: 'le chat', dModel: 16, heads: 2,
    causal: false, temperature: 0.5 });
  assert.deepEqual({ temperature: sentence.temperature, causal: sentence.causal, crossAttention: sentence.crossAttention,
    architecture: sentence.architecture, kvHeads: sentence.kvHeads, keyMask: sentence.keyMask },
  { temperature: 0.5, causal: false, crossAttention: true, architecture: null, kvHeads: 2, keyMask: null });
  // scaledScores = scores * scale / temperature, so the temperature in the record is the one applied.
  const i = sentence.scores.findIndex((score) => Math.abs(score) > 1e-3);
  assertClose([sentence.scaledScores[i]], [sentence.scores[i] * sentence.scale / sentence.temperature], { atol: 1e-5 });

  const n = 3, dModel = 4;
  const identity = new Float32Array(dModel * dModel).map((_, index) => (index % (dModel + 1) === 0 ? 1 : 0));
  const keyMask = new Uint8Array([1, 0, 1]);
  const matrices = simdLens.explainMatrices({ x: new Float32Array(n * dModel).fill(0.25), n, dModel, heads: 2,
    wq: identity, wk: identity, wv: identity, causal: true, keyMask });
  assert.deepEqual({ temperature: matrices.temperature, causal: matrices.causal, crossAttention: matrices.crossAttention,
    kvHeads: matrices.kvHeads, keyMask: Array.from(matrices.keyMask) },
  { temperature: 1, causal: true, crossAttention: false, kvHeads: 2, keyMask: [1, 0, 1] });
  keyMask[0] = 0;
  assert.equal(matrices.keyMask[0], 1, 'the record keeps its own copy of the mask');
  // Causal and masked: query 2 sees keys 0 and 2 only (key 1 is masked), query 1 sees key 0 only.
  for (let head = 0; head < 2; head++) {
    const w = (query, key) => matrices.weights[(head * n + query) * n + key];
    assert.deepEqual([w(1, 1), w(1, 2), w(2, 1)], [0, 0, 0]);
    assertClose([w(1, 0)], [1], { atol: 1e-6 });
  }
});
