// node tests/bench/analyses-browser.mjs [--quick] [--json FILE]
// (also workload A of `npm run bench -- --browser`, alone with `--only A`)
//
// Issue 25's benchmark: model.analyze (the five detectors, the rollout,
// value-weighted attention and the logit lens) on a GPT-2-small-sized random
// checkpoint (gpt2-checkpoint.mjs) at 128 tokens in headless Chromium, one
// thread, as a share of one forward pass (model.run with logits: 'none': the
// same attention and residual stream analyze runs, no LM head). Five
// contestants take turns (timing.mjs):
//   forward     model.run({ ids, logits: 'none' })
//   detectors   analyze({ valueWeighted: false, logitLens: false }): the forward, the detectors and the rollout
//   + values    analyze({ logitLens: false }): that and value-weighted attention
//   all five    analyze({ ids }): that and the logit lens (an LM-head product per layer and position)
//   last lens   analyze({ ids, logitLens: { positions: [n - 1] } }): all five, the lens at the last position only
// Differences between them give each analysis' own cost. Before timing, the
// page checks what it times: the value-weighted rows sum to 1, the rollout's
// rows too, and both lenses' last layer is the forward's own top token.
// The goal (all five under one forward) cannot hold for the lens over
// every position at the full vocabulary: its products alone are layers x
// vocab x d_model multiply-adds per position against the forward's own per
// position (GPT-2 small: ~5 forwards); the report prints that bound, from the
// model's dimensions, beside the measured shares.
//   --quick   a tiny model, one call each: proves it runs (numbers mean nothing)
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { benchLinks, openBenchPage, waitForResult } from '../support/bench-page.mjs';
import { GPT2_SMALL, GPT2_TINY, forwardFlops, gpt2Config, tokenIds, writeGpt2Checkpoint } from './gpt2-checkpoint.mjs';

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
    // The lens at the last position only: a row per layer.
    const last = model.analyze({ ids, topK: 1, logitLens: { positions: [n - 1] } }).logitLens;
    if (last.ids.length !== layers) problems.push('the last-position lens has ' + last.ids.length + ' rows, not ' + layers);
    else if (last.ids[layers - 1] !== top) problems.push('the last-position lens\\'s last layer predicts ' + last.ids[layers - 1] + ', the model ' + top);
    return { problems, n, layers, heads };
  },
  time(timing) {
    return timeInterleaved([
      { name: 'forward', run: () => (model.dropCache(), model.run({ ids, logits: 'none' })) },
      { name: 'detectors', run: () => model.analyze({ ids, valueWeighted: false, logitLens: false }) },
      { name: 'values', run: () => model.analyze({ ids, logitLens: false }) },
      { name: 'all', run: () => model.analyze({ ids }) },
      { name: 'lastLens', run: () => model.analyze({ ids, logitLens: { positions: [ids.length - 1] } }) },
    ], timing);
  },
};
window.ready = true;
</script>`;

const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const loadAverage = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

// The lens's own products against the forward's, in multiply-adds per
// position, from the model's dimensions: a lens row is one LM-head product per
// layer (layers x vocab x d_model); the forward's are forwardFlops' count
// (weights and attention) without the LM head, halved (it counts a
// multiply-add as 2). Their ratio is the least the lens over every position
// can cost in forwards; over the last position only, that over n.
export function lensBound(dims, n) {
  const flops = forwardFlops(dims, n);
  const lensPerPosition = dims.layers * dims.vocab * dims.dModel;
  const forwardPerPosition = (flops.total - flops.lmHead) / 2 / n;
  const everyPosition = lensPerPosition / forwardPerPosition;
  return { lensPerPosition, forwardPerPosition, everyPosition, lastPosition: everyPosition / n };
}

/** Runs workload A; returns { dims, n, setup, times, shares, bound, goal, problems }. */
export async function benchAnalyses({ quick = false, dims = quick ? GPT2_TINY : GPT2_SMALL, n = quick ? 16 : 128, log = console.log } = {}) {
  log(`\nA model.analyze, all five analyses (GPT-2-sized: ${dims.layers} layers, ${dims.heads} heads, d_model ${dims.dModel}, `
    + `vocab ${dims.vocab}), ${n} tokens, Chromium, 1 thread${quick ? ' (--quick: tiny model; numbers mean nothing)' : ''}`);
  const bound = lensBound(dims, n);
  // Not isolated: load() gives such a page the one-thread module.
  const bench = await openBenchPage({
    files: {
      'index.html': pageSource,
      'data/model.safetensors': writeGpt2Checkpoint(dims, { seed: 1 }).bytes,
      'data/config.json': JSON.stringify(gpt2Config(dims)),
      'data/ids.json': JSON.stringify(Array.from(tokenIds(n, dims.vocab))),
    },
    links: benchLinks, isolated: false,
  });
  try {
    const { page } = bench;
    await waitForResult(page, 60_000, { name: 'ready' });
    const setup = await page.evaluate(() => window.bench.start());
    const { problems } = await page.evaluate(() => window.bench.check());
    if (problems.length) return { dims, n, setup, times: null, shares: null, bound, goal: null, problems };
    const times = await page.evaluate((timing) => window.bench.time(timing), quick ? QUICK_TIMING : TIMING);
    const forward = times.forward.medianMs;
    // Each analysis' own time: the differences between contestants (analyze runs its own forward).
    const own = {
      'detectors + rollout': times.detectors.medianMs - forward,
      'value-weighted': times.values.medianMs - times.detectors.medianMs,
      'logit lens': times.all.medianMs - times.values.medianMs,
      'logit lens, last position only': times.lastLens.medianMs - times.values.medianMs,
      'all five, without the logit lens': times.values.medianMs - forward,
      'all five': times.all.medianMs - forward,
      'all five, the lens at the last position only': times.lastLens.medianMs - forward,
    };
    const shares = Object.fromEntries(Object.entries(own).map(([name, ms]) => [name, ms / forward]));
    log(`  Chromium ${setup.browser}, attnlens ${setup.simdLevel}, ${setup.threads} thread; load average ${loadAverage()}`);
    log('| call | median ms | samples | × one forward |');
    log('|---|---:|---:|---:|');
    const calls = [['forward: model.run, logits none', 'forward'], ['analyze: detectors + rollout', 'detectors'],
      ['analyze: + value-weighted', 'values'], ['analyze: all five (+ logit lens)', 'all'],
      ['analyze: all five, the lens at the last position only', 'lastLens']];
    for (const [label, key] of calls) log(`| ${label} | ${fixed(times[key].medianMs, 1)} | ${times[key].samples} | ${fixed(times[key].medianMs / forward, 2)} |`);
    log('| the analyses alone (analyze − its forward) | ms | | share of one forward |');
    for (const [name, ms] of Object.entries(own)) log(`| ${name} | ${fixed(ms, 1)} | | ${fixed(100 * shares[name], 0)}% |`);
    const goal = {
      share: shares['all five'], met: shares['all five'] < GOAL_SHARE,
      lastPositionShare: shares['all five, the lens at the last position only'],
      lastPositionMet: shares['all five, the lens at the last position only'] < GOAL_SHARE,
    };
    log(`  goal (issue 25): all five under one forward's time: ${fixed(100 * goal.share, 0)}% (${goal.met ? 'met' : 'NOT met'}); `
      + `without the logit lens ${fixed(100 * shares['all five, without the logit lens'], 0)}%; `
      + `with the lens at the last position only ${fixed(100 * goal.lastPositionShare, 0)}% (${goal.lastPositionMet ? 'met' : 'NOT met'})`);
    log(`  arithmetic bound: a lens row is ${dims.layers} layers × ${dims.vocab} vocab × ${dims.dModel} d_model = `
      + `${fixed(bound.lensPerPosition / 1e6, 1)} M multiply-adds, the forward ${fixed(bound.forwardPerPosition / 1e6, 1)} M per position: `
      + `the lens over every position costs at least ${fixed(bound.everyPosition, 2)} forwards (measured ${fixed(shares['logit lens'], 2)}), `
      + `at the last position at least ${fixed(100 * bound.lastPosition, 1)}% of one (measured ${fixed(100 * shares['logit lens, last position only'], 1)}%)`);
    problems.push(...bench.errors);
    return { dims, n, setup, times, shares, bound, goal, problems };
  } finally {
    await bench.close();
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
