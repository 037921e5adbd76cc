// Issue 24: the page over a GPT-2-shaped model's whole 1024-position context,
// typing at the end. A run brings only what the page draws (one head for the
// heatmap: n x n floats, web/page/model/held-attention.js), not layers x heads
// x n x n, so the tab's memory stays bounded; another head comes from what the
// model kept, without a forward. Checked against the library run in Node on
// the same ids, and with the page's and the worker's memory measured:
// the page's JS heap and ArrayBuffers through the DevTools protocol after a
// forced garbage collection, the worker's WebAssembly heap as it reports it (heapBytesInUse).
// The model view and All heads get their heads pooled to the pixels they draw (4 x 4 tokens a block at 1024
// tokens), checked against the library's full weights pooled by tests/support/pooled-reference.mjs, with the
// bytes the worker posts counted; a head opened from them is fetched in full. With the value-weighted switch
// on, the same: one head (or every head pooled) of value-weighted attention crosses, checked against the
// library's run({ attention: { valueWeighted: true } }), not model.analyze's every layer and head.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { load } from '../../web/lib/node.js';
import { tokenIds } from '../bench/gpt2-checkpoint.mjs';
import { pooledReference } from '../support/pooled-reference.mjs';
import { randomGpt2 } from './random-checkpoint.mjs';
import { assertClose, openPageAroundTests, waitForResult } from './page-fixture.mjs';

const dims = { vocab: 512, positions: 1024, width: 64, layers: 4, heads: 4, seed: 11 };
const n = 1024;
const allHeadsBytes = dims.layers * dims.heads * n * n * 4; // 64 MiB: what a run with every head would bring
// The kept queries, keys and values of every layer and the residual stream, per position, at the core's
// capacity (it grows by a quarter at a time): O(layers * n * d).
const cacheBound = (dims.layers * 3 * dims.width + dims.width) * 4 * Math.ceil(n * 1.25);

// The page's module fuses multiplies and adds (relaxed SIMD) where Node's does not: over 1024 positions and
// four layers of sharp random attention the weights differ from the fifth digit on.
const tolerance = 1e-4;

let lens;
let reference;
let session;
let page;
let cdp;
const { config, weights } = randomGpt2(dims);

// The page built first: the library's load() reads the WebAssembly modules that ensureBuilt() builds when missing.
openPageAroundTests(async (opened) => {
  session = opened;
  page = opened.page;
  cdp = await session.context.newCDPSession(page);
  await page.addInitScript(countWorkerBytes);
  await session.goto();
});
before(async () => {
  lens = await load();
  reference = await lens.loadModel({ config, weights });
});
after(() => reference?.dispose());

// In the page, before its scripts: window.workerBytes counts the bytes of every message a Worker posts
// to it (typed arrays and buffers at their byteLength, numbers at 8, strings at 2 a character).
function countWorkerBytes() {
  const bytesOf = (value) => {
    if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return value.byteLength;
    if (typeof value === 'string') return 2 * value.length;
    if (typeof value === 'number') return 8;
    if (value === null || typeof value !== 'object') return 1;
    return Object.values(value).reduce((sum, item) => sum + bytesOf(item), 0);
  };
  window.workerBytes = 0;
  const Native = window.Worker;
  window.Worker = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (event) => { window.workerBytes += bytesOf(event.data); });
    }
  };
}

// The page's JavaScript memory in bytes after a full garbage collection: its heap and the ArrayBuffers'
// backing stores (a Float32Array's data is not in the heap), as the DevTools protocol reports them.
async function pageHeapBytes() {
  await cdp.send('HeapProfiler.collectGarbage');
  const usage = await cdp.send('Runtime.getHeapUsage');
  assert.ok(Number.isFinite(usage.backingStorageSize), 'Runtime.getHeapUsage reports the ArrayBuffers\' backing stores');
  return usage.usedSize + usage.backingStorageSize;
}

