// Issue 24: which attention a trained model's run brings the page (web/page/model/held-attention.js): what the
// view draws, everything below 1 MiB, and where the settings' layer and head are in what it holds; an
// encoder-decoder's translation likewise, of the kind shown (or every kind for the model view).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ALL_BELOW, allowedPool, attentionForRun, attentionForTranslation, awaitsHeads, fetchedHeads, fetchedTranslationHeads, heldData,
  heldTranslationData, kindSizes, lacks, shownIndex, shownSizes, wantedAttention,
} from '../../web/page/model/held-attention.js';
import { attentionData, headValues, hiddenCells } from '../../web/views/attention-data.js';

const gpt2 = { layers: 12, heads: 12 };

test('each view asks for what it draws: one head, one layer\'s heads, or every layer; small heatmaps at their largest side', () => {
  for (const view of ['heatmap', 'lines', 'steps', 'analysis']) {
    assert.deepEqual(wantedAttention({ view, layer: 3, head: 5 }, gpt2), { layer: 3, heads: [5] }, view);
  }
  const every = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
  assert.deepEqual(wantedAttention({ view: 'average', layer: 3, head: 5 }, gpt2), { layer: 3, heads: every });
  assert.deepEqual(wantedAttention({ view: 'multiples', layer: 3, head: 5 }, gpt2, 2), { layer: 3, heads: every, side: 320, pixelRatio: 2 });
  assert.deepEqual(wantedAttention({ view: 'model', layer: 3, head: 5 }, gpt2, 2), { every: true, side: 180, pixelRatio: 2 });
  // A layer or head the model does not have (a link made with a bigger model) is clamped as the page clamps it.
  assert.deepEqual(wantedAttention({ view: 'heatmap', layer: 20, head: 30 }, gpt2), { layer: 11, heads: [0] });
});

test('a run brings every head while that stays under 1 MiB', () => {
  const one = { layer: 0, heads: [0] };
  // 12 x 12 x 42 x 42 = 254016 floats: under 2^18; 43 tokens: 266256, over.
  assert.equal(ALL_BELOW, 2 ** 18);
  assert.equal(attentionForRun(one, gpt2, 42), 'all');
  assert.deepEqual(attentionForRun(one, gpt2, 43), { layers: [0], heads: [0] });
  assert.equal(attentionForRun(one, { layers: 4, heads: 4 }, 128), 'all');
  assert.equal(attentionForRun(wantedAttention({ view: 'model', layer: 0, head: 0 }, gpt2, 1), gpt2, 42), 'all');
});

test('the small heatmaps of a long text ask for their heads pooled to the device pixels they draw', () => {
  // heatmap.js compact: a token takes floor(side / n * 4) / 4 CSS px at most, never less than 0.25.
  const model = (pixelRatio) => ({ every: true, side: 180, pixelRatio });
  const multiples = { layer: 2, heads: [0, 1], side: 320, pixelRatio: 1 };
  assert.equal(allowedPool(model(1), 1024), 4, 'a quarter px per token: 4 x 4 tokens a pixel');
  assert.equal(allowedPool(model(2), 1024), 2, 'two device pixels a CSS px');
  assert.equal(allowedPool(model(3), 1024), 1, 'three: no pooling (a block never spans more than a pixel)');
  assert.equal(allowedPool(model(1), 300), 2, 'half a px per token');
  assert.equal(allowedPool(model(1), 90), 1, 'two px per token');
  assert.equal(allowedPool(multiples, 512), 2, 'All heads: up to 320 px, half a px per token at 512');
  assert.equal(allowedPool({ layer: 2, heads: [0, 1] }, 1024), 1, 'a view that draws each weight');
  assert.deepEqual(attentionForRun(model(1), gpt2, 1024), { pool: 4 });
  assert.deepEqual(attentionForRun(model(1), gpt2, 90), 'all');
  assert.deepEqual(attentionForRun(multiples, gpt2, 1024), { layers: [2], heads: [0, 1], pool: 4 });
  assert.deepEqual(fetchedHeads(model(1), { layers: 2, heads: 1 }, 1024), { layers: [0, 1], heads: [0], pool: 4 });
  assert.deepEqual(fetchedHeads(multiples, gpt2, 1024), { layers: [2], heads: [0, 1], pool: 4 });
  assert.deepEqual(fetchedHeads(multiples, { layers: 1, heads: 2 }, 300), { layers: [2], heads: [0, 1], pool: 1 }, 'small: every weight');
});

