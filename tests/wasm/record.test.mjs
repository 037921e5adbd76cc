// The one record of a multi-head layer: explainMatrices, explainSentence and
// model.explain return the same keys (a model's adds its own: ids, layer, head, layerOutput and the math around the layer), and
// each record carries the options it was computed with, as the core ran
// them (src/bindings/record.hpp), not as JavaScript recalls them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertBitIdentical, loadBoth } from './helpers.mjs';

const lenses = await loadBoth();

const RECORD_KEYS = ['tokens', 'contextTokens', 'n', 'nContext', 'dModel', 'heads', 'kvHeads', 'headWidth', 'scale',
  'temperature', 'causal', 'keyMask', 'crossAttention', 'window', 'qkvBias', 'outputBias', 'architecture', 'x', 'contextX', 'wq', 'wk', 'wv', 'wo', 'q',
  'k', 'v', 'scores', 'scaledScores', 'weights', 'concatenatedHeads', 'output', 'elapsedMs'];
const MODEL_KEYS = [...RECORD_KEYS, 'ids', 'layer', 'head', 'layerOutput', 'norm', 'position', 'rotaryWidth', 'parallelResidual', 'postNorm',
  'positionBias', 'kind'];
const sorted = (keys) => [...keys].sort();

// Small deterministic values (a fixed pattern: no seeded generator needed).
const pattern = (length, offset) => Float32Array.from({ length }, (_, i) => Math.sin(i * 1.7 + offset) / 2);

for (const lens of lenses) {
  const label = lens.simdLevel;

  test(`${label}: explainMatrices' record holds its options and its inputs`, () => {
    const n = 3, nContext = 4, dModel = 4, heads = 2;
    const x = pattern(n * dModel, 1), context = pattern(nContext * dModel, 2);
    const wq = pattern(16, 3), wk = pattern(16, 4), wv = pattern(16, 5);
    const keyMask = new Uint8Array([1, 0, 1, 1]);
    const record = lens.explainMatrices({ x, n, dModel, heads, wq, wk, wv, context, nContext, causal: true, keyMask,
      temperature: 0.7 });
    assert.deepEqual(sorted(Object.keys(record)), sorted(RECORD_KEYS));
    assert.equal(record.temperature, 0.7);  // the float32 0.7 reported as the decimal given
    assert.equal(record.causal, true);
    assert.deepEqual(Array.from(record.keyMask), [1, 0, 1, 1]);
    assert.notEqual(record.keyMask, keyMask);  // a copy: the caller may reuse its mask
    assert.equal(record.crossAttention, true);
    assert.equal(record.architecture, null);
    assert.equal(record.tokens, null);
    assert.equal(record.contextTokens, null);
    assert.deepEqual([record.n, record.nContext, record.dModel, record.heads, record.kvHeads, record.headWidth],
      [3, 4, 4, 2, 2, 2]);
    assert.equal(record.scale, 1 / Math.sqrt(2));
    assertBitIdentical(record.x, x, 'x');
    assertBitIdentical(record.contextX, context, 'contextX');
    assertBitIdentical(record.wq, wq, 'wq');
    assertBitIdentical(record.wv, wv, 'wv');
    assertBitIdentical(record.wo, Float32Array.from({ length: 16 }, (_, i) => (i % 5 === 0 ? 1 : 0)), 'wo (identity)');
    // The key mask and the causal alignment hide exactly these scaled scores.
    for (let h = 0; h < heads; h++) {
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < nContext; j++) {
          const hidden = keyMask[j] === 0 || j > i + (nContext - n);
          assert.equal(record.scaledScores[(h * n + i) * nContext + j] === -Infinity, hidden, `head ${h} [${i}][${j}]`);
        }
      }
    }
  });

  test(`${label}: explainSentence's record holds its tokens and options`, () => {
    const record = lens.explainSentence({ text: 'The cat sat.', dModel: 8, heads: 2, temperature: 1.3, causal: true });
    assert.deepEqual(sorted(Object.keys(record)), sorted(RECORD_KEYS));
    assert.deepEqual(record.tokens, ['The', 'cat', 'sat', '.']);
    assert.deepEqual(record.contextTokens, record.tokens);
    assert.equal(record.temperature, 1.3);
    assert.equal(record.causal, true);
    assert.equal(record.keyMask, null);
    assert.equal(record.crossAttention, false);
    assert.equal(record.architecture, null);
    assert.equal(record.kvHeads, 2);
    assertBitIdentical(record.contextX, record.x, 'contextX (self-attention)');
    assert.notEqual(record.contextX, record.x);
  });

  test(`${label}: model.explain's record adds ids, layer, head and layerOutput; GQA shows in kvHeads`, async () => {
    const checkpoint = tinyCheckpoint({ arch: 'llama', naming: 'gqa', seed: 3 });
    const model = await lens.loadModel({ config: checkpoint.files['config.json'],
      weights: checkpoint.files['model.safetensors'] });
    try {
      const ids = [1, 4, 2, 7];
      const keyMask = new Uint8Array([1, 1, 0, 1]);
      const record = model.explain({ ids, keyMask, layer: 1, head: 1 });
      assert.deepEqual(sorted(Object.keys(record)), sorted(MODEL_KEYS));
      assert.equal(record.architecture, 'llama');
      assert.equal(record.kvHeads, model.info.kvHeads);
      assert.ok(record.kvHeads < record.heads, `${record.kvHeads} kv heads, ${record.heads} heads`);
      assert.equal(record.causal, true);
      assert.equal(record.temperature, 1);
      assert.equal(record.crossAttention, false);
      assert.deepEqual(Array.from(record.keyMask), [1, 1, 0, 1]);
      assert.equal(record.layer, 1);
      assert.equal(record.head, 1);
      assert.deepEqual([record.kind, record.positionBias], [null, false], 'one stack, no score bias');
      assert.deepEqual(Array.from(record.ids), ids);
      assert.deepEqual([record.n, record.nContext, record.dModel], [4, 4, model.info.dModel]);
      assert.equal(record.scale, 1 / Math.sqrt(model.info.headWidth));
      assertBitIdentical(record.contextX, record.x, 'contextX');
      assert.equal(record.layerOutput.length, 4 * model.info.dModel);
    } finally {
      model.dispose();
    }
  });
}
