// The library's module choice in a real browser: on a cross-origin isolated
// page load() runs the two-thread modules (relaxed SIMD by default in
// Chromium 156, SIMD with load({ simd: 'simd' })), elsewhere the
// single-thread ones. Threads change no bit: multi-head layers and a model
// forward (which split their projections, heads and MLPs over the threads)
// give, at the SIMD level, the very bits of Node's single-thread SIMD
// module, and at the relaxed level the bits of the single-thread relaxed
// module in a page without isolation; so do model.analyze's scores, rollout,
// value-weighted attention and logit lens.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { load } from '../../web/lib/node.js';
import { makeInputs } from '../bench/workloads.mjs';
import { libraryPage } from './library-page.mjs';
import { randomGpt2 } from './random-checkpoint.mjs';

const isolationHeaders = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
};

// Large enough per head (m * n * dk >= 2M multiply-adds) for the core to hand
// heads to the second thread.
const shape = { heads: 4, m: 256, n: 256, dk: 32, dv: 32 };

function inputs() {
  const { heads, m, n, dk, dv } = shape;
  const wave = (length, phase) => Array.from({ length }, (_, i) => Math.sin(i * 0.37 + phase) * 0.8);
  return { q: wave(heads * m * dk, 0), k: wave(heads * n * dk, 1), v: wave(heads * n * dv, 2) };
}

// Multi-head layers big enough that the core splits every stage (the Q, K, V
// projections, the heads, the output projection: each at least 2 M
// multiply-adds per thread) over both threads. Inputs come from the
// benchmarks' xorshift generator, exact in any engine, so the page and Node
// build the same Float32Arrays.
const layer = { kind: 'layer', n: 96, dModel: 256, heads: 4 };
const layerContext = { n: 128 };

// The calls checked, run by the page and by Node alike (the page gets this
// function's source): the bits of every array, keyed by call and array.
// `cross` takes its keys and values from a context with rows of its own.
function layerBitsOf(lens, makeInputs, layer, layerContext) {
  const base = { ...makeInputs(layer), n: layer.n, dModel: layer.dModel, heads: layer.heads };
  const context = makeInputs({ ...layer, n: layerContext.n }).x;
  const keyMask = (length) => Uint8Array.from({ length }, (_, j) => (j % 7 === 3 ? 0 : 1));
  // The bytes as base64: exact, and far quicker to hand from the page to Node than arrays of numbers.
  const bits = (array) => {
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    let binary = '';
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(binary);
  };
  const plain = lens.multiHeadAttention(base);
  const masked = lens.multiHeadAttention({ ...base, causal: true, keyMask: keyMask(layer.n), temperature: 0.8 });
  const cross = lens.multiHeadAttention({ ...base, context, nContext: layerContext.n, keyMask: keyMask(layerContext.n) });
  // The caller's output array, the head weights fresh (a staged call fills them in different places).
  const intoOutput = lens.multiHeadAttention({ ...base, into: { output: new Float32Array(layer.n * layer.dModel).fill(NaN) } });
  const trace = lens.explainMatrices({ ...base, causal: true });
  const result = {};
  for (const [name, call] of Object.entries({ plain, masked, cross, intoOutput })) {
    result[`${name}.output`] = bits(call.output);
    result[`${name}.weights`] = bits(call.weights);
  }
  for (const key of ['q', 'k', 'v', 'scores', 'scaledScores', 'weights', 'concatenatedHeads', 'output']) {
    result[`trace.${key}`] = bits(trace[key]);
  }
  return result;
}

// A call refused after its arrays are in the heap (a NaN in wk, found by the
// core while it packs wk, on whichever thread: the check follows the layer):
// its message, and the heap bytes it left behind (none).
function refusalOf(lens, makeInputs, layer) {
  const base = { ...makeInputs(layer), n: layer.n, dModel: layer.dModel, heads: layer.heads };
  const wk = Float32Array.from(base.wk);
  wk[5] = NaN;
  // One call first: a threads module starts its helper (and allocates its
  // stack) at its first threaded stage, and keeps it between calls.
  lens.multiHeadAttention(base);
  const before = lens.heapBytesInUse();
  try {
    lens.multiHeadAttention({ ...base, wk });
    return { message: null, leaked: lens.heapBytesInUse() - before };
  } catch (error) {
    return { message: error.message, leaked: lens.heapBytesInUse() - before };
  }
}

