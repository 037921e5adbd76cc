// The library's module choice in a real browser: on a cross-origin isolated
// page load() runs the two-thread module, elsewhere the single-thread SIMD
// one; both give the numbers the library gives in Node.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { load } from '../../web/lib/node.js';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { launchBrowser } from '../support/chromium.mjs';
import { serveStatic } from '../support/static-server.mjs';

const isolationHeaders = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
};

// Large enough per head (m * n * dk >= 2M multiply-adds) for the core to hand
// heads to the second thread.
const shape = { heads: 4, m: 256, n: 256, dk: 32, dv: 32 };

function inputs() {
  const { heads, m, n, dk, dv } = shape;
  const wave = (length, phase) => Array.from({ length }, (_, i) => Math.sin(i * 0.37 + phase) * 0.8);
  return { q: wave(heads * m * dk, 0), k: wave(heads * n * dk, 1), v: wave(heads * n * dv, 2) };
}

// The page computes with the public browser API and reports which module files it fetched.
const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>threads</title><script type="module">
import { load } from './lib/browser.js';
const shape = ${JSON.stringify(shape)};
const data = ${JSON.stringify(inputs())};
try {
  const lens = await load();
  const { weights, output } = lens.attention({ ...shape, q: Float32Array.from(data.q), k: Float32Array.from(data.k),
    v: Float32Array.from(data.v) });
  const files = performance.getEntriesByType('resource').map((entry) => new URL(entry.name).pathname.split('/').pop());
  window.result = { isolated: crossOriginIsolated, simd: lens.simd, threads: lens.threads, files, weights: Array.from(weights), output: Array.from(output) };
} catch (error) {
  window.result = { error: String(error && error.stack || error) };
}
</script>`;

let site;
before(() => {
  site = mkdtempSync(join(tmpdir(), 'attnlens-threads-'));
  symlinkSync(join(repoRoot, 'web', 'lib'), join(site, 'lib'), 'dir');
  writeFileSync(join(site, 'index.html'), pageSource);
});
after(() => rmSync(site, { recursive: true, force: true }));

async function runPage(headers) {
  const server = await serveStatic(site, { headers });
  const browser = await launchBrowser();
  try {
    await browser.page.goto(server.url);
    await browser.page.waitForFunction(() => window.result, null, { timeout: 60_000 });
    const result = await browser.page.evaluate(() => window.result);
    assert.equal(result.error, undefined, result.error);
    assert.deepEqual(browser.errors, []);
    return result;
  } finally {
    await browser.close();
    await server.close();
  }
}

function assertMatchesNode(result, reference) {
  assert.equal(result.weights.length, reference.weights.length);
  for (const key of ['weights', 'output']) {
    let worst = 0;
    for (let i = 0; i < reference[key].length; i++) worst = Math.max(worst, Math.abs(result[key][i] - reference[key][i]));
    assert.ok(worst <= 1e-6, `${key} differ from Node's by ${worst}`);
  }
}

describe('module choice in Chromium', () => {
  let reference;
  before(async () => {
    const lens = await load();
    const data = inputs();
    reference = lens.attention({ ...shape, q: Float32Array.from(data.q), k: Float32Array.from(data.k), v: Float32Array.from(data.v) });
  });

  test('a cross-origin isolated page runs the two-thread module, with the same numbers', async () => {
    const result = await runPage(isolationHeaders);
    assert.equal(result.isolated, true);
    assert.equal(result.simd, true);
    assert.equal(result.threads, 2);
    assert.ok(result.files.includes('attnlens-threads.wasm'), `fetched: ${result.files.join(', ')}`);
    assert.ok(result.files.includes('attnlens-threads.worker.js'), 'the pthread worker started');
    assert.ok(!result.files.includes('attnlens-simd.wasm'));
    assertMatchesNode(result, reference);
  });

  test('a page without isolation runs the single-thread SIMD module and never fetches the threads one', async () => {
    const result = await runPage({});
    assert.equal(result.isolated, false);
    assert.equal(result.threads, 1);
    assert.ok(result.files.includes('attnlens-simd.wasm'), `fetched: ${result.files.join(', ')}`);
    assert.ok(!result.files.some((file) => file.startsWith('attnlens-threads')));
    assertMatchesNode(result, reference);
  });
});
