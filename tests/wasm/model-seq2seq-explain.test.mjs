// model.explain of encoder-decoders (BART, Marian, T5 v1.0 and v1.1): each
// kind's step-by-step record (encoder self-attention, decoder causal
// self-attention, cross-attention with Q from the decoder and K, V from the
// encoder) against the float64 forwards written from the modeling code
// (tests/support/model-reference-seq2seq.mjs, model-reference-t5.mjs): X,
// Q, K, V, the raw and scaled scores (T5: no 1/√d, its position bias on
// self-attention only), the weights, the output and the layer's output; the
// weights are model.run's own; bad kinds, layers and targets are refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SEQ2SEQ_CASES } from '../support/seq2seq-cases.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertBitIdentical, assertClose, assertRefused, load, simdLevelUnderTest } from './helpers.mjs';
import { idsFor, loadCheckpoint } from './model-checks.mjs';

const lens = await load({ simd: simdLevelUnderTest });

// Each head's Q Kᵀ of a reference step, and its scaled scores as the softmax takes them.
function referenceScores(step, heads, headWidth) {
  const { q, k, m, n, causal, scale, bias } = step, width = heads * headWidth;
  const scores = new Float64Array(heads * m * n), scaled = new Float64Array(heads * m * n);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let dot = 0;
        for (let c = h * headWidth; c < (h + 1) * headWidth; c++) dot += q[i * width + c] * k[j * width + c];
        const at = (h * m + i) * n + j;
        scores[at] = dot;
        scaled[at] = causal && j > i ? -Infinity : (dot + (bias ? bias[at] : 0)) * scale;
      }
    }
  }
  return { scores, scaled };
}

const runField = { encoder: 'attention', decoder: 'decoderAttention', cross: 'crossAttention' };

for (const { name, checkpoint, reference, architecture, norm, position, postNorm } of SEQ2SEQ_CASES) {
  test(`explain (${name}): every kind's steps match the float64 forward; the weights are model.run's`, async () => {
    const files = checkpoint();
    const model = await loadCheckpoint(lens, files);
    try {
      const { heads, headWidth, dModel: d, layers, decoderLayers } = model.info;
      const ids = idsFor(40, 7, 2), targetIds = idsFor(40, 5, 12);
      const n = ids.length, m = targetIds.length;
      const expected = reference(files, ids, targetIds);
      const run = model.run({ ids, targetIds });
      const t5 = architecture === 't5';
      for (const kind of ['encoder', 'decoder', 'cross']) {
        for (let layer = 0; layer < (kind === 'encoder' ? layers : decoderLayers); layer++) {
          const label = `${kind} layer ${layer}`;
          const before = lens.heapBytesInUse();
          const e = model.explain({ ids, targetIds, kind, layer, head: 1 });
          assert.equal(lens.heapBytesInUse(), before, `${label}: explain left memory allocated`);
          const step = expected.steps[kind][layer];
          const [rows, keys] = kind === 'encoder' ? [n, n] : kind === 'decoder' ? [m, m] : [m, n];
          assert.deepEqual([e.kind, e.layer, e.head, e.n, e.nContext], [kind, layer, 1, rows, keys], label);
          assert.deepEqual([e.crossAttention, e.causal], [kind === 'cross', kind === 'decoder'], label);
          assert.deepEqual([e.architecture, e.norm, e.position, e.postNorm], [architecture, norm, position, postNorm], label);
          // T5 does not scale its scores and adds its position bias to self-attention only; BART and Marian scale by 1/√d_head.
          assert.ok(Math.abs(e.scale - (t5 ? 1 : 1 / Math.sqrt(headWidth))) < 1e-7, `${label}: scale ${e.scale}`);
          assert.equal(e.positionBias, t5 && kind !== 'cross', `${label}: positionBias`);
          assert.equal(e.tokens.length, rows);
          assert.equal(e.contextTokens.length, keys);
          assert.deepEqual(Array.from(e.ids), ids);
          assert.deepEqual(Array.from(e.targetIds), targetIds);
          const close = (actual, wanted, what, atol = 2e-4) => assertClose(actual, wanted, { atol, rtol: 2e-4, label: `${label} ${what}` });
          close(e.x, step.x, 'x');
          close(e.contextX, step.contextX, 'contextX');
          for (const what of ['q', 'k', 'v']) close(e[what], step[what], what);
          const { scores, scaled } = referenceScores(step, heads, headWidth);
          close(e.scores, scores, 'scores', 1e-3);
          close(e.scaledScores, scaled, 'scaledScores', 1e-3);
          close(e.weights, step.weights, 'weights', 1e-4);
          close(e.output, step.output, 'output');
          close(e.layerOutput, step.layerOutput, 'layerOutput', 5e-4);
          // The weights are exactly what model.run returns for this kind and layer.
          const block = heads * rows * keys;
          assertBitIdentical(e.weights, run[runField[kind]].slice(layer * block, (layer + 1) * block), `${label} weights = run's`);
          for (let row = 0; row < heads * rows; row++) {
            const sum = e.weights.subarray(row * keys, (row + 1) * keys).reduce((a, b) => a + b, 0);
            assert.ok(Math.abs(sum - 1) < 1e-5, `${label}: weights row ${row} sums to ${sum}`);
          }
          assert.equal(e.q.length, rows * heads * headWidth);
          assert.equal(e.output.length, rows * d);
        }
      }
      // The encoder's kind needs no target.
      assertBitIdentical(model.explain({ ids, kind: 'encoder', layer: 1 }).weights, model.explain({ ids, targetIds, kind: 'encoder', layer: 1 }).weights,
        'encoder kind without a target');
    } finally {
      model.dispose();
    }
  });
}

