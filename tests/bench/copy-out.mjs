// node tests/bench/copy-out.mjs [--only S3] [--rounds 15] [--simd best,simd] [--no-browser | --browser-only]
//                               [--model-tokens 32,128] [--quick]
//
// Issue 12: what getting the attention weights out of WebAssembly costs, in
// Node and in headless Chromium, with the same measurement
// (copy-out-measure.mjs): a whole lens.attention call with fresh result
// arrays, the same call filling preallocated ones (`into`), the call without
// weights, and four ways to copy a weights-sized block out of the heap (a
// fresh slice, new + set, the constructor's copy, set into a reused array).
// Benchmarks, not tests: medians (and mins) of interleaved rounds, then the
// ratios that matter (Chromium over Node; fresh over reused).
//   --only       attention workloads of workloads.mjs (S1, S2, S3; default S3)
//   --simd       modules to measure, comma separated: best (what load() picks:
//                relaxed in Chromium, simd in Node 20), relaxed, simd, scalar,
//                threads, relaxed-threads (Chromium only: the page is cross-origin isolated)
//   --model-tokens  also model.run on the GPT-2-small-shaped checkpoint of
//                model-forward.mjs (seeded weights) with this many tokens:
//                logits 'all' / 'last' / 'none', and 'last' into reused arrays
//                (module: best; empty: skip)
//   --quick      tiny shapes, two rounds, the tiny model: proves the script runs
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { bestSimdLevel, createLens } from '../../web/lib/api.js';
import { benchLinks, openBenchPage, waitForResult } from '../support/bench-page.mjs';
import { measureCopyOut, measureModelOutputs } from './copy-out-measure.mjs';
import { GPT2_SMALL, GPT2_TINY, gpt2Config, tokenIds, writeGpt2Checkpoint } from './gpt2-checkpoint.mjs';
import { QUICK_SHAPES, SHAPES, makeInputs } from './workloads.mjs';

const { values: args } = parseArgs({
  options: {
    only: { type: 'string', default: 'S3' }, rounds: { type: 'string', default: '15' },
    simd: { type: 'string', default: 'best,simd' }, quick: { type: 'boolean', default: false },
    'model-tokens': { type: 'string', default: '32,128' },
    'no-browser': { type: 'boolean', default: false }, 'browser-only': { type: 'boolean', default: false },
  },
});
const shapes = args.only.split(',').map((id) => {
  const shape = (args.quick ? QUICK_SHAPES : SHAPES)[id];
  if (shape?.kind !== 'attention') throw new Error(`copy-out: ${id} is not an attention workload (S1, S2, S3)`);
  return { id, ...shape };
});
const rounds = args.quick ? 2 : Number(args.rounds);
const levels = args.simd.split(',');
const modelTokens = [...new Set(args['model-tokens'].split(',').filter(Boolean).map(Number)
  .map((n) => (args.quick ? Math.min(n, 8) : n)))];
const modelDims = args.quick ? GPT2_TINY : GPT2_SMALL;
const modelRounds = args.quick ? 2 : Math.max(5, Math.round(rounds / 2));

// ---- Node ------------------------------------------------------------------------

// Node's results by shape and module: 'best' is usually 'simd' again.
const nodeRuns = new Map();
async function measureNode(level, shape) {
  const variant = level === 'best' ? bestSimdLevel() : level;
  if (variant.endsWith('threads')) return null; // the Node entry has no threads modules
  const key = `${shape.id} ${variant}`;
  if (!nodeRuns.has(key)) nodeRuns.set(key, await measureNodeModule(variant, shape));
  return nodeRuns.get(key);
}

async function instantiateNode(variant) {
  const wasmDir = new URL('../../web/lib/wasm/', import.meta.url);
  const { default: createModule } = await import(new URL(`attnlens-${variant}.mjs`, wasmDir).href);
  return createModule({ wasmBinary: readFileSync(new URL(`attnlens-${variant}.wasm`, wasmDir)) });
}

async function measureNodeModule(variant, shape) {
  const module = await instantiateNode(variant);
  const lens = createLens(module, variant);
  const pageFaults = () => process.resourceUsage().minorPageFault;
  return { variant, ...(await measureCopyOut({ module, lens, shape, inputs: makeInputs(shape), rounds, pageFaults })) };
}