// window.attnlens.last, its weights as bytes (base64: a million floats cross faster than as a JSON array).
async function lastRun() {
  return page.evaluate(() => {
    const { weights, ...rest } = window.attnlens.last;
    const bytes = new Uint8Array(weights.buffer, weights.byteOffset, weights.byteLength);
    let binary = '';
    for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
    return { ...rest, weights: btoa(binary), drawnRuns: performance.getEntriesByName('attnlens:model-drawn').length };
  }).then((last) => {
    const bytes = Buffer.from(last.weights, 'base64');
    return { ...last, weights: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4) };
  });
}

describe('the page at 1024 tokens', () => {
  test('typing at the end of 1024 tokens: one head crosses to the page, the memory stays bounded, the head is the library\'s', async (t) => {
    await page.locator('#model-files').setInputFiles([
      { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(config)) },
      { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: weights },
    ]);
    await page.waitForFunction(() => document.getElementById('model-info').textContent.includes('4 layers × 4 heads'), null, { timeout: 30_000 });
    // Token ids, typed as numbers: a model without a tokenizer reads "17 402 9 ...".
    const ids = Array.from(tokenIds(n, dims.vocab, 5));
    const field = page.getByRole('textbox', { name: /^Sentence/ });
    await field.fill(ids.slice(0, n - 1).join(' '));
    await waitForResult(page, `window.attnlens.last.model !== null && window.attnlens.last.tokens.length === ${n - 1}`);
    const heapBefore = await pageHeapBytes();

    // Typing the last token at the end: " 7" key by key.
    ids[n - 1] = 7;
    await page.evaluate(() => { window.firstChip = document.querySelector('#token-strip li'); });
    await field.press('Control+End');
    await page.keyboard.type(' 7', { delay: 60 });
    await waitForResult(page, `window.attnlens.last.tokens.length === ${n}`);
    const last = await lastRun();
    assert.deepEqual(last.ids, ids);
    // The token strip shows every token (here the ids typed), its chips reused rather than rebuilt.
    const strip = await page.evaluate(() => {
      const items = [...document.querySelectorAll('#token-strip li')];
      const text = (item, part) => item.querySelector(part).textContent;
      return {
        reused: items[0] === window.firstChip, texts: items.map((item) => text(item, '.token-text')),
        positions: items.map((item) => Number(text(item, '.token-index'))), lastTitle: items.at(-1).title,
      };
    });
    assert.ok(strip.reused, 'the first chip is the one shown before the key');
    assert.deepEqual(strip.texts, ids.map(String));
    assert.deepEqual(strip.positions, ids.map((_, i) => i));
    assert.equal(strip.lastTitle, `token ${n - 1}: id 7`);
    assert.deepEqual([last.attentionLayers, last.attentionHeads], [[0], [0]], 'the heatmap\'s layer and head only');
    assert.equal(last.weights.length, n * n);
    assert.equal(last.worker.reusedPositions, n - 1, 'the keystroke at the end reused every earlier position');
    const expected = reference.run({ ids, attention: { layers: [0], heads: [0] }, logits: 'none' });
    assertClose(last.weights, expected.attention, tolerance, 'layer 1 head 1 at 1024 tokens');

    // Memory: the worker keeps O(layers * n * d); the page holds about one head, not every head.
    assert.ok(last.worker.cacheBytes <= cacheBound, `kept cache ${last.worker.cacheBytes} bytes <= ${cacheBound}`);
    const workerBound = weights.byteLength + last.worker.cacheBytes + 16 * 2 ** 20;
    assert.ok(last.worker.heapBytesInUse <= workerBound,
      `the worker's WebAssembly heap in use: ${last.worker.heapBytesInUse} bytes <= ${workerBound} (every head: ${allHeadsBytes})`);
    const heapAfter = await pageHeapBytes();
    const grown = heapAfter - heapBefore;
    assert.ok(grown < allHeadsBytes / 4, `the page's JS heap grew by ${grown} bytes while typing (every head: ${allHeadsBytes})`);
    // About 8 MiB measured: the page and one 4 MiB head; every head would be 64 MiB more, a layer's 12 MiB more.
    assert.ok(heapAfter < 24 * 2 ** 20, `the page's JS heap and ArrayBuffers: ${heapAfter} bytes`);
    const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
    t.diagnostic(`page JS heap and ArrayBuffers ${mib(heapBefore)} -> ${mib(heapAfter)}; worker heap in use ${mib(last.worker.heapBytesInUse)} ` +
      `(weights ${mib(weights.byteLength)}, kept cache ${mib(last.worker.cacheBytes)}); every head would be ${mib(allHeadsBytes)}`);

    // Another head and layer: fetched from what the model kept, no forward, no new run drawn.
    await page.locator('#layer').selectOption('3');
    await page.locator('#head').selectOption('2');
    await waitForResult(page, 'window.attnlens.last.attentionLayers[0] === 2 && window.attnlens.last.attentionHeads[0] === 1');
    const switched = await lastRun();
    assert.equal(switched.fetchedWithForward, false, 'the head came from the kept queries and keys');
    assert.equal(switched.drawnRuns, last.drawnRuns, 'no model run');
    assertClose(switched.weights, reference.run({ ids, attention: { layers: [2], heads: [1] }, logits: 'none' }).attention,
      tolerance, 'layer 3 head 2');

    // All heads of the layer: fetched likewise, pooled to the quarter CSS px a token takes in its small heatmaps
    // (4 x 4 tokens a block); the page then holds that layer's four, pooled.
    const f = 4;
    const side = Math.ceil(n / f);
    await page.locator('button[data-view="multiples"]').click();
    await waitForResult(page, 'window.attnlens.last.attentionHeads.length === 4');
    const layer = await lastRun();
    assert.equal(layer.fetchedWithForward, false);
    assert.deepEqual([layer.attentionLayers, layer.attentionPool], [[2], f]);
    assert.equal(layer.weights.length, dims.heads * side * side);
    const full = reference.run({ ids, logits: 'none' }).attention;
    for (let head = 0; head < dims.heads; head++) {
      assertClose(layer.weights.subarray(head * side * side, (head + 1) * side * side),
        pooledReference(full, (2 * dims.heads + head) * n * n, n, n, f), tolerance, `layer 3, head ${head + 1} pooled`);
    }
    assert.equal(await page.locator('button[data-layer] canvas').count(), dims.heads, 'the four multiples drawn');
    assert.deepEqual(session.errors, []);

    // The model view: every layer and head, pooled to the quarter CSS px a token takes in its small heatmaps.
    await page.evaluate(() => { window.workerBytes = 0; });
    await page.locator('button[data-view="model"]').click();
    await waitForResult(page, `window.attnlens.last.attentionLayers.length === ${dims.layers} && window.attnlens.last.attentionPool > 1`);
    const grid = await lastRun();
    const posted = await page.evaluate(() => window.workerBytes);
    const pooledBytes = dims.layers * dims.heads * side * side * 4; // 4 MiB
    assert.equal(grid.attentionPool, f, 'a quarter CSS px a token at device pixel ratio 1: 4 x 4 tokens a pixel');
    assert.equal(grid.fetchedWithForward, false, 'pooled from the kept queries and keys');
    assert.equal(grid.weights.length, dims.layers * dims.heads * side * side);
    assert.ok(posted >= pooledBytes && posted <= pooledBytes + 2 ** 20,
      `the worker posted ${posted} bytes for the model view: the pooled heads (${pooledBytes}), not every head in full (${allHeadsBytes})`);
    for (let index = 0; index < dims.layers * dims.heads; index++) {
      assertClose(grid.weights.subarray(index * side * side, (index + 1) * side * side), pooledReference(full, index * n * n, n, n, f),
        tolerance, `layer ${Math.floor(index / dims.heads) + 1} head ${(index % dims.heads) + 1} pooled`);
    }
    // Drawn: 16 small heatmaps, each 256 blocks a side in 256 device pixels, the causal mask's blocks grey above
    // the diagonal, weights below it.
    const drawn = await page.evaluate(() => Array.from(document.querySelectorAll('button[data-layer] canvas'), (canvas) => {
      const context = canvas.getContext('2d');
      const pixel = (x, y) => Array.from(context.getImageData(x, y, 1, 1).data.subarray(0, 3));
      return { width: canvas.width, title: canvas.closest('button').title, above: pixel(2 + 250, 2 + 5), below: pixel(2 + 5, 2 + 250) };
    }));
    assert.equal(drawn.length, dims.layers * dims.heads);
    for (const { width, title, above, below } of drawn) {
      assert.ok(width >= side && width <= side + 8, `a small heatmap ${width} px wide`);
      assert.deepEqual(above, [200, 200, 200], 'a block of hidden cells is drawn hidden');
      assert.notDeepEqual(below, [200, 200, 200], 'a block of weights is drawn as weights');
      assert.match(title, /each block the largest of 4 × 4 weights/);
    }
    const heapModelView = await pageHeapBytes();
    assert.ok(heapModelView < 24 * 2 ** 20, `the page's JS heap and ArrayBuffers with the model view: ${heapModelView} bytes`);
    t.diagnostic(`model view: the worker posted ${mib(posted)} (every head in full: ${mib(allHeadsBytes)}); page ${mib(heapModelView)}`);

    // Typing with the model view shown: each run brings every head pooled (its kept rows recomputed, then pooled).
    const drawnBefore = grid.drawnRuns;
    await page.evaluate(() => { window.workerBytes = 0; });
    await field.press('Control+End');
    await field.press('Backspace');
    await page.keyboard.type('9', { delay: 60 });
    const edited = ids.with(n - 1, 9);
    await waitForResult(page, `window.attnlens.last.ids[${n - 1}] === 9 && window.attnlens.last.attentionPool === ${f}`);
    const typed = await lastRun();
    assert.deepEqual(typed.ids, edited);
    assert.ok(typed.drawnRuns > drawnBefore, 'a model run drawn');
    assert.equal(typed.worker.reusedPositions, n - 1, 'the edit at the end reused every earlier position');
    assert.equal(typed.weights.length, dims.layers * dims.heads * side * side);
    const typedPosted = await page.evaluate(() => window.workerBytes);
    assert.ok(typedPosted <= 2 * (pooledBytes + 2 ** 20), `the worker posted ${typedPosted} bytes for the runs while typing`);
    const editedFull = reference.run({ ids: edited, logits: 'none' }).attention;
    for (const index of [0, dims.layers * dims.heads - 1]) {
      assertClose(typed.weights.subarray(index * side * side, (index + 1) * side * side), pooledReference(editedFull, index * n * n, n, n, f),
        tolerance, `head ${index} pooled after typing`);
    }

    // A head opened from the model view is fetched in full for the heatmap.
    await page.locator('button[data-layer="1"][data-head="3"]').click();
    await waitForResult(page, 'window.attnlens.last.attentionPool === 1 && window.attnlens.last.attentionLayers[0] === 1');
    const opened = await lastRun();
    assert.deepEqual([opened.attentionLayers, opened.attentionHeads], [[1], [3]]);
    assertClose(opened.weights, editedFull.subarray((1 * dims.heads + 3) * n * n, (1 * dims.heads + 4) * n * n), tolerance, 'layer 2 head 4 opened');
    assert.deepEqual(session.errors, []);
  });

  test('the value-weighted switch at 1024 tokens: the head drawn, or every head pooled, crosses value-weighted', async (t) => {
    // The page as the test above left it: 1024 tokens (the last one 9), the heatmap of layer 2, head 4.
    const ids = Array.from(tokenIds(n, dims.vocab, 5)).with(n - 1, 9);
    const weighted = reference.run({ ids, logits: 'none', attention: { valueWeighted: true } }).attention;
    const headBytes = n * n * 4;
    await page.evaluate(() => { window.workerBytes = 0; });
    await page.getByRole('checkbox', { name: 'value-weighted' }).check();
    await waitForResult(page, "window.attnlens.last.quantity === 'valueWeighted'");
    const one = await lastRun();
    const posted = await page.evaluate(() => window.workerBytes);
    assert.deepEqual(one.ids, ids);
    assert.deepEqual([one.attentionLayers, one.attentionHeads, one.attentionPool], [[1], [3], 1], 'the heatmap\'s head only');
    assert.equal(one.worker.reusedPositions, n - 1, 'the same text again: every earlier position kept');
    assertClose(one.weights, weighted.subarray((1 * dims.heads + 3) * n * n, (1 * dims.heads + 4) * n * n), tolerance,
      'layer 2 head 4 value-weighted');
    assert.ok(posted >= headBytes && posted <= headBytes + 2 ** 20,
      `the worker posted ${posted} bytes: one head (${headBytes}), not every head (${allHeadsBytes}) nor analyze's two arrays of them`);
    const workerBound = weights.byteLength + one.worker.cacheBytes + 16 * 2 ** 20;
    assert.ok(one.worker.heapBytesInUse <= workerBound, `the worker's WebAssembly heap in use: ${one.worker.heapBytesInUse} <= ${workerBound}`);

    // The model view: every head, value-weighted, pooled to the pixels it draws.
    const f = 4;
    const side = Math.ceil(n / f);
    const pooledBytes = dims.layers * dims.heads * side * side * 4;
    await page.evaluate(() => { window.workerBytes = 0; });
    await page.locator('button[data-view="model"]').click();
    await waitForResult(page, `window.attnlens.last.quantity === 'valueWeighted' && window.attnlens.last.attentionLayers.length === ${dims.layers}`);
    const grid = await lastRun();
    const gridPosted = await page.evaluate(() => window.workerBytes);
    assert.equal(grid.attentionPool, f);
    assert.equal(grid.fetchedWithForward, false, 'from the kept queries, keys and values');
    assert.ok(gridPosted >= pooledBytes && gridPosted <= pooledBytes + 2 ** 20, `the worker posted ${gridPosted} bytes for the model view`);
    for (let index = 0; index < dims.layers * dims.heads; index++) {
      assertClose(grid.weights.subarray(index * side * side, (index + 1) * side * side), pooledReference(weighted, index * n * n, n, n, f),
        tolerance, `layer ${Math.floor(index / dims.heads) + 1} head ${(index % dims.heads) + 1} value-weighted, pooled`);
    }
    assert.equal(await page.locator('button[data-layer] canvas').count(), dims.layers * dims.heads, 'every head drawn');

    // Typing with it on: each run brings every head value-weighted and pooled.
    await page.evaluate(() => { window.workerBytes = 0; });
    const field = page.getByRole('textbox', { name: /^Sentence/ });
    await field.press('Control+End');
    await field.press('Backspace');
    await page.keyboard.type('3', { delay: 60 });
    await waitForResult(page, `window.attnlens.last.ids[${n - 1}] === 3 && window.attnlens.last.quantity === 'valueWeighted' && window.attnlens.last.attentionPool === ${f}`);
    const typed = await lastRun();
    const typedPosted = await page.evaluate(() => window.workerBytes);
    assert.equal(typed.worker.reusedPositions, n - 1);
    assert.ok(typedPosted <= 2 * (pooledBytes + 2 ** 20), `the worker posted ${typedPosted} bytes for the runs while typing`);
    const edited = reference.run({ ids: ids.with(n - 1, 3), logits: 'none', attention: { layers: [dims.layers - 1], heads: [0], pool: f, valueWeighted: true } });
    const lastHead = (dims.layers - 1) * dims.heads;
    assertClose(typed.weights.subarray(lastHead * side * side, (lastHead + 1) * side * side), edited.attention, tolerance,
      'the last layer\'s first head after typing');
    const heap = await pageHeapBytes();
    assert.ok(heap < 24 * 2 ** 20, `the page's JS heap and ArrayBuffers: ${heap} bytes`);
    const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
    t.diagnostic(`value-weighted: one head posted ${mib(posted)}, the model view ${mib(gridPosted)}; worker heap ${mib(one.worker.heapBytesInUse)}; ` +
      `model.analyze would hold ${mib(2 * allHeadsBytes)} in the worker`);

    // Off: the weights again.
    await page.getByRole('checkbox', { name: 'value-weighted' }).uncheck();
    await waitForResult(page, "window.attnlens.last.quantity === 'weights'");
    assert.deepEqual(session.errors, []);
  });

  // The table alternative shows 128 x 64 cells: a key at the end leaves them as they were, so the table is kept
  // (its caption's size updated); another head shows other cells, in a new table.
  test('the table alternative at 1024 tokens: kept by a key at the end, rebuilt for another head, the library\'s weights', async () => {
    await page.locator('button[data-view="heatmap"]').click();
    // Layer 3 head 2, whichever head the tests before opened.
    await page.locator('#layer').selectOption('3');
    await page.locator('#head').selectOption('2');
    await page.locator('#toggle-table').click();
    const ids = Array.from(tokenIds(n, dims.vocab, 5));
    ids[n - 1] = 7;
    const table = () => page.evaluate(() => {
      const shown = document.querySelector('#table-alternative table');
      const rows = [...shown.tBodies[0].rows].map((row) => [...row.cells].map((cell) => cell.textContent));
      return { same: shown === window.tableBefore, caption: shown.caption.textContent, rows };
    });
    // The library's weights as the table words them: four decimals, or "hidden" past the query's own position.
    const expectedRows = (count, head) => {
      const weights = reference.run({ ids: ids.slice(0, count), attention: { layers: [2], heads: [head] }, logits: 'none' }).attention;
      return Array.from({ length: 128 }, (_, row) => Array.from({ length: 64 }, (_, col) => (col > row ? 'hidden' : weights[row * count + col])));
    };
    const assertCells = (rows, expected, what) => rows.forEach((row, r) => expected[r].forEach((value, c) => {
      if (value === 'hidden') assert.equal(row[c + 1], 'hidden', `${what}: cell (${r}, ${c})`);
      else assert.ok(Math.abs(Number(row[c + 1]) - value) <= 5e-5 + tolerance, `${what}: cell (${r}, ${c}) ${row[c + 1]} vs ${value}`);
    }));
    await waitForResult(page, 'document.querySelector("#table-alternative table") !== null');
    await page.evaluate(() => { window.tableBefore = document.querySelector('#table-alternative table'); });
    await page.getByRole('textbox', { name: /^Sentence/ }).press('Backspace');
    await waitForResult(page, `window.attnlens.last.tokens.length === ${n - 1} && document.querySelector('#table-alternative table').caption.textContent.includes('${n - 1} × ${n - 1}')`);
    const shorter = await table();
    assert.ok(shorter.same, 'the table of the same cells is kept');
    assert.match(shorter.caption, new RegExp(`Weights, layer 3 of 4 · head 2 of 4 ${n - 1} × ${n - 1} \\(showing 128 × 64`));
    assertCells(shorter.rows, expectedRows(n - 1, 1), `${n - 1} tokens`);
    await page.keyboard.type('7');
    await waitForResult(page, `window.attnlens.last.tokens.length === ${n} && document.querySelector('#table-alternative table').caption.textContent.includes('${n} × ${n}')`);
    assert.ok((await table()).same, 'kept again after the key');
    await page.locator('#head').selectOption('3');
    await waitForResult(page, 'document.querySelector("#table-alternative table").caption.textContent.includes("head 3 of 4")');
    const other = await table();
    assert.equal(other.same, false, 'another head: a new table');
    assertCells(other.rows, expectedRows(n, 2), 'head 3');
    assert.deepEqual(session.errors, []);
  });
});
