// The public attnlens API, shared by the Node and browser entry points.
//
// Layers, bottom up:
//   validation.js        describe / Checker: argument validation with messages
//                        that name the argument, what was expected and what came
//   heap.js              Heap: WebAssembly allocations for one call, always freed
//   createLens           attention, multiHeadAttention, explainMatrices,
//                        explainSentence over one Embind module; loadModel
//                        (model/load-model.js) for Hugging Face checkpoints
//   makeLoader           load(): module choice (simd-level.js: the feature
//                        tests and levels), caching
//
// Everything is validated here, before C++ runs: the module is built without
// C++ exceptions, so the core must never see input it would reject or
// allocations it could not satisfy.
import { Heap, mappedFloats, now } from './heap.js';
import {
  absent, availableMemory, Checker, describe, formatBytes, limitsOf, markChecked, readInto,
} from './validation.js';
import { version } from './version.js';
import { chooseLevel, isSimdLevel } from './simd-level.js';

export { describe };
export { bestSimdLevel, relaxedSimdSupported, simdSupported } from './simd-level.js';

function identityMatrix(size) {
  const matrix = new Float32Array(size * size);
  for (let i = 0; i < size; i++) matrix[i * size + i] = 1;
  return matrix;
}

// ---- The API -------------------------------------------------------------------

const ATTENTION_KEYS = ['q', 'k', 'v', 'm', 'n', 'dk', 'dv', 'causal', 'keyMask', 'scale', 'temperature', 'heads',
  'weights', 'into'];
const MULTI_HEAD_KEYS = ['x', 'n', 'dModel', 'heads', 'wq', 'wk', 'wv', 'wo', 'bq', 'bk', 'bv', 'bo',
  'context', 'nContext', 'causal', 'keyMask', 'temperature'];
// multiHeadAttention alone fills preallocated outputs (explainMatrices returns a dozen arrays).
const MULTI_HEAD_OUTPUT_KEYS = [...MULTI_HEAD_KEYS, 'into'];
// The arrays a multi-head call copies into the heap.
const MATRIX_NAMES = ['x', 'context', 'wq', 'wk', 'wv', 'wo', 'bq', 'bk', 'bv', 'bo'];
// The ones Q = x wq + bq reads: in the heap before a staged call begins.
const QUERY_NAMES = ['x', 'wq', 'bq'];
// The matrices whose magnitudes the core finds as it packs them (request.magnitudes).
const PACKED_NAMES = ['wq', 'wk', 'wv', 'wo'];
const SENTENCE_KEYS = ['text', 'context', 'dModel', 'heads', 'seed', 'causal', 'temperature', 'identity'];

// Reads and checks the options shared by multiHeadAttention and explainMatrices.
function readMultiHead(check, { defaultHeads, identityWo }) {
  const n = check.dimension('n');
  const dModel = check.dimension('dModel');
  const heads = check.dimension('heads', { fallback: defaultHeads });
  check.divisible(dModel, heads);
  const x = check.floats('x', n * dModel, `n*dModel = ${n}*${dModel} = ${n * dModel}`);
  const hasContext = !absent(check.options.context);
  if (!hasContext && !absent(check.options.nContext)) {
    throw new TypeError(`${check.where}: nContext was given without context; pass both for cross-attention`);
  }
  const nContext = hasContext ? check.dimension('nContext') : n;
  const context = hasContext
    ? check.floats('context', nContext * dModel, `nContext*dModel = ${nContext}*${dModel} = ${nContext * dModel}`)
    : undefined;
  const square = `dModel*dModel = ${dModel}*${dModel} = ${dModel * dModel}`;
  const row = `dModel = ${dModel}`;
  const matrices = {
    wq: check.floats('wq', dModel * dModel, square),
    wk: check.floats('wk', dModel * dModel, square),
    wv: check.floats('wv', dModel * dModel, square),
    wo: check.floats('wo', dModel * dModel, square, { optional: identityWo }) ?? identityMatrix(dModel),
  };
  const biases = {
    bq: check.floats('bq', dModel, row, { optional: true }),
    bk: check.floats('bk', dModel, row, { optional: true }),
    bv: check.floats('bv', dModel, row, { optional: true }),
    bo: check.floats('bo', dModel, row, { optional: true }),
  };
  const keyMask = check.mask('keyMask', nContext, hasContext ? `nContext = ${nContext}` : `n = ${n}`);
  const causal = check.flag('causal', false);
  const temperature = check.finite('temperature', { fallback: 1, positive: true });
  const headWidth = dModel / heads;
  check.multiplier(1 / Math.sqrt(headWidth), temperature);
  // Deferred checks need the arrays' magnitudes from the heap: the caller runs them.
  if (!check.pending) checkMultiHeadMagnitudes(check, { dModel, headWidth, temperature, hasContext });
  return { n, dModel, heads, headWidth, x, context, nContext, ...matrices, ...biases, keyMask, causal, temperature };
}

