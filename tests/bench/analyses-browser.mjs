// node tests/bench/analyses-browser.mjs [--quick] [--json FILE]
// (also workload A of `npm run bench -- --browser`, alone with `--only A`)
//
// Issue 25's benchmark: model.analyze (the five detectors, the rollout,
// value-weighted attention and the logit lens) on a GPT-2-small-sized random
// checkpoint (gpt2-checkpoint.mjs) at 128 tokens in headless Chromium, one
// thread, as a share of one forward pass (model.run with logits: 'none': the
// same attention and residual stream analyze runs, no LM head). Four
// contestants take turns (timing.mjs):
//   forward     model.run({ ids, logits: 'none' })
//   detectors   analyze({ valueWeighted: false, logitLens: false }): the forward, the detectors and the rollout
//   + values    analyze({ logitLens: false }): that and value-weighted attention
//   all five    analyze({ ids }): that and the logit lens (an LM-head product per layer)
// Differences between them give each analysis' own cost. Before timing, the
// page checks what it times: the value-weighted rows sum to 1, the rollout's
// rows too, and the logit lens's last layer is the forward's own top token.
//   --quick   a tiny model, one call each: proves it runs (numbers mean nothing)
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { launchBrowser } from '../support/chromium.mjs';
import { serveStatic } from '../support/static-server.mjs';
import { GPT2_SMALL, GPT2_TINY, gpt2Config, tokenIds, writeGpt2Checkpoint } from './gpt2-checkpoint.mjs';

const TIMING = { warmupMs: 1000, budgetMs: 4000, minSamples: 5, sliceMs: 0 };
const QUICK_TIMING = { warmupMs: 0, budgetMs: 0, minSamples: 1, sliceMs: 0 };
// Issue 25's goal: all five analyses together under one forward pass's time.
const GOAL_SHARE = 1;

const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module">
import { load } from './lib/browser.js';
import { timeInterleaved } from './bench/timing.mjs';

