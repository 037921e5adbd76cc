// attnlens/elements as a teacher uses it: a plain HTML file next to the
// one-file build dist/attnlens-elements.js, opened from file:// in headless
// Chromium with every http(s) request aborted. Each element computes with the
// WebAssembly core (checked against the library in Node), draws, reacts to
// attribute changes, sends select / hover events with exact values, and shows
// bad attributes as text (and an `error` event) until they are fixed.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { load } from '../../web/lib/node.js';
import { launchBrowser } from '../support/chromium.mjs';
import { seq2seqCheckpoint } from '../support/model-reference-seq2seq.mjs';
import { serveStatic } from '../support/static-server.mjs';
import { assertClose } from './page-fixture.mjs';
import { buildElementsIfStale, elementsBundle as bundle } from './build-if-stale.mjs';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const modelDir = join(repoRoot, '..', 'shared', 'models', 'sort-gpt2');
const WEIGHTS_ROW_0 = ['0.3136', '0.3501', '0.3363']; // the worked example (issue 2), to 4 decimals

// The worked example as a tutorial writes it.
const workedExample = {
  X: [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]],
  W_Q: [[0.1, 0.2, 0, 0], [0, 0.1, 0.3, 0], [0.1, 0, 0, 0.2], [0, 0, 0.2, 0.3]],
  W_K: [[0.2, 0, 0.1, 0], [0, 0.1, 0, 0.3], [0.1, 0, 0.2, 0], [0, 0.2, 0, 0.1]],
  W_V: [[0, 0.1, 0, 0.2], [0.2, 0, 0.2, 0], [0, 0.3, 0.1, 0], [0.1, 0, 0, 0.3]],
};

// The tutorial page: the script next to it, a registered model, one element of each kind.
const pageHtml = (scriptTag) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>attnlens elements</title>
${scriptTag}
</head>
<body style="margin:0;width:900px;font-family:sans-serif">
<attnlens-sentence id="sentence" text="The cat sat on the mat." heads="4" view="heatmap"></attnlens-sentence>
<attnlens-matrices id="steps" view="steps" step="6"><script type="application/json">${JSON.stringify(workedExample)}</script></attnlens-matrices>
<attnlens-matrices id="table" view="table"><script type="application/json">${JSON.stringify({ ...workedExample, tokens: ['I', 'like', 'tea'] })}</script></attnlens-matrices>
<attnlens-model id="model" src="sort-gpt2" text="2 0 1 1 0 2"></attnlens-model>
<!-- One example, written once, read by two elements (declared before it: they wait for the parse). -->
<attnlens-matrices id="shared-table" view="table" matrices="#worked-example"></attnlens-matrices>
<attnlens-matrices id="shared-steps" view="steps" step="6" matrices="#worked-example"></attnlens-matrices>
<script type="application/json" id="worked-example">${JSON.stringify(workedExample)}</script>
<script type="application/json" id="labelled-example">${JSON.stringify({ ...workedExample, tokens: ['I', 'like', 'tea'] })}</script>
<!-- Registered after the element: it waits for the page to be parsed before it looks. -->
<script src="sort-gpt2.js"></script>
<script>
  // Every event of every element, in order, as plain data.
  window.events = [];
  for (const element of document.querySelectorAll('[id]')) {
    for (const type of ['ready', 'error', 'select', 'hover', 'step']) {
      element.addEventListener(type, (event) => {
        const { error, result, ...detail } = event.detail ?? {};
        window.events.push({ id: element.id, type, detail, message: detail.message });
      });
    }
  }
  window.settled = (id) => { const el = document.getElementById(id); return el.result !== null || el.error !== null; };
