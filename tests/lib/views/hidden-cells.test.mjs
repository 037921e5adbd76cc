// What a mask or window hid travels from the library's records into the
// views' data (records.js), and every chart draws those cells as hidden
// rather than as a weight of 0: the grid shape's hidden cells, the legend's
// "hidden" entry. Checked against the rule written here from GPT-Neo's
// modeling code (a local layer's query i sees keys i - window + 1 .. i) and
// against the weights the core computed (hidden cells weigh exactly 0).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from '../../../web/lib/node.js';
import { AttentionDataError, attentionData, hiddenBy, hiddenCells } from '../../../web/views/attention-data.js';
import { heatmapScene } from '../../../web/views/heatmap.js';
import { fromExplanation, fromRun } from '../../../web/views/records.js';
import { tinyCheckpoint } from '../../support/tiny-checkpoints.mjs';

const lens = await load();

// GPTNeoSelfAttention: causal, and on local layers key j is visible to query i when i - window < j <= i.
const visible = (window, i, j) => j <= i && (window === 0 || j > i - window);

test('a GPT-Neo run: each layer\'s causal mask and window are its hidden cells, and hidden cells weigh 0', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'gpt_neo', seed: 3 });
  const config = JSON.parse(checkpoint.files['config.json']);
  const windows = config.attention_layers.map((kind) => (kind === 'local' ? config.window_size : 0));
  const model = await lens.loadModel({ config, weights: checkpoint.files['model.safetensors'] });
  try {
    const n = 7;
    const run = model.run({ ids: Array.from({ length: n }, (_, i) => i + 1), logits: 'none' });
    const data = attentionData(fromRun(run));
    const { heads } = run;
    for (let layer = 0; layer < run.layers; layer++) {
      const hidden = hiddenCells(data, layer);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          const expected = !visible(windows[layer], i, j);
          assert.equal(hidden[i * n + j], expected ? 1 : 0, `layer ${layer}, query ${i}, key ${j}`);
          const reason = hiddenBy(data, layer, i, j);
          assert.equal(reason, expected ? (j > i ? 'the causal mask' : 'the window') : null);
          for (let h = 0; h < heads; h++) if (expected) assert.equal(run.attention[((layer * heads + h) * n + i) * n + j], 0);
        }
      }
      assert.equal(hiddenCells(data, layer), hidden, 'the same array each time (scene.js caches its painted grid by it)');
    }
    // One layer's data (fromRun with layer) carries that layer's window.
    const local = windows.indexOf(config.window_size);
    const one = attentionData(fromRun(run, { layer: local }));
    assert.deepEqual(hiddenCells(one, 0), hiddenCells(data, local));
    // The explanation of a local layer says the same.
    const record = model.explain({ ids: Array.from({ length: n }, (_, i) => i + 1), layer: local });
    assert.deepEqual(hiddenCells(attentionData(fromExplanation(record)), 0), hiddenCells(data, local));
  } finally {
    model.dispose();
  }
});

test('the heatmap scene draws hidden cells as hidden and explains them in its legend; none hidden, no entry', () => {
  const tokens = ['a', 'b', 'c'];
  const weights = new Float32Array([1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5]);
  const causal = attentionData({ tokens, weights, heads: 1, causal: true });
  const hidden = hiddenCells(causal, 0);
  assert.deepEqual(Array.from(hidden), [0, 1, 1, 0, 0, 1, 0, 0, 0]);
  const { scene } = heatmapScene({ queryTokens: tokens, keyTokens: tokens, values: weights, hidden });
  assert.equal(scene.shapes.find((shape) => shape.kind === 'grid').hidden, hidden);
  assert.ok(scene.shapes.some((shape) => shape.kind === 'text' && shape.text === 'hidden'), 'a legend entry for hidden cells');
  const open = attentionData({ tokens, weights: new Float32Array(9).fill(1 / 3), heads: 1 });
  assert.equal(hiddenCells(open, 0), null);
  const plain = heatmapScene({ queryTokens: tokens, keyTokens: tokens, values: weights, hidden: null }).scene;
  assert.ok(!plain.shapes.some((shape) => shape.text === 'hidden'));
  // A window without causal attention hides nothing (the core's rule: windows narrow causal attention).
  const windowOnly = attentionData({ tokens, weights: new Float32Array(9).fill(1 / 3), heads: 1, windows: [1] });
  assert.equal(hiddenCells(windowOnly, 0), null);
  const windowed = attentionData({ tokens, weights, heads: 1, causal: true, windows: [2] });
  assert.deepEqual([0, 1, 2].map((key) => hiddenBy(windowed, 0, 2, key)), ['the window', null, null]);
});

