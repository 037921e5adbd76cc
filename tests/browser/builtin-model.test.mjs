// The page's built-in model (issue 13), in Debian's headless Chromium against
// the BUILT page: the page opens on web/models/tiny-english by itself, its
// numbers equal the library's in this Node process on the same folder, random
// projections are one click (or one link) away, and the one-file offline page
// shows the learned attention from file:// with the network blocked.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { load } from '../../web/lib/node.js';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { headRoles } from '../../web/views/head-roles.js';
import { assertClose, ensureBuilt, offlineFile, openPage, openPageAroundTests, typeSentence, waitForResult } from './page-fixture.mjs';

const folder = join(repoRoot, 'web', 'models', 'tiny-english');
const sentence = 'The cat sat on the mat because it was tired.';

let lens;
let reference; // tiny-english loaded by the library in Node

before(async () => {
  ensureBuilt();
  lens = await load();
  reference = await lens.loadModel({
    config: readFileSync(join(folder, 'config.json'), 'utf8'),
    weights: readFileSync(join(folder, 'model.safetensors')),
    tokenizer: readFileSync(join(folder, 'tokenizer.json'), 'utf8'),
  });
});

after(() => reference?.dispose());

function lastRun(page) {
  return page.evaluate(() => {
    const { tokens, ids, layers, heads, weights, model } = window.attnlens.last;
    return { tokens, ids: ids ? Array.from(ids) : null, layers, heads, weights: Array.from(weights), model };
  });
}

// The page shows one layer's heads in its views, but window.attnlens.last holds every layer.
async function assertLearnedRun(page, text, where) {
  await typeSentence(page, text);
  const expected = reference.run({ text });
  await waitForResult(page, `window.attnlens.last.model !== null && window.attnlens.last.tokens.length === ${expected.n}`);
  const last = await lastRun(page);
  assert.deepEqual(last.tokens, expected.tokens, `${where}: tokens`);
  assert.deepEqual(last.ids, Array.from(expected.ids), `${where}: ids`);
  assert.equal(last.model.architecture, 'gpt2');
  assert.equal(last.layers, reference.info.layers);
  assertClose(last.weights, expected.attention, 1e-6, `${where}: every layer's attention`);
}

describe('the page', () => {
  let session;
  openPageAroundTests(async (opened) => {
    session = opened;
    await session.goto('', { builtinModel: true });
  });

  test('opens on the built-in trained model and computes what the library computes', async () => {
    const { page } = session;
    await waitForResult(page, 'window.attnlens.last.model !== null');
    assert.equal(await page.locator('#model-name').textContent(), 'tiny-english');
    assert.equal(await page.getByLabel(/^A trained model/).isChecked(), true);
    // One honest sentence says what it is; the generic trained-model note gives way to it.
    assert.match(await page.locator('#builtin-note summary').textContent(), /trained on dictionary definitions and quotes: it learned word order and phrasing, not world knowledge/);
    assert.equal(await page.locator('#builtin-note').isVisible(), true);
    assert.equal(await page.locator('#model-note').isHidden(), true);
    await assertLearnedRun(page, sentence, 'page');
    // A link to this picture names no model and no engine: those are the page's defaults.
    const link = new URLSearchParams(new URL(await page.locator('#share-url').inputValue()).hash.slice(1));
    assert.equal(link.get('engine'), null);
    assert.equal(link.get('model'), null);
    assert.deepEqual(session.errors, []);
  });

  test('the model view names the heads whose role it measures on this text', async () => {
    const { page } = session;
    await assertLearnedRun(page, sentence, 'before the model view');
    await page.getByRole('button', { name: 'Model view', exact: true }).click();
    const { layers, heads } = reference.info;
    await page.waitForFunction((count) => document.querySelectorAll('#model-grid button').length === count, layers * heads);
    const shown = await page.locator('#model-grid button').evaluateAll((buttons) => buttons.map((button) => ({
      layer: Number(button.dataset.layer), head: Number(button.dataset.head),
      badge: button.querySelector('.grid-role')?.textContent ?? null, label: button.getAttribute('aria-label'),
    })));
    const expected = reference.run({ text: sentence });
    const roles = headRoles(expected.attention, { layers, heads, n: expected.n });
    for (const { layer, head, badge, label } of shown) {
      const role = roles[layer * heads + head];
      if (!role.role) {
        assert.equal(badge, null, `layer ${layer + 1} head ${head + 1} has no role`);
        continue;
      }
      const value = role.role === 'previous token' ? role.previous : role.first;
      assert.equal(badge, `${role.role} ${value.toFixed(2)}`);
      assert.match(label, new RegExp(`looks at the ${role.role}`));
    }
    await page.getByRole('button', { name: 'Heatmap', exact: true }).click();
  });

  test('a text longer than the model\'s positions says so in view, under the text, and the next text runs', async () => {
    const { page } = session;
    const { maxPositions } = reference.info;
    const long = 'the old man walked down to the river '.repeat(40);
    const tokens = reference.tokenize(long).ids.length;
    assert.ok(tokens > maxPositions, `the test's text has ${tokens} tokens, more than ${maxPositions}`);
    await typeSentence(page, long);
    const error = page.locator('#error');
    await error.waitFor({ state: 'visible' });
    assert.match(await error.textContent(), new RegExp(`${tokens} tokens, more than the model's ${maxPositions} positions`));
    // In the window without scrolling, though the model panel above the fold is long.
    const box = await error.boundingBox();
    const { height } = page.viewportSize();
    assert.ok(box.y >= 0 && box.y + box.height <= height, `the error is at y ${box.y}..${box.y + box.height}, the window ${height} px tall`);
    const field = await page.getByRole('textbox', { name: /^Sentence/ }).boundingBox();
    assert.ok(box.y > field.y, 'the error is under the text it is about');
    await assertLearnedRun(page, sentence, 'after the refused text');
    assert.equal(await error.isHidden(), true, 'the error goes once a text runs');
  });

  test('random projections are one click away, and back', async () => {
    const { page } = session;
    await page.getByLabel(/^Random projections/).check();
    await waitForResult(page, 'window.attnlens.last.model === null');
    const last = await lastRun(page);
    const expected = lens.explainSentence({ text: sentence });
    assert.deepEqual(last.tokens, expected.tokens);
    assertClose(last.weights, expected.weights, 1e-6, 'random projections');
    const link = await page.locator('#share-url').inputValue();
    assert.equal(new URLSearchParams(new URL(link).hash.slice(1)).get('engine'), 'random');

    // That link opens random projections in a fresh page, without the model.
    const fresh = await session.context.newPage();
    await fresh.goto(link);
    await waitForResult(fresh);
    assert.equal((await lastRun(fresh)).model, null);
    assert.equal(await fresh.getByLabel(/^Random projections/).isChecked(), true);
    await fresh.close();

    await page.getByLabel(/^A trained model/).check();
    await waitForResult(page, 'window.attnlens.last.model !== null');
    await assertLearnedRun(page, 'A second sentence, typed after switching back.', 'after switching back');
    assert.deepEqual(session.errors, []);
  });
});

