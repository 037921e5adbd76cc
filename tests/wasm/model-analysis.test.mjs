// model.analyze and model.inductionScores against float64 references written
// here from model.run's attention: each detector as sum(A o P) / sum(A) over
// its 0/1 pattern (TransformerLens' detect_head "mul" with its defaults),
// rollout as the product of 0.5 * mean-of-heads + 0.5 * I. On tiny random
// GPT-2, Llama and BERT checkpoints, the trained sort-gpt2 and the shipped
// tiny-english, whose previous-token head (layer 0, head 1) must score highest.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { seededRandom } from '../../web/lib/model/seeded-random.js';
import { DETECTORS, referenceRollout, referenceScores } from '../support/analysis-reference.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertClose, loadBoth, repoRoot } from './helpers.mjs';

const lenses = await loadBoth();

const tiny = (arch, naming, seed) => {
  const checkpoint = tinyCheckpoint({ arch, naming, dtype: 'F32', seed });
  return { config: checkpoint.config, weights: checkpoint.files['model.safetensors'] };
};
const sortFolder = `${repoRoot}../shared/models/sort-gpt2`;
const englishFolder = `${repoRoot}web/models/tiny-english`;
const checkpoints = {
  'tiny gpt2': tiny('gpt2', 'bare', 31),
  'tiny llama': tiny('llama', 'gqa', 32),
  'tiny bert': tiny('bert', 'bare', 33),
  'sort-gpt2': { config: readFileSync(`${sortFolder}/config.json`, 'utf8'), weights: readFileSync(`${sortFolder}/model.safetensors`) },
  'tiny-english': {
    config: readFileSync(`${englishFolder}/config.json`, 'utf8'),
    weights: readFileSync(`${englishFolder}/model.safetensors`),
    tokenizer: readFileSync(`${englishFolder}/tokenizer.json`, 'utf8'),
  },
};

// Seeded ids with repeats (a small alphabet), so duplicate and induction are not all 0.
function idsWithRepeats(vocabSize, n, seed) {
  const next = seededRandom(seed), alphabet = Math.min(vocabSize, 5);
  return Array.from({ length: n }, () => Math.floor(next() * alphabet));
}

