// node tests/bench/ab-browser.mjs BASE_DIR [NEW_DIR] [--module relaxed-threads] [--only S3,S4,M,T512] [--rounds 9]
//
// ab.mjs in headless Chromium: one module of two builds (BASE_DIR and
// NEW_DIR, default web/lib/wasm: directories holding attnlens-<module>.mjs
// and .wasm) in one cross-origin isolated page, through the public API
// (createLens), the two alternating call by call with the first of each pair
// alternating too. Workloads: S1-S4 (workloads.mjs) and M, the
// GPT-2-small-shaped forward of model-forward.mjs (128 tokens, every
// attention, last row of logits), and Tn: typing at the end of n tokens
// (issue 24) on that checkpoint, a run of the first n - 1 ids (not timed)
// and then the timed run of all n, which computes one position: one head's
// attention, the last row of logits, as the page asked before 26 Nov (e.g.
// --only T512,T1024). Before timing, the two builds' results
// must have the same bits (a change meant to be bit-neutral, such as a
// thread pool, proves it here; `--allow-differences` reports instead).
// Prints each build's median ms and the ratio base / new (> 1: new faster).
// For threading work: copy web/lib/wasm to a directory, change, rebuild, run.
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { benchLinks, openBenchPage, waitForResult } from '../support/bench-page.mjs';

const { values: args, positionals } = parseArgs({
  options: {
    module: { type: 'string', default: 'relaxed-threads' },
    only: { type: 'string', default: 'S3,S4,M' },
    rounds: { type: 'string', default: '9' },
    'allow-differences': { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const [baseDir, newDir = join(repoRoot, 'web', 'lib', 'wasm')] = positionals;
if (!baseDir) throw new Error('usage: node tests/bench/ab-browser.mjs BASE_DIR [NEW_DIR] [--module relaxed-threads] [--only S3,S4,M] [--rounds 9]');
const settings = { module: args.module, only: args.only.split(','), rounds: Number(args.rounds) };

const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module">
import { createLens } from './lib/api.js';
import { SHAPES, makeInputs } from './bench/workloads.mjs';
import { GPT2_SMALL, gpt2Config, tokenIds, writeGpt2Checkpoint } from './bench/gpt2-checkpoint.mjs';
const settings = ${JSON.stringify(settings)};
const median = (values) => [...values].sort((x, y) => x - y)[values.length >> 1];
function sameBits(a, b) {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length), y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
async function lensFrom(dir) {
  const { default: createModule } = await import('./' + dir + '/attnlens-' + settings.module + '.mjs');
  const module = await createModule();
  return createLens(module, settings.module.startsWith('relaxed') ? 'relaxed' : settings.module === 'scalar' ? false : true);
}
// The GPT-2-small-shaped model of the T workloads, one per lens.
const typingModels = new Map();
async function typingModel(lens) {
  if (!typingModels.has(lens)) {
    const { bytes } = writeGpt2Checkpoint(GPT2_SMALL, { seed: 1 });
    typingModels.set(lens, await lens.loadModel({ config: gpt2Config(GPT2_SMALL), weights: bytes }));
  }
  return typingModels.get(lens);
}
// One workload: a call for a lens (prepared once per lens; its prepare, if any, runs untimed before each call) and its arrays to compare.
async function workload(name, lens) {
  const typing = /^T(\\d+)$/.exec(name);
  if (typing) {
    const model = await typingModel(lens), n = Number(typing[1]), ids = tokenIds(n, GPT2_SMALL.vocab);
    return {
      prepare: () => model.run({ ids: ids.slice(0, n - 1), attention: 'none', logits: 'none' }),
      call: () => model.run({ ids, attention: { layers: [5], heads: [3] }, logits: 'last' }),
      arrays: (r) => [r.hidden, r.logits, r.attention],
    };
  }
  if (name === 'M') {
    const dims = GPT2_SMALL;
    const { bytes } = writeGpt2Checkpoint(dims, { seed: 1 });
    const model = await lens.loadModel({ config: gpt2Config(dims), weights: bytes });
    const ids = tokenIds(128, dims.vocab);
    return { call: () => (model.dropCache(), model.run({ ids, logits: 'last' })), arrays: (r) => [r.hidden, r.logits, r.attention] };
  }
  const shape = SHAPES[name], inputs = makeInputs(shape);
  if (shape.kind === 'attention') {
    const options = { ...inputs, m: shape.m, n: shape.n, dk: shape.d, dv: shape.d, heads: shape.heads };
    return { call: () => lens.attention(options), arrays: (r) => [r.output, r.weights] };
  }
  const options = { ...inputs, n: shape.n, dModel: shape.dModel, heads: shape.heads };
  return { call: () => lens.multiHeadAttention(options), arrays: (r) => [r.output, r.weights] };
}
try {
  const base = await lensFrom('base'), next = await lensFrom('new');
  const rows = [];
  for (const name of settings.only) {
    const a = await workload(name, base), b = await workload(name, next);
    a.prepare?.();
    const ra = a.arrays(a.call());
    b.prepare?.();
    const rb = b.arrays(b.call());
    const identical = ra.every((array, i) => sameBits(array, rb[i]));
    const times = { base: [], next: [] };
    const time = (w) => { w.prepare?.(); const start = performance.now(); w.call(); return performance.now() - start; };
    for (let round = 0; round < settings.rounds; round++) {
      if (round % 2) { times.next.push(time(b)); times.base.push(time(a)); }
      else { times.base.push(time(a)); times.next.push(time(b)); }
    }
    rows.push({ name, identical, base: median(times.base), next: median(times.next) });
  }
  window.result = { isolated: crossOriginIsolated, threads: [base.threads, next.threads], rows };
} catch (error) {
  window.result = { error: String(error && error.stack || error) };
}
</script>`;

// Copies, not links: each build's glue finds its .wasm and worker beside itself.
const bench = await openBenchPage({ files: { 'index.html': pageSource }, links: benchLinks,
  copies: { base: baseDir, new: newDir } });
let failed = false;
try {
  const result = await waitForResult(bench.page, 1_800_000, { polling: 1000 });
  console.log(`A/B in Chromium, module ${settings.module}, isolated ${result.isolated}, threads base/new ${result.threads.join('/')}, ` +
    `medians of ${settings.rounds} interleaved calls; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`  base ${resolve(baseDir)}\n  new  ${resolve(newDir)}`);
  for (const row of result.rows) {
    console.log(`  ${row.name.padEnd(3)} base ${row.base.toFixed(2).padStart(8)} ms  new ${row.next.toFixed(2).padStart(8)} ms  ` +
      `base/new ${(row.base / row.next).toFixed(3)}  ${row.identical ? 'same bits' : 'RESULTS DIFFER'}`);
    if (!row.identical && !args['allow-differences']) failed = true;
  }
  if (failed) console.error('the two builds gave different bits (pass --allow-differences for changes that are not bit-neutral)');
} catch (error) {
  console.error(`ab-browser failed: ${error.message}`);
  failed = true;
} finally {
  await bench.close();
}
process.exit(failed ? 1 : 0);
