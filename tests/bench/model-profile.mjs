// node tests/bench/model-profile.mjs [--quick] [--runs 6] [--no-browser]
//
// Where attnlens' model forward (workload M: GPT-2 small, 128 tokens, every
// output returned) spends its time, inside the WebAssembly module: the SIMD
// module is built once more with function names kept (--profiling-funcs, in
// build/bench-profile; web/lib/wasm is untouched), the forward runs under
// V8's sampling profiler (node:inspector, started after a warm-up call), and
// each sample inside model.run is put in a phase by its call stack:
//   MLP products           project() under mlp_half: c_fc, mlp.c_proj
//   GELU                   the activation: tanhf / expm1f and mlp_half's own loop
//   attention projections  project() under attention_half: c_attn, attn.c_proj
//   attention heads        attention_strided: Q K^T, softmax, weights V
//   layer norms            layer_norm / normalize_rows
//   LM head                project() called by the forward itself: hidden wte^T
//   copy-out               model.run's JavaScript after the forward: the
//                          attention, hidden and logits copied into fresh arrays
//   other                  the rest of model.run (allocation, embeddings, ...)
// The names are the core's (src/model/layer.cpp, forward.cpp); a renamed
// function lands in "other" until the classifier below learns it.
// Then the same in headless Chromium (the page runs the profiling module; the
// profiler is driven over the DevTools protocol), unless --no-browser.
// The build differs from the shipped one only in its name section, so the
// code V8 compiles is the same. model-phases.mjs gives the same split from
// outside (and onnxruntime-web's side); this one needs no differences of
// medians, so it holds up on a busy machine.
import { existsSync, readFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { emscriptenEnv, repoRoot, run } from '../../web/scripts/toolchain.mjs';
import { GPT2_SMALL, GPT2_TINY, forwardFlops, gpt2Config, tokenIds, writeGpt2Checkpoint } from './gpt2-checkpoint.mjs';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false }, runs: { type: 'string', default: '6' },
    'no-browser': { type: 'boolean', default: false },
  },
});
const quick = args.quick;
const dims = quick ? GPT2_TINY : GPT2_SMALL;
const n = quick ? 16 : 128;
const runs = quick ? 1 : Number(args.runs);
const buildDir = join(repoRoot, 'build', 'bench-profile');
const moduleDir = join(buildDir, 'out');

// ---- the profiled forward ----------------------------------------------------------

// node:inspector's callback API as promises.
function post(session, method, params = {}) {
  return new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
}

// Loads the model into the profiling module, runs it once unprofiled, then
// `runs` times under the sampling profiler (every 250 us).
async function profileForward(dir) {
  const { createLens } = await import('../../web/lib/api.js');
  const { default: createModule } = await import(join(dir, 'attnlens-simd.mjs'));
  const lens = createLens(await createModule({ wasmBinary: readFileSync(join(dir, 'attnlens-simd.wasm')) }), true);
  const model = await lens.loadModel({ config: gpt2Config(dims), weights: writeGpt2Checkpoint(dims).bytes });
  const ids = tokenIds(n, dims.vocab);
  model.run({ ids }); // warm up: first touch of the output blocks, tier-up
  const session = new Session();
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.setSamplingInterval', { interval: 250 });
  await post(session, 'Profiler.start');
  const times = [];
  for (let i = 0; i < runs; ++i) {
    const start = performance.now();
    model.dropCache();
    const { elapsedMs } = model.run({ ids });
    times.push({ callMs: performance.now() - start, wasmMs: elapsedMs });
  }
  const { profile } = await post(session, 'Profiler.stop');
  session.disconnect();
  model.dispose();
  return { times, profile };
}

