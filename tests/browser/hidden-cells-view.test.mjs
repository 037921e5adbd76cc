// What a causal mask or a window hides, drawn in headless Chromium, from a
// GPT-Neo run computed in Node (a tiny checkpoint: layer 1 global, layer 2
// local with a window of 3): hidden cells are painted the neutral grey no
// weight maps to, with a "hidden" legend entry; the table and the readout say
// "hidden by the window"; the same weights without what hid them draw no grey.
// And the steps view of that model words its math from the record: no scaling,
// the window, no Q/K/V bias. A BERT run with a padding key mask: the padded keys
// are drawn as hidden ("hidden by the padding mask"), from the run and from the
// model's explanation.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { load } from '../../web/lib/node.js';
import { listenerCounter, openTestPage } from '../support/views-page.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const testPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>hidden cells</title></head>
<body style="margin:0"><div id="box" style="width:700px"></div>${listenerCounter}
<script>
  // Pixels of the grey hidden cells are drawn in (colors.js hiddenRgb), over every canvas under el.
  window.greyPixels = (el) => {
    let grey = 0;
    for (const canvas of el.querySelectorAll('canvas')) {
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      for (let i = 0; i < data.length; i += 4) if (data[i] === 200 && data[i + 1] === 200 && data[i + 2] === 200) grey += 1;
    }
    return grey;
  };
  window.revive = (data) => Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v && v.f32 ? new Float32Array(v.f32.map((x) => (x === '-inf' ? -Infinity : x))) : v]));
</script>
<script type="module">
  import * as views from '/web/views/index.js';
  window.views = views;
  window.ready = true;
