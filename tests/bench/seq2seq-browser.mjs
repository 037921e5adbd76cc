// npm run bench -- --browser --only T [--quick]: issue 23's translation in
// headless Chromium. A random checkpoint of t5-small's shape (6 + 6 layers,
// 8 heads, d_model 512, vocab 32128; tests/support/model-reference-t5.mjs
// writes it in the hub's layout) encodes 32 source tokens and generates 32
// tokens greedily, on 1 thread and on 2 (the threads module in a
// cross-origin isolated page):
//   generate    model.generate: the encoder once, then one decoder step per
//               token that projects only the new token and reuses the past
//               keys and values (self-attention) and the encoder's (cross)
//   recompute   the same greedy decoding by model.run over the whole prefix
//               for each new token (what generation without a cache costs)
// Both must choose the same 32 tokens before either is timed. Reported:
// median ms, GFLOP/s of generate (flops counted below), its share of the
// page's register-only ceiling (ceiling.mjs, best of before and after) and
// generate's speedup over recompute.
import os from 'node:os';
import { t5Checkpoint } from '../support/model-reference-t5.mjs';
import { tokenIds } from './gpt2-checkpoint.mjs';

const TIMING = { warmupMs: 500, budgetMs: 8000, minSamples: 3, sliceMs: 0 };
const QUICK_TIMING = { warmupMs: 0, budgetMs: 0, minSamples: 1, sliceMs: 0 };
const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

// t5-small's config.json (the fields modeling_t5 reads); eos_token_id null so
// that random weights generate all 32 tokens instead of stopping at </s>.
const T5_SMALL = {
  d_model: 512, d_kv: 64, d_ff: 2048, num_layers: 6, num_decoder_layers: 6, num_heads: 8,
  relative_attention_num_buckets: 32, relative_attention_max_distance: 128, vocab_size: 32128, eos_token_id: null,
};
const SOURCE_TOKENS = 32, GENERATED_TOKENS = 32;

// Flops of generate as it runs (a multiply-add is 2): the encoder over n
// source tokens; the cross-attention keys and values of each decoder layer
// once; then per generated token t (0-based) one decoder step: Q, K, V and
// the output of self-attention, Q and output of cross-attention, t + 1 self
// keys and n cross keys (scores and weights x V), the MLP, the LM head.
// Norms, biases, the relative bias and the softmax not counted.
export function t5GenerateFlops(config, n, k) {
  const d = config.d_model, inner = config.num_heads * config.d_kv;
  const mlp = 2 * d * config.d_ff * (config.feed_forward_proj?.startsWith('gated') ? 3 : 2);
  const encoderLayer = n * (4 * 2 * d * inner + mlp) + 2 * 2 * n * n * inner;
  let decoder = config.num_decoder_layers * n * 2 * 2 * d * inner; // cross K, V
  for (let t = 0; t < k; ++t) {
    decoder += config.num_decoder_layers * (6 * 2 * d * inner + mlp + 2 * 2 * (t + 1 + n) * inner) + 2 * d * config.vocab_size;
  }
  return config.num_layers * encoderLayer + decoder;
}