test('a pooled run: the model view\'s data (blocks, a block hidden only when all its cells are); any one head is lacked', () => {
  const n = 5;
  const pool = 2;
  // 1 layer x 1 head of 3 x 3 blocks (n = 5 is not a multiple of 2: the last block of a side holds one token).
  const attention = Float32Array.from({ length: 9 }, (_, i) => i / 10);
  const run = { tokens: ['a', 'b', 'c', 'd', 'e'], n, layers: 1, heads: 1, causal: true, windows: [0],
    attentionLayers: [0], attentionHeads: [0], attentionPool: pool, attention };
  const { data, held } = heldData(run);
  assert.deepEqual(held, { pool });
  const model = attentionData(data);
  assert.deepEqual([model.n, model.rows, model.cols, model.pool], [5, 3, 3, 2]);
  assert.deepEqual(Array.from(headValues(model, 0, 0)), Array.from(attention));
  // Causal: a block is hidden when every key in it is after every query in it.
  assert.deepEqual(Array.from(hiddenCells(model, 0)), [0, 1, 1, 0, 0, 1, 0, 0, 0]);
  const shown = { model, record: run, held };
  assert.deepEqual(shownIndex(shown, { layer: 0, head: 0 }), { layer: 0, head: 0 });
  // Five tokens take 24 px each: a 2 x 2 block is coarser than any view draws them.
  assert.equal(lacks(shown, { every: true, side: 180, pixelRatio: 1 }), true);
  assert.equal(awaitsHeads(shown, { view: 'heatmap', layer: 0, head: 0 }), true);
  // 1024 tokens pooled by 4: what the model view and All heads draw; not what the heatmap or 4 device px a CSS px need.
  const long = { held: { pool: 4 }, record: { n: 1024, layers: 1, heads: 1 }, model };
  assert.equal(lacks(long, { every: true, side: 180, pixelRatio: 1 }), false);
  assert.equal(lacks(long, { layer: 0, heads: [0], side: 320, pixelRatio: 1 }), false, 'All heads draws it too');
  assert.equal(lacks(long, { every: true, side: 180, pixelRatio: 4 }), true, 'pooled more than 4 device pixels a CSS px allow');
  assert.equal(lacks(long, { layer: 0, heads: [0] }), true, 'the heatmap draws each weight: fetched in full');
  assert.equal(awaitsHeads(long, { view: 'model', layer: 0, head: 0 }), false);
  assert.equal(awaitsHeads(long, { view: 'heatmap', layer: 0, head: 0 }), true);
  assert.throws(() => attentionData({ ...data, weights: new Float32Array(25) }),
    /weights must have layers\*heads\*ceil\(n\/pool\)\*ceil\(nKeys\/pool\) = 1\*1\*3\*3 = 9 values/);
  assert.throws(() => attentionData({ ...data, pool: 0 }), /pool must be an integer from 1 to 5 \(the number of tokens\), got 0/);
});

