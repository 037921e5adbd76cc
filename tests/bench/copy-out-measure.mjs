// The measurement behind copy-out.mjs, shared by Node and the Chromium page
// (so no node: imports here): where the time of one attention call with
// weights goes, and what each way of getting the weights out of the
// WebAssembly heap costs.
//
// One round runs every contestant once, in an order that rotates by round, so
// a slow moment of the machine (or a garbage collection left over from the
// one before) falls on all of them alike. Reported per contestant: median and
// min over the rounds, in ms.
//   api          lens.attention with weights (fresh result arrays), split into
//                wasm (attentionHeads), scans (maxMagnitude) and the rest
//   apiInto      the same call filling preallocated arrays (the `into` option)
//   apiNoWeights weights: false: the output only, no weights buffer at all
//   slice        HEAPF32.slice of a weights-sized block: a fresh array
//   newSet       new Float32Array(count), then set() from a heap view
//   construct    new Float32Array(heap view): the constructor's copy
//   reusedSet    set() into one array reused every round (pages mapped)
// `pageFaults` (Node: process.resourceUsage().minorPageFault) adds each
// contestant's minor page faults per call.
import { timeEmbindCalls } from './embind-timers.mjs';
import { median } from './timing.mjs';

export async function measureCopyOut({ module, lens, shape, inputs, rounds, pageFaults = null }) {
  const { heads, m, n, d } = shape;
  const timers = timeEmbindCalls(module, { attentionHeads: 'wasm', maxMagnitude: 'scans' });
  const { spent } = timers;
  const options = { q: inputs.q, k: inputs.k, v: inputs.v, heads, m, n, dk: d, dv: d };
  const count = heads * m * n;
  const into = { output: new Float32Array(heads * m * d), weights: new Float32Array(count) };
  let intoSupported = true;
  try {
    lens.attention({ ...options, into });
  } catch {
    intoSupported = false; // a library from before the option
  }
  const pointer = module._malloc(count * 4);
  if (!pointer) throw new Error('copy-out: no room in the heap for a weights-sized block');
  // The source block holds real values, as the weights block would.
  const { weights } = lens.attention(options); // may grow the memory: HEAPF32 read after it
  module.HEAPF32.set(weights, pointer >>> 2);
  const view = () => module.HEAPF32.subarray(pointer >>> 2, (pointer >>> 2) + count);
  const reused = new Float32Array(count);
  let sink = 0; // keeps results alive until the next line, so no call is optimized away

  const apiCall = (extra) => () => {
    timers.reset();
    const start = performance.now();
    const result = lens.attention({ ...options, ...extra });
    const total = performance.now() - start;
    sink += result.output[0];
    return { total, wasm: spent.wasm, scans: spent.scans, rest: total - spent.wasm - spent.scans };
  };
  const copyCall = (copy) => () => {
    const start = performance.now();
    const array = copy();
    const total = performance.now() - start;
    sink += array[count - 1];
    return { total };
  };
  const contestants = {
    api: apiCall({}),
    ...(intoSupported ? { apiInto: apiCall({ into }) } : {}),
    apiNoWeights: apiCall({ weights: false }),
    slice: copyCall(() => module.HEAPF32.slice(pointer >>> 2, (pointer >>> 2) + count)),
    newSet: copyCall(() => {
      const array = new Float32Array(count);
      array.set(view());
      return array;
    }),
    construct: copyCall(() => new Float32Array(view())),
    reusedSet: copyCall(() => {
      reused.set(view());
      return reused;
    }),
  };
  const names = Object.keys(contestants);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  const measure = (name) => {
    const faultsBefore = pageFaults?.();
    const sample = contestants[name]();
    if (pageFaults) sample.faults = pageFaults() - faultsBefore;
    return sample;
  };
  const memoryBefore = module.HEAPU8.buffer.byteLength;
  try {
    for (const name of names) contestants[name](); // warm-up
    for (let round = 0; round < rounds; ++round) {
      for (let i = 0; i < names.length; ++i) {
        const name = names[(i + round) % names.length];
        samples[name].push(measure(name));
      }
    }
  } finally {
    module._free(pointer);
    timers.restore();
  }
  const memoryAfter = module.HEAPU8.buffer.byteLength;
  const summary = {};
  for (const name of names) {
    summary[name] = {};
    for (const part of Object.keys(samples[name][0])) {
      const values = samples[name].map((sample) => sample[part]);
      summary[name][part] = { median: median(values), min: Math.min(...values) };
    }
  }
  return {
    megabytes: (count * 4) / 2 ** 20,
    rounds,
    intoSupported,
    memoryBefore,
    memoryAfter,
    summary,
    sink: Number.isFinite(sink),
  };
}

// model.run's outputs on a loaded model: the logits option ('all': n rows of
// the LM head, 'last': one row, 'none') and fresh arrays against `into`.
// Returns { [contestant]: { total, wasm, outside } } medians and mins, in ms
// (wasm: the forward inside the module, the run's elapsedMs; outside: the
// rest, mostly copying the results out).
export function measureModelOutputs({ model, ids, rounds }) {
  const n = ids.length;
  const { layers, heads, dModel, vocabSize } = model.info;
  const into = { attention: new Float32Array(layers * heads * n * n), hidden: new Float32Array(n * dModel),
    logits: new Float32Array(vocabSize) };
  const contestants = {
    logitsAll: () => (model.dropCache(), model.run({ ids })),
    logitsLast: () => (model.dropCache(), model.run({ ids, logits: 'last' })),
    logitsNone: () => (model.dropCache(), model.run({ ids, logits: 'none' })),
    logitsLastInto: () => (model.dropCache(), model.run({ ids, logits: 'last', into })),
  };
  const names = Object.keys(contestants);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (const name of names) contestants[name](); // warm-up
  for (let round = 0; round < rounds; ++round) {
    for (let i = 0; i < names.length; ++i) {
      const name = names[(i + round) % names.length];
      const start = performance.now();
      const { elapsedMs } = contestants[name]();
      const total = performance.now() - start;
      samples[name].push({ total, wasm: elapsedMs, outside: total - elapsedMs });
    }
  }
  const summary = {};
  for (const name of names) {
    summary[name] = {};
    for (const part of ['total', 'wasm', 'outside']) {
      const values = samples[name].map((sample) => sample[part]);
      summary[name][part] = { median: median(values), min: Math.min(...values) };
    }
  }
  return summary;
}