// A free TCP port on 127.0.0.1 (vite preview needs a number).
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

// The server npm start runs (web/scripts/start.mjs): vite preview with the
// page's config, which sends COOP/COEP; resolves to { url, stop() } once it
// answers (the config's log level keeps it quiet, so it is asked, not read).
async function startPreview() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const vite = join(repoRoot, 'node_modules', '.bin', 'vite');
  const server = spawn(vite, ['preview', '--config', 'web/page/vite.config.js', '--host', '127.0.0.1', '--port', String(port),
    '--strictPort'], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  server.stderr.on('data', (chunk) => { errors += chunk; });
  const stop = () => server.kill();
  for (const deadline = Date.now() + 30_000; ;) {
    try {
      await fetch(url);
      return { url, stop };
    } catch {
      if (server.exitCode !== null || Date.now() > deadline) {
        stop();
        throw new Error(`vite preview did not answer on port ${port}: ${errors}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

// npm start serves the page cross-origin isolated (web/page/vite.config.js):
// the model worker then runs the two-thread module copied beside the bundle.
describe('the page as npm start serves it (vite preview, cross-origin isolated)', () => {
  test('sends COOP/COEP and runs the built-in model on two threads, with the numbers of the library in Node', async () => {
    const preview = await startPreview();
    const isolated = await openPage({ url: preview.url });
    try {
      const response = await fetch(preview.url);
      assert.equal(response.headers.get('cross-origin-opener-policy'), 'same-origin');
      assert.equal(response.headers.get('cross-origin-embedder-policy'), 'require-corp');
      const requests = [];
      isolated.context.on('request', (request) => requests.push(new URL(request.url()).pathname));
      await isolated.goto('', { builtinModel: true });
      await waitForResult(isolated.page, 'window.attnlens.last.model !== null');
      assert.equal(await isolated.page.evaluate(() => crossOriginIsolated), true);
      await assertLearnedRun(isolated.page, sentence, 'isolated page');
      assert.match(await isolated.page.locator('#status').textContent(), /\(WASM relaxed SIMD, 2 threads, in a worker\)/);
      assert.ok(requests.some((path) => path.endsWith('/assets/wasm/attnlens-relaxed-threads.wasm')),
        `fetched: ${requests.filter((path) => path.includes('wasm')).join(', ')}`);
      assert.deepEqual(isolated.errors, []);
    } finally {
      await isolated.close();
      preview.stop();
    }
  });
});

describe('the offline file', () => {
  test('from file:// with the network blocked it shows the learned model for a typed sentence', async () => {
    const offline = await openPage({ url: pathToFileURL(offlineFile).href });
    try {
      const requests = [];
      await offline.context.route(/^https?:/, (route) => route.abort());
      offline.page.on('request', (request) => requests.push(request.url()));
      await offline.goto('', { builtinModel: true });
      await waitForResult(offline.page, 'window.attnlens.last.model !== null');
      await assertLearnedRun(offline.page, sentence, 'offline file');
      // file:// is never cross-origin isolated: one thread, and the status says so.
      assert.match(await offline.page.locator('#status').textContent(), /\(WASM relaxed SIMD, 1 thread, in a worker\)/);
      assert.deepEqual(requests.filter((url) => !/^(data|blob):/.test(url)), [pathToFileURL(offlineFile).href]);
      assert.deepEqual(offline.errors, []);
    } finally {
      await offline.close();
    }
  });
});
