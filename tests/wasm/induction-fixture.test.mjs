// The two-layer GPT-2 of tests/fixtures/tiny-induction, trained once by
// web/models/train/train_induction.py on random tokens whose spans recur (the
// run and its settings: web/models/train/README.md, "The induction-head
// fixture"). Its layer-1 induction head must rank first by TransformerLens'
// induction score as attnlens computes it (model.inductionScores and
// model.analyze), its layer-0 partner first by the previous-token score, and
// every score must equal a float64 recomputation from the weights (the GPT-2
// forward of tests/support/model-reference.mjs, written from the formulas).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { seededRandom } from '../../web/lib/model/seeded-random.js';
import { referenceForward } from '../support/model-reference.mjs';
import { readSafetensors } from '../support/safetensors.mjs';
import { assertClose, loadBoth } from './helpers.mjs';

const folder = new URL('../fixtures/tiny-induction/', import.meta.url);
const read = (name) => readFileSync(new URL(name, folder));
const config = JSON.parse(read('config.json'));
const weights = read('model.safetensors');
const { summary } = JSON.parse(read('training-log.json'));
// The reference reads GPT-2's tensors by their names inside the transformer.
const tensors = Object.fromEntries(Object.entries(readSafetensors(weights).tensors)
  .map(([name, tensor]) => [name.replace(/^transformer\./, ''), tensor.values]));

const heads = config.n_head, layers = config.n_layer;
// Which heads the training's torch measurement named (layer-major index).
const inductionHead = summary.induction_head.layer * heads + summary.induction_head.head;
const previousTokenHead = summary.previous_token_head.layer * heads + summary.previous_token_head.head;
const LENGTH = 30; // probe length: two copies fill most of the model's positions

const argmax = (scores) => Array.from(scores).indexOf(Math.max(...scores));

// Float64 per-head weights [layer * heads + head][query][key] of the ids, from the weights.
function referenceAttention(ids) {
  const { attention } = referenceForward('gpt2', config, tensors, ids);
  const n = ids.length;
  return (head, i, j) => attention[(head * n + i) * n + j];
}

// TransformerLens' "mul" score, sum(A o P) / sum(A), with every causal row summing to 1 (sum(A) = n).
function referenceScore(weight, n, matches) {
  return Array.from({ length: layers * heads }, (_, head) => {
    let matched = 0;
    for (let i = 0; i < n; i++) for (let j = 0; j <= i; j++) if (matches(i, j)) matched += weight(head, i, j);
    return matched / n;
  });
}

// inductionScores' documented ids: mulberry32(seed), floor(u * vocabSize); no tokenizer, so nothing is redrawn.
function probeIds(seed) {
  const next = seededRandom(seed);
  const once = Array.from({ length: LENGTH }, () => Math.floor(next() * config.vocab_size));
  return [...once, ...once];
}

for (const lens of await loadBoth()) {
  test(`induction fixture (${lens.simdLevel}): inductionScores ranks the layer-1 induction head first, as float64 from the weights`, async () => {
    const model = await lens.loadModel({ config, weights });
    try {
      assert.deepEqual([model.info.layers, model.info.heads], [layers, heads]);
      assert.equal(Math.floor(inductionHead / heads), 1, 'the induction head is in layer 1');
      for (const seed of [1, 2, 3]) {
        const before = lens.heapBytesInUse();
        const scores = model.inductionScores({ length: LENGTH, seed });
        assert.equal(lens.heapBytesInUse(), before, 'inductionScores left memory allocated');
        const ids = probeIds(seed), weight = referenceAttention(ids);
        // The second copy's queries i >= LENGTH, on the token after the earlier occurrence: key i - LENGTH + 1.
        const expected = Array.from({ length: layers * heads }, (_, head) => {
          let sum = 0;
          for (let i = LENGTH; i < 2 * LENGTH; i++) sum += weight(head, i, i - LENGTH + 1);
          return sum / LENGTH;
        });
        assertClose(scores, expected, { atol: 1e-4, rtol: 1e-3, label: `induction scores, seed ${seed}` });
        assert.equal(argmax(expected), inductionHead, `seed ${seed}: float64 ranks the induction head first`);
        assert.equal(argmax(scores), inductionHead, `seed ${seed}: attnlens ranks the induction head first`);
        assert.ok(scores[inductionHead] >= 0.3, `seed ${seed}: induction score ${scores[inductionHead]}`);
      }
    } finally {
      model.dispose();
    }
  });

  test(`induction fixture (${lens.simdLevel}): analyze ranks the induction head and its previous-token partner first, as float64`, async () => {
    const model = await lens.loadModel({ config, weights });
    try {
      // A repeated random sequence: induction's pattern is every key after an earlier occurrence of the query's id.
      const repeated = probeIds(11), n = repeated.length;
      const induction = model.analyze({ ids: repeated, logitLens: false, valueWeighted: false }).scores.induction;
      const inductionExpected = referenceScore(referenceAttention(repeated), n,
        (i, j) => j >= 1 && j - 1 < i && repeated[j - 1] === repeated[i]);
      assertClose(induction, inductionExpected, { atol: 1e-4, rtol: 1e-3, label: 'analyze induction' });
      assert.equal(argmax(induction), inductionHead, 'analyze ranks the induction head first');
      assert.ok(induction[inductionHead] >= 0.3, `analyze's induction score ${induction[inductionHead]}`);

      // Random tokens filling the positions: the previous-token score, key i - 1.
      const next = seededRandom(12);
      const random = Array.from({ length: config.n_positions }, () => Math.floor(next() * config.vocab_size));
      const previous = model.analyze({ ids: random, logitLens: false, valueWeighted: false }).scores.previousToken;
      const previousExpected = referenceScore(referenceAttention(random), random.length, (i, j) => j === i - 1);
      assertClose(previous, previousExpected, { atol: 1e-4, rtol: 1e-3, label: 'analyze previous token' });
      assert.equal(Math.floor(previousTokenHead / heads), 0, 'the partner is in layer 0');
      assert.equal(argmax(previous), previousTokenHead, 'analyze ranks the layer-0 partner first by previous token');
      assert.ok(previous[previousTokenHead] >= 0.5, `previous-token score ${previous[previousTokenHead]}`);
    } finally {
      model.dispose();
    }
  });
}
