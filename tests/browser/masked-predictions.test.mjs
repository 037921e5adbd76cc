// A BERT checkpoint that carries its masked-LM head, opened on the built page
// in headless Chromium: a [MASK] typed in the sentence gets the head's top
// guesses, each checked against the float64 reference forward
// (tests/support/model-reference.mjs) on the page's own ids (one mask, two,
// side by side or apart); a sentence without a mask has no guesses and says
// how to ask for them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { referenceForward } from '../support/model-reference.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { openPageAroundTests, typeSentence, waitForResult } from './page-fixture.mjs';

// bert-base-uncased-like files (bert. prefix, gamma/beta, cls.predictions), and
// a vocab.txt as long as the config's vocabulary: the specials, then words.
const checkpoint = tinyCheckpoint({ arch: 'bert', naming: 'hub', dtype: 'F32', seed: 5 });
const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
const words = Array.from({ length: checkpoint.config.vocab_size - specials.length }, (_, i) => `w${i}`);
const vocab = [...specials, ...words];

let session;
let page;

openPageAroundTests(async (opened) => {
  session = opened;
  page = opened.page;
  await session.goto();
  await page.getByLabel(/^A trained model/).check();
  await page.locator('#model-files').setInputFiles([
    { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(checkpoint.files['config.json']) },
    { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from(checkpoint.files['model.safetensors']) },
    { name: 'vocab.txt', mimeType: 'text/plain', buffer: Buffer.from(`${vocab.join('\n')}\n`) },
  ]);
  await waitForResult(page, 'window.attnlens.last?.model?.lmHead === "masked"');
});

const lastRun = () => page.evaluate(() => {
  const { tokens, ids, maskPredictions, predictions } = window.attnlens.last;
  return { tokens, ids, maskPredictions, predictions };
});

// The softmax of one row of the reference logits, most probable first.
function referenceTop(ids, position, k) {
  const { logits } = referenceForward('bert', checkpoint.config, checkpoint.tensors, ids);
  const V = checkpoint.config.vocab_size;
  const row = Array.from(logits.subarray(position * V, (position + 1) * V));
  const max = Math.max(...row);
  const sum = row.reduce((total, value) => total + Math.exp(value - max), 0);
  return row.map((logit, id) => ({ id, probability: Math.exp(logit - max) / sum }))
    .sort((a, b) => b.probability - a.probability).slice(0, k);
}

// The page's guesses at each mask of the sentence, checked against the float64 reference.
async function assertMaskGuesses(sentence, tokens, positions) {
  await typeSentence(page, sentence, { tokens });
  const last = await lastRun();
  assert.equal(last.predictions, null, 'no next-token guess for an encoder');
  assert.deepEqual(last.maskPredictions.map(({ position }) => position), positions);
  for (const { position, predictions } of last.maskPredictions) {
    const expected = referenceTop(last.ids, position, predictions.length);
    assert.equal(predictions.length, 5);
    assert.deepEqual(predictions.map(({ id }) => id), expected.map(({ id }) => id), `position ${position}`);
    predictions.forEach(({ probability, token, id }, rank) => {
      assert.ok(Math.abs(probability - expected[rank].probability) < 1e-5, `position ${position} rank ${rank}`);
      assert.equal(token, vocab[id]);
    });
  }
  assert.equal(await page.locator('#predictions ol').count(), positions.length);
  assert.equal(await page.locator('#predictions li').count(), 5 * positions.length);
  return last;
}

test('a [MASK] in the sentence gets the masked-LM head\'s top guesses, as the float64 reference computes them', async () => {
  const last = await assertMaskGuesses('w1 [MASK] w7 [MASK]', ['[CLS]', 'w1', '[MASK]', 'w7', '[MASK]', '[SEP]'], [2, 4]);
  assert.match(await page.locator('#predictions h3').textContent(), /^Masked tokens: the model's top 5$/);
  const first = last.maskPredictions[0].predictions[0];
  assert.equal(await page.locator('#predictions li .prediction-token').first().textContent(), vocab[first.id]);
});

// The worker computes the mask positions' rows of logits only (computeLogits { positions }): one mask,
// two side by side (consecutive rows), and the text's first and last tokens masked (rows out of order
// from the middle of the kept ones), each as the reference guesses.
test('one mask, two side by side, and masks at both ends each get their own guesses', async () => {
  await assertMaskGuesses('w3 [MASK] w4', ['[CLS]', 'w3', '[MASK]', 'w4', '[SEP]'], [2]);
  await assertMaskGuesses('w3 [MASK] [MASK] w4', ['[CLS]', 'w3', '[MASK]', '[MASK]', 'w4', '[SEP]'], [2, 3]);
  await assertMaskGuesses('[MASK] w9 w2 [MASK]', ['[CLS]', '[MASK]', 'w9', 'w2', '[MASK]', '[SEP]'], [1, 4]);
});

test('without a mask token the panel says how to ask for a guess', async () => {
  await typeSentence(page, 'w1 w2', { tokens: ['[CLS]', 'w1', 'w2', '[SEP]'] });
  const last = await lastRun();
  assert.deepEqual(last.maskPredictions, []);
  assert.equal(await page.locator('#predictions li').count(), 0);
  assert.match(await page.locator('#predictions p.hint').textContent(), /No mask token in the sentence: type \[MASK\]/);
  assert.deepEqual(session.errors, [], 'console errors or uncaught exceptions in the page');
});