test('bad hiding fields are refused by name', () => {
  const base = { tokens: ['a', 'b'], weights: new Float32Array([1, 0, 0.5, 0.5]), heads: 1 };
  assert.throws(() => attentionData({ ...base, causal: 'yes' }), (e) => e instanceof AttentionDataError && /causal must be a boolean/.test(e.message));
  assert.throws(() => attentionData({ ...base, windows: [2, 2] }), /windows must hold 1 integers >= 0 \(one per layer\), got Array\(2\)/);
  assert.throws(() => attentionData({ ...base, windows: [-1] }), /windows must hold 1 integers >= 0/);
  assert.throws(() => attentionData({ ...base, windows: [1.5] }), /windows must hold 1 integers >= 0/);
  assert.throws(() => attentionData({ ...base, keyMask: Uint8Array.of(1) }), /keyMask must hold 2 integers >= 0 \(one per key, 0 hides it\), got Uint8Array\(1\)/);
  assert.throws(() => attentionData({ ...base, keyMask: [1, -1] }), /keyMask must hold 2 integers >= 0/);
});

// BertSelfAttention adds the extended attention mask ((1 - mask) * min) to every query's scores:
// a padding key is seen by no query; the others by all (bidirectional).
test('a BERT run with a padding key mask: its run carries the mask, and the masked keys are hidden by it in every layer', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'bert', seed: 5 });
  const model = await lens.loadModel({ config: checkpoint.files['config.json'], weights: checkpoint.files['model.safetensors'] });
  try {
    const n = 6;
    const keyMask = Uint8Array.of(1, 1, 1, 1, 0, 0);
    const ids = Array.from({ length: n }, (_, i) => i + 3);
    const run = model.run({ ids, keyMask, logits: 'none' });
    assert.deepEqual(run.keyMask, keyMask);
    assert.notEqual(run.keyMask, keyMask, 'a copy: changing the caller\'s mask later does not change the record');
    assert.equal(model.run({ ids, logits: 'none' }).keyMask, null);
    const data = attentionData(fromRun(run));
    for (let layer = 0; layer < run.layers; layer++) {
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          const expected = keyMask[j] === 0;
          assert.equal(hiddenBy(data, layer, i, j), expected ? 'the padding mask' : null, `layer ${layer}, query ${i}, key ${j}`);
          assert.equal(hiddenCells(data, layer)[i * n + j], expected ? 1 : 0);
          for (let h = 0; h < run.heads; h++) if (expected) assert.equal(run.attention[((layer * run.heads + h) * n + i) * n + j], 0);
        }
      }
    }
    assert.deepEqual(hiddenCells(attentionData(fromRun(run, { layer: 1 })), 0), hiddenCells(data, 1));
    const record = model.explain({ ids, keyMask, layer: 1 });
    assert.deepEqual(hiddenCells(attentionData(fromExplanation(record)), 0), hiddenCells(data, 1));
  } finally {
    model.dispose();
  }
});

test('a causal model with left padding: the padding mask comes first, then the causal mask', () => {
  const tokens = ['<pad>', 'a', 'b'];
  const weights = new Float32Array([0, 0, 0, 0, 1, 0, 0, 0.4, 0.6]);
  const data = attentionData({ tokens, weights, heads: 1, causal: true, keyMask: [0, 1, 1] });
  assert.deepEqual([0, 1, 2].map((key) => hiddenBy(data, 0, 1, key)), ['the padding mask', null, 'the causal mask']);
  assert.deepEqual(Array.from(hiddenCells(data, 0)), [1, 1, 1, 1, 0, 1, 1, 0, 0]);
});

// hiddenCells fills whole ranges of a row (a million cells at 1,024 tokens): every cell of random shapes
// (queries the last n of nKeys positions, windows, padding) against the rule written cell by cell, and hiddenBy.
test('hiddenCells agrees cell by cell with the masks\' rule and with hiddenBy on random shapes', () => {
  let state = 7;
  const random = (below) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % below;
  };
  for (let trial = 0; trial < 200; trial++) {
    const nKeys = 1 + random(12);
    const n = 1 + random(nKeys);
    const causal = random(4) > 0;
    const windows = random(2) ? [random(nKeys + 2)] : null;
    const keyMask = random(3) === 0 ? Array.from({ length: nKeys }, () => (random(3) ? 1 : 0)) : null;
    const keyTokens = Array.from({ length: nKeys }, (_, i) => `k${i}`);
    const data = attentionData({
      tokens: keyTokens.slice(nKeys - n), keyTokens, weights: new Float32Array(n * nKeys), heads: 1, causal, windows, keyMask,
    }, { normalized: false });
    const expected = new Uint8Array(n * nKeys);
    for (let i = 0; i < n; i++) {
      const position = i + nKeys - n;
      for (let j = 0; j < nKeys; j++) {
        const outsideWindow = causal && windows && windows[0] > 0 && j < position - windows[0] + 1;
        expected[i * nKeys + j] = keyMask?.[j] === 0 || (causal && j > position) || outsideWindow ? 1 : 0;
      }
    }
    const cells = hiddenCells(data, 0);
    const shape = `trial ${trial}: n ${n}, nKeys ${nKeys}, causal ${causal}, windows ${windows}, keyMask ${keyMask}`;
    if (!expected.includes(1)) {
      assert.equal(cells, null, shape);
      continue;
    }
    assert.deepEqual(cells, expected, shape);
    for (let index = 0; index < n * nKeys; index++) {
      assert.equal(cells[index], hiddenBy(data, 0, Math.floor(index / nKeys), index % nKeys) ? 1 : 0, `${shape}, cell ${index}`);
    }
  }
});
