// config.json's bad_words_ids in model.generate, as transformers' generate
// reads it (opus-mt configs list [[pad]]): a barred token is never chosen, and
// a longer sequence's last token is barred only right after the tokens before
// it. The reference is greedy decoding by hand over model.run's logits with
// those ids left out; a malformed bad_words_ids is refused when loading.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seq2seqCheckpoint } from '../support/model-reference-seq2seq.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { load, simdLevelUnderTest } from './helpers.mjs';
import { idsFor } from './model-checks.mjs';

const lens = await load({ simd: simdLevelUnderTest });
const argmaxWithout = (row, barred) => row.reduce((best, value, i) => (!barred.includes(i) && (best < 0 || value > row[best]) ? i : best), -1);

// Greedy by hand: each step's logits row (from `logitsAfter(context)`), `barredAfter(context)` left out.
function greedyByHand(steps, context, logitsAfter, barredAfter) {
  const ids = [];
  for (let step = 0; step < steps; step++) {
    const id = argmaxWithout(logitsAfter(context), barredAfter(context));
    ids.push(id);
    context = [...context, id];
  }
  return ids;
}

async function withModel(checkpoint, config, body) {
  const model = await lens.loadModel({ config, weights: checkpoint.files['model.safetensors'] });
  try {
    return body(model);
  } finally {
    model.dispose();
  }
}

test('an encoder-decoder (Marian): a barred token is never generated; a pair bars its second token only after its first', async () => {
  const checkpoint = seq2seqCheckpoint({ family: 'marian', seed: 7, eos_token_id: 39 });
  const source = [3, 4, 5, 6, 7, 8];
  const steps = 6;
  const free = await withModel(checkpoint, checkpoint.config, (model) => Array.from(model.generate({ ids: source, maxTokens: steps }).ids));
  assert.equal(free.length, steps);
  const [first, second] = free;
  const logitsAfter = (model) => (context) => {
    const { logits } = model.run({ ids: source, targetIds: context });
    return Array.from(logits.subarray((context.length - 1) * 40, context.length * 40));
  };
  await withModel(checkpoint, { ...checkpoint.config, bad_words_ids: [[first]] }, (model) => {
    const generated = Array.from(model.generate({ ids: source, maxTokens: steps }).ids);
    assert.ok(!generated.includes(first), `${first} is barred: ${generated}`);
    assert.deepEqual(generated, greedyByHand(steps, [model.info.decoderStartId], logitsAfter(model), () => [first]));
  });
  await withModel(checkpoint, { ...checkpoint.config, bad_words_ids: [[first, second], [1234 % 40, 5, 6]] }, (model) => {
    const generated = Array.from(model.generate({ ids: source, maxTokens: steps }).ids);
    assert.equal(generated[0], first, 'the pair\'s first token is free');
    assert.notEqual(generated[1], second, 'its second is barred right after it');
    const barredAfter = (context) => [
      ...(context.at(-1) === first ? [second] : []),
      ...(context.length >= 2 && context.at(-2) === 1234 % 40 && context.at(-1) === 5 ? [6] : [])];
    assert.deepEqual(generated, greedyByHand(steps, [model.info.decoderStartId], logitsAfter(model), barredAfter));
  });
});

test('a decoder-only model: the prompt counts as context for a bad sequence', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'gpt2', dtype: 'F32', seed: 12 });
  const prompt = idsFor(checkpoint.config.vocab_size, 5, 3);
  const free = await withModel(checkpoint, checkpoint.config, (model) => Array.from(model.generate({ ids: prompt, maxTokens: 4 }).ids));
  const bad = [prompt.at(-1), free[0]]; // bars free[0] right after the prompt's last token
  await withModel(checkpoint, { ...checkpoint.config, bad_words_ids: [bad] }, (model) => {
    const generated = Array.from(model.generate({ ids: prompt, maxTokens: 4 }).ids);
    assert.notEqual(generated[0], free[0]);
    const logitsAfter = (context) => Array.from(model.run({ ids: context, logits: 'last' }).logits);
    const barredAfter = (context) => (context.at(-1) === bad[0] ? [bad[1]] : []);
    assert.deepEqual(generated, greedyByHand(4, prompt, logitsAfter, barredAfter).slice(0, generated.length));
  });
});

test('a malformed bad_words_ids is refused by name, with nothing left allocated', async () => {
  const checkpoint = seq2seqCheckpoint({ family: 'marian', seed: 2 });
  const before = lens.heapBytesInUse();
  for (const bad of ['1', [1], [[]], [[-1]], [[40]], [[1.5]]]) {
    await assert.rejects(lens.loadModel({ config: { ...checkpoint.config, bad_words_ids: bad }, weights: checkpoint.files['model.safetensors'] }),
      (error) => error instanceof RangeError && /config.json "bad_words_ids" must be a list of non-empty lists of token ids from 0 to 39/.test(error.message));
    assert.equal(lens.heapBytesInUse(), before);
  }
});
