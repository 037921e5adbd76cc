// lens.loadModel({ from }) in Chromium against the local test hub
// (tests/support/test-hub.mjs, another origin): the library keeps the files
// in Cache Storage (a second load asks the hub for nothing), a server
// without CORS is explained, a dropped connection too; and the page's
// "Load from URL" goes through the library, so it caches as well. Every
// attention is checked against sort-gpt2 loaded from its bytes in Node.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { launchBrowser } from '../support/chromium.mjs';
import { sortFiles, sortGpt2Attention } from '../support/sort-gpt2.mjs';
import { serveStatic } from '../support/static-server.mjs';
import { serveTestHub } from '../support/test-hub.mjs';
import { assertClose, ensureBuilt, openPage, typeSentence, waitForResult } from './page-fixture.mjs';

const digits = '2 0 1 1 0 2';

let hub;
let reference; // the attention of `digits`, from the bytes, in Node
const weightGets = () => hub.requests.filter((request) => request.method === 'GET' && request.path.endsWith('.safetensors')).length;

before(async () => {
  ensureBuilt();
  hub = await serveTestHub({
    repos: {
      'test/sort-gpt2': { revisions: { main: sortFiles } },
      'test/no-cors': { revisions: { main: sortFiles }, cors: false },
      'test/dropped': { revisions: { main: sortFiles }, dropAfter: 1000 },
    },
  });
  reference = await sortGpt2Attention(digits);
});

after(async () => {
  await hub?.close();
});

describe('the library in Chromium', () => {
  let site;
  let server;
  let browser;
  before(async () => {
    site = mkdtempSync(join(tmpdir(), 'attnlens-hub-site-'));
    symlinkSync(join(repoRoot, 'web', 'lib'), join(site, 'lib'), 'dir');
    writeFileSync(join(site, 'index.html'), '<!doctype html><title>attnlens hub</title>');
    server = await serveStatic(site);
    browser = await launchBrowser();
    await browser.page.goto(server.url);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    rmSync(site, { recursive: true, force: true });
  });

  // Loads `from` in the page; resolves to { attention, heap, downloads } or { error: { name, message }, heap }.
  const loadInPage = (from) => browser.page.evaluate(async ({ from, endpoint, text }) => {
    const { load } = await import('/lib/browser.js');
    const lens = await load();
    const heapBefore = lens.heapBytesInUse();
    const downloads = [];
    try {
      const model = await lens.loadModel({ from, endpoint, onProgress: (event) => { if (event.phase === 'download') downloads.push(event); } });
      const attention = Array.from(model.run({ text }).attention);
      model.dispose();
      return { attention, downloads, heapAfter: lens.heapBytesInUse(), heapBefore };
    } catch (error) {
      return { error: { name: error.name, message: error.message }, heapAfter: lens.heapBytesInUse(), heapBefore };
    }
  }, { from, endpoint: hub.url, text: digits });

  const cacheInPage = (call) => browser.page.evaluate(async (call) => {
    const attnlens = await import('/lib/browser.js');
    if (call === 'clear') return attnlens.clearModelCache();
    const listed = await attnlens.cachedModels();
    const keys = (await (await caches.open('attnlens-models')).keys()).map((request) => request.url);
    return { listed: listed.map((model) => ({ ...model, savedAt: model.savedAt.toISOString() })), keys };
  }, call);

  test('Cache Storage: downloaded once, listed, loaded again with no request, cleared', async () => {
    const before = weightGets();
    const first = await loadInPage('test/sort-gpt2');
    assert.equal(first.error, undefined, first.error?.message);
    assertClose(first.attention, reference, 1e-6, 'downloaded in Chromium');
    assert.equal(weightGets() - before, 2, 'the hub, then its redirect to the CDN');
    assert.equal(first.downloads.at(-1).loadedBytes, sortFiles['model.safetensors'].length);

    const { listed, keys } = await cacheInPage('list');
    const folder = `${hub.url}/test/sort-gpt2/resolve/main/`;
    assert.deepEqual(listed.map(({ from, url, files, bytes }) => ({ from, url, files, bytes })), [{
      from: 'test/sort-gpt2', url: folder, files: ['config.json', 'tokenizer.json', 'model.safetensors'],
      bytes: Object.values(sortFiles).reduce((sum, file) => sum + file.length, 0),
    }]);
    assert.ok(keys.includes(`${folder}model.safetensors`), keys.join(' '));

    const requests = hub.requests.length;
    const second = await loadInPage('test/sort-gpt2');
    assert.deepEqual(second.attention, first.attention);
    assert.equal(hub.requests.length, requests, 'a cached model asks the hub for nothing');
    assert.ok(second.downloads.every((event) => event.cached));

    assert.equal(await cacheInPage('clear'), 1);
    assert.deepEqual((await cacheInPage('list')).listed, []);
    await loadInPage('test/sort-gpt2');
    assert.equal(weightGets() - before, 4, 'downloaded again once cleared');
  });

  test('a server without CORS and a dropped connection are explained; the heap is untouched', async () => {
    const refused = await loadInPage('test/no-cors');
    assert.equal(refused.error?.name, 'Error');
    assert.match(refused.error.message, /no-cors\/resolve\/main\/config\.json: the request failed before any answer came back/);
    assert.match(refused.error.message, /does not let other web pages read its files \(CORS\)/);
    assert.equal(refused.heapAfter, refused.heapBefore);
    const dropped = await loadInPage('test/dropped');
    assert.match(dropped.error?.message ?? '', /model\.safetensors broke off after \d+ of 346792 bytes/);
    assert.equal(dropped.heapAfter, dropped.heapBefore);
    assert.deepEqual((await cacheInPage('list')).listed.map((model) => model.from), ['test/sort-gpt2']);
  });
});

