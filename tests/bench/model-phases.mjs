// node tests/bench/model-phases.mjs [--quick] [--budget SECONDS per contestant, default 2]
//
// Where the time of the model forward (model-forward.mjs, workload M) goes,
// phase by phase, for attnlens and onnxruntime-web alike, through the public
// API only (src/ has no timers, and the benchmark must not need a special
// build). Each phase is the difference between two GPT-2-small-shaped
// checkpoints that differ only in that phase (d_model 768, 12 heads,
// 128 tokens, every output returned, the engines interleaved call by call):
//   one layer       2 layers - 1 layer                  (vocab 256)
//   MLP             1 layer - 1 layer with n_inner = 16   (vocab 256); with
//                   its GELU (model-profile.mjs splits attnlens' GELU out)
//   attention block one layer - MLP: ln_1, c_attn, the heads, c_proj
//   attention core  the 12 heads alone: lens.attention (causal, weights
//                   returned) vs the same graph in onnxruntime-web
//   LM head         1 layer with vocab 50257 - 1 layer with vocab 256: the
//                   128 x 768 x 50257 product and copying its 25.7 MB out
// attnlens also reports how much of each call is its WebAssembly forward
// (model.run's elapsedMs); the rest is copies out and JavaScript.
// A difference of medians carries both medians' noise: read the phases as
// shares, and the full forward's own medians in model-forward.mjs.
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLens } from '../../web/lib/api.js';
import { GPT2_SMALL, GPT2_TINY, forwardFlops, gpt2Config, tokenIds, writeGpt2Checkpoint } from './gpt2-checkpoint.mjs';
import { SESSION_OPTIONS, configureOrt, runOrt } from './gpt2-engines.mjs';
import { OnnxGraph, gpt2Graph, MASK_VALUE } from './onnx-gpt2.mjs';
import { median, timeInterleaved } from './timing.mjs';

const { values: args } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, budget: { type: 'string', default: '2' } },
});
const quick = args.quick;
const base = quick ? { ...GPT2_TINY, vocab: 50 } : { ...GPT2_SMALL, vocab: 256 };
const fullVocab = quick ? GPT2_TINY.vocab : GPT2_SMALL.vocab;
const n = quick ? 16 : 128;
const timing = quick
  ? { warmupMs: 0, budgetMs: 0, minSamples: 1, sliceMs: 0 }
  // Slices of 100 ms: the attention core (a few ms) runs many calls per turn,
  // the forwards (0.1-1 s) one.
  : { warmupMs: 300, budgetMs: 1000 * Number(args.budget), minSamples: 9, sliceMs: 100 };

const VARIANTS = {
  oneLayer: { ...base, layers: 1 },
  twoLayers: { ...base, layers: 2 },
  noMlp: { ...base, layers: 1, mlp: 16 },
  fullHead: { ...base, layers: 1, vocab: fullVocab },
};

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const wasmDir = join(repoRoot, 'web', 'lib', 'wasm');
const { default: createModule } = await import(join(wasmDir, 'attnlens-simd.mjs'));
const lens = createLens(await createModule({ wasmBinary: readFileSync(join(wasmDir, 'attnlens-simd.wasm')) }), true);
const ort = await import('onnxruntime-web');
configureOrt(ort, `${join(repoRoot, 'node_modules', 'onnxruntime-web', 'dist')}/`);

// Both engines of one checkpoint: { attnlens, onnx } contestants for
// timeInterleaved, attnlens also recording its WebAssembly time.
async function prepareVariant(name, dims) {
  const { bytes, tensors } = writeGpt2Checkpoint(dims, { seed: 1 });
  const ids = tokenIds(n, dims.vocab);
  const model = await lens.loadModel({ config: gpt2Config(dims), weights: bytes });
  const session = await ort.InferenceSession.create(gpt2Graph(dims, tensors, n), SESSION_OPTIONS);
  const wasmMs = [];
  return {
    name,
    contestants: [
      { name: `${name}/attnlens`, run: () => wasmMs.push((model.dropCache(), model.run({ ids })).elapsedMs) },
      { name: `${name}/onnx`, run: () => runOrt(ort, session, ids, dims.layers) },
    ],
    wasmMs,
    async release() {
      model.dispose();
      await session.release();
    },
  };
}

