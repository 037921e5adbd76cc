// model.analyze without the logit lens (the page's Analysis tab after every
// run: valueWeighted false too) runs a causal model's forward through what the
// model kept of its last run, value-weighted attention computed afterwards
// from the kept values: after a run of the same ids, of one token more or
// fewer, of an edited text, and with nothing kept, its scores, rollout and
// value-weighted attention are the bits of a fresh model's analysis (a second
// instance from the same bytes, nothing kept) and of the analysis that
// computes every position (the logit lens of one position, whose observer
// reads every position's state and computes the value-weighted attention
// during the forward). Like a run, it replaces what the model keeps: the last
// run's headWeights, layerWeights and computeLogits are refused, the
// analysis's result has them instead (a fresh run's bits), and the next run
// reuses the analysed positions. An encoder, the lens and inductionScores
// leave what the model keeps as it is, and their results have none.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertBitIdentical, loadBoth } from './helpers.mjs';

const lenses = await loadBoth();
const KEPT = /this run's (queries and keys|last-layer rows) are gone .* valid until the model's next run/;
const detectorsOnly = { valueWeighted: false, logitLens: false };
const withWeighted = { logitLens: false };  // valueWeighted: true, the default

const filesOf = (arch, naming, seed) => {
  const checkpoint = tinyCheckpoint({ arch, naming, dtype: 'F32', seed });
  return { config: checkpoint.config, weights: checkpoint.files['model.safetensors'] };
};

// A seeded generator of integers below `limit`.
function seeded(seed) {
  let state = seed >>> 0;
  return (limit) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % limit;
  };
}

function sameAnalysis(got, expected, label) {
  assert.deepEqual(Object.keys(got.scores), Object.keys(expected.scores), label);
  for (const [name, scores] of Object.entries(expected.scores)) assertBitIdentical(got.scores[name], scores, `${label}: ${name}`);
  assertBitIdentical(got.rollout, expected.rollout, `${label}: rollout`);
  if (expected.valueWeighted) assertBitIdentical(got.valueWeighted, expected.valueWeighted, `${label}: valueWeighted`);
  else assert.equal(got.valueWeighted, null, label);
  assert.deepEqual(Array.from(got.ids), Array.from(expected.ids), label);
}

