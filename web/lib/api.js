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
import { Heap, now } from './heap.js';
import {
  absent, Checker, describe, MAX_SENTENCE_MODEL_WIDTH, readInto,
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

// Floats the core holds at once for multi-head attention: inputs, projections,
// per-head copies and the transposed keys (see src/attention/multi_head.cpp).
function multiHeadFloats({ n, nContext, dModel, heads, headWidth }, traced) {
  const weights = heads * n * nContext;
  const inputs = (n + nContext) * dModel + 4 * dModel * dModel + 4 * dModel;
  const working = (2 * n + 2 * nContext) * dModel + (2 * n + 3 * nContext) * headWidth;
  return inputs + working + n * dModel + (traced ? 3 * weights + nContext * headWidth : weights);
}

function multiHeadSizes({ n, nContext, dModel, heads }) {
  return `(n = ${n}, nContext = ${nContext}, dModel = ${dModel}, heads = ${heads})`;
}

// Floats of the attention core's own scratch (src/attention/attention.cpp):
// K^T and V packed into panels of 16 columns, zero padded (so a narrow V,
// dv = 1, takes 16 floats per key), plus, without weights, one query block's
// online-softmax buffers (24 rows of 256 scores and 2 x dv sums). Its dense
// fallback (24 x n) runs only for infinite scores, which the magnitude check
// excludes.
function attentionScratchFloats(n, dk, dv) {
  const panels = (columns) => Math.ceil(columns / 16) * 16;
  return panels(n) * dk + n * panels(dv) + 24 * (512 + 2 * dv);
}

/**
 * Builds the public API object over an instantiated Embind module.
 * @param {object} module the attnlens Embind module
 * @param {'relaxed' | 'simd' | 'scalar' | boolean} level which build it is
 *   (a boolean, as before levels existed: true for 'simd', false for 'scalar')
 */
export function createLens(module, level) {
  const simdLevel = typeof level === 'boolean' ? (level ? 'simd' : 'scalar') : level;
  const simd = simdLevel !== 'scalar';
  const maxTokens = module.maxSentenceTokens();
  // Each attention thread packs its own K^T and V (1 except in a pthreads
  // build; modules without the binding are single-threaded).
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
    // scratch: one head's K^T and V packed into panels (see attentionScratchFloats).
    const floats = heads * (m * dk + n * dk + n * dv + m * dv + (wantWeights ? m * n : 0)) +
      threads * attentionScratchFloats(n, dk, dv);
    check.memory(module, floats * 4 + n,
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
      const error = module.attentionHeadsRaw(inputs.q, inputs.k, inputs.v, heads, m, n, dk, dv,
        scale !== undefined, scale ?? 0, temperature, causal, heap.copyIn(keyMask), output, weights);
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
    check.memory(module, multiHeadFloats(input, false) * 4 + nContext, multiHeadSizes(input));

    const heap = new Heap(module, check.where);
    try {
      const staged = {};
      for (const name of ['x', 'context', 'wq', 'wk', 'wv', 'wo', 'bq', 'bk', 'bv', 'bo']) {
        staged[name] = heap.copyIn(input[name]);
      }
      check.scanStaged(module, staged);
      checkMultiHeadMagnitudes(check, { dModel, headWidth, temperature, hasContext: input.context !== undefined });
      const outputCount = n * dModel, weightsCount = heads * n * nContext;
      const output = heap.floats(outputCount);
      const weights = heap.floats(weightsCount);
      const error = module.multiHeadAttentionRaw(staged.x, n, staged.context,
        input.context ? nContext : 0, dModel, heads, staged.wq, staged.wk, staged.wv, staged.wo,
        staged.bq, staged.bk, staged.bv, staged.bo, input.causal, heap.copyIn(input.keyMask),
        input.temperature, output, weights);
      if (error) throw new RangeError(`${check.where}: ${error}`);
      check.finiteInHeap(module, output, outputCount, 'output', 'x, context, weights and biases',
        () => heap.readFloats(output, outputCount));
      return {
        output: heap.readFloats(output, outputCount, into.output),
        weights: heap.readFloats(weights, weightsCount, into.weights),
      };
    } finally {
      heap.release();
    }
  }

  function explainMatrices(options) {
    const check = new Checker('explainMatrices', options, MULTI_HEAD_KEYS);
    const input = readMultiHead(check, { defaultHeads: 1, identityWo: true });
    const { n, nContext, dModel, heads, headWidth } = input;
    check.memory(module, multiHeadFloats(input, true) * 4 + nContext, multiHeadSizes(input));

    const heap = new Heap(module, check.where);
    try {
      const output = heap.floats(n * dModel);
      const started = now();
      const trace = module.explainMatricesRaw(heap.copyIn(input.x), n, heap.copyIn(input.context),
        input.context ? nContext : 0, dModel, heads, heap.copyIn(input.wq), heap.copyIn(input.wk),
        heap.copyIn(input.wv), heap.copyIn(input.wo), heap.copyIn(input.bq), heap.copyIn(input.bk),
        heap.copyIn(input.bv), heap.copyIn(input.bo), input.causal, heap.copyIn(input.keyMask),
        input.temperature, output);
      const elapsedMs = now() - started;
      if (trace.error) throw new RangeError(`${check.where}: ${trace.error}`);
      const result = {
        tokens: null,
        contextTokens: null,
        n, nContext, dModel, heads, headWidth,
        scale: 1 / Math.sqrt(headWidth),
        temperature: input.temperature, causal: input.causal, keyMask: input.keyMask ? input.keyMask.slice() : null,
        crossAttention: input.context !== undefined, architecture: null, kvHeads: heads,
        x: input.x.slice(),
        contextX: (input.context ?? input.x).slice(),
        wq: input.wq.slice(), wk: input.wk.slice(), wv: input.wv.slice(), wo: input.wo.slice(),
        q: trace.q, k: trace.k, v: trace.v,
        scores: trace.scores, scaledScores: trace.scaledScores, weights: trace.weights,
        concatenatedHeads: trace.concatenatedHeads,
        output: heap.readFloats(output, n * dModel),
        elapsedMs,
      };
      check.finiteResults({ output: result.output, weights: result.weights }, 'x, context, weights and biases');
      return result;
    } finally {
      heap.release();
    }
  }

  // UTF-8 bytes of the text (lone surrogates become U+FFFD) and its token count.
  function tokenizeForCheck(check, name, text) {
    const bytes = new TextEncoder().encode(text);
    const count = module.tokenCount(bytes);
    if (count === 0) {
      throw new RangeError(`${check.where}: ${name} must contain at least one word or symbol, got ${describe(text)}`);
    }
    if (count > maxTokens) {
      throw new RangeError(`${check.where}: ${name} must have at most maxTokens = ${maxTokens} tokens, got ${count} tokens`);
    }
    return { bytes, count };
  }

  function explainSentence(options) {
    const check = new Checker('explainSentence', options, SENTENCE_KEYS);
    const text = check.text('text');
    const contextText = check.text('context', { optional: true });
    const dModel = check.dimension('dModel', { fallback: 64, max: MAX_SENTENCE_MODEL_WIDTH });
    const heads = check.dimension('heads', { fallback: 4, max: MAX_SENTENCE_MODEL_WIDTH });
    check.divisible(dModel, heads);
    const seed = check.integer('seed', { fallback: 1, min: 0, max: 2 ** 32 - 1 });
    const causal = check.flag('causal', false);
    const temperature = check.finite('temperature', { fallback: 1, positive: true });
    const identity = check.flag('identity', false);
    const headWidth = dModel / heads;
    check.multiplier(1 / Math.sqrt(headWidth), temperature);
    const sentence = tokenizeForCheck(check, 'text', text);
    const context = contextText === undefined ? undefined : tokenizeForCheck(check, 'context', contextText);
    const n = sentence.count, nContext = context ? context.count : n;
    const shape = { n, nContext, dModel, heads, headWidth };
    // The pipeline also keeps embeddings, the four matrices and the outputs.
    const pipelineFloats = multiHeadFloats(shape, true) + 2 * (n + nContext) * dModel + 4 * dModel * dModel;
    check.memory(module, pipelineFloats * 4 + 2 * (sentence.bytes.length + (context?.bytes.length ?? 0)),
      `(tokens = ${n}, context tokens = ${nContext}, dModel = ${dModel}, heads = ${heads})`);

    const started = now();
    const steps = module.sentenceAttention(sentence.bytes, context?.bytes ?? new Uint8Array(0), context !== undefined,
      dModel, heads, seed, causal, temperature, identity);
    const elapsedMs = now() - started;
    if (steps.error) throw new RangeError(`${check.where}: ${steps.error}`);
    const result = {
      tokens: steps.tokens.map((token) => token.text),
      contextTokens: steps.contextTokens.map((token) => token.text),
      n, nContext, dModel, heads, headWidth,
      scale: 1 / Math.sqrt(headWidth),
      temperature, causal, keyMask: null, crossAttention: context !== undefined, architecture: null, kvHeads: heads,
      x: steps.x, contextX: steps.contextX,
      wq: steps.wq, wk: steps.wk, wv: steps.wv, wo: steps.wo,
      q: steps.q, k: steps.k, v: steps.v,
      scores: steps.scores, scaledScores: steps.scaledScores, weights: steps.weights,
      concatenatedHeads: steps.concatenatedHeads,
      output: steps.output,
      elapsedMs,
    };
    check.finiteResults({ output: result.output, weights: result.weights }, 'the embeddings');
    return result;
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
    loadModel: async (options) => (await import('./model/load-model.js')).loadModel(module, options),
    /** Bytes currently allocated in the WebAssembly heap (for leak checks). */
    heapBytesInUse: () => module.heapBytesInUse(),
  });
}

// ---- Loading ---------------------------------------------------------------------

/**
 * Returns `load(options)` for one platform. `instantiate(variant)` resolves to
 * the Embind module of 'relaxed', 'simd' or 'scalar'. Each variant is
 * instantiated once and its lens shared by later calls; a failed attempt is
 * not cached.
 */
export function makeLoader(instantiate) {
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
      const lens = instantiate(variant).then((module) => createLens(module, variant));
      lens.catch(() => lenses.delete(variant));
      lenses.set(variant, lens);
    }
    return lenses.get(variant);
  };
}