test('a run holding one layer\'s heads: the views\' data, the controls\' sizes, the heads it lacks', () => {
  const n = 2;
  const run = {
    tokens: ['a', 'b'], n, layers: 3, heads: 4, causal: true, windows: [0, 5, 0],
    attentionLayers: [1], attentionHeads: [2], attention: new Float32Array([1, 0, 0.25, 0.75]),
  };
  const { data, held } = heldData(run);
  assert.deepEqual(held, { layer: 1, heads: [2], pool: 1 });
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
  assert.equal(lacks(shown, { every: true, side: 180, pixelRatio: 1 }), true);
  assert.equal(awaitsHeads(shown, { view: 'heatmap', layer: 1, head: 2 }), false);
  assert.equal(awaitsHeads(shown, { view: 'multiples', layer: 1, head: 2 }), true);
  assert.deepEqual(fetchedHeads('all', { layers: 2, heads: 3 }, 2), { layers: [0, 1], heads: [0, 1, 2], pool: 1 });
  assert.deepEqual(fetchedHeads({ layer: 1, heads: [2] }, run, 2), { layers: [1], heads: [2], pool: 1 });
  // A run holding every layer and head is fromRun's, as before.
  assert.equal(heldData({ ...run, attentionLayers: [0, 1, 2], attentionHeads: [0, 1, 2, 3] }), null);
  assert.equal(lacks({ model, record: run, held: null }, 'all'), false);
  // One layer's heads pooled (All heads of a long text): the multiples draw them, the head average needs each weight.
  const pooledLayer = heldData({ ...run, n: 5, tokens: ['a', 'b', 'c', 'd', 'e'], attentionPool: 2, attention: new Float32Array(9) });
  assert.deepEqual(pooledLayer.held, { layer: 1, heads: [2], pool: 2 });
  const pooledShown = { model: attentionData(pooledLayer.data), record: { ...run, n: 1024 }, held: pooledLayer.held };
  assert.deepEqual([pooledShown.model.rows, pooledShown.model.hasLayers], [3, false]);
  assert.equal(lacks(pooledShown, { layer: 1, heads: [2], side: 320, pixelRatio: 1 }), false);
  assert.equal(lacks(pooledShown, { layer: 1, heads: [2] }), true);
});

test('with the value-weighted switch the run and the fetches ask for the same heads value-weighted; the data says so', () => {
  const one = { layer: 3, heads: [1] };
  const model = { every: true, side: 180, pixelRatio: 1 };
  assert.deepEqual(attentionForRun(one, gpt2, 42, true), { valueWeighted: true }, 'small: every head, value-weighted');
  assert.deepEqual(attentionForRun(one, gpt2, 1024, true), { layers: [3], heads: [1], valueWeighted: true });
  assert.deepEqual(attentionForRun(model, gpt2, 1024, true), { pool: 4, valueWeighted: true });
  assert.deepEqual(attentionForRun({ ...model, pixelRatio: 3 }, gpt2, 1024, true), { valueWeighted: true }, 'every head, in full');
  assert.deepEqual(fetchedHeads(one, gpt2, 1024, 'valueWeighted'), { layers: [3], heads: [1], pool: 1, valueWeighted: true });
  assert.deepEqual(fetchedHeads(model, { layers: 2, heads: 1 }, 1024, 'valueWeighted'),
    { layers: [0, 1], heads: [0], pool: 4, valueWeighted: true });
  const run = {
    tokens: ['a', 'b'], n: 2, layers: 3, heads: 4, causal: true, windows: null, attentionQuantity: 'valueWeighted',
    attentionLayers: [1], attentionHeads: [2], attention: new Float32Array([1, 0, 0.4, 0.6]),
  };
  assert.equal(attentionData(heldData(run).data).valueWeighted, true, 'one layer held, value-weighted');
  assert.equal(attentionData(heldData({ ...run, attentionQuantity: 'weights' }).data).valueWeighted, false);
  const every = { ...run, layers: 1, heads: 1, attentionLayers: [0], attentionHeads: [0], attentionPool: 2, attention: new Float32Array([0.5]) };
  assert.equal(attentionData(heldData(every).data).valueWeighted, true, 'every head pooled (fromRun), value-weighted');
});

