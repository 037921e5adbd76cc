// node tests/bench/sixteen-bit.mjs [--quick] [--tokens 128,32]
//
// What keeping an F16 checkpoint's matrices at 16 bits costs and saves
// (loadModel's weightStorage: 'as-stored' against 'float32'), in headless
// Chromium with the module load() picks there: a GPT-2-small-shaped model
// (random weights rounded to F16), both loaded from the same file into one
// page, forwards interleaved call by call, every attention returned. Prints
// the weights' bytes in WebAssembly memory and the time of each forward.
// Both give the same bits (tests/wasm/model-sixteen-bit.test.mjs); this is
// only about speed and memory.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { libraryPage } from '../browser/library-page.mjs';
import { GPT2_SMALL, GPT2_TINY, gpt2Config, tokenIds, writeGpt2Checkpoint } from './gpt2-checkpoint.mjs';

// float32 -> F16 bits, rounded to nearest even (weights of std 0.02 are far
// from F16's limits; overflow saturates to the largest finite value).
function toFloat16Bits(value) {
  const f32 = new Float32Array([value]);
  const bits = new Uint32Array(f32.buffer)[0];
  const sign = (bits >>> 16) & 0x8000;
  const magnitude = Math.abs(value);
  if (magnitude >= 65520) return sign | 0x7bff;
  if (magnitude < 2 ** -24 / 2) return sign;
  const exponent = Math.max(Math.floor(Math.log2(magnitude)), -14);
  const step = 2 ** (exponent - 10); // the spacing of F16 values at this exponent
  let units = magnitude / step;
  const floor = Math.floor(units);
  const rest = units - floor;
  units = rest > 0.5 || (rest === 0.5 && floor % 2 === 1) ? floor + 1 : floor;
  if (exponent === -14 && units < 1024) return sign | units; // subnormal
  let e = exponent + 15, fraction = units - 1024;
  if (fraction === 1024) { e += 1; fraction = 0; }
  return sign | (e << 10) | fraction;
}

// The F32 checkpoint rewritten as F16: the same header with dtype F16 and
// halved offsets (the causal-mask buffers included; the loader ignores them).
function asFloat16(checkpoint) {
  const view = new DataView(checkpoint.bytes.buffer);
  const headerLength = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(checkpoint.bytes.subarray(8, 8 + headerLength)));
  const names = Object.keys(header).filter((name) => name !== '__metadata__');
  let offset = 0;
  for (const name of names) {
    const bytes = checkpoint.tensors[name].length * 2;
    header[name] = { ...header[name], dtype: 'F16', data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  const halves = new Uint16Array(out.buffer, 8 + headerBytes.length, offset / 2);
  let at = 0;
  for (const name of names) for (const value of checkpoint.tensors[name]) halves[at++] = toFloat16Bits(value);
  return out;
}

const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script type="module">
import { load } from './lib/browser.js';
import { timeInterleaved } from './bench/timing.mjs';
const settings = await (await fetch('./settings.json')).json();
try {
  const lens = await load();
  const config = await (await fetch('./config.json')).text();
  const weights = new Uint8Array(await (await fetch('./model.safetensors')).arrayBuffer());
  const wide = await lens.loadModel({ config, weights, weightStorage: 'float32' });
  const narrow = await lens.loadModel({ config, weights, weightStorage: 'as-stored' });
  const rows = [];
  for (const n of settings.tokens) {
    const ids = settings.ids.slice(0, n);
    const times = await timeInterleaved([
      { name: 'float32', run: () => (wide.dropCache(), wide.run({ ids, logits: 'last' })) },
      { name: '16-bit', run: () => (narrow.dropCache(), narrow.run({ ids, logits: 'last' })) },
    ], settings.timing);
    rows.push({ n, times });
  }
  window.result = { simdLevel: lens.simdLevel, threads: lens.threads, rows,
    bytes: { float32: wide.info.weightBytes, sixteenBit: narrow.info.weightBytes } };
} catch (error) {
  window.result = { error: String(error && error.stack || error) };
}
</script>`;

async function main() {
  const { values: args } = parseArgs({ options: { quick: { type: 'boolean', default: false }, tokens: { type: 'string', default: '128,32' } } });
  const dims = args.quick ? GPT2_TINY : GPT2_SMALL;
  const tokens = args.quick ? [16, 4] : args.tokens.split(',').map(Number);
  const checkpoint = writeGpt2Checkpoint(dims);
  const settings = {
    tokens, ids: Array.from(tokenIds(Math.max(...tokens), dims.vocab)),
    timing: args.quick ? { warmupMs: 0, budgetMs: 0, minSamples: 1 } : { warmupMs: 1500, budgetMs: 5000, minSamples: 7 },
  };
  console.log(`attnlens 16-bit weights benchmark: ${os.cpus()[0]?.model ?? 'unknown CPU'}, load average ` +
    `${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; GPT-2 ${dims.layers} layers, d_model ${dims.dModel}, F16 file` +
    `${args.quick ? ' (--quick: tiny model; numbers mean nothing)' : ''}`);
  const site = libraryPage('sixteen-bit', pageSource, {
    'config.json': JSON.stringify(gpt2Config(dims)), 'model.safetensors': asFloat16(checkpoint),
    'settings.json': JSON.stringify(settings),
  });
  try {
    const result = await site.run({});
    const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
    console.log(`Chromium, module ${result.simdLevel}, ${result.threads} thread(s); weights in WebAssembly memory: ` +
      `float32 ${mib(result.bytes.float32)}, 16-bit ${mib(result.bytes.sixteenBit)}`);
    for (const { n, times } of result.rows) {
      const wide = times.float32.medianMs, narrow = times['16-bit'].medianMs;
      console.log(`  ${String(n).padStart(4)} tokens: float32 ${wide.toFixed(1)} ms, 16-bit ${narrow.toFixed(1)} ms ` +
        `(${times.float32.samples} / ${times['16-bit'].samples} calls): 16-bit takes ${(narrow / wide).toFixed(2)}x the time`);
    }
  } finally {
    site.remove();
  }
}

main().catch((error) => {
  console.error(error.stack ?? error.message);
  process.exitCode = 1;
});