test('explain of an encoder-decoder: a bad kind, layer, head or a missing target is refused by name, nothing left allocated', async () => {
  const files = SEQ2SEQ_CASES[0].checkpoint();
  const model = await loadCheckpoint(lens, files);
  try {
    const ids = [3, 4, 5], targetIds = [2, 6];
    const refused = (options, kind, message) => assertRefused(lens, () => model.explain(options), kind, message);
    refused({ ids, targetIds, kind: 'crosss' }, RangeError,
      /^model\.explain: kind must be 'encoder', 'decoder' or 'cross' \(an encoder-decoder's three kinds of attention\), got "crosss"$/);
    refused({ ids, targetIds }, RangeError, /kind must be 'encoder', 'decoder' or 'cross'.*got undefined$/);
    refused({ ids, targetIds, kind: 'encoder', layer: 2 }, RangeError, /^model\.explain: layer of the encoder must be an integer from 0 to 1, got 2$/);
    refused({ ids, targetIds, kind: 'cross', layer: -1 }, RangeError, /^model\.explain: layer of the decoder must be an integer from 0 to 1, got -1$/);
    refused({ ids, targetIds, kind: 'decoder', head: 2 }, RangeError, /^model\.explain: head must be an integer from 0 to 1, got 2$/);
    refused({ ids, kind: 'cross' }, TypeError, /^model\.explain: the cross kind needs the decoder's inputs: pass target or targetIds$/);
    refused({ ids, targetIds: [40], kind: 'decoder' }, RangeError, /targetIds\[0\] must be an integer from 0 to 39/);
    refused({ ids, targetIds, kind: 'cross', keyMask: new Uint8Array(3) }, TypeError, /unknown option "keyMask"/);
    assert.equal(model.explain({ ids, targetIds, kind: 'cross' }).kind, 'cross', 'the model still works');
  } finally {
    model.dispose();
  }
  // A model with one stack has no kinds to choose.
  const gpt2 = tinyCheckpoint({ arch: 'gpt2', naming: 'bare', dtype: 'F32', seed: 5 });
  const decoderOnly = await lens.loadModel({ config: gpt2.config, weights: gpt2.files['model.safetensors'] });
  try {
    assertRefused(lens, () => decoderOnly.explain({ ids: [1, 2], kind: 'cross' }), TypeError,
      /^model\.explain: kind chooses an encoder-decoder's attention \(BART, Marian, T5\); this gpt2 model has one kind, its own self-attention: leave kind out$/);
    assert.equal(decoderOnly.explain({ ids: [1, 2] }).kind, null, 'a decoder-only record has no kind');
  } finally {
    decoderOnly.dispose();
  }
});
