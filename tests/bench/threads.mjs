// Target T of issue 5: S3 (n = m = 1024, d = 64, 12 heads, weights returned)
// on two threads vs one, in headless Chromium on a cross-origin isolated page
// (SharedArrayBuffer is only given to those). Both modules run in the same
// page, interleaved, through the library's API layer; results are checked to
// agree before timing.
//   node tests/bench/threads.mjs [--quick]
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { launchBrowser } from '../support/chromium.mjs';
import { serveStatic } from '../support/static-server.mjs';

const quick = process.argv.includes('--quick');
const shape = quick ? { heads: 2, n: 64, d: 16, rounds: 1 } : { heads: 12, n: 1024, d: 64, rounds: 9 };

const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module">
import { createLens } from './lib/api.js';
const { heads, n, d, rounds } = ${JSON.stringify(shape)};
try {
  const create = async (name) => (await import('./lib/wasm/attnlens-' + name + '.mjs')).default();
  const [one, two] = await Promise.all([create('simd'), create('threads')]);
  const single = createLens(one, true), threaded = createLens(two, true);
  const wave = (length, phase) => Float32Array.from({ length }, (_, i) => Math.sin(i * 0.37 + phase) * 0.5);
  const options = { q: wave(heads * n * d, 0), k: wave(heads * n * d, 1), v: wave(heads * n * d, 2), m: n, n, dk: d, dv: d, heads };
  const a = single.attention(options), b = threaded.attention(options);
  let difference = 0;
  for (let i = 0; i < a.weights.length; i++) difference = Math.max(difference, Math.abs(a.weights[i] - b.weights[i]));
  const time = (lens) => { const start = performance.now(); lens.attention(options); return performance.now() - start; };
  const oneThread = [], twoThreads = [];
  for (let round = 0; round < rounds; round++) { oneThread.push(time(single)); twoThreads.push(time(threaded)); }
  const median = (values) => values.sort((x, y) => x - y)[values.length >> 1];
  window.result = { isolated: crossOriginIsolated, threads: two.maxThreads(), difference, oneThread: median(oneThread), twoThreads: median(twoThreads) };
} catch (error) {
  window.result = { error: String(error && error.stack || error) };
}
</script>`;

const site = mkdtempSync(join(tmpdir(), 'attnlens-bench-threads-'));
symlinkSync(join(repoRoot, 'web', 'lib'), join(site, 'lib'), 'dir');
writeFileSync(join(site, 'index.html'), pageSource);
const server = await serveStatic(site, {
  headers: { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' },
});
const browser = await launchBrowser();
let failed = false;
try {
  await browser.page.goto(server.url);
  await browser.page.waitForFunction(() => window.result, null, { timeout: 600_000 });
  const result = await browser.page.evaluate(() => window.result);
  if (result.error) throw new Error(result.error);
  if (!result.isolated || result.threads !== 2) throw new Error(`not a two-thread run: ${JSON.stringify(result)}`);
  if (result.difference > 1e-6) throw new Error(`the two modules disagree by ${result.difference}`);
  const flops = 4 * shape.heads * shape.n * shape.n * shape.d;
  const gflops = (ms) => (flops / ms / 1e6).toFixed(1);
  console.log(`T: ${quick ? 'quick check,' : 'S3'} n=${shape.n} d=${shape.d} heads=${shape.heads}, weights returned, Chromium, cross-origin isolated; load ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`  1 thread : ${result.oneThread.toFixed(1)} ms (${gflops(result.oneThread)} GFLOP/s)`);
  console.log(`  2 threads: ${result.twoThreads.toFixed(1)} ms (${gflops(result.twoThreads)} GFLOP/s)`);
  console.log(`  speedup  : ${(result.oneThread / result.twoThreads).toFixed(2)}x (target >= 1.7x); max weight difference ${result.difference}`);
} catch (error) {
  console.error(`threads benchmark failed: ${error.message}`);
  failed = true;
} finally {
  await browser.close();
  await server.close();
  rmSync(site, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