// GPT-2 (learned positions), Llama (rotary, grouped-query), Mistral (a sliding window).
for (const lens of lenses) {
  for (const [arch, naming] of [['gpt2', 'bare'], ['llama', 'gqa'], ['mistral', 'window']]) {
    describe(`${lens.simdLevel} module, tiny ${arch} (${naming}): analyze through the kept cache`, async () => {
      const files = filesOf(arch, naming, 41);
      const model = await lens.loadModel(files);
      const fresh = await lens.loadModel(files);  // never runs: each of its analyses starts with nothing kept
      after(() => { model.dispose(); fresh.dispose(); });
      const { vocabSize, maxPositions } = model.info;
      // Repeats (a small alphabet) so that the duplicate and induction scores are not all 0.
      const random = seeded(7);
      const base = Array.from({ length: Math.min(14, maxPositions - 2) }, () => random(Math.min(vocabSize, 6)));

      // The analysis of `ids` by a model with nothing kept (detectors only, and with value-weighted
      // attention), each checked against the path that computes every position (the lens's observer).
      function references(ids, label) {
        fresh.dropCache();
        const everyPosition = fresh.analyze({ ids, logitLens: { positions: [0] } });
        const both = [detectorsOnly, withWeighted].map((options) => {
          fresh.dropCache();
          return fresh.analyze({ ids, ...options });
        });
        sameAnalysis(both[1], { ...everyPosition, logitLens: null }, `${label}: through the cache and computing every position`);
        sameAnalysis(both[0], { ...everyPosition, valueWeighted: null }, `${label}: detectors only`);
        return both;
      }

      test('after a run of the same, one longer, an edited text, and with nothing kept: the bits of a fresh analysis', () => {
        const cases = [
          ['nothing kept', null, base],
          ['the same ids as the run', base, base],
          ['one token more than the run', base, [...base, 3 % vocabSize]],
          ['one token fewer than the run', base, base.slice(0, -1)],
          ['an edit in the middle', base, base.with(5, (base[5] + 1) % vocabSize)],
          ['after an analysis (typing on)', null, [...base, 1, 2]],
        ];
        for (const [label, ran, ids] of cases) {
          const expected = references(ids, label);
          [detectorsOnly, withWeighted].forEach((options, index) => {
            if (label === 'nothing kept') model.dropCache();
            if (ran) model.run({ ids: ran, logits: 'none' });
            else if (index === 1 && label.startsWith('after an analysis')) model.analyze({ ids: ids.slice(0, -1), ...options });
            sameAnalysis(model.analyze({ ids, ...options }), expected[index], `${label}, ${JSON.stringify(options)}`);
          });
        }
      });

      test("the analysis replaces what the model keeps: the run's kept methods are refused, the next run reuses it", () => {
        for (const options of [detectorsOnly, withWeighted]) {
          const run = model.run({ ids: base });
          const analysis = model.analyze({ ids: [...base, 2], ...options });
          assert.equal(analysis.n, base.length + 1);
          for (const call of [() => run.headWeights(0, 0), () => run.layerWeights(0), () => run.computeLogits('last')]) {
            assert.throws(call, (error) => error instanceof Error && KEPT.test(error.message), JSON.stringify(options));
          }
        }
        const next = model.run({ ids: [...base, 2, 4], logits: 'none' });
        assert.equal(next.reusedPositions, base.length + 1, 'the analysed positions are kept');
        // The logit lens and induction compute every position and keep nothing: the last run's methods stay valid.
        model.analyze({ ids: base });
        model.analyze({ ids: base, valueWeighted: false, logitLens: { positions: [0] } });
        model.inductionScores({ length: 4, seed: 3 });
        const n = base.length + 2;
        assertBitIdentical(next.headWeights(0, 1), next.attention.subarray(n * n, 2 * n * n), 'headWeights after the other analyses');
      });

      test("the analysis's result reads the run the model kept of it: headWeights, layerWeights and computeLogits, a fresh run's bits", () => {
        const ids = [...base, 2];
        fresh.dropCache();
        const expected = fresh.run({ ids });  // every head, every row of logits
        fresh.dropCache();
        const weighted = fresh.run({ ids, logits: 'none', attention: { valueWeighted: true } }).attention;
        fresh.dropCache();
        const pooled = fresh.run({ ids, logits: 'none', attention: { pool: 3 } }).attention;
        const { layers, heads } = model.info, n = ids.length, side = Math.ceil(n / 3);
        const cases = [['nothing kept', null], ['after a run of the same ids', ids], ['after a run of fewer ids', base],
          ['after a run of other ids', base.with(0, (base[0] + 1) % vocabSize)]];
        for (const [label, ran] of cases) {
          for (const options of [detectorsOnly, withWeighted]) {
            const where = `${label}, ${JSON.stringify(options)}`;
            model.dropCache();
            if (ran) model.run({ ids: ran, logits: 'none' });
            const analysis = model.analyze({ ids, ...options });
            for (let layer = 0; layer < layers; layer++) {
              const layerAt = (array, size) => array.subarray(layer * heads * size, (layer + 1) * heads * size);
              for (let head = 0; head < heads; head++) {
                assertBitIdentical(analysis.headWeights(layer, head), layerAt(expected.attention, n * n).subarray(head * n * n, (head + 1) * n * n),
                  `${where}: headWeights(${layer}, ${head})`);
              }
              assertBitIdentical(analysis.layerWeights(layer), layerAt(expected.attention, n * n), `${where}: layerWeights(${layer})`);
              assertBitIdentical(analysis.layerWeights(layer, { valueWeighted: true }), layerAt(weighted, n * n), `${where}: value-weighted layer ${layer}`);
              assertBitIdentical(analysis.layerWeights(layer, { pool: 3 }), layerAt(pooled, side * side), `${where}: pooled layer ${layer}`);
            }
            assertBitIdentical(analysis.computeLogits('all'), expected.logits, `${where}: computeLogits('all')`);
            assertBitIdentical(analysis.computeLogits(), expected.logits.subarray((n - 1) * vocabSize), `${where}: computeLogits('last')`);
          }
        }
        // Plain data, as a run's result: the methods are not enumerable, and a structured clone drops them.
        const analysis = model.analyze({ ids, ...detectorsOnly });
        assert.deepEqual(Object.keys(analysis), ['ids', 'tokens', 'n', 'layers', 'heads', 'scores', 'rollout', 'valueWeighted', 'logitLens']);
        assert.equal(structuredClone(analysis).headWeights, undefined);
        const heapBefore = lens.heapBytesInUse();
        analysis.layerWeights(0, { valueWeighted: true, pool: 2 });
        analysis.computeLogits({ positions: [0, n - 1] });
        assert.equal(lens.heapBytesInUse(), heapBefore, 'the methods free what they allocate');
        // The lens and induction keep nothing new: this analysis's methods stay valid, and their results carry none.
        const lensed = model.analyze({ ids: base, valueWeighted: false, logitLens: { positions: [0] } });
        model.inductionScores({ length: 4, seed: 3 });
        assert.equal(['headWeights', 'layerWeights', 'computeLogits'].some((name) => name in lensed), false, 'the lens keeps no run');
        assertBitIdentical(analysis.headWeights(1, 0), expected.attention.subarray(heads * n * n, (heads + 1) * n * n), 'after the lens');
        // Like a run's, they end with the model's next run (or analysis through the cache, or dropCache).
        model.run({ ids: base, logits: 'none' });
        const ANALYSIS_KEPT = /^model\.analyze result (headWeights|layerWeights|computeLogits): this run's .* are gone .* valid until the model's next run/;
        for (const call of [() => analysis.headWeights(0, 0), () => analysis.layerWeights(0), () => analysis.computeLogits('last')]) {
          assert.throws(call, (error) => error instanceof Error && ANALYSIS_KEPT.test(error.message));
        }
      });

      test('nothing leaks: what the analysis keeps is what a run of its ids keeps, and dropCache frees it', () => {
        model.dropCache();
        const before = lens.heapBytesInUse();
        const ids = [...base, 5];
        model.analyze({ ids, ...detectorsOnly });
        const kept = lens.heapBytesInUse() - before;
        model.dropCache();
        const run = model.run({ ids, logits: 'none', attention: 'none' });
        // The allocator's few bytes of bookkeeping a block aside: less than one head's n x n weights.
        const { layers, heads } = model.info, attentionBytes = 4 * layers * heads * ids.length ** 2;
        assert.ok(kept >= run.cacheBytes && kept - run.cacheBytes < Math.min(512, 4 * ids.length ** 2),
          `the analysis kept ${kept} bytes, a run of its ids ${run.cacheBytes} (its attention: ${attentionBytes})`);
        model.dropCache();
        model.analyze({ ids, ...detectorsOnly });
        model.analyze({ ids: [...ids, 1], ...withWeighted });
        model.analyze({ ids: [...ids, 1, 2], ...withWeighted });
        model.dropCache();
        assert.equal(lens.heapBytesInUse(), before);
      });
    });
  }
}

