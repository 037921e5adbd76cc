// node tests/bench/scaling.mjs [--quick]
//
// The rest of issue 5's measurements:
//   L     n = m = 16384, d = 64, one head, output only (public API,
//         weights: false): runs, and the WebAssembly memory grows by O(n*d),
//         not by an n x n buffer (1 GiB).
//   T     threads: measured in Chromium by tests/bench/threads.mjs (needs a cross-origin isolated page).
//   page  explainSentence on a 64-token sentence with 8 heads in headless
//         Chromium (the work the page does per recompute): median ms.
// --quick shrinks L and samples fewer page runs (CI: the script starts).
import { fileURLToPath } from 'node:url';
import { launchBrowser } from '../support/chromium.mjs';
import { serveStatic } from '../support/static-server.mjs';
import { median } from './timing.mjs';

const quick = process.argv.includes('--quick');
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const MiB = 2 ** 20;

function randomFloats(count, seed) {
  const values = new Float32Array(count);
  let state = seed;
  for (let i = 0; i < count; ++i) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    values[i] = state / 2 ** 32 * 2 - 1;
  }
  return values;
}

// Output rows of attention in doubles, for a few sampled queries.
function referenceRow(q, k, v, n, d, i) {
  const scores = new Float64Array(n);
  let max = -Infinity;
  for (let j = 0; j < n; ++j) {
    let sum = 0;
    for (let p = 0; p < d; ++p) sum += q[i * d + p] * k[j * d + p];
    scores[j] = sum / Math.sqrt(d);
    max = Math.max(max, scores[j]);
  }
  let total = 0;
  for (let j = 0; j < n; ++j) total += scores[j] = Math.exp(scores[j] - max);
  const row = new Float64Array(d);
  for (let j = 0; j < n; ++j) for (let p = 0; p < d; ++p) row[p] += (scores[j] / total) * v[j * d + p];
  return row;
}

// The WebAssembly.Memory of every instance created from here on, so L can
// report how far the module's memory grew during a public API call.
const memories = [];
const instantiate = WebAssembly.instantiate;
WebAssembly.instantiate = async (...args) => {
  const result = await instantiate(...args);
  // Emscripten minifies export names: find the memory by type.
  const exports = Object.values((result.instance ?? result).exports);
  memories.push(...exports.filter((value) => value instanceof WebAssembly.Memory));
  return result;
};

// L through the public API with weights: false (the output-only path).
async function longSequence() {
  const n = quick ? 2048 : 16384, d = 64;
  const { load } = await import('../../web/lib/node.js');
  const seen = memories.length;
  const lens = await load({ simd: true });
  if (memories.length !== seen + 1) throw new Error(`expected one new WebAssembly memory, saw ${memories.length - seen}`);
  const memory = memories[seen];
  const q = randomFloats(n * d, 1), k = randomFloats(n * d, 2), v = randomFloats(n * d, 3);
  const options = { q, k, v, m: n, n, dk: d, dv: d, weights: false };
  const memoryBefore = memory.buffer.byteLength;
  const inUseBefore = lens.heapBytesInUse();
  const start = performance.now();
  const { output: result, weights } = lens.attention(options);
  const ms = performance.now() - start;
  if (weights !== null) throw new Error('weights: false returned weights');
  const memoryAfter = memory.buffer.byteLength;
  let worst = 0, scale = 0;
  for (const i of [0, 1, n >> 1, n - 1]) {
    const expected = referenceRow(q, k, v, n, d, i);
    for (let p = 0; p < d; ++p) {
      worst = Math.max(worst, Math.abs(result[i * d + p] - expected[p]));
      scale = Math.max(scale, Math.abs(expected[p]));
    }
  }
  const leaked = lens.heapBytesInUse() - inUseBefore;
  const nByN = n * n * 4;
  const growth = memoryAfter - memoryBefore;
  const gflops = (4 * n * n * d) / (ms * 1e6);
  console.log(`L  n = m = ${n}, d = ${d}, 1 head, output only: lens.attention({ ..., weights: false })`);
  console.log(`   ${ms.toFixed(0)} ms (${gflops.toFixed(1)} GFLOP/s), relative error of sampled rows vs double: ${(worst / scale).toExponential(1)}`);
  console.log(`   WebAssembly memory: ${(memoryBefore / MiB).toFixed(1)} MiB before the call, ` +
    `${(memoryAfter / MiB).toFixed(1)} MiB after it (grew ${(growth / MiB).toFixed(1)} MiB; the call's copies of ` +
    `inputs + output take ${((4 * n * d * 4) / MiB).toFixed(1)} MiB; an n x n buffer alone would be ${(nByN / MiB).toFixed(0)} MiB)`);
  console.log(`   heap bytes still in use after the call: ${leaked}`);
  const ok = worst / scale <= 1e-5 && growth < nByN / 8 && leaked === 0;
  if (!ok) process.exitCode = 1;
  return { n, d, ms, gflops, relativeError: worst / scale, memoryBefore, memoryAfter, nByN, ok };
}

function sentenceOf(words) {
  const vocabulary = 'the quick brown fox jumps over a lazy dog while seven curious owls watch from an old oak tree'.split(' ');
  return Array.from({ length: words }, (_, i) => vocabulary[i % vocabulary.length]).join(' ');
}

async function pageTiming() {
  const server = await serveStatic(repoRoot);
  const browser = await launchBrowser();
  try {
    await browser.page.goto(new URL("package.json", server.url).href);
    const result = await browser.page.evaluate(async ({ base, text, runs }) => {
      const { load } = await import(`${base}/web/lib/browser.js`);
      const lens = await load();
      const options = { text, heads: 8, dModel: 64 };
      const first = lens.explainSentence(options);
      const times = [], wasm = [];
      for (let i = 0; i < runs; ++i) {
        const start = performance.now();
        const steps = lens.explainSentence(options);
        times.push(performance.now() - start);
        wasm.push(steps.elapsedMs);
      }
      const mid = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
      return { simd: lens.simd, tokens: first.tokens.length, heads: first.heads, ms: mid(times), wasmMs: mid(wasm), worst: Math.max(...times) };
    }, { base: server.url.replace(/\/$/, ""), text: sentenceOf(64), runs: quick ? 3 : 100 });
    // The page has no favicon: its 404 is the only resource error allowed.
    const errors = browser.errors.filter((e) => !e.includes('404 (Not Found)'));
    if (errors.length) throw new Error(errors.join('\n'));
    console.log(`page  explainSentence, ${result.tokens} tokens, ${result.heads} heads, dModel 64, headless Chromium, ` +
      `${result.simd ? 'SIMD' : 'scalar'} module`);
    console.log(`   median ${result.ms.toFixed(2)} ms per call (${result.wasmMs.toFixed(2)} ms inside WebAssembly), ` +
      `worst ${result.worst.toFixed(2)} ms; frame budget 16 ms: ${result.ms < 16 ? 'met' : 'NOT met'}`);
    if (result.tokens !== 64) throw new Error(`the test sentence has ${result.tokens} tokens, not 64`);
    return result;
  } finally {
    await browser.close();
    await server.close();
  }
}

console.log(`attnlens scaling benchmark${quick ? ' (--quick)' : ''}, node ${process.version}`);
await longSequence();
console.log('T  threads: run `node tests/bench/threads.mjs` (S3 on 1 vs 2 threads in Chromium, cross-origin isolated)');
await pageTiming();