describe("the page's Load from URL", () => {
  test('goes through the library: downloaded once, saved, offered on the next visit, opened with no download, removed', async () => {
    const session = await openPage();
    try {
      const { page } = session;
      await session.goto();
      const saved = page.locator('#saved-list li');
      const showsSortGpt2 = async () => {
        await waitForResult(page, 'window.attnlens.last.model?.dModel === 48');
        await typeSentence(page, digits);
        await waitForResult(page, 'window.attnlens.last.model && window.attnlens.last.tokens.length === 6');
        assertClose(await page.evaluate(() => Array.from(window.attnlens.last.weights)), reference, 1e-6, 'page');
      };
      assert.equal(await page.locator('#saved-models').isHidden(), true, 'nothing is saved in a fresh browser');
      const before = weightGets();
      await page.getByLabel(/^A trained model/).check();
      await page.getByLabel('Hugging Face folder URL').fill(`${hub.url}/test/sort-gpt2/resolve/main/config.json`);
      await page.getByRole('button', { name: 'Load from URL' }).click();
      await showsSortGpt2();
      assert.equal(weightGets() - before, 2, 'downloaded through the hub and its redirect');
      // The page shows the folder the library resolved from the file's URL, and names the model after it.
      assert.equal(await page.getByLabel('Hugging Face folder URL').inputValue(), `${hub.url}/test/sort-gpt2/resolve/main/`);
      assert.equal(await page.locator('#model-name').textContent(), 'test/sort-gpt2');
      await saved.first().waitFor();
      assert.deepEqual(await saved.allTextContents(), ['test/sort-gpt2 347 kB · opened last time Open Remove']);

      // The next visit offers it; opening it reads Cache Storage, not the hub.
      await session.goto();
      await page.getByLabel(/^A trained model/).check();
      await saved.first().waitFor();
      await page.getByRole('button', { name: 'Open test/sort-gpt2 (saved, no download)' }).click();
      await showsSortGpt2();
      assert.equal(weightGets() - before, 2, 'the second visit read the weights from Cache Storage');

      await page.getByRole('button', { name: 'Remove test/sort-gpt2 from this browser' }).click();
      await page.locator('#saved-models').waitFor({ state: 'hidden' });
      await session.goto();
      await page.getByLabel(/^A trained model/).check();
      await page.waitForTimeout(300);
      assert.equal(await page.locator('#saved-models').isHidden(), true, 'removed for good');
      assert.deepEqual(session.errors, []);
    } finally {
      await session.close();
    }
  });
});
