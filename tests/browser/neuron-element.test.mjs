// <attnlens-neuron> as a teacher uses it: a plain HTML file next to the one-file
// build dist/attnlens-elements.js, opened from file:// with every http(s)
// request aborted. Fed from a registered model (model.explain) its numbers
// are the library's in Node; fed from query and key vectors typed as JSON
// they equal a float64 softmax computed here; the keyboard reaches every
// query and key; token text that looks like HTML stays text.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { load } from '../../web/lib/node.js';
import { launchBrowser } from '../support/chromium.mjs';
import { buildElementsIfStale, elementsBundle } from './build-if-stale.mjs';
import { assertClose } from './page-fixture.mjs';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const modelDir = join(repoRoot, '..', 'shared', 'models', 'sort-gpt2');
const text = '2 0 1 1 0 2';

// Query and key vectors typed by hand; the tokens try to become markup.
const hostile = ['<img src=x onerror="window.pwned=1">', '</script><b>bold</b>', '&amp; "quoted"'];
const qk = { Q: [[1, 0, 2, -1], [0.5, 1, 0, 0], [-1, 1, 1, 2]], K: [[0, 1, 1, 0], [2, 0, -1, 1], [1, 1, 1, 1]], tokens: hostile };
// JSON inside a <script>: "<" escaped so "</script>" in a token cannot end it.
const scriptJson = (value) => JSON.stringify(value).replaceAll('<', '\\u003c');
// How the views label a token: its spaces shown as ␣ (views/tokens.js displayToken).
const visible = (token) => token.replaceAll(' ', '␣');

const pageHtml = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>neuron element</title>
<script src="attnlens-elements.js"></script></head>
<body style="margin:0;width:900px;font-family:sans-serif">
<attnlens-neuron id="model" src="sort-gpt2" text="${text}" layer="1" head="2"></attnlens-neuron>
<attnlens-neuron id="vectors"><script type="application/json">${scriptJson(qk)}</script></attnlens-neuron>
<attnlens-neuron id="bad"><script type="application/json">{"Q": [[1, 0]]}</script></attnlens-neuron>
<script src="sort-gpt2.js"></script>
<script>
  window.events = [];
  for (const element of document.querySelectorAll('attnlens-neuron')) {
    for (const type of ['ready', 'error', 'select', 'hover']) {
      element.addEventListener(type, (event) => {
        const { error, result, ...detail } = event.detail ?? {};
        window.events.push({ id: element.id, type, detail });
      });
    }
  }
  window.settled = (id) => { const el = document.getElementById(id); return el.result !== null || el.error !== null; };
</script>
</body></html>`;

let workDir, session, lens, reference;
const page = () => session.page;

before(async () => {
  buildElementsIfStale();
  lens = await load();
  const files = {
    config: readFileSync(join(modelDir, 'config.json'), 'utf8'),
    weights: readFileSync(join(modelDir, 'model.safetensors')),
    tokenizer: readFileSync(join(modelDir, 'tokenizer.json'), 'utf8'),
  };
  const model = await lens.loadModel(files);
  reference = model.explain({ text, layer: 1, head: 2 });
  model.dispose();
  workDir = mkdtempSync(join(tmpdir(), 'attnlens-neuron-element-'));
  cpSync(elementsBundle, join(workDir, 'attnlens-elements.js'));
  const registered = { config: JSON.parse(files.config), weights: files.weights.toString('base64'), tokenizer: files.tokenizer };
  writeFileSync(join(workDir, 'sort-gpt2.js'), `(globalThis.attnlensModels ??= {})['sort-gpt2'] = ${JSON.stringify(registered)};\n`);
  writeFileSync(join(workDir, 'index.html'), pageHtml);
  session = await launchBrowser({ viewport: { width: 1000, height: 900 } });
  page().setDefaultTimeout(15_000);
  await session.context.route(/^https?:/, (route) => route.abort());
  await page().goto(pathToFileURL(join(workDir, 'index.html')).href);
  await page().waitForFunction(() => ['model', 'vectors', 'bad'].every(window.settled), null, { timeout: 30_000 });
});

after(async () => {
  await session?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

// The element's CSV (exact numbers) as rows of { dot, scaled, softmax }, and its table's text.
const shown = (id) => page().evaluate((id) => {
  const element = document.getElementById(id);
  const rows = element.view.toCSV().trim().split('\n').slice(1).map((line) => line.split(',').slice(-3).map(Number));
  return {
    query: element.view.query,
    rows,
    keys: [...element.querySelectorAll('tbody th')].map((th) => th.textContent),
    buttons: [...element.querySelectorAll('button[data-query]')].map((b) => b.textContent),
  };
}, id);

test('from a registered model: model.explain\'s numbers, the library\'s in Node', async () => {
  const seen = await shown('model');
  const { n, heads, headWidth, q, k, weights, scaledScores, scale } = reference;
  assert.equal(seen.query, n - 1, 'the last token by default');
  assert.equal(seen.rows.length, n);
  const width = heads * headWidth;
  seen.rows.forEach(([dot, scaled, softmax], key) => {
    let sum = 0;
    for (let t = 0; t < headWidth; t += 1) sum += q[(n - 1) * width + 2 * headWidth + t] * k[key * width + 2 * headWidth + t];
    assert.ok(Math.abs(dot - sum) < 1e-5, `key ${key}: q · k ${dot} vs ${sum}`);
    assert.ok(Math.abs(scaled - sum * scale) < 1e-5, `key ${key}: scaled ${scaled}`);
    assert.ok(Math.abs(scaled - scaledScores[(2 * n + n - 1) * n + key]) < 1e-5, `key ${key}: scaled equals the record's scaled score`);
    // Within 1e-6: Chromium may run the relaxed-SIMD (fused multiply-add) module, Node the SIMD one.
    assert.ok(Math.abs(softmax - weights[(2 * n + n - 1) * n + key]) < 1e-6, `key ${key}: the library's softmax weight`);
  });
  assertClose(await page().evaluate(() => Array.from(document.getElementById('model').result.weights)), Array.from(reference.weights), 1e-6, 'the element\'s record');
});

