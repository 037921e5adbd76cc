// node tests/bench/s4-threads-browser.mjs [--base DIR] [--calls 40] [--into] [--quick]
//
// Where S4's time goes on one thread and on two (issue 24), in headless
// Chromium on a cross-origin isolated page: lens.multiHeadAttention on the
// relaxed module (1 thread) and this build's relaxed-threads module (2
// threads), and with --base the relaxed-threads module of another build
// (a directory holding attnlens-relaxed-threads.mjs, .wasm and .worker.js,
// e.g. a copy of web/lib/wasm from before a change, run by this build's
// web/lib; or a copy of a whole web/lib, wasm/ included, whose api.js runs
// both its relaxed module and its relaxed-threads one: the library's
// JavaScript before the change too). Calls alternate between
// the modules, the order rotating. Each call splits, by timers around the
// Embind functions (embind-timers.mjs), into
//   layer   multiHeadAttention, or multiHeadBegin + multiHeadFinish (+
//           multiHeadComplete) (the threads module's staged call: the helper
//           projects Q between the first two, and W_O while the head weights
//           are copied out before the last)
//   scans   maxMagnitude: the NaN/Infinity scans of the inputs and output
//   JS      the rest: copies in and out, checks, allocation, frees
// Prints medians (and minima: this machine's speed wanders) and each
// two-thread module's gain over the one-thread one. Bits are compared first.
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { benchLinks, openBenchPage, waitForResult } from '../support/bench-page.mjs';
import { QUICK_SHAPES, SHAPES } from './workloads.mjs';

const { values: args } = parseArgs({
  options: { base: { type: 'string' }, calls: { type: 'string', default: '40' }, into: { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false } },
});
const shape = args.quick ? QUICK_SHAPES.S4 : SHAPES.S4;
const baseLib = Boolean(args.base) && existsSync(join(args.base, 'api.js'));
const calls = args.quick ? 2 : Number(args.calls);

const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module">
import { createLens } from './lib/api.js';
import { timeEmbindCalls } from './bench/embind-timers.mjs';
import { prepareAttnlens } from './bench/engines.mjs';
import { makeInputs } from './bench/workloads.mjs';
const shape = ${JSON.stringify(shape)}, calls = ${calls}, into = ${args.into};
import { createLens as createBaseLens } from '${baseLib ? './base/api.js' : './lib/api.js'}';
const files = { '1 thread': './lib/wasm/attnlens-relaxed.mjs', '2 threads': './lib/wasm/attnlens-relaxed-threads.mjs',
  ...(${baseLib} ? { '1 thread, base': './base/wasm/attnlens-relaxed.mjs' } : {}),
  ...(${Boolean(args.base)} ? { '2 threads, base': '${baseLib ? './base/wasm/' : './base/'}attnlens-relaxed-threads.mjs' } : {}) };
const buckets = { multiHeadAttention: 'layer', multiHeadBegin: 'layer', multiHeadFinish: 'layer', multiHeadComplete: 'layer',
  maxMagnitude: 'scans' };
try {
  const inputs = makeInputs(shape);
  const contestants = [];
  for (const [name, file] of Object.entries(files)) {
    const module = await (await import(file)).default();
    const lens = (name.endsWith(', base') ? createBaseLens : createLens)(module, 'relaxed');
    const present = Object.fromEntries(Object.entries(buckets).filter(([f]) => typeof module[f] === 'function'));
    const timers = timeEmbindCalls(module, present);
    const prepared = prepareAttnlens(lens, shape, inputs, { reuseOutputs: into });
    // The API stages the call only on a threads module that has the bindings (api.js).
    contestants.push({ name, threads: lens.threads, staged: lens.threads > 1 && 'multiHeadBegin' in present, timers, run: prepared.run,
      rows: { total: [], layer: [], scans: [], js: [] } });
  }
  const bits = (result) => [...new Uint32Array(result.output.buffer), ...new Uint32Array(result.weights.buffer)].join();
  const first = contestants.map((c) => bits(c.run()));
  const identical = first.every((b) => b === first[0]);
  for (let i = 0; i < 3; i++) for (const c of contestants) c.run();
  for (let call = 0; call < calls; call++) {
    for (let k = 0; k < contestants.length; k++) {
      const c = contestants[(k + call) % contestants.length];
      c.timers.reset();
      const start = performance.now();
      c.run();
      const total = performance.now() - start, { layer, scans } = c.timers.spent;
      c.rows.total.push(total); c.rows.layer.push(layer); c.rows.scans.push(scans); c.rows.js.push(total - layer - scans);
    }
  }
  const median = (v) => { const s = [...v].sort((a, b) => a - b); return s[s.length >> 1]; };
  window.result = { isolated: crossOriginIsolated, identical, rows: contestants.map((c) => ({ name: c.name, threads: c.threads,
    staged: c.staged, ...Object.fromEntries(Object.entries(c.rows).map(([k, v]) => [k, { median: median(v), min: Math.min(...v) }])) })) };
} catch (error) {
  window.result = { error: String(error && error.stack || error) };
}
</script>`;

const bench = await openBenchPage({ files: { 'index.html': pageSource },
  links: { ...benchLinks, ...(args.base ? { base: args.base } : {}) }, path: null });
try {
  const loadBefore = loadavg().map((x) => x.toFixed(2)).join(' ');
  await bench.page.goto(bench.url);
  const result = await waitForResult(bench.page, 600_000);
  if (!result.isolated) throw new Error('the page is not cross-origin isolated');
  if (!result.identical) throw new Error('the modules\' outputs and weights differ in their bits');
  console.log(`S4 (n = ${shape.n}, dModel = ${shape.dModel}, ${shape.heads} heads), lens.multiHeadAttention, ` +
    `${args.into ? 'reused output arrays (into)' : 'fresh arrays'}; ms per call over ${calls} alternating calls, median (min); ` +
    `same bits in every module; load average ${loadBefore} before, ${loadavg().map((x) => x.toFixed(2)).join(' ')} after`);
  const cell = (value) => `${value.median.toFixed(2)} (${value.min.toFixed(2)})`.padStart(15);
  console.log(`  ${'module'.padEnd(40)}${['whole call', 'layer', 'scans', 'JS'].map((h) => h.padStart(15)).join('')}`);
  const one = result.rows.find((row) => row.name === '1 thread');
  for (const row of result.rows) {
    const label = `${row.name} (${row.threads} thread${row.threads === 1 ? '' : 's'}${row.staged ? ', staged' : ''})`;
    const gain = row === one ? '' : `   ${(one.total.median / row.total.median).toFixed(2)}x over 1 thread`;
    console.log(`  ${label.padEnd(40)}${[row.total, row.layer, row.scans, row.js].map(cell).join('')}${gain}`);
  }
} finally {
  await bench.close();
}