// Bounds every intermediate of multi-head attention from the inputs' largest
// entries: the projections |Q|, |K|, |V| <= dModel * max|input| * max|W| + max|b|,
// the scores, and the output (the heads are averages of V rows, so <= max|V|).
function checkMultiHeadMagnitudes(check, { dModel, headWidth, temperature, hasContext }) {
  const size = (name) => check.magnitude(name);
  const keysInput = hasContext ? 'context' : 'x';
  const maxQ = dModel * size('x') * size('wq') + size('bq');
  const maxK = dModel * size(keysInput) * size('wk') + size('bk');
  const maxV = dModel * size(keysInput) * size('wv') + size('bv');
  check.bounded(`x, wq and bq`, 'dModel * max|x| * max|wq| + max|bq|', maxQ);
  check.bounded(`${keysInput}, wk and bk`, `dModel * max|${keysInput}| * max|wk| + max|bk|`, maxK);
  check.bounded(`${keysInput}, wv and bv`, `dModel * max|${keysInput}| * max|wv| + max|bv|`, maxV);
  check.bounded('the projected queries and keys', 'headWidth * max|Q| * max|K| * max(1, scale / temperature)',
    headWidth * maxQ * maxK * Math.max(1, 1 / Math.sqrt(headWidth) / temperature));
  const maxWo = check.options.wo instanceof Float32Array ? size('wo') : 1;
  check.bounded('the values, wo and bo', 'dModel * max|V| * max|wo| + max|bo|', dModel * maxV * maxWo + size('bo'));
}

function multiHeadSizes({ n, nContext, dModel, heads }) {
  return `(n = ${n}, nContext = ${nContext}, dModel = ${dModel}, heads = ${heads})`;
}

// Bytes of the arrays a call copies into the heap (absent ones are none).
function stagedBytes(arrays) {
  return arrays.reduce((sum, array) => sum + (array ? array.byteLength : 0), 0);
}

// The multi-head request with every address 0: the sizes and options, and
// the fields the call fills in once its arrays are in the heap. As it is, it
// asks the module for the call's bytes (multiHeadBytes).
function multiHeadRequest(input) {
  return {
    x: 0, n: input.n, context: 0, nContext: input.context ? input.nContext : 0, dModel: input.dModel,
    heads: input.heads, wq: 0, wk: 0, wv: 0, wo: 0, bq: 0, bk: 0, bv: 0, bo: 0, causal: input.causal, keyMask: 0,
    temperature: input.temperature, output: 0, weights: 0, magnitudes: 0,
  };
}

/**
 * Builds the public API object over an instantiated Embind module.
 * @param {object} module the attnlens Embind module
 * @param {'relaxed' | 'simd' | 'scalar' | boolean} level which build it is
 *   (a boolean, as before levels existed: true for 'simd', false for 'scalar')
 * @param hub imports model/hub/browser.js or node.js
 */