async function measureNodeModel() {
  const lens = createLens(await instantiateNode(bestSimdLevel()), bestSimdLevel());
  const model = await lens.loadModel({ config: gpt2Config(modelDims), weights: writeGpt2Checkpoint(modelDims).bytes });
  try {
    return modelTokens.map((n) => ({ n, summary: measureModelOutputs({ model, ids: tokenIds(n, modelDims.vocab), rounds: modelRounds }) }));
  } finally {
    model.dispose();
  }
}

// ---- Chromium ----------------------------------------------------------------------

// The page builds its own module (as load() would, but keeping the module at
// hand for the raw copies) and waits for the script to call it.
const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module">
import { bestSimdLevel, createLens } from './lib/api.js';
import { measureCopyOut, measureModelOutputs } from './bench/copy-out-measure.mjs';
import { gpt2Config, tokenIds, writeGpt2Checkpoint } from './bench/gpt2-checkpoint.mjs';
import { makeInputs } from './bench/workloads.mjs';
window.measure = async (level, shape, rounds) => {
  const variant = level === 'best' ? bestSimdLevel() : level;
  const module = await (await import('./lib/wasm/attnlens-' + variant + '.mjs')).default();
  const lens = createLens(module, variant === 'threads' ? 'simd' : variant.replace(/-threads$/, ''));
  return { variant, threads: lens.threads, ...(await measureCopyOut({ module, lens, shape, inputs: makeInputs(shape), rounds })) };
};
window.measureModel = async (dims, tokens, rounds) => {
  const module = await (await import('./lib/wasm/attnlens-' + bestSimdLevel() + '.mjs')).default();
  const lens = createLens(module, bestSimdLevel());
  const model = await lens.loadModel({ config: gpt2Config(dims), weights: writeGpt2Checkpoint(dims).bytes });
  try {
    return tokens.map((n) => ({ n, summary: measureModelOutputs({ model, ids: tokenIds(n, dims.vocab), rounds }) }));
  } finally {
    model.dispose();
  }
};
window.ready = true;
</script>`;

// jobs: [{ level, shape }] for measureCopyOut, or [{ model: true }] for measureModelOutputs.
async function measureChromium(jobs) {
  const results = [];
  // A fresh page per job: each module starts with its own heap and no garbage from the last.
  for (const { level, shape } of jobs) {
    const bench = await openBenchPage({ files: { 'index.html': pageSource }, links: benchLinks });
    try {
      await waitForResult(bench.page, 30_000, { name: 'ready' });
      results.push(level === 'model'
        ? await bench.page.evaluate(([d, t, r]) => window.measureModel(d, t, r), [modelDims, modelTokens, modelRounds])
        : await bench.page.evaluate(([l, s, r]) => window.measure(l, s, r), [level, shape, rounds]));
      if (bench.errors.length) throw new Error(`copy-out: errors in the page: ${bench.errors.join('; ')}`);
    } finally {
      await bench.close();
    }
  }
  return results;
}

// ---- Report ------------------------------------------------------------------------

const LABELS = {
  api: 'attention, weights in fresh arrays',
  apiInto: 'attention, weights into reused arrays',
  apiNoWeights: 'attention, weights: false',
  slice: 'copy: HEAPF32.slice (fresh)',
  newSet: 'copy: new Float32Array + set',
  construct: 'copy: new Float32Array(view)',
  reusedSet: 'copy: set into a reused array',
};
const MODEL_LABELS = {
  logitsAll: "logits: 'all' (fresh arrays)",
  logitsLast: "logits: 'last' (fresh arrays)",
  logitsNone: "logits: 'none' (fresh arrays)",
  logitsLastInto: "logits: 'last', into reused arrays",
};
const ms = (part) => (part ? `${part.median.toFixed(2).padStart(8)} (${part.min.toFixed(2)})` : '-');

function printRun(where, run) {
  console.log(`\n  ${where}, module ${run.variant}${run.threads ? `, ${run.threads} thread(s)` : ''}: ` +
    `${run.megabytes.toFixed(1)} MiB of weights, ${run.rounds} rounds, WebAssembly memory ` +
    `${(run.memoryBefore / 2 ** 20).toFixed(0)} -> ${(run.memoryAfter / 2 ** 20).toFixed(0)} MiB during them`);
  const faults = Boolean(Object.values(run.summary)[0].faults);
  console.log(`  ${''.padEnd(40)}  total ms median (min)  wasm core            scans              rest (copies, JS)` +
    (faults ? '  page faults' : ''));
  const cell = (part) => (part ? ms(part) : '').padEnd(19);
  for (const [name, parts] of Object.entries(run.summary)) {
    console.log(`  ${LABELS[name].padEnd(40)}  ${cell(parts.total)}  ${cell(parts.wasm)}  ${cell(parts.scans)}  ${cell(parts.rest)}` +
      (faults ? `  ${parts.faults.median.toFixed(0).padStart(8)}` : ''));
  }
  // The rest (everything but the wasm core and the scans) does not move with
  // the core's speed, which wanders on a busy machine: compare that.
  const rest = (name) => run.summary[name]?.rest?.median;
  const total = (name) => run.summary[name].total.median;
  console.log(`  weights out of the heap (rest minus rest without weights): ${(rest('api') - rest('apiNoWeights')).toFixed(1)} ms ` +
    'into fresh arrays' + (rest('apiInto') === undefined ? '' : `, ${(rest('apiInto') - rest('apiNoWeights')).toFixed(1)} ms into reused ones`) +
    `; a fresh slice takes ${(total('slice') / total('reusedSet')).toFixed(1)}x a set into a reused array`);
}

const node = !args['browser-only'], chromium = !args['no-browser'];
console.log(`copy-out of the attention weights; loadavg ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
const runs = [];
for (const shape of shapes) {
  for (const level of levels) {
    const pair = { shape, level, node: null, chromium: null };
    if (node) pair.node = await measureNode(level, shape);
    if (chromium) [pair.chromium] = await measureChromium([{ level, shape }]);
    runs.push(pair);
  }
}
for (const { shape, level, node: inNode, chromium: inChromium } of runs) {
  console.log(`\n${shape.label}, module ${level}`);
  if (inNode) printRun('Node', inNode);
  if (inChromium) printRun('Chromium', inChromium);
  if (inNode && inChromium) {
    const ratios = Object.keys(inChromium.summary).filter((name) => inNode.summary[name])
      .map((name) => `${name} ${(inChromium.summary[name].total.median / inNode.summary[name].total.median).toFixed(2)}x`);
    console.log(`  Chromium / Node (medians): ${ratios.join(', ')}`);
  }
}
function printModel(where, runs) {
  for (const { n, summary } of runs) {
    console.log(`\n  ${where}, model.run of the ${args.quick ? 'tiny' : 'GPT-2-small-shaped'} model, ${n} tokens ` +
      `(${modelRounds} rounds), ms median (min)`);
    console.log(`  ${''.padEnd(40)}  total                forward in wasm      outside (copies out, JS)`);
    for (const [name, parts] of Object.entries(summary)) {
      console.log(`  ${MODEL_LABELS[name].padEnd(40)}  ${ms(parts.total).padEnd(19)}  ${ms(parts.wasm).padEnd(19)}  ` +
        `${ms(parts.outside)}`);
    }
    const median = (name, part) => summary[name][part].median;
    console.log(`  'last' over 'all': ${(median('logitsAll', 'total') / median('logitsLast', 'total')).toFixed(2)}x ` +
      `(medians), ${(summary.logitsAll.total.min / summary.logitsLast.total.min).toFixed(2)}x (mins); outside wasm, ` +
      `into takes ${median('logitsLastInto', 'outside').toFixed(1)} ms against ${median('logitsLast', 'outside').toFixed(1)} ms`);
  }
}

if (modelTokens.length) {
  console.log('\nmodel.run outputs (module: the best each runtime validates)');
  if (node) printModel('Node', await measureNodeModel());
  if (chromium) printModel('Chromium', (await measureChromium([{ level: 'model' }]))[0]);
}
console.log(`\nloadavg at the end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