</script>
</body></html>`;

let workDir;
let session;
let requests;
let lens;

before(async () => {
  buildElementsIfStale();
  lens = await load();
  workDir = mkdtempSync(join(tmpdir(), 'attnlens-elements-'));
  cpSync(bundle, join(workDir, 'attnlens-elements.js'));
  // The model as a script registers it: what a file:// page can use (it cannot fetch).
  const files = {
    config: JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8')),
    weights: readFileSync(join(modelDir, 'model.safetensors')).toString('base64'),
    tokenizer: readFileSync(join(modelDir, 'tokenizer.json'), 'utf8'),
  };
  writeFileSync(join(workDir, 'sort-gpt2.js'), `(globalThis.attnlensModels ??= {})['sort-gpt2'] = ${JSON.stringify(files)};\n`);
  writeFileSync(join(workDir, 'index.html'), pageHtml('<script src="attnlens-elements.js"></script>'));
  writeFileSync(join(workDir, 'module.html'), pageHtml('<script type="module" src="attnlens-elements.js"></script>'));
  session = await launchBrowser({ viewport: { width: 1000, height: 900 } });
  session.page.setDefaultTimeout(15_000);
  requests = [];
  session.page.on('request', (request) => requests.push(request.url()));
  // No network: any http(s) request fails.
  await session.context.route(/^https?:/, (route) => route.abort());
  await session.page.goto(pathToFileURL(join(workDir, 'index.html')).href);
  await session.page.waitForFunction(() => ['sentence', 'steps', 'table', 'model', 'shared-table', 'shared-steps'].every(window.settled), null, { timeout: 30_000 });
});

after(async () => {
  await session?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

const page = () => session.page;
const errorsOf = (id) => page().evaluate((id) => window.events.filter((e) => e.id === id && e.type === 'error').map((e) => e.message), id);
const readyCount = (id) => page().evaluate((id) => window.events.filter((e) => e.id === id && e.type === 'ready').length, id);
// Non-background pixels of the element's canvases.
const ink = (id) => page().evaluate((id) => {
  let inked = 0;
  for (const canvas of document.getElementById(id).querySelectorAll('canvas')) {
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    for (let i = 0; i < data.length; i += 4) if (data[i] !== data[0] || data[i + 1] !== data[1] || data[i + 2] !== data[2]) inked += 1;
  }
  return inked;
}, id);
// Waits for the element's next ready or error after `change` runs in the page.
async function settle(id, change, ...args) {
  const before = await page().evaluate((id) => window.events.filter((e) => e.id === id && (e.type === 'ready' || e.type === 'error')).length, id);
  await page().evaluate(change, ...args);
  await page().waitForFunction(([id, before]) => window.events.filter((e) => e.id === id && (e.type === 'ready' || e.type === 'error')).length > before, [id, before]);
  return page().evaluate((id) => window.events.filter((e) => e.id === id && (e.type === 'ready' || e.type === 'error')).at(-1), id);
}
const tableRows = (selector) => page().locator(selector).evaluateAll((rows) => rows.map((row) => Array.from(row.querySelectorAll('td'), (td) => td.textContent)));

describe('the one-file build', () => {
  test('is one classic script with the WebAssembly inlined, and a module script from file:// is refused', async () => {
    const source = readFileSync(bundle, 'utf8');
    assert.match(source, /^var attnlensElements=\(function/, 'an IIFE assigning one global');
    assert.doesNotMatch(source, /^\s*(import|export)\s/m, 'no module syntax');
    assert.ok((source.match(/data:application\/wasm;base64,/g) ?? []).length >= 2, 'the SIMD and scalar modules inlined');
    // Why classic: Chromium blocks module scripts from file:// (origin "null").
    const other = await session.context.newPage();
    const consoleErrors = [];
    other.on('console', (message) => { if (message.type() === 'error') consoleErrors.push(message.text()); });
    await other.goto(pathToFileURL(join(workDir, 'module.html')).href);
    await other.waitForTimeout(500);
    assert.equal(await other.evaluate(() => customElements.get('attnlens-sentence')), undefined);
    assert.ok(consoleErrors.some((text) => /CORS|origin 'null'|file:/i.test(text)), `expected a CORS error, got ${consoleErrors}`);
    await other.close();
  });

  test('the page computed everything from file:// with no request beyond its own files', async () => {
    const own = ['index.html', 'attnlens-elements.js', 'sort-gpt2.js'].map((name) => pathToFileURL(join(workDir, name)).href);
    assert.deepEqual(requests.filter((url) => !/^(data|blob):/.test(url)), own);
    for (const id of ['sentence', 'steps', 'table', 'model']) assert.deepEqual(await errorsOf(id), [], `${id}: errors`);
    assert.deepEqual(session.errors, []);
  });
});

describe('<attnlens-sentence>', () => {
  test('computes with the WebAssembly core (the same numbers as the library in Node) and draws', async () => {
    const result = await page().evaluate(() => {
      const { result } = document.getElementById('sentence');
      return { tokens: result.tokens, heads: result.heads, dModel: result.dModel, weights: Array.from(result.weights) };
    });
    const reference = lens.explainSentence({ text: 'The cat sat on the mat.', heads: 4 });
    assert.deepEqual(result.tokens, reference.tokens);
    assert.equal(result.heads, 4);
    assert.equal(result.dModel, 64);
    assertClose(result.weights, Array.from(reference.weights), 1e-6, 'sentence weights');
    assert.ok(await ink('sentence') > 2000, 'the heatmap is drawn');
  });

  test('attributes are reactive: several changes recompute once, with the new settings', async () => {
    const readyBefore = await readyCount('sentence');
    const event = await settle('sentence', () => {
      const element = document.getElementById('sentence');
      element.setAttribute('text', 'Attention is all you need');
      element.setAttribute('heads', '2');
      element.setAttribute('d-model', '16');
      element.setAttribute('seed', '9');
      element.setAttribute('causal', '');
      element.setAttribute('temperature', '2');
    });
    assert.equal(event.type, 'ready');
    await page().waitForTimeout(50);
    assert.equal(await readyCount('sentence'), readyBefore + 1, 'six attribute changes, one computation');
    const weights = await page().evaluate(() => Array.from(document.getElementById('sentence').result.weights));
    const reference = lens.explainSentence({ text: 'Attention is all you need', heads: 2, dModel: 16, seed: 9, causal: true, temperature: 2 });
    assertClose(weights, Array.from(reference.weights), 1e-6, 'weights after the change');
    assert.equal(weights[1], 0, 'causal: the first token cannot see the second');
    // Every view by name draws (kebab case accepted too).
    for (const view of ['all-heads', 'lines', 'headAverage', 'table', 'steps', 'modelView', 'heatmap']) {
      const done = await settle('sentence', (view) => document.getElementById('sentence').setAttribute('view', view), view);
      assert.equal(done.type, 'ready', `view ${view}: ${done.message}`);
      const drawn = await page().evaluate(() => {
        const element = document.getElementById('sentence');
        return { views: element.querySelectorAll('.attnlens-view').length, name: element.querySelector('.attnlens-view').dataset.view, cells: element.querySelectorAll('td').length };
      });
      assert.equal(drawn.views, 1, `${view}: one view at a time`);
      if (view === 'table' || view === 'steps') assert.ok(drawn.cells > 0, `${view}: table cells`);
      else assert.ok(await ink('sentence') > 500, `${view}: pixels`);
    }
  });

  test('hover and click on the heatmap send hover and select events with the exact weight', async () => {
    const box = await page().locator('#sentence canvas').first().boundingBox();
    const layout = await page().evaluate(() => document.getElementById('sentence').result.n);
    assert.equal(layout, 5);
    // Somewhere inside the grid: the title and the labels take the top left, so aim at the lower right quarter.
    await page().mouse.move(box.x + box.width * 0.7, box.y + box.height * 0.7);
    await page().mouse.down();
    await page().mouse.up();
    const events = await page().evaluate(() => window.events.filter((e) => e.id === 'sentence' && (e.type === 'hover' || e.type === 'select')));
    const hover = events.find((e) => e.type === 'hover');
    const select = events.find((e) => e.type === 'select');
    assert.ok(hover && select, `events: ${JSON.stringify(events)}`);
    const weights = await page().evaluate(() => Array.from(document.getElementById('sentence').result.weights));
    const { row, col, weight, query, key, head } = select.detail;
    assert.equal(weight, weights[(head * 5 + row) * 5 + col]);
    assert.equal(query, ['Attention', 'is', 'all', 'you', 'need'][row]);
    assert.equal(key, ['Attention', 'is', 'all', 'you', 'need'][col]);
    // The sentence is causal: a later key was hidden from the query, and the readout says so instead of a weight.
    assert.equal(select.detail.hidden, col > row ? 'the causal mask' : null);
    const readout = await page().locator('#sentence .attnlens-readout').textContent();
    if (col > row) assert.match(readout, /: hidden by the causal mask$/);
    else assert.match(readout, new RegExp(weight.toPrecision(7).replace('.', '\\.')));
  });

  test('Escape closes the heatmap\'s hover tooltip wherever the focus is, and the focus stays there', async () => {
    // The keyboard in another element of the tutorial (a table cell), the pointer on the sentence's heatmap.
    const focused = page().locator('#table td[tabindex="0"]');
    await focused.focus();
    const box = await page().locator('#sentence canvas').first().boundingBox();
    await page().mouse.move(box.x + box.width * 0.7, box.y + box.height * 0.7);
    const tooltip = page().locator('#sentence .attnlens-tooltip');
    await tooltip.waitFor({ state: 'visible' });
    assert.match(await tooltip.textContent(), /^query “.+” \(#\d\) → key “.+” \(#\d\): /);
    await page().keyboard.press('Escape');
    await tooltip.waitFor({ state: 'hidden', timeout: 2000 });
    assert.ok(await focused.evaluate((cell) => cell === document.activeElement), 'the focus stays on the table cell');
    // The pointer brings it back.
    await page().mouse.move(box.x + box.width * 0.72, box.y + box.height * 0.72);
    await tooltip.waitFor({ state: 'visible' });
  });

  test('a bad attribute shows a clear error as text, and the element recovers when it is fixed', async () => {
    const bad = await settle('sentence', () => document.getElementById('sentence').setAttribute('heads', '3'));
    assert.equal(bad.type, 'error');
    assert.match(bad.message, /dModel = 16 must be divisible by heads = 3|divisible/);
    const shown = await page().locator('#sentence .attnlens-error').textContent();
    assert.match(shown, /^<attnlens-sentence> .*divisible/);
    assert.equal(await page().locator('#sentence [role=alert]').count(), 1);
    assert.equal(await page().locator('#sentence .attnlens-view').count(), 0, 'no stale picture beside the error');

    const notNumber = await settle('sentence', () => document.getElementById('sentence').setAttribute('temperature', '<img src=x onerror=alert(1)>'));
    assert.equal(notNumber.message, '<attnlens-sentence> temperature must be a number, got "<img src=x onerror=alert(1)>"');
    assert.equal(await page().locator('#sentence img').count(), 0, 'the message is text, never HTML');
    const badView = await settle('sentence', () => {
      const element = document.getElementById('sentence');
      element.setAttribute('temperature', '2');
      element.setAttribute('view', 'pie');
    });
    assert.match(badView.message, /view must be one of heatmap, allHeads, modelView, lines, headAverage, table, steps, got "pie"/);

    const fixed = await settle('sentence', () => {
      const element = document.getElementById('sentence');
      element.setAttribute('heads', '4');
      element.setAttribute('view', 'heatmap');
    });
    assert.equal(fixed.type, 'ready');
    assert.equal(await page().locator('#sentence .attnlens-error').count(), 0);
    assert.ok(await ink('sentence') > 500);
    assert.equal(await page().evaluate(() => document.getElementById('sentence').error), null);
  });

  test('theming: the page\'s CSS custom properties reach the view', async () => {
    await settle('sentence', () => {
      const element = document.getElementById('sentence');
      element.style.setProperty('--attnlens-background', 'rgb(10, 20, 30)');
      element.setAttribute('seed', '3');
    });
    const corner = await page().evaluate(() => Array.from(document.querySelector('#sentence canvas').getContext('2d').getImageData(1, 1, 1, 1).data.slice(0, 3)));
    assert.deepEqual(corner, [10, 20, 30]);
  });
});

describe('<attnlens-matrices>', () => {
  test('the worked example: step 7 of the steps view and the table view show weights row 0 = 0.3136 0.3501 0.3363', async () => {
    assert.match(await page().locator('#steps h3').textContent(), /^Step 7 of 9: Weights = softmax/);
    assert.deepEqual((await tableRows('#steps tbody tr'))[0], WEIGHTS_ROW_0);
    assert.deepEqual((await tableRows('#table tbody tr'))[0], WEIGHTS_ROW_0);
    assert.deepEqual(await page().locator('#table tbody th').allTextContents(), ['I', 'like', 'tea']);
    const weights = await page().evaluate(() => Array.from(document.getElementById('steps').result.weights.slice(0, 3)));
    assertClose(weights, [0.3135989, 0.3500636, 0.3363374], 1e-6, 'weights row 0');
  });

  test('the steps view steps with its buttons and keys, and cells send select / hover with their value', async () => {
    await page().getByRole('button', { name: 'Next →' }).first().click();
    assert.match(await page().locator('#steps h3').textContent(), /^Step 8 of 9: Head output/);
    assert.deepEqual((await tableRows('#steps tbody tr'))[0], ['0.3109', '0.2600', '0.2723', '0.4409']);
    await page().keyboard.press('ArrowLeft');
    assert.match(await page().locator('#steps h3').textContent(), /^Step 7 of 9/);
    const steps = await page().evaluate(() => window.events.filter((e) => e.id === 'steps' && e.type === 'step').map((e) => e.detail.step));
    assert.deepEqual(steps, [7, 6]);
    await page().locator('#steps tbody tr').first().locator('td').nth(1).hover();
    await page().locator('#steps tbody tr').first().locator('td').nth(1).click();
    const select = await page().evaluate(() => window.events.filter((e) => e.id === 'steps' && e.type === 'select').at(-1).detail);
    assert.deepEqual({ ...select, value: Number(select.value.toFixed(7)) },
      { view: 'steps', step: 6, matrix: 'weights', row: 0, col: 1, query: 't0', key: 't1', value: 0.3500636 });
    const hover = await page().evaluate(() => window.events.filter((e) => e.id === 'steps' && e.type === 'hover').at(-1).detail);
    assert.equal(hover.col, 1);
  });

  test('the attributes override the JSON: a causal mask and a temperature recompute the steps', async () => {
    const done = await settle('steps', () => {
      const element = document.getElementById('steps');
      element.setAttribute('causal', '');
      element.setAttribute('temperature', '0.5');
    });
    assert.equal(done.type, 'ready');
    const row0 = (await tableRows('#steps tbody tr'))[0];
    assert.deepEqual(row0, ['1.0000', '0.0000', '0.0000'], 'the first row sees only itself');
    await page().locator('#steps').getByRole('button', { name: '← Previous' }).click();
    assert.match(await page().locator('#steps .formula').textContent(), /T = 0\.5/);
    assert.match(await page().locator('#steps .step-sentence').textContent(), /-∞/);
    await settle('steps', () => {
      const element = document.getElementById('steps');
      element.removeAttribute('causal');
      element.removeAttribute('temperature');
      element.setAttribute('step', '6');
    });
    assert.deepEqual((await tableRows('#steps tbody tr'))[0], WEIGHTS_ROW_0);
  });

  test('malformed JSON shows a clear error as text; fixing the JSON recovers', async () => {
    const bad = await settle('steps', () => { document.querySelector('#steps script').textContent = '{"X": [[1, 0], [0, 1]],'; });
    assert.equal(bad.type, 'error');
    assert.match(bad.message, /^<attnlens-matrices> JSON: /);
    assert.match(await page().locator('#steps .attnlens-error').textContent(), /JSON/);
    const ragged = await settle('steps', () => { document.querySelector('#steps script').textContent = '{"X": [[1, 0], [0]], "W_Q": [[1]], "W_K": [[1]], "W_V": [[1]]}'; });
    assert.equal(ragged.message, '<attnlens-matrices> JSON: X: row 2 has 1 numbers, expected 2 numbers like row 1');
    const shape = await settle('steps', () => { document.querySelector('#steps script').textContent = '{"X": [[1, 0], [0, 1]], "W_Q": [[1]], "W_K": [[1]], "W_V": [[1]]}'; });
    // The rows and columns are checked as typed (a flat length would let a 2 x 8 W_Q pass for 4 x 4).
    assert.equal(shape.message, '<attnlens-matrices> JSON: W_Q: row 1 has 1 numbers, expected 2 numbers (d_model × d_model, d_model = 2 columns of X)');
    const fixed = await settle('steps', (json) => { document.querySelector('#steps script').textContent = json; }, JSON.stringify(workedExample));
    assert.equal(fixed.type, 'ready');
    assert.equal(await page().locator('#steps .attnlens-error').count(), 0);
    assert.deepEqual((await tableRows('#steps tbody tr'))[0], WEIGHTS_ROW_0);
  });

  test('cross-attention: a context matrix gives m != n keys', async () => {
    const context = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [1, 1, 0, 0]];
    const done = await settle('table', (json) => { document.querySelector('#table script').textContent = json; },
      JSON.stringify({ ...workedExample, context, contextTokens: ['a', 'b', 'c', 'd', 'e'] }));
    assert.equal(done.type, 'ready', done.message);
    assert.deepEqual(await page().locator('#table thead th').allTextContents(), ['a', 'b', 'c', 'd', 'e']);
    const weights = await page().evaluate(() => Array.from(document.getElementById('table').result.weights));
    const f32 = (rows) => new Float32Array(rows.flat());
    const reference = lens.explainMatrices({ x: f32(workedExample.X), n: 3, dModel: 4, wq: f32(workedExample.W_Q), wk: f32(workedExample.W_K), wv: f32(workedExample.W_V), context: f32(context), nContext: 5 });
    assertClose(weights, Array.from(reference.weights), 1e-6, 'cross-attention weights');
  });


  test('a padding mask (keyMask in the JSON) hides a key, drawn as hidden: the other weights are the worked example\'s', async () => {
    const padded = { ...workedExample, X: [...workedExample.X, [0, 0, 0, 0]], keyMask: [1, 1, 1, 0], tokens: ['t0', 't1', 't2', '[PAD]'] };
    const done = await settle('table', (json) => { document.querySelector('#table script').textContent = json; }, JSON.stringify(padded));
    assert.equal(done.type, 'ready', done.message);
    const rows = await tableRows('#table tbody tr');
    // The padded key's weight is 0 by construction: drawn as hidden, and saying what hid it (issue 22).
    assert.deepEqual(rows[0], [...WEIGHTS_ROW_0, 'hidden']);
    assert.equal(await page().locator('#table tbody tr >> nth=0 >> td >> nth=3').getAttribute('title'), 'hidden by the padding mask');
    assert.equal(await page().evaluate(() => document.getElementById('table').result.weights[3]), 0);
    const bad = await settle('table', (json) => { document.querySelector('#table script').textContent = json; }, JSON.stringify({ ...padded, keyMask: [1, 1, 0] }));
    assert.equal(bad.message, '<attnlens-matrices> JSON: keyMask must be a list of 4 entries, one per key, each 1 (keep) or 0 (hide), got [1,1,0]');
  });
});

describe('<attnlens-matrices matrices="#id">: one shared JSON script', () => {
  const shared = ['shared-table', 'shared-steps'];
  // Runs `change`, then waits until every shared element has answered (ready or error) once more.
  async function settleShared(change, ...args) {
    const before = await page().evaluate((ids) => ids.map((id) => window.events.filter((e) => e.id === id && (e.type === 'ready' || e.type === 'error')).length), shared);
    await page().evaluate(change, ...args);
    await page().waitForFunction(([ids, before]) => ids.every((id, i) => window.events.filter((e) => e.id === id && (e.type === 'ready' || e.type === 'error')).length > before[i]), [shared, before]);
    return page().evaluate((ids) => ids.map((id) => window.events.filter((e) => e.id === id && (e.type === 'ready' || e.type === 'error')).at(-1)), shared);
  }
  const setShared = (json) => { document.getElementById('worked-example').textContent = json; };

  test('two elements read the worked example from one script written after them', async () => {
    assert.deepEqual((await tableRows('#shared-table tbody tr'))[0], WEIGHTS_ROW_0);
    assert.deepEqual((await tableRows('#shared-steps tbody tr'))[0], WEIGHTS_ROW_0);
    assert.match(await page().locator('#shared-steps h3').textContent(), /^Step 7 of 9: Weights = softmax/);
    assert.deepEqual(await errorsOf('shared-table'), []);
  });

  test('editing the shared script recomputes every element that reads it; bad JSON is reported in each, then fixed', async () => {
    const edited = { ...workedExample, X: [[2, 0, 1, 0], [0, 1, 0, 2], [1, 1, 0, 1]] };
    const done = await settleShared(setShared, JSON.stringify(edited));
    assert.deepEqual(done.map((e) => e.type), ['ready', 'ready']);
    const f32 = (rows) => new Float32Array(rows.flat());
    const reference = lens.explainMatrices({ x: f32(edited.X), n: 3, dModel: 4, wq: f32(edited.W_Q), wk: f32(edited.W_K), wv: f32(edited.W_V) });
    for (const id of shared) {
      const weights = await page().evaluate((id) => Array.from(document.getElementById(id).result.weights), id);
      assertClose(weights, Array.from(reference.weights), 1e-6, `${id}: edited example`);
    }
    assert.deepEqual((await tableRows('#shared-table tbody tr'))[0], Array.from(reference.weights.slice(0, 3), (w) => w.toFixed(4)));

    const bad = await settleShared(setShared, '{"X": [[1, 0], [0, 1]],');
    for (const [i, event] of bad.entries()) {
      assert.equal(event.type, 'error', shared[i]);
      assert.match(event.message, /^<attnlens-matrices> JSON of matrices="#worked-example": /);
      assert.match(await page().locator(`#${shared[i]} .attnlens-error`).textContent(), /JSON of matrices="#worked-example"/);
    }
    const fixed = await settleShared(setShared, JSON.stringify(workedExample));
    assert.deepEqual(fixed.map((e) => e.type), ['ready', 'ready']);
    assert.equal(await page().locator('#shared-table .attnlens-error').count(), 0);
    assert.deepEqual((await tableRows('#shared-steps tbody tr'))[0], WEIGHTS_ROW_0);
  });

  test('the attribute is reactive: a missing id, another element, a bare name are clear errors; another script is read', async () => {
    const set = (value) => settle('shared-table', (value) => document.getElementById('shared-table').setAttribute('matrices', value), value);
    const missing = await set('#no-such-script');
    assert.equal(missing.type, 'error');
    assert.equal(missing.message, '<attnlens-matrices> matrices="#no-such-script": there is no element with id "no-such-script" in the document');
    assert.equal(await page().locator('#shared-table .attnlens-error').textContent(), missing.message);
    assert.equal(await page().locator('#shared-table table').count(), 0, 'no stale figure beside the error');
    const notScript = await set('#sentence');
    assert.equal(notScript.message, '<attnlens-matrices> matrices="#sentence" must name a <script type="application/json">, not a <attnlens-sentence>');
    const bare = await set('worked-example');
    assert.equal(bare.message, '<attnlens-matrices> matrices must name a <script type="application/json"> by its id, like matrices="#worked-example", got "worked-example"');
    const other = await set('#labelled-example');
    assert.equal(other.type, 'ready');
    assert.deepEqual(await page().locator('#shared-table tbody th').allTextContents(), ['I', 'like', 'tea']);
    assert.deepEqual((await tableRows('#shared-table tbody tr'))[0], WEIGHTS_ROW_0);
    // Now it watches the other script: editing that one recomputes it.
    const relabelled = await settle('shared-table', (json) => { document.getElementById('labelled-example').textContent = json; },
      JSON.stringify({ ...workedExample, tokens: ['you', 'like', 'tea'] }));
    assert.equal(relabelled.type, 'ready');
    assert.deepEqual(await page().locator('#shared-table tbody th').allTextContents(), ['you', 'like', 'tea']);
    // Without the attribute (and no child script) it says where the JSON can be.
    const none = await settle('shared-table', () => document.getElementById('shared-table').removeAttribute('matrices'));
    assert.match(none.message, /needs its matrices as JSON: in a child <script type="application\/json">.*or in one elsewhere named by matrices="#its-id"/);
    const back = await set('#worked-example');
    assert.equal(back.type, 'ready');
    assert.deepEqual(await page().locator('#shared-table tbody th').allTextContents(), ['t0', 't1', 't2']);
  });
});

