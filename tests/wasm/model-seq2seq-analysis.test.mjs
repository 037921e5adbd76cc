// model.analyze of encoder-decoders (BART, Marian, T5 v1.0 and v1.1) against
// float64 references (tests/support/analysis-reference.mjs) of the forwards
// written from the modeling code: the detectors and the rollout of the
// encoder's and of the decoder's self-attention, value-weighted attention of
// all three kinds (rows sum to 1), and the decoder's logit lens (each decoder
// layer's stream through the final norm and LM head: T5's tied d^-0.5,
// BART's final_logits_bias), whose last layer is the model's own logits; attnlens/views'
// fromValueWeighted draws each kind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromValueWeighted } from '../../web/views/index.js';
import {
  DETECTORS, referenceRollout, referenceScores, referenceValueWeighted, topK,
} from '../support/analysis-reference.mjs';
import { seq2seqCheckpoint, seq2seqReference } from '../support/model-reference-seq2seq.mjs';
import { SEQ2SEQ_CASES } from '../support/seq2seq-cases.mjs';
import { assertClose, assertRefused, load, rowSums, simdLevelUnderTest } from './helpers.mjs';
import { loadCheckpoint } from './model-checks.mjs';

const lens = await load({ simd: simdLevelUnderTest });

// Repeats in both sequences, so that duplicate-token and induction are not all 0.
const ids = [5, 6, 7, 5, 6, 7, 8, 5], targetIds = [2, 9, 3, 9, 3, 4];

for (const { name, checkpoint, reference } of SEQ2SEQ_CASES) {
  test(`analyze (${name}): each kind's measures match float64 references; the lens's last layer is the model's logits`, async () => {
    const files = checkpoint();
    const model = await loadCheckpoint(lens, files);
    try {
      const { layers, decoderLayers, heads, headWidth, dModel: d, vocabSize } = model.info;
      const n = ids.length, m = targetIds.length, k = 3;
      const before = lens.heapBytesInUse();
      const result = model.analyze({ ids, targetIds, topK: k });
      assert.equal(lens.heapBytesInUse(), before, 'analyze left memory allocated');
      const expected = reference(files, ids, targetIds);
      assert.deepEqual([result.encoderDecoder, result.n, result.m, result.layers, result.decoderLayers, result.heads],
        [true, n, m, layers, decoderLayers, heads]);
      assert.deepEqual(Array.from(result.targetIds), targetIds);

      // The detectors and the rollout of both self-attentions, from the reference weights.
      for (const [scores, rollout, weights, sequence, count, what] of [
        [result.scores, result.rollout, expected.attention, ids, layers, 'encoder'],
        [result.decoderScores, result.decoderRollout, expected.decoderAttention, targetIds, decoderLayers, 'decoder']]) {
        const wanted = referenceScores(weights, sequence, count, heads);
        assert.deepEqual(Object.keys(scores), DETECTORS);
        for (const detector of DETECTORS) {
          assertClose(scores[detector], wanted[detector], { atol: 1e-4, rtol: 0, label: `${what} ${detector}` });
        }
        const size = sequence.length;
        assertClose(rollout, referenceRollout(weights, size, count, heads), { atol: 1e-4, rtol: 0, label: `${what} rollout` });
        for (const sum of rowSums(rollout, count * size, size)) assert.ok(Math.abs(sum - 1) < 1e-5, `${what} rollout row sums to ${sum}`);
      }
      assert.ok(Array.from(result.decoderScores.duplicateToken).some((score) => score > 0), 'the target\'s repeats are scored');

      // Value-weighted attention of each kind: from the reference's V, W_O ([out][in]) and weights.
      for (const [kind, field, rows, width] of [['encoder', 'valueWeighted', n, n], ['decoder', 'decoderValueWeighted', m, m],
        ['cross', 'crossValueWeighted', m, n]]) {
        const wanted = expected.steps[kind].flatMap((step) =>
          referenceValueWeighted({ ...step, woAt: (e, c) => step.wo[c * heads * headWidth + e] }, heads, headWidth, d));
        assert.equal(result[field].length, (kind === 'encoder' ? layers : decoderLayers) * heads * rows * width, field);
        assertClose(result[field], wanted, { atol: 1e-4, rtol: 1e-4, label: field });
        for (const sum of rowSums(result[field], result[field].length / width, width)) {
          assert.ok(Math.abs(sum - 1) < 1e-5, `${field} row sums to ${sum}`);
        }
      }

      // The logit lens: every decoder layer's stream through the model's own head.
      const lensIds = [], lensProbs = [];
      for (const stream of expected.decoderStreams) {
        const top = topK(expected.logitsOf(stream), m, vocabSize, k);
        lensIds.push(...top.ids);
        lensProbs.push(...top.probs);
      }
      assert.deepEqual(Array.from(result.logitLens.ids), lensIds, 'logit lens ids');
      assertClose(result.logitLens.probs, lensProbs, { atol: 1e-4, rtol: 1e-4, label: 'logit lens probs' });
      assert.deepEqual(Array.from(result.logitLens.positions), [...Array(m).keys()]);
      const own = topK(model.run({ ids, targetIds }).logits, m, vocabSize, k), last = (decoderLayers - 1) * m * k;
      assert.deepEqual(Array.from(result.logitLens.ids.subarray(last)), own.ids, 'last layer = model.run top k');
      assertClose(result.logitLens.probs.subarray(last), own.probs, { atol: 1e-6, rtol: 1e-5, label: 'last layer probs' });

      // attnlens/views draws each kind's value-weighted attention: cross-attention's rows are the target, its keys the source.
      const drawn = fromValueWeighted(result, { kind: 'cross', layer: decoderLayers - 1 });
      const block = heads * m * n;
      assert.deepEqual([drawn.tokens, drawn.keyTokens, drawn.quantity], [result.targetTokens, result.tokens, 'valueWeighted']);
      assert.deepEqual(drawn.weights, result.crossValueWeighted.subarray((decoderLayers - 1) * block, decoderLayers * block));
      assert.equal(fromValueWeighted(result, { kind: 'decoder' }).weights, result.decoderValueWeighted);
      assert.equal(fromValueWeighted(result).weights, result.valueWeighted, 'the encoder\'s by default');

      // Lens positions are the target's; valueWeighted: false leaves all three out.
      const part = model.analyze({ ids, targetIds, topK: k, valueWeighted: false, logitLens: { positions: [m - 1] } });
      assert.equal(lens.heapBytesInUse(), before);
      assert.deepEqual([part.valueWeighted, part.decoderValueWeighted, part.crossValueWeighted], [null, null, null]);
      assert.deepEqual(Array.from(part.logitLens.ids), Array.from({ length: decoderLayers }, (_, l) =>
        Array.from(result.logitLens.ids.subarray((l * m + m - 1) * k, (l * m + m) * k))).flat());
      assert.deepEqual(part.decoderScores, result.decoderScores);
    } finally {
      model.dispose();
    }
  });
}