</script></body></html>`;

// Typed arrays as JSON-able data ({ f32: [...] }); the page turns them back.
const portable = (record) => Object.fromEntries(Object.entries(record).map(([key, value]) => [key, value instanceof Float32Array
  ? { f32: Array.from(value, (v) => (v === -Infinity ? '-inf' : v)) } : ArrayBuffer.isView(value) ? Array.from(value) : value]));

let page, errors, close, run, explanation, windows, padded, paddedExplanation;
// Two padding keys at the end of a BERT input: every query's weights on them are 0 by construction.
const paddingMask = Uint8Array.of(1, 1, 1, 1, 1, 0, 0);
const n = 7;

before(async () => {
  const lens = await load();
  const checkpoint = tinyCheckpoint({ arch: 'gpt_neo', seed: 4 });
  const model = await lens.loadModel({ config: checkpoint.files['config.json'], weights: checkpoint.files['model.safetensors'] });
  const ids = Array.from({ length: n }, (_, i) => i + 2);
  windows = JSON.parse(checkpoint.files['config.json']).attention_layers.map((kind) => (kind === 'local' ? 3 : 0));
  run = portable({ ...model.run({ ids, logits: 'none' }), tokens: ids.map((id) => `t${id}`) });
  explanation = portable(model.explain({ ids, layer: windows.indexOf(3), head: 1 }));
  model.dispose();
  const bertFiles = tinyCheckpoint({ arch: 'bert', seed: 2 }).files;
  const bert = await lens.loadModel({ config: bertFiles['config.json'], weights: bertFiles['model.safetensors'] });
  padded = portable({ ...bert.run({ ids, keyMask: paddingMask, logits: 'none' }), tokens: ids.map((id) => `t${id}`) });
  paddedExplanation = portable(bert.explain({ ids, keyMask: paddingMask, layer: 1, head: 0 }));
  bert.dispose();
  ({ page, errors, close } = await openTestPage(repoRoot, '__hidden-cells.html', testPage));
});

after(async () => {
  await close?.();
});

test('heatmap, model view and table draw what the mask and the window hid as hidden, not as a weight of 0', async () => {
  const local = windows.indexOf(3);
  const seen = await page.evaluate(([runData, localLayer]) => {
    const box = document.getElementById('box');
    const listenersBefore = window.listenerCount();
    const data = window.views.fromRun(window.revive(runData));
    const bare = { tokens: data.tokens, weights: data.weights, heads: data.heads, layers: data.layers };
    const greyOf = (d, options) => {
      const view = window.views.heatmap.mount(box, d, { gridSize: 280, ...options });
      const grey = window.greyPixels(box);
      view.destroy();
      return grey;
    };
    const result = {
      global: greyOf(data, { layer: 1 - localLayer }), local: greyOf(data, { layer: localLayer }), bare: greyOf(bare, { layer: localLayer }),
    };
    // The readout names what hid a cell: query 6, key 1 sits before the local layer's window of 3.
    const view = window.views.heatmap.mount(box, data, { layer: localLayer, cell: { row: 6, col: 0 } });
    const surface = box.querySelector('canvas');
    surface.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    result.readoutHidden = box.textContent;
    for (let i = 0; i < 4; i += 1) surface.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    result.readoutVisible = box.textContent;
    view.destroy();
    const grid = window.views.modelView.mount(box, data);
    result.modelGrey = window.greyPixels(box);
    grid.destroy();
    const table = window.views.table.mount(box, data, { layer: localLayer });
    const row6 = [...box.querySelectorAll('tbody tr')][6].querySelectorAll('td');
    result.row6 = [...row6].map((td) => [td.textContent, td.title]);
    result.row0 = [...[...box.querySelectorAll('tbody tr')][0].querySelectorAll('td')].map((td) => td.textContent);
    table.destroy();
    result.listeners = window.listenerCount() - listenersBefore;
    return result;
  }, [run, local]);
  // Causal: 21 of 49 cells hidden on both layers; the window hides 10 more on the local one.
  // (A few pixels of anti-aliased text can land on the grey by chance: the bare heatmap counts those.)
  assert.ok(seen.bare < 50, `the same weights without causal or windows: no grey cells (their zeros are weights): ${seen.bare} pixels`);
  assert.ok(seen.global > seen.bare + 1000, `the causal mask's cells are grey: ${seen.global} pixels`);
  assert.ok(seen.local > seen.global * 1.2, `the window hides more: ${seen.local} grey pixels against ${seen.global}`);
  assert.match(seen.readoutHidden, /key “t3” \(#1\): hidden by the window/);
  assert.match(seen.readoutVisible, /key “t7” \(#5\): weight 0\.\d+/);
  assert.ok(seen.modelGrey > 0);
  // Query 6 sees keys 4, 5, 6: keys 0-3 hidden by the window, none by the causal mask.
  assert.deepEqual(seen.row6.map(([text]) => text === 'hidden'), [true, true, true, true, false, false, false]);
  assert.equal(seen.row6[0][1], 'hidden by the window');
  assert.deepEqual(seen.row0.slice(1), Array(6).fill('hidden'), 'query 0: every later key hidden by the causal mask');
  assert.equal(seen.listeners, 0);
  assert.deepEqual(errors, []);
});

test('the steps view of a GPT-Neo local layer words its math from the record: unscaled scores, the window, no Q/K/V bias', async () => {
  const seen = await page.evaluate((record) => {
    const box = document.getElementById('box');
    const listenersBefore = window.listenerCount();
    const view = window.views.steps.mount(box, window.revive(record));
    const texts = [];
    for (let step = 0; step < view.count; step += 1) {
      view.update(undefined, { step });
      texts.push(`${box.querySelector('.formula').textContent} | ${box.querySelector('.step-sentence').textContent}`);
    }
    view.destroy();
    return { texts, listeners: window.listenerCount() - listenersBefore, left: box.childElementCount };
  }, explanation);
  assert.match(seen.texts[1], /^Q = X · W_Q\[:, 8\.\.15\] \|/, 'GPT-Neo\'s q_proj has no bias');
  assert.match(seen.texts[5], /scaled = scores × 1 {2}\(GPT-Neo does not scale\)/);
  assert.match(seen.texts[5], /keys before the last 3 are outside the window/);
  assert.match(seen.texts[8], /· W_O \+ b_O \|/, 'out_proj has its bias');
  assert.equal(seen.listeners, 0);
  assert.equal(seen.left, 0);
});

test('a padding key mask (model.run / model.explain with keyMask) is drawn as hidden: grey cells, "hidden by the padding mask"', async () => {
  assert.deepEqual(padded.keyMask, Array.from(paddingMask), 'the run carries a copy of its key mask');
  const seen = await page.evaluate(([runData, explained]) => {
    const box = document.getElementById('box');
    const listenersBefore = window.listenerCount();
    const data = window.views.fromRun(window.revive(runData), { layer: 1 });
    const explainedData = window.views.fromExplanation(window.revive(explained));
    const greyOf = (d) => {
      const view = window.views.heatmap.mount(box, d, { gridSize: 280 });
      const grey = window.greyPixels(box);
      view.destroy();
      return grey;
    };
    const result = { grey: greyOf(data), explainedGrey: greyOf(explainedData), bare: greyOf({ tokens: data.tokens, weights: data.weights, heads: data.heads }) };
    // Query 0 (the first ArrowRight shows (0, 0)): key 5 is a padding key; key 4 is seen.
    const view = window.views.heatmap.mount(box, data, { cell: { row: 0, col: 4 } });
    box.querySelector('canvas').dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    result.readout = box.querySelector('.attnlens-readout').textContent;
    view.destroy();
    const table = window.views.table.mount(box, explainedData);
    result.rows = [...box.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => [td.textContent, td.title]));
    table.destroy();
    result.listeners = window.listenerCount() - listenersBefore;
    return result;
  }, [padded, paddedExplanation]);
  assert.ok(seen.bare < 50, `the same weights without the mask: no grey cells: ${seen.bare} pixels`);
  // 2 of 7 keys hidden from every query: 14 of 49 cells.
  assert.ok(seen.grey > seen.bare + 1000, `the padding keys' cells are grey: ${seen.grey} pixels`);
  assert.ok(Math.abs(seen.explainedGrey - seen.grey) < seen.grey * 0.2, `the explanation draws the same cells grey: ${seen.explainedGrey} vs ${seen.grey}`);
  assert.match(seen.readout, /key “t7” \(#5\): hidden by the padding mask/);
  assert.equal(seen.rows.length, 7);
  for (const row of seen.rows) {
    assert.deepEqual(row.map(([text]) => text === 'hidden'), Array.from(paddingMask, (keep) => keep === 0));
    assert.deepEqual(row.slice(5).map(([, title]) => title), ['hidden by the padding mask', 'hidden by the padding mask']);
  }
  assert.equal(seen.listeners, 0);
  assert.deepEqual(errors, []);
});
