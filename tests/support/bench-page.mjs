// The page every browser benchmark builds: a throw-away site folder (files
// written, folders linked or copied in), served on 127.0.0.1 (cross-origin
// isolated by default: SharedArrayBuffer, the threads modules, and
// performance.now() at its finest need it), and a headless Chromium page on it.
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { launchBrowser } from './chromium.mjs';
import { serveStatic } from './static-server.mjs';

export const isolationHeaders = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };

// What most benchmark pages import from: ./lib (the library, its wasm/ too) and ./bench (tests/bench).
export const benchLinks = { lib: join(repoRoot, 'web', 'lib'), bench: join(repoRoot, 'tests', 'bench') };

/**
 * files: { 'index.html': text, 'data/x.bin': bytes, ... } written into the site;
 * links: { name: folder } linked in (e.g. { ...benchLinks, wasm: dir });
 * copies: { name: file or folder } copied in (e.g. a build out of a build tree);
 * isolated: COOP/COEP headers; browser: launchBrowser's options;
 * path: opened first, relative to the site ('' the index, '?a=1' with a query;
 *   null opens nothing).
 * -> { page, url, site, errors (the page's, as launchBrowser collects them),
 * context, close() }; close() ends the browser and the server and removes the site.
 */
export async function openBenchPage({ files = {}, links = {}, copies = {}, isolated = true, browser: browserOptions = {}, path = '' } = {}) {
  const site = mkdtempSync(join(tmpdir(), 'attnlens-bench-page-'));
  let server = null, browser = null;
  const close = async () => {
    await browser?.close();
    await server?.close();
    rmSync(site, { recursive: true, force: true });
  };
  try {
    for (const [name, folder] of Object.entries(links)) symlinkSync(resolve(folder), join(site, name), 'dir');
    for (const [name, from] of Object.entries(copies)) cpSync(resolve(from), join(site, name), { recursive: true });
    for (const [name, contents] of Object.entries(files)) {
      mkdirSync(dirname(join(site, name)), { recursive: true });
      writeFileSync(join(site, name), contents);
    }
    server = await serveStatic(site, { headers: isolated ? isolationHeaders : {} });
    browser = await launchBrowser(browserOptions);
    if (path !== null) await browser.page.goto(new URL(path, server.url).href);
  } catch (error) {
    await close();
    throw error;
  }
  return { page: browser.page, url: server.url, site, errors: browser.errors, context: browser.context, close };
}

/**
 * Waits until the page sets window[name] ('result': a benchmark page that runs
 * by itself; 'ready': one driven by evaluate), then returns its value; a value
 * with an `error` (the page's catch) throws it. polling: Playwright's ('raf',
 * or ms: a long run polls rarely, to stay out of its way). errors (the page's,
 * from openBenchPage) go into the message when the wait times out.
 */
export async function waitForResult(page, timeout = 600_000, { name = 'result', polling = 'raf', errors = [] } = {}) {
  try {
    await page.waitForFunction((key) => window[key], name, { timeout, polling });
  } catch (error) {
    throw new Error(`the page did not set window.${name}: ${[...errors, error.message].join('; ')}`);
  }
  const value = await page.evaluate((key) => window[key], name);
  if (value?.error) throw new Error(value.error);
  return value;
}