const bytes = async (name) => new Uint8Array(await (await fetch('./data/' + name)).arrayBuffer());
let model, ids;
window.bench = {
  async start() {
    const lens = await load();
    ids = Int32Array.from(await (await fetch('./data/ids.json')).json());
    model = await lens.loadModel({ config: await (await fetch('./data/config.json')).text(), weights: await bytes('model.safetensors') });
    return { simdLevel: lens.simdLevel, threads: lens.threads, browser: navigator.userAgent.match(/Chrome\\/([\\d.]+)/)?.[1] ?? null };
  },
  // What is timed is checked first: rows sum to 1, and the lens's last layer is the model's own prediction.
  check() {
    const problems = [];
    const { n, layers, heads, valueWeighted, rollout, logitLens } = model.analyze({ ids, topK: 1 });
    const rowsOff = (values, what) => {
      for (let start = 0; start < values.length; start += n) {
        let sum = 0;
        for (let key = 0; key < n; key += 1) sum += values[start + key];
        if (Math.abs(sum - 1) > 1e-4) return problems.push(what + ': a row sums to ' + sum);
      }
    };
    rowsOff(valueWeighted, 'value-weighted');
    rowsOff(rollout, 'rollout');
    const logits = model.run({ ids, logits: 'last' }).logits;
    const top = logits.indexOf(Math.max(...logits));
    const lensTop = logitLens.ids[(layers - 1) * n + n - 1];
    if (lensTop !== top) problems.push('the logit lens\\'s last layer predicts ' + lensTop + ', the model ' + top);
    return { problems, n, layers, heads };
  },
  time(timing) {
    return timeInterleaved([
      { name: 'forward', run: () => (model.dropCache(), model.run({ ids, logits: 'none' })) },
      { name: 'detectors', run: () => model.analyze({ ids, valueWeighted: false, logitLens: false }) },
      { name: 'values', run: () => model.analyze({ ids, logitLens: false }) },
      { name: 'all', run: () => model.analyze({ ids }) },
    ], timing);
  },
};
window.ready = true;
</script>`;

const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const loadAverage = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

/** Runs workload A; returns { dims, n, setup, times, shares, problems }. */
export async function benchAnalyses({ quick = false, dims = quick ? GPT2_TINY : GPT2_SMALL, n = quick ? 16 : 128, log = console.log } = {}) {
  log(`\nA model.analyze, all five analyses (GPT-2-sized: ${dims.layers} layers, ${dims.heads} heads, d_model ${dims.dModel}, `
    + `vocab ${dims.vocab}), ${n} tokens, Chromium, 1 thread${quick ? ' (--quick: tiny model; numbers mean nothing)' : ''}`);
  const dir = mkdtempSync(join(os.tmpdir(), 'attnlens-bench-analyses-'));
  const site = mkdtempSync(join(os.tmpdir(), 'attnlens-bench-analyses-page-'));
  let server = null, browser = null;
  try {
    writeFileSync(join(dir, 'model.safetensors'), writeGpt2Checkpoint(dims, { seed: 1 }).bytes);
    writeFileSync(join(dir, 'config.json'), JSON.stringify(gpt2Config(dims)));
    writeFileSync(join(dir, 'ids.json'), JSON.stringify(Array.from(tokenIds(n, dims.vocab))));
    symlinkSync(join(repoRoot, 'web', 'lib'), join(site, 'lib'), 'dir');
    symlinkSync(join(repoRoot, 'tests', 'bench'), join(site, 'bench'), 'dir');
    symlinkSync(dir, join(site, 'data'), 'dir');
    writeFileSync(join(site, 'index.html'), pageSource);
    server = await serveStatic(site);
    browser = await launchBrowser();
    const { page } = browser;
    await page.goto(server.url);
    await page.waitForFunction(() => window.ready, null, { timeout: 60_000 });
    const setup = await page.evaluate(() => window.bench.start());
    const { problems } = await page.evaluate(() => window.bench.check());
    if (problems.length) return { dims, n, setup, times: null, shares: null, problems };
    const times = await page.evaluate((timing) => window.bench.time(timing), quick ? QUICK_TIMING : TIMING);
    const forward = times.forward.medianMs;
    // Each analysis' own time: the differences between contestants (analyze runs its own forward).
    const own = {
      'detectors + rollout': times.detectors.medianMs - forward,
      'value-weighted': times.values.medianMs - times.detectors.medianMs,
      'logit lens': times.all.medianMs - times.values.medianMs,
      'all five, without the logit lens': times.values.medianMs - forward,
      'all five': times.all.medianMs - forward,
    };
    const shares = Object.fromEntries(Object.entries(own).map(([name, ms]) => [name, ms / forward]));
    log(`  Chromium ${setup.browser}, attnlens ${setup.simdLevel}, ${setup.threads} thread; load average ${loadAverage()}`);
    log('| call | median ms | samples | × one forward |');
    log('|---|---:|---:|---:|');
    const calls = [['forward: model.run, logits none', 'forward'], ['analyze: detectors + rollout', 'detectors'],
      ['analyze: + value-weighted', 'values'], ['analyze: all five (+ logit lens)', 'all']];
    for (const [label, key] of calls) log(`| ${label} | ${fixed(times[key].medianMs, 1)} | ${times[key].samples} | ${fixed(times[key].medianMs / forward, 2)} |`);
    log('| the analyses alone (analyze − its forward) | ms | | share of one forward |');
    for (const [name, ms] of Object.entries(own)) log(`| ${name} | ${fixed(ms, 1)} | | ${fixed(100 * shares[name], 0)}% |`);
    const share = shares['all five'];
    log(`  goal (issue 25): all five under one forward's time: ${fixed(100 * share, 0)}% (${share < GOAL_SHARE ? 'met' : 'NOT met'}); `
      + `without the logit lens ${fixed(100 * shares['all five, without the logit lens'], 0)}%`);
    if (browser.errors.length) problems.push(...browser.errors);
    return { dims, n, setup, times, shares, problems };
  } finally {
    await browser?.close();
    await server?.close();
    rmSync(site, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const { values: args } = parseArgs({ options: { quick: { type: 'boolean' }, json: { type: 'string' } } });
  console.log(`${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} logical CPUs; load average at start ${loadAverage()}`);
  const result = await benchAnalyses({ quick: args.quick ?? false });
  for (const problem of result.problems) console.log(`  PROBLEM: ${problem}`);
  if (args.json) writeFileSync(args.json, `${JSON.stringify(result, null, 2)}\n`);
  if (result.problems.length) process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(error.stack ?? error.message);
    process.exitCode = 1;
  });
}
