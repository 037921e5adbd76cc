// node tests/bench/lens-phases.mjs [--layers 2] [--n 128] [--budget SECONDS per contestant, default 3] [--wasm simd] [--cpu]
//
// Where the logit lens's time goes, in Node (the SIMD module, one thread), on
// a GPT-2-small-wide random checkpoint (d_model 768, vocab 50257) cut to
// --layers layers so that each call stays short. Through the public API only:
//   forward     model.run({ ids, logits: 'none' })
//   LM head     model.run({ ids, logits: 'all' }) - forward: one 128 x 768 x 50257
//               product (plus copying its logits out), what one layer's lens
//               must at least cost
//   lens        analyze({ valueWeighted: false }) - analyze({ valueWeighted: false, logitLens: false }),
//               per layer: the lens's own cost, as a share of the LM head
//   last only   the same with logitLens: { positions: [n - 1] } (when the module has it)
// --cpu times each call by the process's CPU time (process.cpuUsage) rather
// than the clock: on a machine shared with other work (a load average above
// its cores) the clock counts the time other processes ran, the CPU time
// mostly not (one thread: the module runs on the main thread only).
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLens } from '../../web/lib/api.js';
import { GPT2_SMALL, gpt2Config, tokenIds, writeGpt2Checkpoint } from './gpt2-checkpoint.mjs';
import { timeInterleaved } from './timing.mjs';

const { values: args } = parseArgs({
  options: {
    layers: { type: 'string', default: '2' }, n: { type: 'string', default: '128' },
    budget: { type: 'string', default: '3' }, wasm: { type: 'string', default: 'simd' }, cpu: { type: 'boolean', default: false },
  },
});
const dims = { ...GPT2_SMALL, layers: Number(args.layers) };
const n = Number(args.n);
const wasmDir = join(fileURLToPath(new URL('../../', import.meta.url)), 'web', 'lib', 'wasm');
const { default: createModule } = await import(join(wasmDir, `attnlens-${args.wasm}.mjs`));
const lens = createLens(await createModule({ wasmBinary: readFileSync(join(wasmDir, `attnlens-${args.wasm}.wasm`)) }), args.wasm);
const model = await lens.loadModel({ config: JSON.stringify(gpt2Config(dims)), weights: writeGpt2Checkpoint(dims).bytes });
const ids = tokenIds(n, dims.vocab);

// The clock, or the CPU time: timeInterleaved reads performance.now().
let cpuMs = 0;
const timed = (call) => (args.cpu ? () => {
  const start = process.cpuUsage();
  call();
  const { user, system } = process.cpuUsage(start);
  cpuMs += (user + system) / 1000;
} : call);
if (args.cpu) performance.now = () => cpuMs;
const contestants = [
  { name: 'forward', run: timed(() => (model.dropCache(), model.run({ ids, logits: 'none' }))) },
  { name: 'lmHead', run: timed(() => (model.dropCache(), model.run({ ids, logits: 'all' }))) },
  { name: 'noLens', run: timed(() => model.analyze({ ids, valueWeighted: false, logitLens: false })) },
  { name: 'lens', run: timed(() => model.analyze({ ids, valueWeighted: false })) },
];
let hasPositions = true;
try {
  model.analyze({ ids, valueWeighted: false, logitLens: { positions: [n - 1] } });
  contestants.push({ name: 'last', run: timed(() => model.analyze({ ids, valueWeighted: false, logitLens: { positions: [n - 1] } })) });
} catch {
  hasPositions = false;
}
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
console.log(`${os.cpus()[0]?.model ?? 'unknown CPU'}; Node ${process.version}, attnlens ${args.wasm}, 1 thread, ${args.cpu ? 'CPU time' : 'clock'}; `
  + `${dims.layers} layers, d_model ${dims.dModel}, vocab ${dims.vocab}, ${n} tokens; load average ${load()}`);
const budgetMs = 1000 * Number(args.budget);
const t = await timeInterleaved(contestants, { warmupMs: 0, budgetMs, minSamples: 3, sliceMs: 0 });
const ms = (name) => t[name].medianMs;
const head = ms('lmHead') - ms('forward'), perLayer = (ms('lens') - ms('noLens')) / dims.layers;
const row = (label, value, share = '') => console.log(`| ${label} | ${value.toFixed(1)} | ${share} |`);
console.log('| what | median ms | note |\n|---|---:|---|');
for (const c of contestants) row(`${c.name} (call)`, ms(c.name), `${t[c.name].samples} samples`);
row('LM head, 128 rows (lmHead - forward)', head);
row('lens per layer (lens - noLens) / layers', perLayer, `${(perLayer / head).toFixed(2)} × the LM head`);
if (hasPositions) row('lens of the last position, per layer', (ms('last') - ms('noLens')) / dims.layers);
console.log(`load average at the end ${load()}`);
model.dispose();
