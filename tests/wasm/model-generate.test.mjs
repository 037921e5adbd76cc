// model.generate on decoder-only models: greedy decoding equals the argmax
// of model.run's last row, token by token; the trained sort-gpt2 sorts its
// digits; end-of-sequence stops it; bad options are refused with nothing
// left allocated.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sortFiles } from '../support/sort-gpt2.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { loadBoth } from './helpers.mjs';
import { idsFor } from './model-checks.mjs';

const [lens] = await loadBoth();
const text = (bytes) => new TextDecoder().decode(bytes);
const argmax = (row) => row.reduce((best, value, i) => (value > row[best] ? i : best), 0);

test('sort-gpt2 generates its six digits sorted, as greedy decoding with run does', async () => {
  const model = await lens.loadModel({
    config: text(sortFiles['config.json']), weights: sortFiles['model.safetensors'], tokenizer: text(sortFiles['tokenizer.json']),
  });
  try {
    for (const digits of ['2 0 1 1 0 2', '1 2 0 2 2 1', '0 0 2 1 0 0']) {
      const seen = [];
      const generated = model.generate({ text: digits, maxTokens: 6, onToken: ({ id, index }) => seen.push([index, id]) });
      const sorted = digits.split(' ').map(Number).sort();
      assert.deepEqual(Array.from(generated.ids), sorted, digits);
      assert.deepEqual(generated.tokens, sorted.map(String));
      assert.deepEqual(seen, sorted.map((id, index) => [index, id]));
      assert.deepEqual(Array.from(generated.promptIds), digits.split(' ').map(Number));
      assert.equal(generated.text.replace(/\s+/g, ''), sorted.join(''));
    }
    assert.throws(() => model.generate({ text: '2 0 1 1 0 2', maxTokens: 7 }),
      /maxTokens must be an integer from 1 to 6 \(the model's positions less the prompt, plus 1\), got 7/);
    assert.equal(model.generate({ text: '0 1 2 0 1 2 0 1 2 0 1', maxTokens: 1 }).ids.length, 1, 'a full prompt still predicts one token');
    assert.throws(() => model.generate({ text: '0 1 2 0 1 2 0 1 2 0 1', maxTokens: 2 }), /maxTokens must be an integer from 1 to 1/);
  } finally {
    model.dispose();
  }
});

test('a tiny GPT-2: generate is run\'s argmax token by token, and stops after eos_token_id', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'gpt2', dtype: 'F32', seed: 12 });
  const model = await lens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
  try {
    const prompt = idsFor(model.info.vocabSize, 5, 3);
    const generated = model.generate({ ids: prompt, maxTokens: 6 });
    const context = [...prompt];
    for (const id of generated.ids) {
      assert.equal(id, argmax(model.run({ ids: context, logits: 'last' }).logits));
      context.push(id);
    }
    assert.equal(generated.ids.length, 6);
    assert.equal(generated.text, null);
    assert.equal(generated.crossAttention, undefined);
    const eos = generated.ids[2];
    const stopping = await lens.loadModel({ config: { ...checkpoint.config, eos_token_id: [999, eos] }, weights: checkpoint.files['model.safetensors'] });
    try {
      const stopped = stopping.generate({ ids: prompt, maxTokens: 6 });
      assert.equal(stopped.ids.at(-1), eos);
      assert.ok(stopped.ids.length <= 3, 'it stops at the first end-of-sequence token');
      assert.deepEqual(Array.from(stopped.ids), Array.from(generated.ids.subarray(0, stopped.ids.length)));
    } finally {
      stopping.dispose();
    }
    const before = lens.heapBytesInUse();
    for (const [options, message] of [
      [{ ids: prompt }, /maxTokens must be an integer/],
      [{ ids: prompt, maxTokens: 2.5 }, /maxTokens must be an integer/],
      [{ ids: prompt, maxTokens: 2, onToken: 'no' }, /onToken must be a function/],
      [{ ids: prompt, maxTokens: 2, extra: 1 }, /unknown option "extra"/],
      [{ ids: [], maxTokens: 2 }, /ids must hold at least one token id/],
      [{ ids: prompt, maxTokens: 2, onToken: () => model.generate({ ids: prompt, maxTokens: 1 }) }, /this model is generating/],
    ]) {
      assert.throws(() => model.generate(options), message);
      assert.equal(lens.heapBytesInUse(), before);
    }
  } finally {
    model.dispose();
  }
});

test('a model without an LM head has nothing to generate with', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'bert', dtype: 'F32', seed: 2 });
  const model = await lens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
  try {
    assert.throws(() => model.generate({ ids: [1, 2], maxTokens: 2 }), /model\.generate: this model has no LM head/);
  } finally {
    model.dispose();
  }
});
