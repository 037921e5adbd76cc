// Shared set-up of the browser tests: the built page, served by the test
// static server, in Debian's headless Chromium; and helpers that read the
// page's state the way a user (or an automation script) would.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before } from 'node:test';
import { launchBrowser } from '../support/chromium.mjs';
import { loadTinyEnglish } from '../support/model-folder.mjs';
import { serveStatic } from '../support/static-server.mjs';
import { offlineFile, pageDir } from './build-if-stale.mjs';

export { offlineFile, pageDir };

const buildLock = '/tmp/attnlens-build.lock';

// Under the build lock: other test files (and developers) build too.
export function ensureBuilt() {
  const script = fileURLToPath(new URL('./build-if-stale.mjs', import.meta.url));
  const result = spawnSync('flock', [buildLock, process.execPath, script], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`building the page failed (exit ${result.status ?? result.signal})`);
}

// headers: response headers of the test server (e.g. COOP/COEP, as npm start sends them).
export async function openPage({ url, viewport, headers = {} } = {}) {
  const server = url ? null : await serveStatic(pageDir, { headers });
  const browser = await launchBrowser(viewport ? { viewport } : {});
  browser.page.setDefaultTimeout(10_000); // fail fast rather than at 30 s
  const dialogs = [];
  browser.page.on('dialog', async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  const pageUrl = url ?? server.url;
  return {
    ...browser,
    url: pageUrl,
    dialogs,
    // Always a fresh document: a hash-only change would not reload the page.
    // The page opens on its built-in trained model; the tests of random
    // projections (most) ask for those unless the hash names an engine.
    async goto(hash = '', { builtinModel = false } = {}) {
      const settings = builtinModel || /[#&]engine=/.test(hash) ? hash : `${hash ? `${hash}&` : '#'}engine=random`;
      await browser.page.goto('about:blank');
      await browser.page.goto(pageUrl + settings);
      await waitForResult(browser.page);
    },
    async close() {
      await browser.close();
      await server?.close();
    },
  };
}

/** The built page open on its built-in model (tiny-english, the one it opens on), once that model's run is shown. */
export async function openBuiltinPage() {
  const session = await openPage();
  await session.goto('', { builtinModel: true });
  await waitForResult(session.page, 'window.attnlens.last.model !== null');
  return session;
}

/**
 * The one-file offline page from file:// with every http(s) request aborted (not yet navigated:
 * `goto` as for openPage): `blocked` lists the aborted requests, `requests()` what the page
 * asked for besides inline data (data: and blob: URLs).
 */
export async function openOfflinePage() {
  const offline = await openPage({ url: pathToFileURL(offlineFile).href });
  const blocked = [];
  const seen = [];
  await offline.context.route(/^https?:/, (route) => {
    blocked.push(route.request().url());
    return route.abort();
  });
  offline.page.on('request', (request) => seen.push(request.url()));
  return { ...offline, blocked, requests: () => seen.filter((url) => !/^(data|blob):/.test(url)) };
}

/**
 * For a test file or a describe block (call it at its top level): before its tests, the page built and opened by
 * `open(options)` (openPage, or openBuiltinPage, ...) and handed to `use`, awaited, which keeps it and may set up
 * more (a first goto, listeners); after them, closed.
 *   let session, page;
 *   openPageAroundTests(async (opened) => { session = opened; page = opened.page; await session.goto(); }, { viewport });
 */
export function openPageAroundTests(use, { open = openPage, ...options } = {}) {
  let opened = null;
  before(async () => {
    ensureBuilt();
    opened = await open(options);
    await use(opened);
  });
  after(() => opened?.close());
}

/**
 * For a test file: the built page open in Chromium and tiny-english loaded by the library in this
 * Node process as the reference for what the page shows, handed to `use` as { reference, session, page }
 * before its tests; both closed after them.
 */
export function openPageWithReferenceAroundTests(use) {
  openPageAroundTests(use, {
    async open() {
      const reference = await loadTinyEnglish();
      const session = await openPage();
      return {
        reference, session, page: session.page,
        async close() {
          reference.dispose();
          await session.close();
        },
      };
    },
  });
}

/**
 * The built page (openPageAroundTests builds it) open in Chromium with an encoder-decoder checkpoint's files
 * (written to a temporary folder) opened through the file input, its source box shown: { session, page, close }.
 * `initScript` runs in the page before its own scripts (e.g. to slow its worker's messages).
 */
export async function openPageWithSeq2seq(checkpoint, { initScript = null } = {}) {
  const folder = mkdtempSync(join(tmpdir(), 'attnlens-seq2seq-'));
  const files = Object.entries(checkpoint.files).map(([name, content]) => {
    writeFileSync(join(folder, name), content);
    return join(folder, name);
  });
  const session = await openPage();
  const close = async () => {
    await session.close();
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    if (initScript) await session.context.addInitScript(initScript);
    await session.goto();
    await session.page.locator('#model-files').setInputFiles(files);
    await session.page.locator('#translation').waitFor({ state: 'visible' });
  } catch (error) {
    await close();
    throw error;
  }
  return { session, page: session.page, close };
}

// Waits until the page has published a result (window.attnlens.last).
export async function waitForResult(page, predicate = 'true') {
  await page.waitForFunction(`window.attnlens && window.attnlens.last && (${predicate})`, null, { timeout: 20_000 });
}

// The page's latest result as plain JSON-able data.
export function lastResult(page) {
  return page.evaluate(() => {
    const { tokens, keyTokens, heads, weights } = window.attnlens.last;
    return { tokens, keyTokens, heads, weights: Array.from(weights) };
  });
}

// Types a sentence as a user does and waits for the page to show its tokens.
export async function typeSentence(page, text, { tokens } = {}) {
  const field = page.getByRole('textbox', { name: /^Sentence/ });
  await field.fill(text);
  await field.press('Enter');
  if (tokens !== undefined) {
    await waitForResult(page, `JSON.stringify(window.attnlens.last.tokens) === ${JSON.stringify(JSON.stringify(tokens))}`);
  }
}

export function assertRowsSumToOne(weights, rows, cols, where) {
  for (let row = 0; row < rows; row += 1) {
    let sum = 0;
    for (let col = 0; col < cols; col += 1) sum += weights[row * cols + col];
    assert.ok(Math.abs(sum - 1) < 1e-5, `${where}: row ${row} sums to ${sum}`);
  }
}

export function assertClose(actual, expected, tolerance, where) {
  assert.equal(actual.length, expected.length, `${where}: length`);
  for (let index = 0; index < expected.length; index += 1) {
    assert.ok(Math.abs(actual[index] - expected[index]) <= tolerance,
      `${where}[${index}]: ${actual[index]} vs expected ${expected[index]}`);
  }
}

// How many pixels of a canvas differ from white, and how many distinct colours
// it holds: a blank or single-colour canvas fails both.
export function canvasInk(page, selector) {
  return page.locator(selector).evaluate((canvas) => {
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let inked = 0;
    const colours = new Set();
    for (let index = 0; index < data.length; index += 4) {
      if (data[index] < 250 || data[index + 1] < 250 || data[index + 2] < 250) inked += 1;
      if (colours.size < 1000) colours.add((data[index] << 16) | (data[index + 1] << 8) | data[index + 2]);
    }
    return { inked, colours: colours.size, pixels: canvas.width * canvas.height };
  });
}
