// npm run bench -- --only 900M [--quick]: issue 22's "models up to about 900 M
// parameters load (16-bit storage when float32 would not fit)", for real: a
// random ~890M-parameter qwen2 checkpoint in BF16 (Qwen2.5-1.5B's widths with
// 14 of its 28 layers; 1.8 GB), loaded in Node through the public API
// (weightStorage 'auto', which must choose 16 bits), then an 8-token forward.
// Reported: the time to write, read and load it, WebAssembly memory, the
// process's peak resident memory, and the forward's time. Too heavy for the
// test suite (CI: 2 cores, ~4 GB of the runner's memory at the peak); the
// suite proves the same limit on the config alone (tests/wasm/model-large.test.mjs).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bestSimdLevel, createLens } from '../../web/lib/api.js';
import { QUICK_CONFIGS, QWEN25_05B, writeFamilyCheckpoint } from './family-checkpoint.mjs';
import { tokenIds } from './gpt2-checkpoint.mjs';

const wasmDir = fileURLToPath(new URL('../../web/lib/wasm/', import.meta.url));

// ~890M parameters: Qwen2.5-1.5B's widths (1536 wide, 12 heads of 128, 2 kv
// heads, MLP 8960, vocab 151936, tied), 14 layers.
export const QWEN2_890M = {
  ...QWEN25_05B, hidden_size: 1536, intermediate_size: 8960, num_attention_heads: 12, num_key_value_heads: 2,
  num_hidden_layers: 14, max_window_layers: 14,
};

const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const peakResident = () => Number(readFileSync('/proc/self/status', 'utf8').match(/^VmHWM:\s+(\d+) kB/m)?.[1]) * 1024;
const timed = async (work) => {
  const start = performance.now();
  const value = await work();
  return [value, performance.now() - start];
};

export async function benchLargeModel({ quick = false, log = console.log } = {}) {
  const config = quick ? QUICK_CONFIGS.Q : QWEN2_890M;
  const level = bestSimdLevel();
  const { default: createModule } = await import(join(wasmDir, `attnlens-${level}.mjs`));
  const module = await createModule({ wasmBinary: readFileSync(join(wasmDir, `attnlens-${level}.wasm`)) });
  const lens = createLens(module, level);
  const result = { config, level, problems: [] };
  const model = await (async () => {
    // In a scope of its own, so the file's bytes can be collected after the load.
    const [{ bytes, parameters }, writeMs] = await timed(() => writeFamilyCheckpoint({ arch: 'qwen2', variant: 'tied', dtype: 'BF16', config }));
    log(`\n900M qwen2 ${(parameters / 1e6).toFixed(0)}M parameters, BF16 file ${mib(bytes.length)} written in ${writeMs.toFixed(0)} ms`);
    const [loaded, loadMs] = await timed(() => lens.loadModel({ config, weights: bytes }));
    Object.assign(result, { parameters, fileBytes: bytes.length, writeMs, loadMs });
    return loaded;
  })();
  try {
    const ids = tokenIds(8, config.vocab_size);
    const first = model.run({ ids });
    const runs = [];
    for (let i = 0; i < (quick ? 1 : 3); ++i) runs.push((model.dropCache(), model.run({ ids })).elapsedMs);
    Object.assign(result, {
      weightStorage: model.info.weightStorage, weightBytes: model.info.weightBytes, heapBytesInUse: lens.heapBytesInUse(),
      wasmMemoryBytes: module.HEAPU8.buffer.byteLength, peakResidentBytes: peakResident(), runMs: runs.sort((a, b) => a - b)[runs.length >> 1],
    });
    if (!first.logits.every(Number.isFinite)) result.problems.push('logits not finite');
    if (!quick && result.weightStorage !== '16-bit') result.problems.push(`weightStorage ${result.weightStorage}, expected 16-bit`);
    log(`  loadModel ${result.loadMs.toFixed(0)} ms (${model.info.weightStorage}, weights ${mib(result.weightBytes)}); ` +
      `WebAssembly memory ${mib(result.wasmMemoryBytes)}, ${mib(result.heapBytesInUse)} allocated; process peak resident ${mib(result.peakResidentBytes)}`);
    log(`  8-token forward (every layer's attention, hidden, all logits), module ${level}: median ${result.runMs.toFixed(0)} ms of ${runs.length}`);
    for (const problem of result.problems) log(`  PROBLEM: ${problem}`);
  } finally {
    model.dispose();
  }
  return result;
}