// The lens sends every decoder layer's rows through the LM head together
// after the last decoder layer: with more decoder layers than encoder
// layers, each is still the reference's stream after that layer.
test('analyze (bart, 1 encoder and 3 decoder layers): the lens of chosen target positions, every decoder layer', async () => {
  const files = seq2seqCheckpoint({ family: 'bart', seed: 25, encoder_layers: 1, decoder_layers: 3 });
  const model = await loadCheckpoint(lens, files);
  try {
    const { layers, decoderLayers, vocabSize } = model.info, m = targetIds.length, k = 3, positions = [m - 1, 0, 2, 2];
    assert.deepEqual([layers, decoderLayers], [1, 3]);
    const before = lens.heapBytesInUse();
    const got = model.analyze({ ids, targetIds, topK: k, valueWeighted: false, logitLens: { positions } }).logitLens;
    assert.equal(lens.heapBytesInUse(), before, 'analyze left memory allocated');
    const expected = seq2seqReference('bart', files.config, files.tensors, ids, targetIds);
    assert.equal(expected.decoderStreams.length, 3);
    const wanted = { ids: [], probs: [] };
    for (const stream of expected.decoderStreams) {
      const logits = expected.logitsOf(stream);
      const rows = positions.flatMap((p) => Array.from(logits.subarray(p * vocabSize, (p + 1) * vocabSize)));
      const top = topK(Float64Array.from(rows), positions.length, vocabSize, k);
      wanted.ids.push(...top.ids);
      wanted.probs.push(...top.probs);
    }
    assert.deepEqual(Array.from(got.ids), wanted.ids, 'logit lens ids');
    assertClose(got.probs, wanted.probs, { atol: 1e-4, rtol: 1e-4, label: 'logit lens probs' });
  } finally {
    model.dispose();
  }
});

test('analyze of an encoder-decoder: a missing target and lens positions past it are refused; inductionScores says why not', async () => {
  const model = await loadCheckpoint(lens, SEQ2SEQ_CASES[0].checkpoint());
  try {
    assertRefused(lens, () => model.analyze({ ids }), TypeError,
      /^model\.analyze: an encoder-decoder is analyzed over a source and a target: pass target or targetIds \(the decoder's inputs\)$/);
    assertRefused(lens, () => model.analyze({ ids, targetIds, logitLens: { positions: [6] } }), RangeError,
      /^model\.analyze: logitLens\.positions\[0\] must be an integer from 0 to 5 \(the target's 6 positions\), got 6$/);
    assertRefused(lens, () => model.analyze({ ids, targetIds, kind: 'cross' }), TypeError, /unknown option "kind"/);
    assertRefused(lens, () => model.inductionScores({}), Error, /^model\.inductionScores: encoder-decoder models are not scored/);
    assert.equal(model.analyze({ ids, targetIds }).decoderLayers, 2, 'the model still works');
  } finally {
    model.dispose();
  }
});
