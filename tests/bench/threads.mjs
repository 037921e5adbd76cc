// Target T of issue 5, two workloads on two threads vs one, in headless
// Chromium on a cross-origin isolated page (SharedArrayBuffer is only given
// to those):
//   S3  attention n = m = 1024, d = 64, 12 heads, weights returned (lens.attention)
//   S4  one multi-head layer n = 128, dModel = 768, 12 heads with its four
//       projections (lens.multiHeadAttention; tests/bench/workloads.mjs)
// Both modules run in the same page, interleaved, through the library's API
// layer; results are checked to agree (S4: bit for bit) before timing.
//   node tests/bench/threads.mjs [--quick]
import { loadavg } from 'node:os';
import { benchLinks, openBenchPage, waitForResult } from '../support/bench-page.mjs';
import { QUICK_SHAPES, SHAPES, flops } from './workloads.mjs';

const quick = process.argv.includes('--quick');
const attentionShape = quick ? { heads: 2, n: 64, d: 16, rounds: 1 } : { heads: 12, n: 1024, d: 64, rounds: 9 };
// S4 is ~10x quicker per call than S3: more rounds for a steadier median.
const layerShape = { ...(quick ? QUICK_SHAPES.S4 : SHAPES.S4), rounds: quick ? 1 : 21 };

const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module">
import { createLens } from './lib/api.js';
import { makeInputs } from './bench/workloads.mjs';
const attentionShape = ${JSON.stringify(attentionShape)}, layerShape = ${JSON.stringify(layerShape)};
const median = (values) => values.sort((x, y) => x - y)[values.length >> 1];
// Median times of call(single) and call(threaded), alternating call by call,
// and which goes first by round (the second of a pair tends to run faster).
function race(single, threaded, call, rounds) {
  const time = (lens) => { const start = performance.now(); call(lens); return performance.now() - start; };
  const oneThread = [], twoThreads = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2) { twoThreads.push(time(threaded)); oneThread.push(time(single)); }
    else { oneThread.push(time(single)); twoThreads.push(time(threaded)); }
  }
  return { oneThread: median(oneThread), twoThreads: median(twoThreads) };
}
// Elements whose bits differ (so -0 vs 0 and NaN count too).
function bitDifferences(a, b) {
  if (a.length !== b.length) return Infinity;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length), y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  let count = 0;
  for (let i = 0; i < x.length; i++) count += x[i] !== y[i];
  return count;
}
try {
  const create = async (name) => (await import('./lib/wasm/attnlens-' + name + '.mjs')).default();
  const [one, two] = await Promise.all([create('simd'), create('threads')]);
  const single = createLens(one, true), threaded = createLens(two, true);

  const { heads, n, d } = attentionShape;
  const wave = (length, phase) => Float32Array.from({ length }, (_, i) => Math.sin(i * 0.37 + phase) * 0.5);
  const attentionOptions = { q: wave(heads * n * d, 0), k: wave(heads * n * d, 1), v: wave(heads * n * d, 2), m: n, n, dk: d, dv: d, heads };
  const a = single.attention(attentionOptions), b = threaded.attention(attentionOptions);
  let difference = 0;
  for (let i = 0; i < a.weights.length; i++) difference = Math.max(difference, Math.abs(a.weights[i] - b.weights[i]));
  const attention = race(single, threaded, (lens) => lens.attention(attentionOptions), attentionShape.rounds);

  const layerOptions = { ...makeInputs(layerShape), n: layerShape.n, dModel: layerShape.dModel, heads: layerShape.heads };
  const c = single.multiHeadAttention(layerOptions), e = threaded.multiHeadAttention(layerOptions);
  const layerDifferences = bitDifferences(c.output, e.output) + bitDifferences(c.weights, e.weights);
  const layer = race(single, threaded, (lens) => lens.multiHeadAttention(layerOptions), layerShape.rounds);

  window.result = { isolated: crossOriginIsolated, threads: two.maxThreads(), difference, attention, layerDifferences, layer };
} catch (error) {
  window.result = { error: String(error && error.stack || error) };
}
</script>`;

const bench = await openBenchPage({ files: { 'index.html': pageSource }, links: benchLinks });
let failed = false;
try {
  const result = await waitForResult(bench.page, 600_000);
  if (!result.isolated || result.threads !== 2) throw new Error(`not a two-thread run: ${JSON.stringify(result)}`);
  if (result.difference > 1e-6) throw new Error(`the two modules' S3 weights disagree by ${result.difference}`);
  if (result.layerDifferences !== 0) {
    throw new Error(`the two modules' S4 outputs and weights differ in ${result.layerDifferences} elements`);
  }
  const load = loadavg().map((x) => x.toFixed(2)).join(' ');
  const report = (label, times, flopCount, target) => {
    const gflops = (ms) => (flopCount / ms / 1e6).toFixed(1);
    console.log(label);
    console.log(`  1 thread : ${times.oneThread.toFixed(2)} ms (${gflops(times.oneThread)} GFLOP/s)`);
    console.log(`  2 threads: ${times.twoThreads.toFixed(2)} ms (${gflops(times.twoThreads)} GFLOP/s)`);
    console.log(`  speedup  : ${(times.oneThread / times.twoThreads).toFixed(2)}x${target}`);
  };
  const { heads, n, d } = attentionShape;
  console.log(`T: ${quick ? 'quick check (tiny shapes), ' : ''}Chromium, cross-origin isolated, medians of interleaved calls; load ${load}`);
  report(`${quick ? 'S3-like' : 'S3'} attention n=${n} d=${d} heads=${heads}, weights returned (lens.attention)`,
    result.attention, 4 * heads * n * n * d, ` (target >= 1.7x); max weight difference ${result.difference}`);
  report(`${quick ? 'S4-like' : 'S4'} layer n=${layerShape.n} dModel=${layerShape.dModel} heads=${layerShape.heads} + 4 projections (lens.multiHeadAttention)`,
    result.layer, flops(layerShape), '; output and weights bit-identical');
} catch (error) {
  console.error(`threads benchmark failed: ${error.message}`);
  failed = true;
} finally {
  await bench.close();
}
process.exit(failed ? 1 : 0);