test('from query and key vectors typed as JSON: the float64 softmax of q · k / √d; hostile token text stays text', async () => {
  const seen = await shown('vectors');
  const query = qk.Q.length - 1;
  const dots = qk.K.map((key) => key.reduce((sum, value, t) => sum + value * qk.Q[query][t], 0));
  const scaled = dots.map((dot) => dot / Math.sqrt(4));
  const exps = scaled.map((value) => Math.exp(value - Math.max(...scaled)));
  const softmax = exps.map((value) => value / exps.reduce((a, b) => a + b, 0));
  seen.rows.forEach(([dot, scaledShown, weight], key) => {
    assert.ok(Math.abs(dot - dots[key]) < 1e-6, `q · k of key ${key}`);
    assert.ok(Math.abs(scaledShown - scaled[key]) < 1e-6, `scaled of key ${key}`);
    assert.ok(Math.abs(weight - softmax[key]) < 1e-6, `softmax of key ${key}: ${weight} vs ${softmax[key]}`);
  });
  // The tokens, as text (spaces shown as ␣), label both the query buttons and the keys (keys default to the tokens).
  assert.deepEqual(seen.buttons, hostile.map(visible));
  assert.deepEqual(seen.keys, hostile.map(visible));
  const markup = await page().evaluate(() => ({
    pwned: window.pwned ?? null,
    injected: document.querySelectorAll('attnlens-neuron img, attnlens-neuron b').length,
  }));
  assert.deepEqual(markup, { pwned: null, injected: 0 });
});

test('the keyboard reaches every query and key: Tab to a query button and Enter picks it; arrows, Home, End and Enter on the keys', async () => {
  const p = page();
  await p.evaluate(() => { window.events.length = 0; });
  // The first query button of the vectors element, by keyboard.
  await p.focus('#vectors button[data-query="0"]');
  await p.keyboard.press('Enter');
  await p.waitForFunction(() => document.getElementById('vectors').view.query === 0);
  assert.equal(await p.evaluate(() => document.activeElement.dataset.query), '0', 'the focus stays on the picked query');
  await p.keyboard.press('Tab');
  assert.equal(await p.evaluate(() => document.activeElement.dataset.query), '1', 'Tab moves along the query buttons');
  // Into the keys: the first key's header is the one tab stop of the table.
  await p.focus('#vectors tbody th[tabindex="0"]');
  await p.keyboard.press('ArrowDown');
  await p.keyboard.press('End');
  await p.keyboard.press('Home');
  await p.keyboard.press('ArrowDown');
  await p.keyboard.press('Enter');
  const seen = await p.evaluate(() => ({
    focused: document.activeElement.textContent,
    readout: document.querySelector('#vectors .attnlens-readout').textContent,
    selected: window.events.filter((e) => e.type === 'select').map((e) => e.detail),
  }));
  assert.equal(seen.focused, visible(hostile[1]));
  assert.match(seen.readout, /\(#1\): q · k = /);
  assert.deepEqual(seen.selected.map(({ query, key }) => [query, key ?? null]), [[0, null], [0, 1]]);
  const dot = qk.K[1].reduce((sum, value, t) => sum + value * qk.Q[0][t], 0);
  assert.ok(Math.abs(seen.selected[1].dot - dot) < 1e-6, 'the selected key\'s exact q · k');
});

test('attributes: query and head pick what is shown; a bad JSON is shown as text, and fixing it draws', async () => {
  const p = page();
  const before = await p.evaluate(() => window.events.filter((e) => e.id === 'model' && e.type === 'ready').length);
  await p.evaluate(() => {
    const element = document.getElementById('model');
    element.setAttribute('query', '1');
    element.setAttribute('head', '0');
  });
  await p.waitForFunction((before) => window.events.filter((e) => e.id === 'model' && e.type === 'ready').length > before, before);
  const caption = await p.evaluate(() => document.querySelector('#model caption').textContent);
  assert.match(caption, /^Neuron view: head 1, query .* \(#1\)/);
  const bad = await p.evaluate(() => ({ text: document.querySelector('#bad .attnlens-error')?.textContent, view: document.getElementById('bad').view }));
  assert.match(bad.text, /<attnlens-neuron> JSON: give the query and key vectors as "Q" and "K"/);
  assert.equal(bad.view, null);
  await p.evaluate(() => { document.querySelector('#bad script').textContent = '{"Q": [[1, 0]], "K": [[1, 0], [0, 1]]}'; });
  await p.waitForFunction(() => document.getElementById('bad').view !== null);
  assert.equal(await p.evaluate(() => document.querySelector('#bad .attnlens-error')), null);
  assert.deepEqual(session.errors, []);
});