export function createLens(module, level, hub) {
  const simdLevel = typeof level === 'boolean' ? (level ? 'simd' : 'scalar') : level;
  const simd = simdLevel !== 'scalar';
  const { maxSentenceTokens: maxTokens, maxSentenceModelWidth } = limitsOf(module);
  // Threads the core may use (1 except in a pthreads build; modules
  // without the binding are single-threaded).
  const threads = module.maxThreads?.() ?? 1;

  function attention(options) {
    const check = new Checker('attention', options, ATTENTION_KEYS, { deferFinite: true });
    const m = check.dimension('m');
    const n = check.dimension('n');
    const dk = check.dimension('dk');
    const dv = check.dimension('dv');
    const heads = check.dimension('heads', { fallback: 1 });
    // Stacked heads multiply every length; one head keeps the plain wording.
    const stacked = (product, dims, value) => (heads === 1
      ? `${product} = ${dims.join('*')} = ${value}`
      : `heads*${product} = ${[heads, ...dims].join('*')} = ${heads * value}`);
    const q = check.floats('q', heads * m * dk, () => stacked('m*dk', [m, dk], m * dk));
    const k = check.floats('k', heads * n * dk, () => stacked('n*dk', [n, dk], n * dk));
    const v = check.floats('v', heads * n * dv, () => stacked('n*dv', [n, dv], n * dv));
    const keyMask = check.mask('keyMask', n, `n = ${n}`);
    const causal = check.flag('causal', false);
    const scale = check.finite('scale', { positive: true });
    const temperature = check.finite('temperature', { fallback: 1, positive: true });
    const multiplier = (scale ?? 1 / Math.sqrt(dk)) / temperature;
    check.multiplier(scale ?? 1 / Math.sqrt(dk), temperature);
    const wantWeights = check.flag('weights', true);
    const into = readInto(check.where, options.into, [
      { name: 'output', length: heads * m * dv, lengthText: () => stacked('m*dv', [m, dv], m * dv) },
      { name: 'weights', length: heads * m * n, lengthText: () => stacked('m*n', [m, n], m * n),
        absentBecause: wantWeights ? undefined : 'weights is false' },
    ]);
    // Inputs and output, the m x n weights only when asked for, and the core's
    // scratch (K^T and V packed into panels per thread: the module's count).
    const floats = heads * (m * dk + n * dk + n * dv + m * dv + (wantWeights ? m * n : 0));
    check.memory(module, floats * 4 + n + module.attentionBytes({ heads, m, n, dk, dv, weights: wantWeights }),
      () => `(m = ${m}, n = ${n}, dk = ${dk}, dv = ${dv}${heads === 1 ? '' : `, heads = ${heads}`})`);

    const heap = new Heap(module, check.where);
    try {
      const inputs = { q: heap.copyIn(q), k: heap.copyIn(k), v: heap.copyIn(v) };
      check.scanStaged(module, inputs);
      const maxQ = check.magnitude('q'), maxK = check.magnitude('k');
      check.bounded('q and k', 'dk * max|q| * max|k| * max(1, scale / temperature)',
        dk * maxQ * maxK * Math.max(1, multiplier));
      const outputCount = heads * m * dv, weightsCount = heads * m * n;
      const output = heap.floats(outputCount);
      // Without a weights buffer (null pointer) the core takes its output-only
      // path: an online softmax over key blocks, O(n*d) extra memory.
      const weights = wantWeights ? heap.floats(weightsCount) : 0;
      // Fields spelled out: a spread request made each call about 15 us slower (S1).
      const error = module.attentionHeads({ q: inputs.q, k: inputs.k, v: inputs.v, heads, m, n, dk, dv,
        hasScale: scale !== undefined, scale: scale ?? 0, temperature, causal, keyMask: heap.copyIn(keyMask), output,
        weights });
      if (error) throw new RangeError(`${check.where}: ${error}`);
      check.finiteInHeap(module, output, outputCount, 'output', 'q, k and v', () => heap.readFloats(output, outputCount));
      return {
        output: heap.readFloats(output, outputCount, into.output),
        weights: wantWeights ? heap.readFloats(weights, weightsCount, into.weights) : null,
      };
    } finally {
      heap.release();
    }
  }

  function multiHeadAttention(options) {
    const check = new Checker('multiHeadAttention', options, MULTI_HEAD_OUTPUT_KEYS, { deferFinite: true });
    const input = readMultiHead(check, { defaultHeads: undefined, identityWo: false });
    const { n, nContext, dModel, heads, headWidth, temperature } = input;
    const keysText = input.context ? 'nContext' : 'n';
    const into = readInto(check.where, options.into, [
      { name: 'output', length: n * dModel, lengthText: () => `n*dModel = ${n}*${dModel} = ${n * dModel}` },
      { name: 'weights', length: heads * n * nContext,
        lengthText: () => `heads*n*${keysText} = ${heads}*${n}*${nContext} = ${heads * n * nContext}` },
    ]);
    const outputCount = n * dModel, weightsCount = heads * n * nContext;
    const request = multiHeadRequest(input);
    check.memory(module, stagedBytes(MATRIX_NAMES.map((name) => input[name])) + nContext +
      4 * (outputCount + weightsCount + 4) + module.multiHeadBytes(request, false), multiHeadSizes(input));

    // With two threads the helper projects Q while this thread copies the
    // other matrices in (the copies were a serial sixth of the call:
    // web/docs/performance.md, "Round 10 (issue 24)"), when the core would
    // split Q's projection at all: a tiny layer's stays on one thread, and
    // its three calls only cost more than one. Woken now, the helper is
    // spinning when multiHeadBegin hands it Q (round 16).
    const staged = threads > 1 && module.multiHeadStagingPays(n, dModel);
    if (staged) module.wakeHelpers();
    const heap = new Heap(module, check.where);
    let begun = false;
    try {
      for (const name of MATRIX_NAMES) request[name] = input[name] ? heap.allocate(input[name].byteLength) : 0;
      const output = request.output = heap.floats(outputCount);
      const weights = request.weights = heap.floats(weightsCount);
      const magnitudes = request.magnitudes = heap.floats(PACKED_NAMES.length);
      request.keyMask = heap.copyIn(input.keyMask);
      const early = staged ? QUERY_NAMES : MATRIX_NAMES;
      for (const name of early) heap.write(request[name], input[name]);
      if (staged) {
        const error = module.multiHeadBegin(request);
        if (error) throw new RangeError(`${check.where}: ${error}`);
        begun = true;
      }
      for (const name of MATRIX_NAMES) if (!early.includes(name)) heap.write(request[name], input[name]);
      const error = staged ? module.multiHeadFinish(output, weights) : module.multiHeadAttention(request);
      if (error) throw new RangeError(`${check.where}: ${error}`);
      // Staged: the head weights copy out while the helper projects W_O (fresh
      // arrays only: a refused call leaves `into` untouched).
      const freshWeights = staged && !into.weights ? heap.readFloats(weights, weightsCount) : undefined;
      const freshOutput = staged && !into.output ? mappedFloats(outputCount) : undefined;
      if (staged) {
        module.multiHeadComplete();
        begun = false;
      }
      // The checks, in argument order, before any result: the core measured
      // the matrices while packing them (README, "Errors").
      const packed = heap.readFloats(magnitudes, PACKED_NAMES.length);
      check.scanStaged(module, Object.fromEntries(MATRIX_NAMES.map((name) => [name, request[name]])),
        Object.fromEntries(PACKED_NAMES.map((name, i) => [name, packed[i]])));
      checkMultiHeadMagnitudes(check, { dModel, headWidth, temperature, hasContext: input.context !== undefined });
      check.finiteInHeap(module, output, outputCount, 'output', 'x, context, weights and biases',
        () => heap.readFloats(output, outputCount));
      return {
        output: heap.readFloats(output, outputCount, into.output ?? freshOutput),
        weights: freshWeights ?? heap.readFloats(weights, weightsCount, into.weights),
      };
    } finally {
      // A throw after multiHeadBegin: wait for the helper's parts before
      // their memory is freed.
      if (begun) module.multiHeadAbandon();
      heap.release();
    }
  }

  function explainMatrices(options) {
    const check = new Checker('explainMatrices', options, MULTI_HEAD_KEYS);
    const input = readMultiHead(check, { defaultHeads: 1, identityWo: true });
    const request = multiHeadRequest(input);
    check.memory(module, stagedBytes(MATRIX_NAMES.map((name) => input[name])) + input.nContext +
      module.multiHeadBytes(request, true), multiHeadSizes(input));

    const heap = new Heap(module, check.where);
    try {
      for (const name of MATRIX_NAMES) request[name] = heap.copyIn(input[name]);
      request.keyMask = heap.copyIn(input.keyMask);
      const started = now();
      const record = module.explainMatrices(request);
      const elapsedMs = now() - started;
      if (record.error) throw new RangeError(`${check.where}: ${record.error}`);
      // The module's record as is (src/bindings/record.hpp names its keys), and the time.
      record.elapsedMs = elapsedMs;
      check.finiteResults({ output: record.output, weights: record.weights }, 'x, context, weights and biases');
      return markChecked(record);
    } finally {
      heap.release();
    }
  }

  function explainSentence(options) {
    const check = new Checker('explainSentence', options, SENTENCE_KEYS);
    const text = check.text('text');
    const contextText = check.text('context', { optional: true });
    const dModel = check.dimension('dModel', { fallback: 64, max: maxSentenceModelWidth });
    const heads = check.dimension('heads', { fallback: 4, max: maxSentenceModelWidth });
    check.divisible(dModel, heads);
    const seed = check.integer('seed', { fallback: 1, min: 0, max: 2 ** 32 - 1 });
    const causal = check.flag('causal', false);
    const temperature = check.finite('temperature', { fallback: 1, positive: true });
    const identity = check.flag('identity', false);
    check.multiplier(1 / Math.sqrt(dModel / heads), temperature);
    const crossAttention = contextText !== undefined;

    // One call tokenizes (once), checks the token counts and the memory, and
    // runs; its refusals are worded here. maxBytes is check.memory's budget
    // (availableMemory; check.memory words the refusal).
    const started = now();
    const record = module.explainSentence({
      text: new TextEncoder().encode(text), // UTF-8; lone surrogates become U+FFFD
      context: crossAttention ? new TextEncoder().encode(contextText) : new Uint8Array(0),
      crossAttention, dModel, heads, seed, causal, temperature, identity,
      maxBytes: availableMemory(module),
    });
    const elapsedMs = now() - started;
    if (record.refused === 'text' || record.refused === 'context') {
      const [name, given] = record.refused === 'text' ? ['text', text] : ['context', contextText];
      if (record.tokens === 0) {
        throw new RangeError(`${check.where}: ${name} must contain at least one word or symbol, got ${describe(given)}`);
      }
      throw new RangeError(`${check.where}: ${name} must have at most maxTokens = ${maxTokens} tokens, ` +
        `got ${record.tokens} tokens`);
    }
    if (record.refused === 'memory') {
      const sizes = `(tokens = ${record.n}, context tokens = ${record.nContext}, dModel = ${dModel}, heads = ${heads})`;
      check.memory(module, record.bytes, sizes);
      throw new RangeError(`${check.where}: sizes ${sizes} need about ${formatBytes(record.bytes)} of WebAssembly memory`);
    }
    if (record.error) throw new RangeError(`${check.where}: ${record.error}`);
    record.elapsedMs = elapsedMs;
    check.finiteResults({ output: record.output, weights: record.weights }, 'the embeddings');
    return markChecked(record);
  }

  return Object.freeze({
    version,
    simd,
    simdLevel,
    threads,
    maxTokens,
    attention,
    multiHeadAttention,
    explainMatrices,
    explainSentence,
    /** Loads a Hugging Face checkpoint (config.json, *.safetensors, tokenizer files) into this module. */
    // Imported on first use: pages that never open a model do not download
    // the loader and the tokenizers (bundlers split them into their own chunk).
    loadModel: async (options) => (await import('./model/load-model.js')).loadModel(module, options, { hub }),
    /** Bytes currently allocated in the WebAssembly heap (for leak checks). */
    heapBytesInUse: () => module.heapBytesInUse(),
  });
}

