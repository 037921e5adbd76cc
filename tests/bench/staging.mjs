// Whether the threads module's staged multiHeadAttention (multiHeadBegin /
// Finish / Complete: the helper projects Q while JavaScript copies the other
// matrices in) is asked for only where it pays: the library as it is (it asks
// multiHeadStagingPays) against the same library on a module that claims
// staging always pays, interleaved call by call in one cross-origin isolated
// Chromium page. Tiny layers should gain (one call instead of three), S4
// should still stage, and the bits must not change.
//   node tests/bench/staging.mjs
import { loadavg } from 'node:os';
import { libraryPage } from '../browser/library-page.mjs';

const shapes = [
  { n: 8, dModel: 64, heads: 4, rounds: 301, batch: 20 }, { n: 16, dModel: 128, heads: 4, rounds: 201, batch: 10 },
  { n: 32, dModel: 256, heads: 4, rounds: 201, batch: 2 }, { n: 128, dModel: 768, heads: 12, rounds: 41, batch: 1 },
];
const page = libraryPage('bench-staging', `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module">
import { createLens } from './lib/api.js';
import { makeInputs } from './bench/workloads.mjs';
const median = (values) => values.sort((a, b) => a - b)[values.length >> 1];
const sameBits = (a, b) => new Uint32Array(a.buffer).every((bits, i) => bits === new Uint32Array(b.buffer)[i]);
try {
  const module = await (await import('./lib/wasm/attnlens-threads.mjs')).default();
  const asked = createLens(module, true);
  const always = createLens(Object.create(module, { multiHeadStagingPays: { value: () => true } }), true);
  const rows = [];
  for (const shape of ${JSON.stringify(shapes)}) {
    const options = { ...makeInputs({ kind: 'layer', ...shape }), n: shape.n, dModel: shape.dModel, heads: shape.heads };
    const a = asked.multiHeadAttention(options), b = always.multiHeadAttention(options);
    // Batches of calls: an isolated page's clock ticks in 5 us steps.
    const time = (lens) => {
      const start = performance.now();
      for (let k = 0; k < shape.batch; k++) lens.multiHeadAttention(options);
      return (performance.now() - start) / shape.batch;
    };
    const askedTimes = [], alwaysTimes = [];
    for (let round = 0; round < shape.rounds; round++) {
      if (round % 2) { alwaysTimes.push(time(always)); askedTimes.push(time(asked)); }
      else { askedTimes.push(time(asked)); alwaysTimes.push(time(always)); }
    }
    rows.push({ ...shape, pays: module.multiHeadStagingPays(shape.n, shape.dModel), asked: median(askedTimes),
      always: median(alwaysTimes), sameBits: sameBits(a.output, b.output) && sameBits(a.weights, b.weights) });
  }
  window.result = { threads: module.maxThreads(), rows };
} catch (error) {
  window.result = { error: String(error && error.stack || error) };
}
</script>`);
try {
  const result = await page.run({ 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' });
  console.log(`threads module, ${result.threads} threads, medians of interleaved batches; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  for (const row of result.rows) {
    const us = (ms) => `${(ms * 1000).toFixed(1)} us`;
    console.log(`  n=${row.n} dModel=${row.dModel} heads=${row.heads}: stagingPays ${row.pays}; as asked ${us(row.asked)}, ` +
      `always staged ${us(row.always)}; bits ${row.sameBits ? 'the same' : 'DIFFER'}`);
  }
  if (result.rows.some((row) => !row.sameBits)) process.exitCode = 1;
} finally {
  page.remove();
}