// A model forward where every stage is big enough for the automatic policy
// to use both threads: Q K V, the MLP and the LM head (n x d x width of at
// least 4 M multiply-adds), the heads (6 x 128 x 128 x 64), the activations.
const model = randomGpt2({ vocab: 1000, positions: 128, width: 192, layers: 2, heads: 6, seed: 11 });
const modelIds = Array.from({ length: 128 }, (_, i) => (i * 37 + 5) % 1000);

async function modelBitsOf(lens, config, weights, ids, bits) {
  const loaded = await lens.loadModel({ config, weights });
  try {
    const run = loaded.run({ ids });
    // model.analyze reads the same forward's weights in every module (_attnlens_analyze is exported by each).
    const { scores, rollout, valueWeighted, logitLens } = loaded.analyze({ ids });
    return { attention: bits(run.attention), hidden: bits(run.hidden), logits: bits(run.logits),
      previousToken: bits(scores.previousToken), rollout: bits(rollout), valueWeighted: bits(valueWeighted),
      lensIds: bits(logitLens.ids), lensProbs: bits(logitLens.probs) };
  } finally {
    loaded.dispose();
  }
}

// The page computes with the public browser API and reports which module files it fetched.
const pageSource = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>threads</title><script type="module">
import { load } from './lib/browser.js';
import { makeInputs } from './bench/workloads.mjs';
const shape = ${JSON.stringify(shape)};
const data = ${JSON.stringify(inputs())};
const layerBitsOf = ${layerBitsOf};
const modelBitsOf = ${modelBitsOf};
const refusalOf = ${refusalOf};
const bits = (array) => {
  const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
};
try {
  const config = await (await fetch('./config.json')).json();
  const modelWeights = new Uint8Array(await (await fetch('./model.safetensors')).arrayBuffer());
  const modelIds = ${JSON.stringify(modelIds)};
  const lens = await load({ simd: 'simd' });
  const { weights, output } = lens.attention({ ...shape, q: Float32Array.from(data.q), k: Float32Array.from(data.k),
    v: Float32Array.from(data.v) });
  // Refused first: the layer bits below then also show it left nothing behind.
  const refusal = refusalOf(lens, makeInputs, ${JSON.stringify(layer)});
  const layerBits = layerBitsOf(lens, makeInputs, ${JSON.stringify(layer)}, ${JSON.stringify(layerContext)});
  const modelBits = await modelBitsOf(lens, config, modelWeights, modelIds, bits);
  const best = await load();
  const bestResult = {
    simdLevel: best.simdLevel, threads: best.threads, refusal: refusalOf(best, makeInputs, ${JSON.stringify(layer)}),
    layerBits: layerBitsOf(best, makeInputs, ${JSON.stringify(layer)}, ${JSON.stringify(layerContext)}),
    modelBits: await modelBitsOf(best, config, modelWeights, modelIds, bits),
  };
  const files = performance.getEntriesByType('resource').map((entry) => new URL(entry.name).pathname.split('/').pop());
  window.result = { isolated: crossOriginIsolated, simd: lens.simd, threads: lens.threads, files, weights: Array.from(weights),
    output: Array.from(output), refusal, layerBits, modelBits, best: bestResult };
} catch (error) {
  window.result = { error: String(error && error.stack || error) };
}
</script>`;

let site;
before(() => {
  site = libraryPage('threads', pageSource, { 'config.json': JSON.stringify(model.config), 'model.safetensors': model.weights });
});
after(() => site.remove());

const runPage = (headers) => site.run(headers);

function assertMatchesNode(result, reference) {
  assert.equal(result.weights.length, reference.weights.length);
  for (const key of ['weights', 'output']) {
    let worst = 0;
    for (let i = 0; i < reference[key].length; i++) worst = Math.max(worst, Math.abs(result[key][i] - reference[key][i]));
    assert.ok(worst <= 1e-6, `${key} differ from Node's by ${worst}`);
  }
}

