// node tests/bench/forward-where.mjs [--counts 32,512,1024] [--rounds 9] [--pause 800] [--module relaxed-threads] [--wasm DIR]
//
// Issue 24: the page's one-position forward (typing.mjs, the model worker's
// model.run elapsedMs) read 25-40 ms slower than ab-browser.mjs's T workloads
// of the same module, though it does less (no LM head). The two differ in
// where and when the forward runs, and this benchmark times the same forward
// under each condition, in one cross-origin isolated page, the conditions
// taking turns call by call so that the machine's load falls on all alike:
//   main      on the page's main thread, right after the run of the first
//             n - 1 ids (ab-browser.mjs's T: there the module's helper waits
//             are busy loops, as Atomics.wait is not allowed on that thread);
//   worker    in a dedicated worker, as the page's model worker runs it, also
//             right after the run of n - 1 ids;
//   idle      in that worker after a pause of --pause ms (typing.mjs types a
//             key after 800 ms of an idle page).
// Each condition has its own module instance and GPT-2-small-shaped model
// (gpt2-checkpoint.mjs); the forward is the page's: one head's attention
// (layer 0, head 0), no logits. Prints the median and the minimum of
// elapsedMs (the core's time, what typing.mjs reports as the forward).
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { benchLinks, openBenchPage, waitForResult } from '../support/bench-page.mjs';

const { values: args } = parseArgs({
  options: {
    counts: { type: 'string', default: '32,512,1024' }, rounds: { type: 'string', default: '9' },
    pause: { type: 'string', default: '800' }, module: { type: 'string', default: 'relaxed-threads' },
    wasm: { type: 'string', default: join(repoRoot, 'web', 'lib', 'wasm') },
  },
});
const settings = { counts: args.counts.split(',').map(Number), rounds: Number(args.rounds), pause: Number(args.pause), module: args.module };

// Loaded by the page and by its worker: a model of its own, and one timed forward.
const forwardSource = `
import { createLens } from './lib/api.js';
import { GPT2_SMALL, gpt2Config, tokenIds, writeGpt2Checkpoint } from './bench/gpt2-checkpoint.mjs';
let model;
export async function setup(name) {
  const { default: createModule } = await import('./wasm/attnlens-' + name + '.mjs');
  const lens = createLens(await createModule(), name.startsWith('relaxed') ? 'relaxed' : name === 'scalar' ? false : true);
  model = await lens.loadModel({ config: gpt2Config(GPT2_SMALL), weights: writeGpt2Checkpoint(GPT2_SMALL, { seed: 1 }).bytes });
  return lens.threads;
}
// The run of the first n - 1 ids, a pause of pauseMs (none: at once), then the timed run of all n.
export async function forward(n, pauseMs) {
  const ids = tokenIds(n, GPT2_SMALL.vocab);
  model.run({ ids: ids.slice(0, n - 1), attention: 'none', logits: 'none' });
  if (pauseMs > 0) await new Promise((done) => { setTimeout(done, pauseMs); });
  const result = model.run({ ids, attention: { layers: [0], heads: [0] }, logits: 'none' });
  if (result.reusedPositions !== n - 1) throw new Error('the run reused ' + result.reusedPositions + ' positions, not ' + (n - 1));
  return result.elapsedMs;
}
`;
const workerSource = `import { setup, forward } from './forward.mjs';
onmessage = async ({ data }) => {
  try { postMessage({ value: data.setup ? await setup(data.setup) : await forward(data.n, data.pauseMs) }); }
  catch (error) { postMessage({ error: String(error.stack || error) }); }
};`;
const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module">
import { setup, forward } from './forward.mjs';
const settings = ${JSON.stringify(settings)};
const median = (values) => [...values].sort((x, y) => x - y)[values.length >> 1];
// A worker of its own per condition: one waits idle, the other not.
function startWorker() {
  const worker = new Worker('./worker.mjs', { type: 'module' });
  return (message) => new Promise((resolve, reject) => {
    worker.onmessage = ({ data }) => (data.error ? reject(new Error(data.error)) : resolve(data.value));
    worker.postMessage(message);
  });
}
try {
  const threads = { main: await setup(settings.module) };
  const workers = { worker: startWorker(), idle: startWorker() };
  for (const [name, ask] of Object.entries(workers)) threads[name] = await ask({ setup: settings.module });
  const conditions = {
    main: (n) => forward(n, 0),
    worker: (n) => workers.worker({ n, pauseMs: 0 }),
    idle: (n) => workers.idle({ n, pauseMs: settings.pause }),
  };
  const rows = [];
  for (const n of settings.counts) {
    for (const call of Object.values(conditions)) await call(n); // each model's kept positions at n - 1 once, untimed
    const times = Object.fromEntries(Object.keys(conditions).map((name) => [name, []]));
    const order = Object.keys(conditions);
    for (let round = 0; round < settings.rounds; round++) {
      for (let i = 0; i < order.length; i++) {
        const name = order[(round + i) % order.length]; // each condition first in turn
        times[name].push(await conditions[name](n));
      }
    }
    rows.push({ n, ...Object.fromEntries(Object.entries(times).map(([name, ms]) => [name, { median: median(ms), min: Math.min(...ms) }])) });
  }
  window.result = { isolated: crossOriginIsolated, threads, rows };
} catch (error) {
  window.result = { error: String(error && error.stack || error) };
}
</script>`;

const bench = await openBenchPage({
  files: { 'forward.mjs': forwardSource, 'worker.mjs': workerSource, 'index.html': pageSource },
  links: { ...benchLinks, wasm: args.wasm }, path: null,
});
const loadBefore = loadavg()[0];
try {
  await bench.page.goto(bench.url);
  const result = await waitForResult(bench.page, 1_800_000, { polling: 1000 });
  const fixed = (ms) => ms.toFixed(1).padStart(7);
  console.log(`one-position forward (elapsedMs), module ${settings.module}, threads main/worker/idle ${Object.values(result.threads).join('/')}, ` +
    `isolated ${result.isolated}, ${settings.rounds} rounds, conditions in turn; load ${loadBefore.toFixed(2)} -> ${loadavg()[0].toFixed(2)}`);
  console.log(`      n   main thread (median min)   worker (median min)   worker after ${settings.pause} ms idle (median min)`);
  for (const row of result.rows) {
    console.log(`  ${String(row.n).padStart(5)}   ${fixed(row.main.median)} ${fixed(row.main.min)}        ${fixed(row.worker.median)} ${fixed(row.worker.min)}` +
      `       ${fixed(row.idle.median)} ${fixed(row.idle.min)}`);
  }
} catch (error) {
  console.error(`forward-where failed: ${error.message}`);
  process.exitCode = 1;
} finally {
  await bench.close();
}