const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module">
import { load, relaxedSimdSupported } from './lib/browser.js';
import { bestSimdLevel, createLens } from './lib/api.js';
import { measureCeiling } from './bench/ceiling.mjs';
import { timeInterleaved } from './bench/timing.mjs';
const level = bestSimdLevel();
const lenses = { 1: createLens(await (await import('./lib/wasm/attnlens-' + level + '.mjs')).default(), level), 2: await load() };
const argmax = (row) => row.indexOf(Math.max(...row));
window.bench = {
  setup: () => ({ isolated: crossOriginIsolated, level, threads: [lenses[1].threads, lenses[2].threads],
    browser: navigator.userAgent.match(/Chrome\\/([\\d.]+)/)?.[1] ?? null }),
  ceiling: (budgetMs) => (relaxedSimdSupported() ? measureCeiling({ budgetMs, fma: true }) : measureCeiling({ budgetMs })).gflops,
  async generate(threads, timing, maxTokens) {
    const lens = lenses[threads];
    const config = await (await fetch('./data/config.json')).text();
    const ids = Int32Array.from(await (await fetch('./data/ids.json')).json());
    const model = await lens.loadModel({ config, weights: new Uint8Array(await (await fetch('./data/model.safetensors')).arrayBuffer()) });
    try {
      const vocab = model.info.vocabSize;
      // Greedy decoding without a cache: the whole prefix through run() for each token.
      const recompute = () => {
        const targetIds = [model.info.decoderStartId];
        for (let t = 0; t < maxTokens; ++t) {
          const n = targetIds.length;
          const { logits } = model.run({ ids, targetIds });
          targetIds.push(argmax(logits.subarray((n - 1) * vocab, n * vocab)));
        }
        return targetIds.slice(1);
      };
      const generated = Array.from(model.generate({ ids, maxTokens }).ids);
      const recomputed = recompute();
      const same = generated.length === maxTokens && generated.every((id, t) => id === recomputed[t]);
      if (!same) return { problem: 'generate chose ' + generated.join(' ') + ', recompute ' + recomputed.join(' ') };
      const times = await timeInterleaved([
        { name: 'generate', run: () => model.generate({ ids, maxTokens }) },
        { name: 'recompute', run: recompute },
      ], timing);
      return { generate: times.generate, recompute: times.recompute, heapBytes: lens.heapBytesInUse() };
    } finally {
      model.dispose();
    }
  },
};
window.ready = true;
</script>`;

// -> { setup, ceiling, rows, flops, problems }
export async function benchTranslation({ quick = false, log = console.log } = {}) {
  const { benchLinks, openBenchPage, waitForResult } = await import('../support/bench-page.mjs');
  const n = quick ? 5 : SOURCE_TOKENS, k = quick ? 4 : GENERATED_TOKENS;
  const problems = [];
  let bench = null;
  try {
    const checkpoint = t5Checkpoint({ version: '1.0', seed: 5, ...(quick ? { eos_token_id: null } : T5_SMALL) });
    const { config } = checkpoint;
    const files = {
      'index.html': pageSource,
      'data/config.json': checkpoint.files['config.json'],
      'data/model.safetensors': checkpoint.files['model.safetensors'],
      'data/ids.json': JSON.stringify(Array.from(tokenIds(n, config.vocab_size))),
    };
    const flops = t5GenerateFlops(config, n, k);
    log(`\nT t5-small-sized translation (issue 23): ${config.num_layers} + ${config.num_decoder_layers} layers, ${config.num_heads} heads, ` +
      `d_model ${config.d_model}, vocab ${config.vocab_size}; ${n} source tokens, ${k} generated greedily; ` +
      `${(flops / 1e9).toFixed(2)} GFLOP per generate${quick ? ' (--quick: tiny model; numbers mean nothing)' : ''}; load average ${loadAverage()}`);
    bench = await openBenchPage({ files, links: benchLinks });
    const { page } = bench;
    await waitForResult(page, 60_000, { name: 'ready', errors: bench.errors }).catch((error) => {
      throw new Error(`the translation benchmark page did not start: ${error.message}`);
    });
    const setup = await page.evaluate(() => window.bench.setup());
    if (!setup.isolated || setup.threads[1] !== 2) problems.push(`the two-thread lens runs ${setup.threads[1]} thread(s) (isolated: ${setup.isolated})`);
    const budget = quick ? 20 : 1200;
    const before = await page.evaluate((ms) => window.bench.ceiling(ms), budget);
    const rows = [];
    for (const threads of [1, 2]) {
      const result = await page.evaluate(([t, timing, maxTokens]) => window.bench.generate(t, timing, maxTokens),
        [threads, quick ? QUICK_TIMING : TIMING, k]);
      if (result.problem) {
        problems.push(`T ${threads} thread(s): ${result.problem}`);
        continue;
      }
      rows.push({ threads, ...result, gflops: flops / (result.generate.medianMs * 1e6) });
    }
    const after = await page.evaluate((ms) => window.bench.ceiling(ms), budget);
    const ceiling = Math.max(before, after);
    problems.push(...bench.errors);
    log(`  Chromium ${setup.browser}, module ${setup.level}; ceiling (register-only ${setup.level === 'relaxed' ? 'relaxed_madd' : 'mul + add'} loop, ` +
      `1 core): ${fixed(ceiling, 1)} GFLOP/s (before ${fixed(before, 1)}, after ${fixed(after, 1)})`);
    log('  threads  generate ms  GFLOP/s  % ceiling  recompute ms  generate over recompute');
    for (const row of rows) {
      row.ceilingPercent = (100 * row.gflops) / (ceiling * row.threads);
      row.speedup = row.recompute.medianMs / row.generate.medianMs;
      log(`  ${String(row.threads).padStart(7)}  ${fixed(row.generate.medianMs, 1).padStart(11)}  ${fixed(row.gflops, 1).padStart(7)}` +
        `  ${fixed(row.ceilingPercent, 0).padStart(8)}%  ${fixed(row.recompute.medianMs, 1).padStart(12)}  ${fixed(row.speedup, 2).padStart(10)}x` +
        `  (${row.generate.samples} / ${row.recompute.samples} samples)`);
    }
    const one = rows.find((row) => row.threads === 1), two = rows.find((row) => row.threads === 2);
    if (one && two) log(`  generate, 2 threads over 1: ${fixed(one.generate.medianMs / two.generate.medianMs, 2)}x; load average ${loadAverage()}`);
    return { n, k, flops, setup, ceiling: { best: ceiling, before, after }, rows, problems };
  } finally {
    await bench?.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick');
  benchTranslation({ quick }).then(({ problems }) => {
    for (const problem of problems) console.log(`  PROBLEM: ${problem}`);
    if (problems.length) process.exitCode = 1;
  }, (error) => {
    console.error(error.stack ?? error.message);
    process.exitCode = 1;
  });
}
