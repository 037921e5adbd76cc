// configure({ wasmPath }) in Chromium: a page imports the library from one
// folder (a copy of web/lib without its wasm/) and the module files are
// served from another; the numbers are Node's. With cross-origin isolation
// the threads glue, its .wasm and its pthread worker come from that folder
// too. A folder without the files rejects load() with the URL and the fix;
// without configure, .wasm files missing beside the glue name the file.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { after, test } from 'node:test';
import { load } from '../../web/lib/node.js';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { launchBrowser } from '../support/chromium.mjs';
import { serveStatic } from '../support/static-server.mjs';

const sentence = { text: 'The cat sat on the mat.', heads: 4 };
const libFolder = join(repoRoot, 'web', 'lib');
const site = mkdtempSync(join(tmpdir(), 'attnlens-wasm-path-'));
mkdirSync(join(site, 'app'));
mkdirSync(join(site, 'files'));
cpSync(libFolder, join(site, 'app', 'lib'), {
  recursive: true,
  filter: (source) => source !== join(libFolder, 'wasm') && !source.startsWith(join(libFolder, 'wasm') + sep),
});
symlinkSync(join(libFolder, 'wasm'), join(site, 'files', 'attnlens'), 'dir');
// A deployment that forgot the .wasm files beside the glue, as a bundle that
// copies none: a library with its wasm/ folder holding the .mjs only.
cpSync(libFolder, join(site, 'app', 'forgot'), {
  recursive: true,
  filter: (source) => !source.endsWith('.wasm'),
});
after(() => rmSync(site, { recursive: true, force: true }));

// The page's script: configure, load at the SIMD level, and leave the output (or the error) in window.result.
function writePage(name, wasmPath, lib = 'lib') {
  writeFileSync(join(site, 'app', `${name}.html`), `<!doctype html><link rel="icon" href="data:,"><script type="module">
    import { configure, load } from './${lib}/browser.js';
    try {
      if (${JSON.stringify(wasmPath)} !== null) configure({ wasmPath: ${JSON.stringify(wasmPath)} });
      const lens = await load({ simd: 'simd' });
      window.result = { output: Array.from(lens.explainSentence(${JSON.stringify(sentence)}).output),
        isolated: crossOriginIsolated, workerScripts: performance.getEntriesByType('resource')
          .map((entry) => entry.name).filter((url) => url.endsWith('.worker.js')) };
    } catch (error) {
      window.result = { error: error.message };
    }
  </script>`);
}

async function open(name, headers = {}) {
  const server = await serveStatic(site, { headers });
  const browser = await launchBrowser();
  try {
    await browser.page.goto(`${server.url}app/${name}.html`);
    await browser.page.waitForFunction(() => window.result, null, { timeout: 60_000 });
    return { result: await browser.page.evaluate(() => window.result), errors: browser.errors, url: server.url };
  } finally {
    await browser.close();
    await server.close();
  }
}

const nodeLens = await load({ simd: 'simd' });
const nodeOutput = Array.from(nodeLens.explainSentence(sentence).output);

test('module files from another folder (relative wasmPath, no trailing slash): Node\'s numbers', async () => {
  writePage('relative', '../files/attnlens');
  const { result, errors } = await open('relative');
  assert.equal(result.error, undefined, result.error);
  assert.deepEqual(errors, []);
  assert.equal(result.isolated, false);
  assert.deepEqual(result.output, nodeOutput);
});

test('cross-origin isolated: the threads module and its worker from that folder, Node\'s numbers', async () => {
  writePage('isolated', '/files/attnlens/');
  const { result, errors, url } = await open('isolated', {
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-embedder-policy': 'require-corp',
  });
  assert.equal(result.error, undefined, result.error);
  assert.deepEqual(errors, []);
  assert.equal(result.isolated, true);
  assert.deepEqual(result.workerScripts, [`${url}files/attnlens/attnlens-threads.worker.js`]);
  assert.deepEqual(result.output, nodeOutput);
});

test('a folder without the files: load() rejects naming the URL and the fix', async () => {
  writePage('missing', '/nowhere/');
  const { result, url } = await open('missing');
  assert.match(result.error, new RegExp(`^attnlens\\.load: could not load ${url}nowhere/attnlens-simd\\.(mjs|wasm) \\(`));
  assert.match(result.error, /copy that folder to your site and call configure\(\{ wasmPath/);
});

test('no configure and no .wasm beside the glue: load() rejects naming the file and the fix', async () => {
  writePage('forgot', null, 'forgot');
  const { result } = await open('forgot');
  assert.match(result.error, /^attnlens\.load: could not load attnlens-simd\.wasm beside the module that imports it \(or your bundle\) \(not found\)/);
  assert.match(result.error, /copy that folder to your site and call configure\(\{ wasmPath/);
});