// Every multi-head array the page computed has the bits of Node's (the
// single-thread SIMD module): wasm arithmetic is deterministic, so any
// difference comes from how the work was split.
function assertSameBits(actualBits, referenceBits) {
  assert.deepEqual(Object.keys(actualBits).sort(), Object.keys(referenceBits).sort());
  const floatBits = (base64) => {
    const bytes = Buffer.from(base64, 'base64');
    return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  };
  for (const [name, base64] of Object.entries(referenceBits)) {
    const expected = floatBits(base64), actual = floatBits(actualBits[name]);
    assert.equal(actual.length, expected.length, `${name}: length`);
    let differing = 0, first = -1;
    for (let i = 0; i < expected.length; i++) {
      if (actual[i] !== expected[i]) {
        differing++;
        if (first < 0) first = i;
      }
    }
    assert.equal(differing, 0, `${name}: ${differing} of ${expected.length} floats differ from Node's bits (first at ${first})`);
  }
}

describe('module choice in Chromium', () => {
  let reference, referenceLayerBits, referenceModelBits, referenceRefusal, isolated, notIsolated;
  before(async () => {
    const lens = await load();
    const data = inputs();
    referenceRefusal = refusalOf(lens, makeInputs, layer);
    reference = lens.attention({ ...shape, q: Float32Array.from(data.q), k: Float32Array.from(data.k), v: Float32Array.from(data.v) });
    referenceLayerBits = layerBitsOf(lens, makeInputs, layer, layerContext);
    const nodeBits = (array) => Buffer.from(array.buffer, array.byteOffset, array.byteLength).toString('base64');
    referenceModelBits = await modelBitsOf(lens, model.config, model.weights, modelIds, nodeBits);
    isolated = await runPage(isolationHeaders);
    notIsolated = await runPage({});
  });

  test('a cross-origin isolated page runs the two-thread SIMD module for simd: "simd", with the same numbers', () => {
    const result = isolated;
    assert.equal(result.isolated, true);
    assert.equal(result.simd, true);
    assert.equal(result.threads, 2);
    assert.ok(result.files.includes('attnlens-threads.wasm'), `fetched: ${result.files.join(', ')}`);
    assert.ok(result.files.includes('attnlens-threads.worker.js'), 'the pthread worker started');
    assert.ok(!result.files.includes('attnlens-simd.wasm'));
    assertMatchesNode(result, reference);
    assertSameBits(result.layerBits, referenceLayerBits);
  });

  test('a multi-head call refused after its copies (on two threads, while the helper projects Q) says what Node says and frees everything', () => {
    assert.match(referenceRefusal.message, /wk must be finite \(no NaN or Infinity\), got wk\[5\] = NaN/);
    assert.equal(referenceRefusal.leaked, 0);
    for (const [page, result] of [['isolated, simd', isolated.refusal], ['isolated, relaxed', isolated.best.refusal],
      ['not isolated', notIsolated.refusal]]) {
      assert.deepEqual(result, referenceRefusal, page);
    }
    assert.equal(isolated.best.threads, 2);
  });

  test('a model forward on two threads gives the bits of Node\'s single-thread SIMD module', () => {
    assert.equal(isolated.threads, 2);
    assertSameBits(isolated.modelBits, referenceModelBits);
    assertSameBits(notIsolated.modelBits, referenceModelBits);
  });

  test('the default level on an isolated page is relaxed SIMD on two threads, with the bits of one thread', () => {
    assert.equal(isolated.best.simdLevel, 'relaxed');
    assert.equal(isolated.best.threads, 2);
    assert.ok(isolated.files.includes('attnlens-relaxed-threads.wasm'), `fetched: ${isolated.files.join(', ')}`);
    assert.ok(isolated.files.includes('attnlens-relaxed-threads.worker.js'), 'the pthread worker started');
    assert.equal(notIsolated.best.simdLevel, 'relaxed');
    assert.equal(notIsolated.best.threads, 1);
    assert.ok(!notIsolated.files.some((file) => file.includes('threads')), `fetched: ${notIsolated.files.join(', ')}`);
    assertSameBits(isolated.best.layerBits, notIsolated.best.layerBits);
    assertSameBits(isolated.best.modelBits, notIsolated.best.modelBits);
  });

  test('a page without isolation runs the single-thread SIMD module and never fetches the threads one', () => {
    const result = notIsolated;
    assert.equal(result.isolated, false);
    assert.equal(result.threads, 1);
    assert.ok(result.files.includes('attnlens-simd.wasm'), `fetched: ${result.files.join(', ')}`);
    assert.ok(!result.files.some((file) => file.startsWith('attnlens-threads')));
    assertMatchesNode(result, reference);
    assertSameBits(result.layerBits, referenceLayerBits);
  });
});