// ---- Loading ---------------------------------------------------------------------

/**
 * Returns `load(options)` for one platform. `instantiate(variant)` resolves to
 * the Embind module of 'relaxed', 'simd' or 'scalar'. Each variant is
 * instantiated once and its lens shared by later calls; a failed attempt is
 * not cached. `hub`: see createLens.
 */
export function makeLoader(instantiate, hub) {
  const lenses = new Map();
  return function load(options = {}) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      return Promise.reject(new TypeError(`attnlens.load: expected an options object, got ${describe(options)}`));
    }
    const unknown = Object.keys(options).find((key) => key !== 'simd');
    if (unknown !== undefined) {
      return Promise.reject(new TypeError(`attnlens.load: unknown option "${unknown}"; expected simd`));
    }
    const { simd } = options;
    if (simd !== undefined && typeof simd !== 'boolean' && !isSimdLevel(simd)) {
      return Promise.reject(new TypeError("attnlens.load: simd must be 'relaxed', 'simd', 'scalar', a boolean or " +
        `undefined, got ${describe(simd)}`));
    }
    if (typeof WebAssembly !== 'object') {
      return Promise.reject(new Error('attnlens.load: this JavaScript engine has no WebAssembly support'));
    }
    let variant;
    try {
      variant = chooseLevel(simd);
    } catch (error) {
      return Promise.reject(error);
    }
    if (!lenses.has(variant)) {
      const lens = instantiate(variant).then((module) => createLens(module, variant, hub));
      lens.catch(() => lenses.delete(variant));
      lenses.set(variant, lens);
    }
    return lenses.get(variant);
  };
}
