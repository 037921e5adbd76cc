// The tiny date translator shipped in web/models/tiny-translator (a BART
// trained by web/models/train/train_translator.py) run by attnlens's own
// encoder-decoder core, against what the training's independent torch model
// (web/models/train/bart.py, written from transformers' modeling_bart.py)
// computed on held-out dates (tests/fixtures/tiny-translator-reference.json,
// written by translator_heads.py): the tokenizer's ids, greedy decoding, the
// logits of the date's characters, each row's log-sum-exp over the whole
// vocabulary, and every encoder, decoder and cross-attention weight.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { loadBoth } from './helpers.mjs';

const folder = new URL('../../web/models/tiny-translator/', import.meta.url);
const cases = JSON.parse(readFileSync(new URL('../fixtures/tiny-translator-reference.json', import.meta.url), 'utf8'));
const read = (name) => readFileSync(new URL(name, folder));

// Largest |attnlens - torch| over nested [layer][head][row][column] lists
// against the flat [layer][head][row][column] array.
function largestDifference(expected, actual) {
  const flat = expected.flat(3);
  assert.equal(flat.length, actual.length, 'the same number of weights');
  return flat.reduce((largest, value, i) => Math.max(largest, Math.abs(value - actual[i])), 0);
}

const logSumExp = (row) => {
  const top = Math.max(...row);
  return top + Math.log(row.reduce((sum, value) => sum + Math.exp(value - top), 0));
};

for (const lens of await loadBoth()) {
  test(`tiny-translator (${lens.simdLevel}): attnlens's BART equals the training's torch model on held-out dates`, async () => {
    const model = await lens.loadModel({
      config: read('config.json').toString(), weights: read('model.safetensors'), tokenizer: read('tokenizer.json').toString(),
    });
    try {
      assert.equal(model.info.modelType, 'bart');
      assert.equal(model.info.encoderDecoder, true);
      for (const c of cases) {
        assert.deepEqual(Array.from(model.tokenize(c.text).ids), c.sourceIds, `${c.text}: the tokenizer's ids`);
        const generated = model.generate({ text: c.text, maxTokens: 20 });
        assert.deepEqual(Array.from(generated.ids), c.generatedIds, `${c.text}: greedy decoding`);
        assert.equal(generated.text, c.target, `${c.text}: the ISO date, special tokens skipped`);
        assert.match(model.decode(generated.ids), /^<s>.*<\/s>$/, 'decode keeps the special tokens unless asked');

        const run = model.run({ ids: c.sourceIds, targetIds: c.targetIds });
        const V = model.info.vocabSize;
        c.logits.forEach((watched, position) => {
          const row = run.logits.subarray(position * V, (position + 1) * V);
          watched.forEach((value, i) => assert.ok(Math.abs(row[c.watchedIds[i]] - value) < 2e-3,
            `${c.text}: logit of id ${c.watchedIds[i]} at target position ${position}: ${row[c.watchedIds[i]]} vs ${value}`));
          assert.ok(Math.abs(logSumExp(row) - c.logsumexp[position]) < 2e-3, `${c.text}: log-sum-exp at ${position}`);
        });
        // F16 weights widened exactly on both sides; the rest is float32 rounding.
        assert.ok(largestDifference(c.encoderAttention, run.attention) < 1e-4, `${c.text}: encoder self-attention`);
        assert.ok(largestDifference(c.decoderAttention, run.decoderAttention) < 1e-4, `${c.text}: decoder self-attention`);
        assert.ok(largestDifference(c.crossAttention, run.crossAttention) < 1e-4, `${c.text}: cross-attention`);
      }
    } finally {
      model.dispose();
    }
  });
}
