// node tests/bench/idle-node.mjs [--counts 32,1024] [--rounds 7] [--pause 800]
//
// Issue 24: why a forward after a pause is slower (forward-where.mjs saw it
// in Chromium's worker: 2-3x at 1024 tokens). The same one-position forward
// of a GPT-2-small-shaped model (gpt2-checkpoint.mjs) in Node, one thread,
// after the run of the first n - 1 ids and then, taking turns:
//   at once   no pause;
//   sleep     a pause of --pause ms, the thread idle (setTimeout);
//   spin      a pause of --pause ms, the thread busy in a loop that touches
//             no memory: if this is slow too, the CPU's idle states are not
//             the cause, the memory's time untouched is;
//   touch     a sleep, then one read per 4 KiB page of the whole
//             WebAssembly heap before the forward: the forward's time and the
//             touch's are printed apart, so a cost that moves from one to the
//             other is a cost per page, not per cache line.
// Prints medians and minima of elapsedMs (the core's time).
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createLens } from '../../web/lib/api.js';
import { GPT2_SMALL, gpt2Config, tokenIds, writeGpt2Checkpoint } from './gpt2-checkpoint.mjs';

const { values: args } = parseArgs({
  options: { counts: { type: 'string', default: '32,1024' }, rounds: { type: 'string', default: '7' },
    pause: { type: 'string', default: '800' } },
});
const counts = args.counts.split(',').map(Number), rounds = Number(args.rounds), pauseMs = Number(args.pause);
const PAGE_BYTES = 4096;

// The SIMD module instantiated here (not through load()), so that its heap is at hand for the touch.
const { default: createModule } = await import('../../web/lib/wasm/attnlens-simd.mjs');
const module = await createModule({ wasmBinary: readFileSync(new URL('../../web/lib/wasm/attnlens-simd.wasm', import.meta.url)) });
const lens = createLens(module, 'simd');
const model = await lens.loadModel({ config: gpt2Config(GPT2_SMALL), weights: writeGpt2Checkpoint(GPT2_SMALL, { seed: 1 }).bytes });

const sleep = (ms) => new Promise((done) => { setTimeout(done, ms); });
function spin(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* the CPU busy, no memory touched */ }
}
// One read per page of the heap; returns its ms.
function touchPages(bytes) {
  const started = performance.now();
  let sum = 0;
  for (let i = 0; i < bytes.length; i += PAGE_BYTES) sum += bytes[i];
  globalThis.attnlensTouchSink = sum;
  return performance.now() - started;
}

const conditions = {
  'at once': async () => 0,
  sleep: () => sleep(pauseMs).then(() => 0),
  spin: async () => { spin(pauseMs); return 0; },
  // HEAPU8 is read at the call: memory growth replaces it.
  touch: async () => { await sleep(pauseMs); return touchPages(module.HEAPU8); },
};
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
const fixed = (ms) => ms.toFixed(1).padStart(7);

console.log(`one-position forward (elapsedMs), Node ${process.versions.node}, attnlens ${lens.simdLevel}, ${lens.threads} thread(s), ` +
  `${rounds} rounds, pause ${pauseMs} ms; load ${loadavg()[0].toFixed(2)}; heap ${(module.HEAPU8.length / 2 ** 20).toFixed(0)} MiB ` +
  `(${Math.round(module.HEAPU8.length / PAGE_BYTES)} pages of 4 KiB)`);
console.log(`      n  ${Object.keys(conditions).map((name) => `${name} (median min)`.padStart(22)).join('')}   touch itself`);
for (const n of counts) {
  const ids = tokenIds(n, GPT2_SMALL.vocab);
  const times = Object.fromEntries(Object.keys(conditions).map((name) => [name, []]));
  const touches = [];
  const names = Object.keys(conditions);
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length];
      model.run({ ids: ids.slice(0, n - 1), attention: 'none', logits: 'none' });
      const touchMs = await conditions[name]();
      const result = model.run({ ids, attention: { layers: [0], heads: [0] }, logits: 'none' });
      if (result.reusedPositions !== n - 1) throw new Error(`the run reused ${result.reusedPositions} positions, not ${n - 1}`);
      times[name].push(result.elapsedMs);
      if (name === 'touch') touches.push(touchMs);
    }
  }
  const cells = names.map((name) => `${fixed(median(times[name]))} ${fixed(Math.min(...times[name]))}`.padStart(22)).join('');
  console.log(`  ${String(n).padStart(5)}  ${cells}${touches.length ? fixed(median(touches)) : ''}`);
}
console.log(`load ${loadavg()[0].toFixed(2)} after`);
