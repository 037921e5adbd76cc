// node tests/bench/incremental.mjs [--n 512] [--rounds 3] [--quick]
//
// Issue 24's incremental forward in Node (one thread, the SIMD module): on a
// GPT-2-small-sized checkpoint with seeded random weights
// (gpt2-checkpoint.mjs), model.run over n tokens fresh (dropCache first), an
// append of one token after a run over the first n, and an edit at position
// n/2 — each with attention 'all' and with one head ({ layers: [0], heads: [0] }),
// logits 'last'. Prints the median of `rounds` and the load average.
import { loadavg } from 'node:os';
import { GPT2_SMALL, GPT2_TINY, gpt2Config, tokenIds, writeGpt2Checkpoint } from './gpt2-checkpoint.mjs';
import { load } from '../../web/lib/node.js';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const quick = args.includes('--quick');
const dims = quick ? GPT2_TINY : GPT2_SMALL;
const n = option('n', quick ? 48 : 512), rounds = option('rounds', quick ? 2 : 3);

const lens = await load({ simd: 'simd' });
const { bytes } = writeGpt2Checkpoint(dims, { seed: 1 });
const model = await lens.loadModel({ config: gpt2Config(dims), weights: bytes });
const ids = Array.from(tokenIds(n + 1, dims.vocab));
const base = ids.slice(0, n), appended = ids, edited = base.with(n >> 1, (base[n >> 1] + 1) % dims.vocab);

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
function time(prepare, options) {
  const times = [];
  let last;
  for (let round = 0; round < rounds; round++) {
    prepare();
    const started = performance.now();
    last = model.run(options);
    times.push(performance.now() - started);
  }
  return { ms: median(times), reused: last.reusedPositions, cacheBytes: last.cacheBytes };
}

console.log(`incremental forward, GPT-2-${quick ? 'tiny' : 'small'}-sized random checkpoint, n = ${n}, ` +
  `Node ${process.version}, one thread, load average ${loadavg().map((v) => v.toFixed(2)).join(' ')}`);
for (const [label, attention] of [['all', 'all'], ['one head', { layers: [0], heads: [0] }]]) {
  const cases = {
    fresh: time(() => model.dropCache(), { ids: base, attention, logits: 'last' }),
    'append 1': time(() => model.run({ ids: base, attention: 'none', logits: 'none' }), { ids: appended, attention, logits: 'last' }),
    [`edit at ${n >> 1}`]: time(() => model.run({ ids: base, attention: 'none', logits: 'none' }), { ids: edited, attention, logits: 'last' }),
  };
  for (const [name, { ms, reused, cacheBytes }] of Object.entries(cases)) {
    console.log(`  attention ${label.padEnd(8)} ${name.padEnd(12)} ${ms.toFixed(1).padStart(8)} ms  ` +
      `(reused ${reused} positions, cache ${(cacheBytes / 2 ** 20).toFixed(1)} MiB)`);
  }
}
console.log(`load average after: ${loadavg().map((v) => v.toFixed(2)).join(' ')}`);
model.dispose();
