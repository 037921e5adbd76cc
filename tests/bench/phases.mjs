// node tests/bench/phases.mjs [--only S2,S3] [--calls 40] [--quick]
//
// Where the time of one `lens.attention` call goes (S1-S3, SIMD module):
// the Embind calls are wrapped with timers, so a call splits into
//   wasm attention   attentionHeads: packing, Q K^T, softmax, weights x V
//   input scans      maxMagnitude over q, k, v and the output
//   copies and JS    the rest: copying the inputs in, the results out, checks
// Then the copy-out alone, two ways, to separate copying from page faults:
// HEAPF32.slice into a fresh array (what the API must do: the contract
// returns new arrays) against .set into an array that is reused, whose pages
// are already mapped. It also reports whether the WebAssembly memory grew
// during the timed calls (it should not: freed blocks are reused).
// Times are medians per call; min is shown too, because this machine's
// speed wanders by up to 1.5x between moments.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createLens } from '../../web/lib/api.js';
import { SHAPES, QUICK_SHAPES, makeInputs } from './workloads.mjs';
import { timeEmbindCalls } from './embind-timers.mjs';
import { median } from './timing.mjs';

const { values: args } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, only: { type: 'string', default: 'S2,S3' },
    calls: { type: 'string', default: '40' } },
});
const quick = args.quick;
const only = args.only.split(',');
const calls = quick ? 2 : Number(args.calls);

const wasmDir = new URL('../../web/lib/wasm/', import.meta.url);
const { default: createModule } = await import(new URL('attnlens-simd.mjs', wasmDir).href);
const module = await createModule({ wasmBinary: readFileSync(new URL('attnlens-simd.wasm', wasmDir)) });

// Per-call totals of the wrapped Embind functions.
const timers = timeEmbindCalls(module, { attentionHeads: 'attention', maxMagnitude: 'scans' });
const { spent } = timers;
const lens = createLens(module, true);

const format = (values) => `${median(values).toFixed(3)} (min ${Math.min(...values).toFixed(3)})`;

console.log(`phases of lens.attention, ms per call, median (min); loadavg ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
for (const name of only) {
  const shape = (quick ? QUICK_SHAPES : SHAPES)[name];
  if (shape?.kind !== 'attention') throw new Error(`phases: ${name} is not an attention workload (S1, S2, S3)`);
  const { heads, m, n, d } = shape;
  const inputs = makeInputs(shape);
  const call = () => lens.attention({ ...inputs, heads, m, n, dk: d, dv: d });
  for (let i = 0; i < Math.min(3, calls); ++i) call();  // warm up (and grow the memory once)

  const phases = { total: [], attention: [], scans: [], rest: [] };
  const memoryBefore = module.HEAPU8.buffer.byteLength;
  for (let i = 0; i < calls; ++i) {
    timers.reset();
    const start = performance.now();
    call();
    const total = performance.now() - start;
    phases.total.push(total);
    phases.attention.push(spent.attention);
    phases.scans.push(spent.scans);
    phases.rest.push(total - spent.attention - spent.scans);
  }
  const memoryAfter = module.HEAPU8.buffer.byteLength;

  // The copy-out alone, on a block of the weights' size inside the heap.
  const count = heads * m * n;
  const pointer = module._malloc(count * 4);
  const reused = new Float32Array(count);
  const copy = { fresh: [], reused: [] };
  try {
    for (let i = 0; i < calls; ++i) {
      const start = pointer >>> 2;
      let began = performance.now();
      module.HEAPF32.slice(start, start + count);
      copy.fresh.push(performance.now() - began);
      began = performance.now();
      reused.set(module.HEAPF32.subarray(start, start + count));
      copy.reused.push(performance.now() - began);
    }
  } finally {
    module._free(pointer);
  }

  const megabytes = (count * 4 / 2 ** 20).toFixed(1);
  console.log(`${name} (${heads} heads, m = n = ${m}, d = ${d}): total ${format(phases.total)}`);
  console.log(`  wasm attention ${format(phases.attention)}, input/output scans ${format(phases.scans)}, ` +
    `copies and JS ${format(phases.rest)}`);
  console.log(`  weights copy-out (${megabytes} MB): slice into a fresh array ${format(copy.fresh)}, ` +
    `set into a reused array ${format(copy.reused)}`);
  console.log(`  WebAssembly memory ${memoryBefore} -> ${memoryAfter} bytes during the timed calls`);
}