for (const lens of lenses) {
  const label = lens.simd ? 'simd' : 'scalar';

  for (const [name, files] of Object.entries(checkpoints)) {
    test(`analyze (${label}, ${name}): every detector and the rollout match float64 references from model.run`, async () => {
      const model = await lens.loadModel(files);
      try {
        const { layers, heads, vocabSize } = model.info;
        const inputs = [{ ids: idsWithRepeats(vocabSize, Math.min(13, model.info.maxPositions), 3) }, { ids: [0] }];
        if (model.info.tokenizer) inputs.push({ text: 'The cat sat on the mat because the cat was tired.' });
        for (const input of inputs) {
          const before = lens.heapBytesInUse();
          const result = model.analyze(input);
          assert.equal(lens.heapBytesInUse(), before, 'analyze left memory allocated');
          const run = model.run({ ...input, logits: 'none' });
          assert.deepEqual(Array.from(result.ids), Array.from(run.ids));
          assert.deepEqual(result.tokens, run.tokens);
          assert.deepEqual([result.n, result.layers, result.heads], [run.n, layers, heads]);
          const expected = referenceScores(run.attention, Array.from(run.ids), layers, heads);
          assert.deepEqual(Object.keys(result.scores), DETECTORS);
          for (const detector of DETECTORS) {
            assert.ok(result.scores[detector] instanceof Float32Array);
            assertClose(result.scores[detector], expected[detector], { atol: 1e-5, rtol: 1e-5, label: detector });
          }
          const n = run.n;
          assertClose(result.rollout, referenceRollout(run.attention, n, layers, heads), { atol: 1e-5, rtol: 1e-4, label: 'rollout' });
          for (let row = 0; row < layers * n; row++) {
            let sum = 0;
            for (let j = 0; j < n; j++) sum += result.rollout[row * n + j];
            assert.ok(Math.abs(sum - 1) < 1e-4, `rollout row ${row} sums to ${sum}`);
          }
        }
        // No repeats in the text: duplicate and induction are 0, as TransformerLens gives.
        const distinct = model.analyze({ ids: Array.from({ length: Math.min(vocabSize, 6) }, (_, i) => i) });
        for (const detector of ['duplicateToken', 'induction']) assert.ok(distinct.scores[detector].every((s) => s === 0), detector);
      } finally {
        model.dispose();
      }
    });
  }

  test(`inductionScores (${label}): the second copy's attention to the token after the first, from model.run`, async () => {
    const model = await lens.loadModel(checkpoints['tiny-english']);
    try {
      const { layers, heads } = model.info;
      const before = lens.heapBytesInUse();
      const scores = model.inductionScores({ length: 20, seed: 7 });
      assert.equal(lens.heapBytesInUse(), before, 'inductionScores left memory allocated');
      assert.ok(scores instanceof Float32Array && scores.length === layers * heads);
      // The documented generator: mulberry32(seed), id = floor(u * vocabSize), special tokens (<|endoftext|> = 1023) redrawn.
      const next = seededRandom(7), once = [];
      while (once.length < 20) {
        const id = Math.floor(next() * model.info.vocabSize);
        if (id !== 1023) once.push(id);
      }
      const ids = [...once, ...once], n = ids.length;
      const { attention } = model.run({ ids, logits: 'none' });
      const expected = Array.from({ length: layers * heads }, (_, head) => {
        let sum = 0;
        for (let i = 20; i < n; i++) sum += attention[(head * n + i) * n + i - 19];
        return sum / 20;
      });
      assertClose(scores, expected, { atol: 1e-5, rtol: 1e-5, label: 'induction' });
      assert.deepEqual(Array.from(model.inductionScores({ length: 20, seed: 7 })), Array.from(scores), 'same seed, same scores');
      assert.notDeepEqual(Array.from(model.inductionScores({ length: 20, seed: 8 })), Array.from(scores));
      assert.equal(model.inductionScores().length, layers * heads, 'defaults: length 50, seed 1');
    } finally {
      model.dispose();
    }
  });

  test(`analyze (${label}): tiny-english's previous-token head is layer 0, head 1`, async () => {
    const model = await lens.loadModel(checkpoints['tiny-english']);
    try {
      // Summed over held-out documents, as the guide's table averages over them.
      const documents = readFileSync(`${englishFolder}/heldout-sample.txt`, 'utf8').split('\n%\n').slice(0, 20);
      const { heads } = model.info, previous = new Float64Array(model.info.layers * heads);
      for (const text of documents) model.analyze({ text }).scores.previousToken.forEach((s, head) => { previous[head] += s / documents.length; });
      const best = previous.indexOf(Math.max(...previous));
      assert.deepEqual([Math.floor(best / heads), best % heads], [0, 1], `previous-token scores ${previous}`);
      assert.ok(previous[1] > 0.4, `layer 0 head 1 scores ${previous[1]}`);
    } finally {
      model.dispose();
    }
  });

  test(`analyze and inductionScores (${label}): bad input is refused by name, nothing leaks`, async () => {
    const model = await lens.loadModel(checkpoints['sort-gpt2']);
    try {
      const { vocabSize, maxPositions } = model.info;
      const before = lens.heapBytesInUse();
      const refusals = [
        [() => model.analyze({ ids: [0, vocabSize] }), RangeError, /model\.analyze: ids\[1\] must be an integer from 0/],
        [() => model.analyze({ ids: [] }), RangeError, /model\.analyze: ids must hold at least one token id/],
        [() => model.analyze({ ids: new Array(maxPositions + 1).fill(0) }), RangeError, /more than the model's/],
        [() => model.analyze({ ids: [0], topk: 3 }), TypeError, /model\.analyze: unknown option "topk"/],
        [() => model.analyze(), TypeError, /model\.analyze: expected an options object/],
        [() => model.inductionScores({ length: 0 }), RangeError, /model\.inductionScores: length must be an integer from 1 to 5 \(two copies must fit the model's 11 positions\), got 0/],
        [() => model.inductionScores({ length: 6 }), RangeError, /length must be an integer from 1 to 5 .*, got 6/],
        [() => model.inductionScores(), RangeError, /length must be an integer from 1 to 5 .*, got 50/],  // the default is too long here
        [() => model.inductionScores({ length: 2.5 }), RangeError, /length must be an integer .*, got 2\.5/],
        [() => model.inductionScores({ length: 2, seed: -1 }), RangeError, /model\.inductionScores: seed must be an integer from 0 to 4294967295, got -1/],
        [() => model.inductionScores({ length: 2, seed: '1' }), RangeError, /seed must be an integer/],
        [() => model.inductionScores({ length: 2, seed: 2 ** 32 }), RangeError, /seed must be an integer/],
        [() => model.inductionScores({ length: 2, seed: 1.5 }), RangeError, /seed must be an integer/],
        [() => model.inductionScores({ period: 3 }), TypeError, /unknown option "period"/],
        [() => model.inductionScores(null), TypeError, /expected an options object \{ length, seed \}/],
      ];
      for (const [call, kind, message] of refusals) assert.throws(call, (error) => error instanceof kind && message.test(error.message));
      assert.equal(lens.heapBytesInUse(), before);
      assert.equal(maxPositions, 11);
      // topK's default, 5, shrinks to sort-gpt2's 3-token vocabulary: every token, probabilities summing to 1.
      const logitLens = model.analyze({ ids: [0] }).logitLens;
      assert.equal(logitLens.ids.length, model.info.layers * 3);
      assert.ok(Math.abs(logitLens.probs.subarray(-3).reduce((a, b) => a + b, 0) - 1) < 1e-5);
      assert.throws(() => model.analyze({ ids: [0], topK: 4 }), /model\.analyze: topK must be an integer from 1 to 3 \(the vocabulary size\), got 4/);
      assert.equal(vocabSize, 3);
      const longest = model.inductionScores({ length: 5, seed: 3 });  // 10 of its 11 positions
      assert.ok(longest.length === 9 && longest.every((s) => s >= 0 && s <= 1), `${longest}`);
      assert.equal(lens.heapBytesInUse(), before);
      model.dispose();
      assert.throws(() => model.analyze({ ids: [0] }), /model\.analyze: this model was disposed/);
      assert.throws(() => model.inductionScores(), /model\.inductionScores: this model was disposed/);
    } finally {
      model.dispose();
    }
  });
}