// The heads of one layer alone: 12 heads of n x 64, causal, weights
// returned; lens.attention's copies (0.8 MB) are counted in its time, and it
// has no separate WebAssembly time.
async function prepareAttentionCore(name, { heads, dModel }) {
  const d = dModel / heads;
  const wave = (length, phase) => Float32Array.from({ length }, (_, i) => Math.sin(i * 0.37 + phase) * 0.5);
  const q = wave(heads * n * d, 0), k = wave(heads * n * d, 1), v = wave(heads * n * d, 2);
  const g = new OnnxGraph('attention');
  for (const input of ['q', 'k', 'v']) g.input(input, 1, [heads, n, d]);
  const mask = new Float32Array(n * n);
  for (let i = 0; i < n; ++i) mask.fill(MASK_VALUE, i * n + i + 1, (i + 1) * n);
  g.floats('scale', [], [1 / Math.sqrt(d)]);
  g.floats('mask', [n, n], mask);
  const scores = g.node('MatMul', ['q', g.node('Transpose', ['k'], ['k_t'], { perm: [0, 2, 1] })], ['scores']);
  const masked = g.node('Add', [g.node('Mul', [scores, 'scale'], ['scaled']), 'mask'], ['masked']);
  g.node('MatMul', [g.node('Softmax', [masked], ['weights'], { axis: -1 }), 'v'], ['output']);
  g.output('output', 1, [heads, n, d]);
  g.output('weights', 1, [heads, n, n]);
  const session = await ort.InferenceSession.create(g.model(), SESSION_OPTIONS);
  const tensor = (data) => new ort.Tensor('float32', data, [heads, n, d]);
  return {
    name,
    contestants: [
      { name: `${name}/attnlens`, run: () => lens.attention({ q, k, v, m: n, n, dk: d, dv: d, heads, causal: true }) },
      { name: `${name}/onnx`, run: () => session.run({ q: tensor(q), k: tensor(k), v: tensor(v) }) },
    ],
    wasmMs: null,
    release: () => session.release(),
  };
}

const fixed = (value, digits) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const minus = (a, b) => ({ call: a.call - b.call, wasm: a.wasm - b.wasm, onnx: a.onnx - b.onnx });

console.log(`model forward phases, d_model ${base.dModel}, ${base.heads} heads, ${n} tokens; node ${process.version}, ` +
  `${os.cpus()[0]?.model ?? ''}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}` +
  `${quick ? ' (--quick: tiny model, one call each; numbers mean nothing)' : ''}`);
// Every variant's engines take turns in one interleaved run, so a busy
// moment of the machine hits all of them rather than the phase it would
// otherwise fall into (a difference of two medians taken minutes apart can
// even come out negative on a shared machine).
const prepared = [];
for (const [name, dims] of Object.entries(VARIANTS)) prepared.push(await prepareVariant(name, dims));
prepared.push(await prepareAttentionCore('core', base));
const times = await timeInterleaved(prepared.flatMap((p) => p.contestants), timing);
const measured = {};
for (const p of prepared) {
  const call = times[`${p.name}/attnlens`].medianMs;
  measured[p.name] = { call, wasm: p.wasmMs ? median(p.wasmMs) : call, onnx: times[`${p.name}/onnx`].medianMs };
  await p.release();
}

const layer = minus(measured.twoLayers, measured.oneLayer);
const mlp = minus(measured.oneLayer, measured.noMlp);
const block = minus(layer, mlp);
const projections = minus(block, measured.core);
const head = minus(measured.fullHead, measured.oneLayer);
const rest = minus(measured.oneLayer, layer);
const flopsOf = (dims) => forwardFlops(dims, n);
const oneLayerFlops = flopsOf(VARIANTS.oneLayer);
const headFlops = flopsOf(VARIANTS.fullHead).lmHead - oneLayerFlops.lmHead;

const rows = [
  ['one layer (2 layers - 1)', layer, oneLayerFlops.total - oneLayerFlops.lmHead],
  ['  MLP (c_fc, gelu, c_proj)', mlp, oneLayerFlops.mlp],
  ['  attention block (ln_1 ... c_proj)', block, oneLayerFlops.projections + oneLayerFlops.attention],
  [`    attention core (${base.heads} heads)`, measured.core, oneLayerFlops.attention],
  ['    projections + ln_1 (block - core)', projections, oneLayerFlops.projections],
  [`LM head, vocab ${fullVocab} (+ logits copy)`, head, headFlops],
  [`embeddings, ln_f, vocab-${base.vocab} head`, rest, oneLayerFlops.lmHead],
];
console.log('\nphase                                    attnlens ms (wasm)   onnxruntime-web ms   ORT / attnlens   ' +
  'GFLOP/s attnlens / ORT');
for (const [label, t, flops] of rows) {
  console.log(`${label.padEnd(40)} ${fixed(t.call, 2).padStart(8)} (${fixed(t.wasm, 2).padStart(7)})  ` +
    `${fixed(t.onnx, 2).padStart(12)}  ${fixed(t.onnx / t.call, 2).padStart(14)}x   ` +
    `${fixed(flops / t.call / 1e6, 1).padStart(6)} / ${fixed(flops / t.onnx / 1e6, 1)}`);
}
const layers = GPT2_SMALL.layers;
const predicted = (key) => layers * layer[key] + head[key] + rest[key];
console.log(`\nGPT-2 small predicted from the phases (${layers} x layer + LM head + rest): attnlens ${fixed(predicted('call'), 0)} ms ` +
  `(${fixed(predicted('wasm'), 0)} in wasm), onnxruntime-web ${fixed(predicted('onnx'), 0)} ms`);
console.log('\nraw medians (ms): ' + Object.entries(measured).map(([name, t]) =>
  `${name} ${fixed(t.call, 2)} / ${fixed(t.wasm, 2)} / ${fixed(t.onnx, 2)}`).join('; '));
