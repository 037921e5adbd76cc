// Issue 24: which attention a trained model's run brings the page (web/page/model/held-attention.js): what the
// view draws, everything below 1 MiB, and where the settings' layer and head are in what it holds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ALL_BELOW, attentionForRun, awaitsHeads, fetchedHeads, heldData, lacks, shownIndex, shownSizes, wantedAttention,
} from '../../web/page/model/held-attention.js';
import { attentionData } from '../../web/views/attention-data.js';

const gpt2 = { layers: 12, heads: 12 };

test('each view asks for what it draws: one head, one layer\'s heads, or every layer', () => {
  for (const view of ['heatmap', 'lines', 'steps', 'analysis']) {
    assert.deepEqual(wantedAttention({ view, layer: 3, head: 5 }, gpt2), { layer: 3, heads: [5] }, view);
  }
  for (const view of ['multiples', 'average']) {
    assert.deepEqual(wantedAttention({ view, layer: 3, head: 5 }, gpt2), { layer: 3, heads: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] }, view);
  }
  assert.equal(wantedAttention({ view: 'model', layer: 3, head: 5 }, gpt2), 'all');
  // A layer or head the model does not have (a link made with a bigger model) is clamped as the page clamps it.
  assert.deepEqual(wantedAttention({ view: 'heatmap', layer: 20, head: 30 }, gpt2), { layer: 11, heads: [0] });
});

test('a run brings every head while that stays under 1 MiB', () => {
  const one = { layer: 0, heads: [0] };
  // 12 x 12 x 42 x 42 = 254016 floats: under 2^18; 43 tokens: 266256, over.
  assert.equal(ALL_BELOW, 2 ** 18);
  assert.equal(attentionForRun(one, gpt2, 42), 'all');
  assert.equal(attentionForRun(one, gpt2, 43), one);
  assert.equal(attentionForRun(one, { layers: 4, heads: 4 }, 128), 'all');
});

test('a run holding one layer\'s heads: the views\' data, the controls\' sizes, the heads it lacks', () => {
  const n = 2;
  const run = {
    tokens: ['a', 'b'], layers: 3, heads: 4, causal: true, windows: [0, 5, 0],
    attentionLayers: [1], attentionHeads: [2], attention: new Float32Array([1, 0, 0.25, 0.75]),
  };
  const { data, held } = heldData(run);
  assert.deepEqual(held, { layer: 1, heads: [2] });
  const model = attentionData(data);
  assert.deepEqual([model.layers, model.heads, model.n, model.hasLayers], [1, 1, n, false]);
  assert.deepEqual(model.hiding.windows, [5], 'the held layer\'s window');
  const shown = { model, record: run, held };
  assert.deepEqual(shownSizes(shown), { layers: 3, heads: 4, hasLayers: true });
  assert.deepEqual(shownIndex(shown, { layer: 1, head: 2 }), { layer: 0, head: 0 });
  assert.equal(shownIndex(shown, { layer: 1, head: 3 }), null);
  assert.equal(shownIndex(shown, { layer: 0, head: 2 }), null);
  assert.equal(lacks(shown, { layer: 1, heads: [2] }), false);
  assert.equal(lacks(shown, { layer: 1, heads: [2, 3] }), true);
  assert.equal(lacks(shown, 'all'), true);
  assert.equal(awaitsHeads(shown, { view: 'heatmap', layer: 1, head: 2 }), false);
  assert.equal(awaitsHeads(shown, { view: 'multiples', layer: 1, head: 2 }), true);
  assert.deepEqual(fetchedHeads('all', { layers: 2, heads: 3 }), { layers: [0, 1], heads: [0, 1, 2] });
  assert.deepEqual(fetchedHeads({ layer: 1, heads: [2] }, run), { layers: [1], heads: [2] });
  // A run holding every layer and head is fromRun's, as before.
  assert.equal(heldData({ ...run, attentionLayers: [0, 1, 2], attentionHeads: [0, 1, 2, 3] }), null);
  assert.equal(lacks({ model, record: run, held: null }, 'all'), false);
});