describe('<attnlens-model>', () => {
  // A tiny random BART registered by a script, opened in a page `file` holding one element (`element(text)`),
  // and the same model in Node with its greedy translation of the element's source ids, as the page asks for it.
  const bartSource = [3, 4, 5, 6, 7, 8];
  async function openBartPage(file, element) {
    const checkpoint = seq2seqCheckpoint({ family: 'bart', seed: 7 });
    const entry = { config: checkpoint.files['config.json'], weights: Buffer.from(checkpoint.files['model.safetensors']).toString('base64') };
    writeFileSync(join(workDir, 'bart.js'), `(globalThis.attnlensModels ??= {})['bart'] = ${JSON.stringify(entry)};\n`);
    writeFileSync(join(workDir, file), '<!doctype html><meta charset="utf-8"><script src="attnlens-elements.js"></script><script src="bart.js"></script>'
      + element(bartSource.join(' ')));
    const model = await lens.loadModel({ config: checkpoint.files['config.json'], weights: checkpoint.files['model.safetensors'] });
    const generated = model.generate({ ids: bartSource, maxTokens: Math.min(32, model.info.maxPositions - 1) });
    const other = await session.context.newPage();
    await other.goto(pathToFileURL(join(workDir, file)).href);
    return {
      model, other, generated, targetIds: [model.info.decoderStartId, ...generated.ids],
      settled: (predicate, arg = null) => other.waitForFunction(predicate, arg, { timeout: 20_000 }),
      async close() {
        await other.close();
        model.dispose();
      },
    };
  }

  test('a model registered by a script runs from file://: every layer and head, the library\'s numbers', async () => {
    const { run, buttons } = await page().evaluate(() => {
      const element = document.getElementById('model');
      return { run: { tokens: element.result.tokens, layers: element.result.layers, heads: element.result.heads, attention: Array.from(element.result.attention) }, buttons: element.querySelectorAll('.attnlens-grid button').length };
    });
    const model = await lens.loadModel({
      config: readFileSync(join(modelDir, 'config.json'), 'utf8'),
      weights: readFileSync(join(modelDir, 'model.safetensors')),
      tokenizer: readFileSync(join(modelDir, 'tokenizer.json'), 'utf8'),
    });
    const reference = model.run({ text: '2 0 1 1 0 2' });
    assert.deepEqual(run.tokens, reference.tokens);
    assert.equal(buttons, reference.layers * reference.heads);
    assertClose(run.attention, Array.from(reference.attention), 1e-6, 'model attention');
    assert.ok(await ink('model') > 1000);

    const steps = await settle('model', () => {
      const element = document.getElementById('model');
      element.setAttribute('view', 'steps');
      element.setAttribute('layer', '1');
      element.setAttribute('head', '2');
    });
    assert.equal(steps.type, 'ready', steps.message);
    assert.match(await page().locator('#model h3').textContent(), /^Step 1 of 10: X: what layer 2 reads/);
    const explanation = model.explain({ text: '2 0 1 1 0 2', layer: 1, head: 2 });
    const x0 = (await tableRows('#model tbody tr'))[0].map(Number);
    assertClose(x0, Array.from(explanation.x.slice(0, 16)), 0.5e-4 + 1e-7, 'X row 0');
    model.dispose();
  });

  test('a folder next to a file:// page cannot be fetched: the error says why and what to do', async () => {
    const bad = await settle('model', () => document.getElementById('model').setAttribute('src', './sort-gpt2-folder/'));
    assert.equal(bad.type, 'error');
    assert.match(bad.message, /could not fetch file:\/\/.*sort-gpt2-folder\/config\.json.*globalThis\.attnlensModels/);
    const fixed = await settle('model', () => document.getElementById('model').setAttribute('src', 'sort-gpt2'));
    assert.equal(fixed.type, 'ready');
  });

  test('an encoder-decoder translates its text and draws cross-attention (kind), as the library computes it', async () => {
    const bart = await openBartPage('bart.html', (text) => `<attnlens-model id="t" src="bart" text="${text}" layer="1" head="1" view="heatmap"></attnlens-model>`);
    const { model, other, generated, settled } = bart;
    try {
      const reference = model.run({ ids: bartSource, targetIds: bart.targetIds });
      const read = () => other.evaluate(() => {
        const { result, error, view } = document.getElementById('t');
        return error ? { error: error.message } : {
          generated: Array.from(result.generated.ids), targetTokens: result.targetTokens, tokens: result.tokens,
          crossAttention: Array.from(result.crossAttention), decoderAttention: Array.from(result.decoderAttention), shape: view.toJSON().shape,
          label: document.querySelector('#t canvas').getAttribute('aria-label'),
        };
      });
      await settled(() => { const t = document.getElementById('t'); return t.result || t.error; });
      let shown = await read();
      assert.equal(shown.error, undefined);
      assert.deepEqual(shown.generated, Array.from(generated.ids));
      assert.deepEqual([shown.targetTokens, shown.tokens], [reference.targetTokens, reference.tokens]);
      assertClose(shown.crossAttention, Array.from(reference.crossAttention), 1e-5, 'cross-attention');
      assert.deepEqual(shown.shape, [reference.m, reference.n], 'cross-attention by default: target rows, source columns');
      assert.match(shown.label, new RegExp(`^Layer 2 of ${model.info.decoderLayers} · head 2 of`));
      // kind="decoder": the same run, the decoder's causal self-attention.
      await other.evaluate(() => document.getElementById('t').setAttribute('kind', 'decoder'));
      await settled((m) => document.getElementById('t').view?.toJSON().shape.join() === `${m},${m}`, reference.m);
      shown = await read();
      assertClose(shown.decoderAttention, Array.from(reference.decoderAttention), 1e-5, 'decoder self-attention');
      // max-tokens bounds the translation.
      await other.evaluate(() => document.getElementById('t').setAttribute('max-tokens', '2'));
      await settled(() => document.getElementById('t').result?.generated.ids.length <= 2);
      assert.deepEqual((await read()).generated, Array.from(generated.ids.slice(0, 2)));
      // Bad attributes are named, as text.
      await other.evaluate(() => document.getElementById('t').setAttribute('kind', '<b>sideways</b>'));
      await settled(() => document.getElementById('t').error !== null);
      assert.match((await read()).error, /kind must be one of cross, encoder, decoder, got "<b>sideways<\/b>"/);
      assert.equal(await other.locator('#t b').count(), 0, 'the message is text, not HTML');
      // value-weighted: model.analyze of the same source and translation, the kind's value-weighted attention drawn.
      await other.evaluate(() => {
        const t = document.getElementById('t');
        t.removeAttribute('max-tokens');
        t.setAttribute('kind', 'cross');
        t.setAttribute('value-weighted', '');
      });
      await settled(() => document.getElementById('t').result?.crossValueWeighted !== undefined);
      const analysis = model.analyze({ ids: bartSource, targetIds: bart.targetIds, logitLens: false });
      const weighted = () => other.evaluate(() => {
        const { result, view } = document.getElementById('t');
        const json = view.toJSON();
        return {
          generated: Array.from(result.generated.ids), crossValueWeighted: Array.from(result.crossValueWeighted),
          valueWeighted: Array.from(result.valueWeighted), quantity: json.quantity, shape: json.shape, shown: json.weights.flat(),
          label: document.querySelector('#t canvas').getAttribute('aria-label'),
        };
      });
      shown = await weighted();
      assert.deepEqual(shown.generated, Array.from(generated.ids));
      assertClose(shown.crossValueWeighted, Array.from(analysis.crossValueWeighted), 1e-5, 'value-weighted cross-attention');
      assert.equal(shown.quantity, 'valueWeighted');
      assert.deepEqual(shown.shape, [analysis.m, analysis.n]);
      const headSize = analysis.m * analysis.n; // layer 1, head 1 (from 0) is drawn
      const drawn = analysis.crossValueWeighted.subarray((1 * analysis.heads + 1) * headSize, (1 * analysis.heads + 2) * headSize);
      assertClose(shown.shown, Array.from(drawn), 1e-5, 'the drawn head\'s value-weighted cross-attention');
      assert.match(shown.label, /value-weighted/);
      // kind="encoder" with value-weighted: the encoder's, over the source.
      await other.evaluate(() => document.getElementById('t').setAttribute('kind', 'encoder'));
      await settled((n) => document.getElementById('t').view?.toJSON().shape.join() === `${n},${n}`, analysis.n);
      shown = await weighted();
      assertClose(shown.valueWeighted, Array.from(analysis.valueWeighted), 1e-5, 'value-weighted encoder self-attention');
      const encoderHead = analysis.valueWeighted.subarray((1 * analysis.heads + 1) * analysis.n ** 2, (1 * analysis.heads + 2) * analysis.n ** 2);
      assertClose(shown.shown, Array.from(encoderHead), 1e-5, 'the drawn head\'s value-weighted encoder self-attention');
    } finally {
      await bart.close();
    }
  });

  test('<attnlens-head-scores> with an encoder-decoder: the decoder\'s or the encoder\'s scores of model.analyze on its translation', async () => {
    const bart = await openBartPage('bart-scores.html', (text) => `<attnlens-head-scores id="s" src="bart" text="${text}" sort-by="previousToken"></attnlens-head-scores>`);
    const { model, other, generated, settled } = bart;
    try {
      const analysis = model.analyze({ ids: bartSource, targetIds: bart.targetIds });
      const read = () => other.evaluate(() => {
        const { result, error, view } = document.getElementById('s');
        if (error) return { error: error.message };
        const scores = (named) => Object.fromEntries(Object.entries(named).map(([name, values]) => [name, Array.from(values)]));
        return {
          kind: result.kind, generated: Array.from(result.generated.ids), decoderScores: scores(result.decoderScores), scores: scores(result.scores),
          csv: view.toCSV(), grids: document.querySelectorAll('#s table[data-score]').length,
        };
      });
      // The CSV's rows (layer, head, one column per score), in the order shown, against analyze's `named` scores.
      const assertTable = (csv, named, layers, where) => {
        const [header, ...rows] = csv.trim().split('\n').map((line) => line.split(','));
        const names = header.slice(2);
        assert.deepEqual(names, Object.keys(named), `${where}: the score columns`);
        assert.equal(rows.length, layers * analysis.heads, `${where}: one row per head`);
        for (const [layer, head, ...values] of rows) {
          const index = Number(layer) * analysis.heads + Number(head);
          assertClose(values.map(Number), names.map((name) => named[name][index]), 1e-5, `${where}: layer ${layer} head ${head}`);
        }
        const previous = rows.map((row) => Number(row[2 + names.indexOf('previousToken')]));
        assert.deepEqual(previous, [...previous].sort((a, b) => b - a), `${where}: sorted by previousToken`);
      };
      await settled(() => { const s = document.getElementById('s'); return s.result || s.error; });
      let shown = await read();
      assert.equal(shown.error, undefined);
      assert.equal(shown.kind, 'decoder', 'the decoder\'s self-attention by default');
      assert.deepEqual(shown.generated, Array.from(generated.ids));
      for (const name of Object.keys(analysis.decoderScores)) {
        assertClose(shown.decoderScores[name], Array.from(analysis.decoderScores[name]), 1e-5, `decoderScores.${name}`);
        assertClose(shown.scores[name], Array.from(analysis.scores[name]), 1e-5, `scores.${name}`);
      }
      assertTable(shown.csv, analysis.decoderScores, analysis.decoderLayers, 'decoder');
      assert.equal(shown.grids, Object.keys(analysis.decoderScores).length, 'a grid per score');
      // kind="encoder": the encoder's, over the source.
      await other.evaluate(() => document.getElementById('s').setAttribute('kind', 'encoder'));
      await settled(() => document.getElementById('s').result?.kind === 'encoder');
      assertTable((await read()).csv, analysis.scores, analysis.layers, 'encoder');
      // Cross-attention has no detector scores, and repeated random tokens have no target: both are named, as text.
      await other.evaluate(() => document.getElementById('s').setAttribute('kind', 'cross'));
      await settled(() => document.getElementById('s').error !== null);
      assert.match((await read()).error, /kind must be decoder or encoder: cross-attention has no detector scores/);
      await other.evaluate(() => {
        const s = document.getElementById('s');
        s.setAttribute('kind', 'decoder');
        s.setAttribute('repeats', '10');
      });
      await settled(() => /repeats is not available for an encoder-decoder/.test(document.getElementById('s').error?.message ?? ''));
      await other.evaluate(() => document.getElementById('s').removeAttribute('repeats'));
      await settled(() => document.getElementById('s').result?.kind === 'decoder' && document.getElementById('s').error === null);
      assertTable((await read()).csv, analysis.decoderScores, analysis.decoderLayers, 'decoder again');
    } finally {
      await bart.close();
    }
  });

  test('over http, src names a model folder: config.json, model.safetensors and tokenizer.json are fetched', async () => {
    const root = mkdtempSync(join(tmpdir(), 'attnlens-elements-http-'));
    cpSync(bundle, join(root, 'attnlens-elements.js'));
    cpSync(modelDir, join(root, 'models', 'sort-gpt2'), { recursive: true });
    writeFileSync(join(root, 'index.html'), '<!doctype html><meta charset="utf-8"><script src="attnlens-elements.js"></script>'
      + '<attnlens-model id="m" src="models/sort-gpt2" text="1 2 0" view="lines" head="1" layer="2"></attnlens-model>');
    const server = await serveStatic(root);
    const other = await session.context.newPage();
    try {
      await other.route(/^https?:/, (route) => (route.request().url().startsWith(server.url) ? route.continue() : route.abort()));
      await other.goto(`${server.url}index.html`);
      await other.waitForFunction(() => { const m = document.getElementById('m'); return m.result || m.error; }, null, { timeout: 20_000 });
      const state = await other.evaluate(() => { const m = document.getElementById('m'); return { error: m.error?.message, tokens: m.result?.tokens, view: m.querySelector('.attnlens-view')?.dataset.view }; });
      assert.equal(state.error, undefined);
      assert.deepEqual(state.tokens, ['1', '2', '0']);
      assert.equal(state.view, 'lines');
    } finally {
      await other.close();
      await server.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
