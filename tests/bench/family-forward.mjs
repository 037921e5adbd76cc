// npm run bench -- --browser [--only P,Q] [--quick]: issue 22's forwards of
// the models people bring, in headless Chromium: a Pythia-160M-sized and a
// Qwen2.5-0.5B-sized random checkpoint (family-checkpoint.mjs), and GPT-2
// small (gpt2-checkpoint.mjs) as the baseline, each over 128 tokens
// (model.run with every layer's attention, the hidden state and every row of
// logits, as workload M runs GPT-2), on 1 thread and on 2 (the threads module
// in a cross-origin isolated page). Reported: load time, WebAssembly memory,
// median ms, GFLOP/s and the share of the page's own register-only ceiling
// (ceiling.mjs, measured before and after: the best of the two). Issue 22's
// goal: each family's share on one thread at least GPT-2 small's.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { FAMILY_WORKLOADS, QUICK_CONFIGS, familyForwardFlops, writeFamilyCheckpoint } from './family-checkpoint.mjs';
import { GPT2_SMALL, GPT2_TINY, forwardFlops, gpt2Config, tokenIds, writeGpt2Checkpoint } from './gpt2-checkpoint.mjs';

// Forwards take 1-8 s here: a few samples each.
const TIMING = { warmupMs: 0, budgetMs: 15000, minSamples: 3, sliceMs: 0 };
const QUICK_TIMING = { warmupMs: 0, budgetMs: 0, minSamples: 1, sliceMs: 0 };
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

