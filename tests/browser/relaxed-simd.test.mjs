// The relaxed-SIMD module in a real browser: Debian's Chromium validates
// relaxed SIMD, so load() picks it (its two-thread build on isolated pages)
// and fetches only its files; and it computes the numbers of the plain SIMD module, in the
// same page, within 1e-5: attention heads, a multi-head layer and a GPT-2
// forward (attention, hidden state, logits). Where the CPU has FMA the two
// modules must also differ somewhere, or the fused multiply-adds never ran.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { libraryPage } from './library-page.mjs';
import { ensureWasmBuilt } from '../wasm/helpers.mjs';

const TOLERANCE = 1e-5;
const cpuHasFma = /^flags\s*:.*\bfma\b/m.test(readFileSync('/proc/cpuinfo', 'utf8'));

// Runs in the page: every array both levels compute, as max |relaxed - simd|
// over max(1, max |simd|), and whether any bit differed.
const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>relaxed</title><script type="module">
import { bestSimdLevel, load, relaxedSimdSupported } from './lib/browser.js';
import { makeInputs } from './bench/workloads.mjs';
import { gpt2Config, tokenIds, writeGpt2Checkpoint } from './bench/gpt2-checkpoint.mjs';
try {
  const chosen = await load();
  const files = performance.getEntriesByType('resource').map((entry) => new URL(entry.name).pathname.split('/').pop());
  const relaxed = await load({ simd: 'relaxed' });
  const simd = await load({ simd: 'simd' });
  const shape = { kind: 'attention', heads: 3, m: 80, n: 96, d: 64 };
  const heads = makeInputs(shape);
  const layer = makeInputs({ kind: 'layer', n: 48, dModel: 128, heads: 4 });
  const dims = { layers: 2, heads: 4, dModel: 128, vocab: 300, positions: 64 };
  const { bytes } = writeGpt2Checkpoint(dims, { seed: 3 });
  const ids = tokenIds(40, dims.vocab, 5);
  const compute = async (lens) => {
    const attention = lens.attention({ ...heads, heads: 3, m: 80, n: 96, dk: 64, dv: 64 });
    const multiHead = lens.multiHeadAttention({ ...layer, n: 48, dModel: 128, heads: 4, causal: true });
    const model = await lens.loadModel({ config: gpt2Config(dims), weights: bytes });
    const run = model.run({ ids });
    model.dispose();
    return { 'attention.weights': attention.weights, 'attention.output': attention.output,
      'layer.weights': multiHead.weights, 'layer.output': multiHead.output,
      'model.attention': run.attention, 'model.hidden': run.hidden, 'model.logits': run.logits };
  };
  const [ours, theirs] = [await compute(relaxed), await compute(simd)];
  const differences = {};
  for (const [name, expected] of Object.entries(theirs)) {
    const actual = ours[name];
    let worst = 0, scale = 1, bitsDiffer = false;
    for (let i = 0; i < expected.length; i++) {
      worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
      scale = Math.max(scale, Math.abs(expected[i]));
      bitsDiffer ||= !Object.is(actual[i], expected[i]);
    }
    differences[name] = { relative: worst / scale, length: expected.length, sameLength: actual.length === expected.length, bitsDiffer };
  }
  window.result = { isolated: crossOriginIsolated, supported: relaxedSimdSupported(), best: bestSimdLevel(),
    level: chosen.simdLevel, simd: chosen.simd, threads: chosen.threads, chosenIsRelaxed: chosen === relaxed,
    levels: [relaxed.simdLevel, simd.simdLevel], files, differences };
} catch (error) {
  window.result = { error: String(error && error.stack || error) };
}
</script>`;

let site;
before(() => {
  site = libraryPage('relaxed', pageSource);
});
after(() => site.remove());

const runPage = (headers) => site.run(headers);

describe('relaxed SIMD in Chromium', () => {
  test('load() picks the relaxed module, fetches only its files, and matches the SIMD module within 1e-5', async (t) => {
    const result = await runPage();
    assert.equal(result.supported, true);
    assert.equal(result.best, 'relaxed');
    assert.equal(result.level, 'relaxed');
    assert.equal(result.simd, true);
    assert.equal(result.threads, 1);
    assert.equal(result.chosenIsRelaxed, true);
    assert.deepEqual(result.levels, ['relaxed', 'simd']);
    assert.ok(result.files.includes('attnlens-relaxed.wasm'), `fetched: ${result.files.join(', ')}`);
    assert.ok(!result.files.some((file) => /^attnlens-(simd|scalar|threads)\./.test(file)), `fetched: ${result.files.join(', ')}`);
    assert.deepEqual(Object.keys(result.differences).sort(), ['attention.output', 'attention.weights', 'layer.output',
      'layer.weights', 'model.attention', 'model.hidden', 'model.logits']);
    for (const [name, { relative, length, sameLength }] of Object.entries(result.differences)) {
      t.diagnostic(`${name}: ${length} values, max |relaxed - simd| / max(1, |simd|) = ${relative.toExponential(2)}`);
      assert.ok(sameLength && length > 0, `${name}: lengths`);
      assert.ok(relative <= TOLERANCE, `${name}: relaxed and simd differ by ${relative} (> ${TOLERANCE})`);
    }
    // The products round once per multiply-add on an FMA CPU: some bits change.
    const anyBitsDiffer = Object.values(result.differences).some(({ bitsDiffer }) => bitsDiffer);
    assert.equal(anyBitsDiffer, cpuHasFma, cpuHasFma ? 'relaxed_madd never fused (bit-identical to mul + add)' : 'no FMA, yet bits differ');
  });

  test('a cross-origin isolated page runs the relaxed level on two threads', async () => {
    const result = await runPage({ 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' });
    assert.equal(result.isolated, true);
    assert.equal(result.level, 'relaxed');
    assert.equal(result.threads, 2);
    assert.ok(result.files.includes('attnlens-relaxed-threads.wasm'), `fetched: ${result.files.join(', ')}`);
    assert.ok(!result.files.includes('attnlens-relaxed.wasm'), `fetched: ${result.files.join(', ')}`);
    assert.ok(!result.files.some((file) => file.startsWith('attnlens-threads')), `fetched: ${result.files.join(', ')}`);
  });
});