describe('an encoder and induction scores keep the path that computes every position', async () => {
  const lens = lenses[0];
  test("an encoder's analysis leaves the run's kept queries and keys, its scores a fresh model's", async () => {
    const files = filesOf('bert', 'bare', 42);
    const model = await lens.loadModel(files);
    const fresh = await lens.loadModel(files);
    try {
      const ids = [1, 2, 3, 1, 2, 4, 5];
      const run = model.run({ ids });
      const weights = run.headWeights(1, 0);
      const before = lens.heapBytesInUse();
      for (const options of [detectorsOnly, withWeighted]) {
        sameAnalysis(model.analyze({ ids, ...options }), fresh.analyze({ ids, ...options }), `encoder, ${JSON.stringify(options)}`);
      }
      assert.equal(lens.heapBytesInUse(), before, 'an encoder analysis keeps nothing more');
      assert.equal('headWeights' in model.analyze({ ids, ...detectorsOnly }), false, 'an encoder\'s analysis keeps no run of its own');
      assertBitIdentical(run.headWeights(1, 0), weights, 'the run stays readable');
    } finally {
      model.dispose();
      fresh.dispose();
    }
  });

  test('inductionScores leaves the kept run as it is and scores as a fresh model does', async () => {
    const files = filesOf('gpt2', 'bare', 43);
    const model = await lens.loadModel(files);
    const fresh = await lens.loadModel(files);
    try {
      const ids = [4, 8, 15, 16, 23, 12];
      const run = model.run({ ids });
      assertBitIdentical(model.inductionScores({ length: 6, seed: 9 }), fresh.inductionScores({ length: 6, seed: 9 }), 'induction');
      assertBitIdentical(run.computeLogits('all'), run.logits, 'the run stays readable');
      assert.equal(model.run({ ids }).reusedPositions, ids.length - 1, 'the user\'s text is still kept');
    } finally {
      model.dispose();
      fresh.dispose();
    }
  });
});