// One page holds the one-thread module of the best level and load()'s
// two-thread module; each model is loaded in one, timed, disposed, then in
// the other, so only one copy of the weights is in WebAssembly at a time.
const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module">
import { load, relaxedSimdSupported } from './lib/browser.js';
import { bestSimdLevel, createLens } from './lib/api.js';
import { measureCeiling } from './bench/ceiling.mjs';
import { timeInterleaved } from './bench/timing.mjs';
const level = bestSimdLevel();
const lenses = { 1: createLens(await (await import('./lib/wasm/attnlens-' + level + '.mjs')).default(), level), 2: await load() };
window.bench = {
  setup: () => ({ isolated: crossOriginIsolated, level, threads: [lenses[1].threads, lenses[2].threads] }),
  ceiling: (budgetMs) => (relaxedSimdSupported() ? measureCeiling({ budgetMs, fma: true }) : measureCeiling({ budgetMs })).gflops,
  async forward(name, threads, timing, weightStorage) {
    const lens = lenses[threads];
    const config = await (await fetch('./data/' + name + '.json')).text();
    const ids = Int32Array.from(await (await fetch('./data/ids-' + name + '.json')).json());
    let weights = new Uint8Array(await (await fetch('./data/' + name + '.safetensors')).arrayBuffer());
    const started = performance.now();
    const model = await lens.loadModel({ config, weights, weightStorage });
    const loadMs = performance.now() - started;
    weights = null;
    try {
      const first = model.run({ ids });
      const wasmMs = [];
      const times = await timeInterleaved([{ name: 'attnlens', run: () => wasmMs.push((model.dropCache(), model.run({ ids })).elapsedMs) }], timing);
      return { loadMs, info: { parameters: model.info.parameters, weightStorage: model.info.weightStorage, weightBytes: model.info.weightBytes },
        heapBytes: lens.heapBytesInUse(), medianMs: times.attnlens.medianMs, samples: times.attnlens.samples,
        finite: first.logits.every(Number.isFinite) };
    } finally {
      model.dispose();
    }
  },
};
window.ready = true;
</script>`;

// The checkpoints, their configs and ids into `dir`; -> [{ id, label, name, flops, fileBytes, parameters }].
function writeFiles(dir, ids, quick, n) {
  const write = (name, bytes, config) => {
    writeFileSync(join(dir, `${name}.safetensors`), bytes);
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(config));
    writeFileSync(join(dir, `ids-${name}.json`), JSON.stringify(Array.from(tokenIds(n, config.vocab_size ?? config.n_vocab))));
  };
  const list = [];
  const dims = quick ? GPT2_TINY : GPT2_SMALL;
  {
    const { bytes, parameters } = writeGpt2Checkpoint(dims);
    write('gpt2', bytes, gpt2Config(dims));
    list.push({ id: 'G', label: 'G GPT-2 small (F32; the baseline)', name: 'gpt2', weightStorage: 'auto', flops: forwardFlops(dims, n).total, fileBytes: bytes.length, parameters });
  }
  for (const id of ids) {
    const workload = FAMILY_WORKLOADS[id];
    const config = quick ? QUICK_CONFIGS[id] : workload.config;
    const { bytes, parameters } = writeFamilyCheckpoint({ ...workload, config });
    write(id, bytes, config);
    list.push({ id, label: workload.label, name: id, weightStorage: workload.weightStorage ?? 'auto', flops: familyForwardFlops(workload.arch, workload.variant, config, n).total, fileBytes: bytes.length, parameters });
  }
  return list;
}

// Runs the wanted family workloads (P, Q) and the GPT-2 baseline; -> { ceiling, rows, problems }.
export async function benchFamilyForwards({ ids, quick = false, log = console.log }) {
  const { benchLinks, openBenchPage, waitForResult } = await import('../support/bench-page.mjs');
  const n = quick ? 16 : 128;
  // The checkpoints are written one by one to a folder the page links as data/ (all at once they would not fit in memory).
  const data = mkdtempSync(join(os.tmpdir(), 'attnlens-bench-families-'));
  const problems = [];
  try {
    const workloads = writeFiles(data, ids, quick, n);
    log(`\nFamilies (issue 22): ${n} tokens, every layer's attention + hidden + logits; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const bench = await openBenchPage({ files: { 'index.html': pageSource }, links: { ...benchLinks, data } });
    try {
      const { page } = bench;
      await waitForResult(page, 60_000, { name: 'ready', errors: bench.errors }).catch((error) => {
        throw new Error(`the families' benchmark page did not start: ${error.message}`);
      });
      const setup = await page.evaluate(() => window.bench.setup());
      if (!setup.isolated || setup.threads[1] !== 2) problems.push(`the two-thread lens runs ${setup.threads[1]} thread(s) (isolated: ${setup.isolated})`);
      const budget = quick ? 20 : 1200;
      const before = await page.evaluate((ms) => window.bench.ceiling(ms), budget);
      const rows = [];
      for (const workload of workloads) {
        for (const threads of [1, 2]) {
          const run = await page.evaluate(([name, t, timing, storage]) => window.bench.forward(name, t, timing, storage),
            [workload.name, threads, quick ? QUICK_TIMING : TIMING, workload.weightStorage]);
          if (!run.finite) problems.push(`${workload.id} ${threads} thread(s): logits not finite`);
          rows.push({ ...workload, threads, ...run, gflops: workload.flops / (run.medianMs * 1e6) });
        }
      }
      const after = await page.evaluate((ms) => window.bench.ceiling(ms), budget);
      const ceiling = Math.max(before, after);
      problems.push(...bench.errors);
      log(`  Chromium, module ${setup.level}; ceiling (register-only ${setup.level === 'relaxed' ? 'relaxed_madd' : 'mul + add'} loop, 1 core): ` +
        `${fixed(ceiling, 1)} GFLOP/s (before ${fixed(before, 1)}, after ${fixed(after, 1)})`);
      log('  workload                                              threads  file      weights   load ms  median ms  GFLOP/s  % ceiling (1 core)');
      for (const row of rows) {
        row.ceilingPercent = (100 * row.gflops) / (ceiling * row.threads);
        log(`  ${row.label.padEnd(54)}${String(row.threads).padStart(4)}  ${mib(row.fileBytes).padStart(9)} ${mib(row.info.weightBytes).padStart(9)}` +
          ` ${row.info.weightStorage.padEnd(8)}${fixed(row.loadMs, 0).padStart(7)}  ${fixed(row.medianMs, 0).padStart(8)}  ${fixed(row.gflops, 1).padStart(7)}` +
          `  ${fixed(row.ceilingPercent, 0).padStart(5)}%  (${row.samples} samples, ${(row.flops / 1e9).toFixed(1)} GFLOP)`);
      }
      const share = (id) => rows.find((row) => row.id === id && row.threads === 1)?.ceilingPercent;
      for (const id of ids) {
        log(`  ${id}: one thread ${fixed(share(id), 0)}% of the ceiling, GPT-2 small ${fixed(share('G'), 0)}% ` +
          `(goal: at least GPT-2's: ${share(id) >= share('G') ? 'met' : 'NOT met'})`);
      }
      return { n, setup, ceiling: { best: ceiling, before, after }, rows, problems };
    } finally {
      await bench.close();
    }
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}
