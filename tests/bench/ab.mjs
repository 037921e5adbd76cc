// node tests/bench/ab.mjs BASE_DIR [NEW_DIR] [--only S1,S4] [--rounds 15]
//
// A/B comparison of two builds of the SIMD module through the public API
// (createLens over each build's attnlens-simd.{mjs,wasm}); NEW_DIR defaults
// to web/lib/wasm. The two alternate call by call in one process, so a busy
// moment on this noisy machine slows both alike; prints each build's median
// ms per workload and the ratio base / new (> 1: new is faster). The order
// within a round alternates.
// For kernel tuning: copy web/lib/wasm to a directory, change, rebuild, run.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createLens } from '../../web/lib/api.js';
import { SHAPES, makeInputs } from './workloads.mjs';
import { median } from './timing.mjs';

const { values: args, positionals } = parseArgs({
  options: { only: { type: 'string', default: 'S1,S2,S3,S4' }, rounds: { type: 'string', default: '15' } },
  allowPositionals: true,
});
const only = args.only.split(',');
const rounds = Number(args.rounds);
const [baseDir, newDir = 'web/lib/wasm'] = positionals;
if (!baseDir) throw new Error('usage: node tests/bench/ab.mjs BASE_DIR [NEW_DIR] [--only S1,S4] [--rounds 15]');

async function lensFrom(dir) {
  const root = resolve(dir);
  const { default: createModule } = await import(pathToFileURL(`${root}/attnlens-simd.mjs`).href);
  return createLens(await createModule({ wasmBinary: readFileSync(`${root}/attnlens-simd.wasm`) }), true);
}

function call(lens, shape, inputs) {
  if (shape.kind === 'attention') {
    const { heads, m, n, d } = shape;
    return lens.attention({ ...inputs, heads, m, n, dk: d, dv: d });
  }
  const { n, dModel, heads } = shape;
  return lens.multiHeadAttention({ ...inputs, n, dModel, heads });
}

const lenses = [await lensFrom(baseDir), await lensFrom(newDir)];
console.log(`A/B: base ${baseDir} vs new ${newDir}; loadavg ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
for (const name of only) {
  const shape = SHAPES[name];
  const inputs = makeInputs(shape);
  // Calls per sample: about 20 ms of work, so tiny shapes are not all timer noise.
  const batch = { S1: 200, S2: 3, S3: 1, S4: 1 }[name];
  const times = [[], []];
  for (const lens of lenses) for (let i = 0; i < 3; ++i) call(lens, shape, inputs);  // warm up
  for (let round = 0; round < rounds; ++round) {
    // Alternate who goes first: the second of a pair measured up to 5% faster.
    for (const which of round % 2 ? [1, 0] : [0, 1]) {
      const lens = lenses[which];
      const start = performance.now();
      for (let i = 0; i < batch; ++i) call(lens, shape, inputs);
      times[which].push((performance.now() - start) / batch);
    }
  }
  const [base, next] = times.map(median);
  console.log(`${name}: base ${base.toFixed(3)} ms, new ${next.toFixed(3)} ms, base/new ${(base / next).toFixed(3)}`);
}
console.log(`loadavg ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