// The same in a Chromium page: the checkpoint is made in the page
// (gpt2-checkpoint.mjs is browser-safe) and the profiler driven over CDP.
async function profileChromium(dir) {
  const { benchLinks, openBenchPage, waitForResult } = await import('../support/bench-page.mjs');
  const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module">
import { createLens } from './lib/api.js';
import { gpt2Config, tokenIds, writeGpt2Checkpoint } from './bench/gpt2-checkpoint.mjs';
try {
  const dims = ${JSON.stringify(dims)}, n = ${n};
  const lens = createLens(await (await import('./module/attnlens-simd.mjs')).default(), true);
  const model = await lens.loadModel({ config: gpt2Config(dims), weights: writeGpt2Checkpoint(dims).bytes });
  const ids = tokenIds(n, dims.vocab);
  model.run({ ids });
  window.runs = (count) => Array.from({ length: count }, () => {
    const start = performance.now();
    model.dropCache();
    const { elapsedMs } = model.run({ ids });
    return { callMs: performance.now() - start, wasmMs: elapsedMs };
  });
  window.ready = true;
} catch (error) {
  window.ready = { error: 'the profiling page failed: ' + String(error && error.stack || error) };
}
</script>`;
  const bench = await openBenchPage({ files: { 'index.html': pageSource }, links: { ...benchLinks, module: dir }, isolated: false });
  try {
    await waitForResult(bench.page, 300_000, { name: 'ready' });
    const cdp = await bench.context.newCDPSession(bench.page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 250 });
    await cdp.send('Profiler.start');
    const times = await bench.page.evaluate((count) => window.runs(count), runs);
    const { profile } = await cdp.send('Profiler.stop');
    const version = (await bench.page.evaluate(() => navigator.userAgent)).match(/Chrome\/([\d.]+)/)?.[1] ?? '';
    return { times, profile, version };
  } finally {
    await bench.close();
  }
}

// ---- the classifier ---------------------------------------------------------------

const PHASES = ['MLP products', 'GELU', 'attention projections', 'attention heads', 'layer norms', 'LM head', 'copy-out', 'other'];

// A sample's stack, leaf first, as function names -> its phase (or null when
// it is not inside model.run).
function phaseOf(stack) {
  const has = (part) => stack.some((name) => name.includes(part));
  const leaf = stack[0];
  if (leaf.startsWith('tanhf') || leaf.startsWith('expm1f') || leaf.includes('activate') || leaf.includes('gelu') ||
    leaf.startsWith('attnlens::model::mlp_half')) return 'GELU';
  if (has('attention_strided')) return 'attention heads';
  if (has('layer_norm') || has('normalize_rows')) return 'layer norms';
  if (has('attnlens::model::project(') || has('matmul_packed')) {
    if (has('attnlens::model::mlp_half')) return 'MLP products';
    if (has('attnlens::model::attention_half')) return 'attention projections';
    return 'LM head';
  }
  if (has('ModelHandle::run')) return 'other';
  return 'copy-out'; // model.run's JavaScript outside the WebAssembly call
}

function analyze(profile) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map();
  for (const node of profile.nodes) for (const id of node.children ?? []) parentOf.set(id, node.id);
  const spent = new Map(); // node id -> microseconds of samples ending there
  profile.samples.forEach((id, i) => spent.set(id, (spent.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const phases = Object.fromEntries(PHASES.map((phase) => [phase, 0]));
  for (const [id, microseconds] of spent) {
    const stack = [];
    let insideRun = false;
    for (let at = id; at !== undefined; at = parentOf.get(at)) {
      const frame = nodes.get(at).callFrame;
      stack.push(frame.functionName);
      // lens.loadModel's models: model.run is the function `run` of web/lib/model/model.js.
      if (frame.functionName === 'run' && frame.url.endsWith('/model/model.js')) insideRun = true;
    }
    if (insideRun) phases[phaseOf(stack)] += microseconds / 1e3;
  }
  return phases;
}

// ---- the driver -------------------------------------------------------------------

function buildProfilingModule() {
  const env = emscriptenEnv();
  if (!existsSync(join(buildDir, 'build.ninja'))) {
    run('emcmake', ['cmake', '-S', '.', '-B', buildDir, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=Release',
      `-DATTNLENS_WASM_OUTPUT_DIR=${moduleDir}`, '-DCMAKE_EXE_LINKER_FLAGS=--profiling-funcs'], { env });
  }
  run('ninja', ['-C', buildDir, 'attnlens_simd'], { env });
}

async function main() {
  buildProfilingModule();
  console.log(`attnlens model forward profile: GPT-2 (${dims.layers} layers, d_model ${dims.dModel}, vocab ${dims.vocab}), ` +
    `${n} tokens, ${runs} profiled calls after one warm-up; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}` +
    `${quick ? ' (--quick: numbers mean nothing)' : ''}`);
  const inNode = await profileForward(moduleDir);
  report(`Node ${process.version}`, inNode.times, analyze(inNode.profile));
  if (args['no-browser']) return;
  const inChromium = await profileChromium(moduleDir);
  report(`Chromium ${inChromium.version}`, inChromium.times, analyze(inChromium.profile));
}

function report(where, times, phases) {
  const median = (values) => values.slice().sort((a, b) => a - b)[values.length >> 1];
  const flops = forwardFlops(dims, n);
  const flopsOf = {
    'MLP products': flops.mlp, 'attention projections': flops.projections, 'attention heads': flops.attention,
    'LM head': flops.lmHead,
  };
  const sampled = Object.values(phases).reduce((a, b) => a + b, 0);
  console.log(`\n${where}`);
  console.log(`  model.run median ${median(times.map((t) => t.callMs)).toFixed(1)} ms (WebAssembly forward ` +
    `${median(times.map((t) => t.wasmMs)).toFixed(1)} ms) under the profiler; sampled ${(sampled / times.length).toFixed(1)} ms per call`);
  console.log('  phase                    ms per call   share   GFLOP/s');
  for (const phase of PHASES) {
    const ms = phases[phase] / times.length;
    const rate = flopsOf[phase] && ms > 0 ? (flopsOf[phase] / ms / 1e6).toFixed(1) : '';
    console.log(`  ${phase.padEnd(23)}  ${ms.toFixed(1).padStart(11)}  ${(100 * phases[phase] / sampled).toFixed(1).padStart(5)}%  ${rate.padStart(8)}`);
  }
}

main().catch((error) => {
  console.error(error.stack ?? error.message);
  process.exitCode = 1;
});