test('a translation brings the kind shown\'s heads, or for the model view every kind; the rest is fetched by kind', () => {
  const info = { layers: 3, decoderLayers: 2, heads: 2 };
  const heatmap = wantedAttention({ view: 'heatmap', layer: 2, head: 1, attentionKind: 'decoder' }, kindSizes(info, 'decoder'));
  assert.deepEqual(heatmap, { layer: 1, heads: [1], kind: 'decoder' }, 'the decoder\'s stack has two layers');
  // 2 x (3 x 20^2 + 2 x (5^2 + 5 x 20)) = 2900 floats: everything; 300 source tokens: 543400, the kind shown's head.
  assert.equal(attentionForTranslation(heatmap, info, { n: 20, m: 5 }), 'all');
  assert.deepEqual(attentionForTranslation(heatmap, info, { n: 300, m: 5 }), { kinds: ['decoder'], layers: [1], heads: [1] });
  const model = wantedAttention({ view: 'model', layer: 0, head: 0, attentionKind: 'cross' }, kindSizes(info, 'cross'), 1);
  assert.equal(attentionForTranslation(model, info, { n: 300, m: 33 }), 'all', 'the smallest grid (33 tokens) allows no pool');
  assert.equal(allowedPool(model, 600), 4);
  assert.deepEqual(attentionForTranslation(model, info, { n: 1000, m: 600 }), { pool: 4 }, 'every kind pooled by what 600 tokens allow');
  assert.deepEqual(fetchedTranslationHeads(model, info, { n: 300, m: 33 }), { kinds: ['encoder', 'decoder', 'cross'], heads: [0, 1], pool: 1 });
  assert.deepEqual(fetchedTranslationHeads(heatmap, info, { n: 20, m: 5 }), { kinds: ['decoder'], layers: [1], heads: [1], pool: 1 });

  // A run holding the decoder's layer 1, head 1: its data; the cross kind is lacked and awaited.
  const run = { encoderDecoder: true, n: 3, m: 2, layers: 3, decoderLayers: 2, heads: 2, tokens: ['a', 'b', 'c'], targetTokens: ['<s>', 'x'],
    attention: new Float32Array(0), decoderAttention: Float32Array.of(1, 0, 0.25, 0.75), crossAttention: new Float32Array(0),
    attentionKinds: ['decoder'], attentionLayers: { encoder: [], decoder: [1], cross: [] }, attentionHeads: [1], attentionPool: 1 };
  const { data, held } = heldTranslationData(run, 'decoder');
  assert.deepEqual(held, { kinds: ['decoder'], kind: 'decoder', layers: 2, pool: 1, side: 2, layer: 1, heads: [1] });
  const shown = { model: attentionData(data), record: run, held };
  assert.deepEqual([shown.model.n, shown.model.heads], [2, 1]);
  assert.deepEqual(Array.from(hiddenCells(shown.model, 0)), [0, 1, 0, 0], 'the decoder\'s self-attention is causal');
  assert.deepEqual(shownSizes(shown), { layers: 2, heads: 2, hasLayers: true, kinds: ['decoder'] });
  assert.deepEqual(shownIndex(shown, { layer: 1, head: 1 }), { layer: 0, head: 0 });
  assert.equal(awaitsHeads(shown, { view: 'heatmap', layer: 1, head: 1, attentionKind: 'decoder' }), false);
  assert.equal(awaitsHeads(shown, { view: 'heatmap', layer: 1, head: 1, attentionKind: 'cross' }), true, 'another kind');
  assert.equal(awaitsHeads(shown, { view: 'heatmap', layer: 1, head: 0, attentionKind: 'decoder' }), true, 'another head');
  assert.equal(awaitsHeads(shown, { view: 'model', layer: 1, head: 1, attentionKind: 'decoder' }), true, 'the model view draws every kind');
  // While the kind chosen is fetched, the data stays the held kind's, and the layer control offers the chosen kind's stack.
  const other = heldTranslationData(run, 'encoder');
  assert.deepEqual([other.held.kind, other.held.layers], ['decoder', 3]);
  // Every kind's every head in full: fromRun's data, nothing held.
  const every = { ...run, attentionKinds: ['encoder', 'decoder', 'cross'], attentionLayers: { encoder: [0, 1, 2], decoder: [0, 1], cross: [0, 1] },
    attentionHeads: [0, 1] };
  assert.equal(heldTranslationData(every, 'cross'), null);
  assert.equal(heldTranslationData({ ...run, attentionKinds: undefined }, 'cross'), null, 'a translation\'s streamed rows');
});
