// model.analyze and model.inductionScores: what each head does, measured on
// the attention of one forward pass. The forward writes the weights to the
// heap and the core's analyses (src/analysis/) read them there, so only the
// scores, the rollout, the value-weighted attention and the logit lens come
// back to JavaScript. The last two read each layer's V, W_O and residual
// stream as the forward passes them (a LayerAnalyses observer of the run).
import { Heap } from '../heap.js';
import { describe } from '../validation.js';
import { seededRandom } from './seeded-random.js';

/** The detectors, in the order the core writes them (src/analysis/detectors.hpp). */
const DETECTORS = ['previousToken', 'firstToken', 'currentToken', 'duplicateToken', 'induction'];
const ANALYZE_KEYS = ['text', 'ids', 'topK', 'valueWeighted', 'logitLens'];
const INDUCTION_KEYS = ['length', 'seed'];
const MAX_SEED = 2 ** 32 - 1;
/** LayerStatus (src/analysis/layer_analyses.hpp) as a sentence; 0 is success. */
const LAYER_PROBLEMS = ['', 'out of WebAssembly memory for the value norms and the logit lens',
  'the forward pass returned no attention', 'the model has no LM head', 'topK is not from 1 to the vocabulary size',
  'a logit lens position is outside the text'];

/**
 * A seeded random sequence of `length` token ids in [0, vocabSize), special
 * tokens redrawn: one draw u in [0, 1) of seededRandom(seed) (mulberry32) per
 * id, id = floor(u * vocabSize). The same seed and vocabulary give the same ids.
 */
export function randomTokenIds(length, seed, vocabSize, isSpecial = () => false) {
  const next = seededRandom(seed);
  const ids = new Int32Array(length);
  for (let i = 0; i < length; i++) {
    let id, tries = 0;
    do {
      // A vocabulary of special tokens only has nothing to draw from.
      if (++tries > 1000) throw new RangeError('every token id drawn was a special token');
      id = Math.floor(next() * vocabSize);
    } while (isSpecial(id));
    ids[i] = id;
  }
  return ids;
}

/**
 * @param {object} model what model.js shares: module, handle, info, tokenizer
 *   and its checks (alive, checkOptions, readInput, checkMemory, checkFinite)
 */
export function analysisMethods({ module, handle, info, core, tokenizer, alive, checkOptions, readInput, checkMemory, checkFinite }) {
  // One forward pass (attention only), then the core's analyses over it
  // (module._attnlens_analyze, src/bindings/analysis_bindings.cpp), which
  // allocate nothing: every buffer is counted and allocated here. The layer
  // analyses (an observer of the same pass) allocate only their scratch,
  // counted here too, and report running out of it as a status.
  // period 0: the five detectors, the rollout, value-weighted attention
  // (withWeighted) and (topK > 0) the logit lens of `positions` (an
  // Int32Array; null: every position); else repeat induction only.
  // The analyses read one stack of layers over one sequence.
  function refuseEncoderDecoder(where) {
    if (info.encoderDecoder) throw new Error(`${where}: encoder-decoder models are not analyzed yet; use model.run`);
  }

  function analyzeForward(where, ids, period, topK = 0, withWeighted = true, positions = null) {
    const n = ids.length, headCount = info.layers * info.heads, lensRows = topK ? positions?.length ?? n : 0;
    const attentionCount = headCount * n * n;
    const scoresCount = period ? headCount : DETECTORS.length * headCount;
    const rolloutCount = period ? 0 : info.layers * n * n;
    const weightedCount = period || !withWeighted ? 0 : attentionCount, lensCount = info.layers * lensRows * topK;
    // What the layer analyses allocate besides, as the core counts it.
    const layerScratch = module._attnlens_layer_analyses_floats(n, lensRows, weightedCount ? 1 : 0, info.dModel,
      info.vocabSize, info.heads, info.headWidth);
    checkMemory(where, n, attentionCount + scoresCount + rolloutCount + n + weightedCount + 2 * lensCount + lensRows +
      layerScratch);
    const heap = new Heap(module, where);
    let observer = 0;
    try {
      const run = { ids: heap.copyIn(ids), count: n, attention: heap.floats(attentionCount), hidden: 0, logits: 0,
        keyMask: 0, logitsFrom: 0, observer: 0, chosen: 0, cached: false };
      const valueWeighted = weightedCount ? heap.floats(weightedCount) : 0;
      const lensIds = lensCount ? heap.floats(lensCount) : 0,  // int32s: 4 bytes as floats
        lensProbs = lensCount ? heap.floats(lensCount) : 0;
      const lensPositions = lensIds && positions ? heap.copyIn(positions) : 0;
      if (valueWeighted || lensIds) {
        observer = run.observer = module._attnlens_layer_analyses(topK, lensIds, lensProbs, lensPositions,
          lensPositions ? lensRows : 0, valueWeighted);
        if (!observer) throw new RangeError(`${where}: ${LAYER_PROBLEMS[1]}`);
      }
      const error = handle.run(run);
      if (error) throw new RangeError(`${where}: ${error}`);
      if (observer) {
        const status = module._attnlens_layer_analyses_end(observer);
        observer = 0;
        if (status) throw new RangeError(`${where}: ${LAYER_PROBLEMS[status] ?? `the layer analyses failed (${status})`}`);
      }
      if (!Number.isFinite(module.maxMagnitude(run.attention, attentionCount))) {
        checkFinite(where, [['attention', heap.readFloats(run.attention, attentionCount)]]);
      }
      const scores = heap.floats(scoresCount);
      const rollout = rolloutCount ? heap.floats(rolloutCount) : 0, row = rolloutCount ? heap.floats(n) : 0;
      // 1 only for a shape past the memory or a missing buffer, which the checks above rule out.
      if (module._attnlens_analyze(run.attention, run.ids, info.layers, info.heads, n, period, scores, rollout, row) !== 0) {
        throw new RangeError(`${where}: the core refused the analysis of ${n} tokens`);
      }
      return {
        scores: heap.readFloats(scores, scoresCount),
        rollout: rollout ? heap.readFloats(rollout, rolloutCount) : null,
        valueWeighted: valueWeighted ? heap.readFloats(valueWeighted, weightedCount) : null,
        logitLens: lensIds ? {
          ids: module.HEAP32.slice(lensIds >>> 2, (lensIds >>> 2) + lensCount),
          probs: heap.readFloats(lensProbs, lensCount),
          positions: positions ? positions.slice() : Int32Array.from({ length: n }, (_, i) => i),
        } : null,
      };
    } finally {
      if (observer) module._attnlens_layer_analyses_end(observer);
      heap.release();
    }
  }

  function analyze(options) {
    const where = 'model.analyze';
    alive(where);
    refuseEncoderDecoder(where);
    checkOptions(where, options, ANALYZE_KEYS);
    // The default, 5, shrinks to a smaller vocabulary; a topK asked for does not.
    const topK = wholeNumber(where, 'topK', options.topK ?? Math.min(5, info.vocabSize), 1, info.vocabSize, ' (the vocabulary size)');
    // The two per-layer measures can be left out: the lens costs an LM-head
    // product per layer and position (for GPT-2 small about half a forward
    // pass per layer), so a page that shows only the detectors asks for
    // neither, and one that shows a few positions asks for those.
    const withWeighted = options.valueWeighted ?? true;
    if (typeof withWeighted !== 'boolean') {
      throw new TypeError(`${where}: valueWeighted must be true or false, got ${describe(withWeighted)}`);
    }
    const { ids, tokens, n } = readInput(where, options);
    const lens = readLens(where, options.logitLens ?? true, n);
    const { scores, rollout, valueWeighted, logitLens } =
      analyzeForward(where, ids, 0, core.hasLmHead && lens ? topK : 0, withWeighted, lens?.positions ?? null);
    const headCount = info.layers * info.heads;
    const named = {};
    DETECTORS.forEach((name, index) => {
      named[name] = scores.slice(index * headCount, (index + 1) * headCount);
    });
    return { ids, tokens, n, layers: info.layers, heads: info.heads, scores: named, rollout, valueWeighted, logitLens };
  }

  // logitLens: true (every position), false, or { positions }: the positions
  // (0 to n - 1, any order) whose lens is computed. -> null (no lens) or { positions: Int32Array | null }.
  function readLens(where, value, n) {
    if (typeof value === 'boolean') return value ? { positions: null } : null;
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !('positions' in value)) {
      throw new TypeError(`${where}: logitLens must be true, false or { positions }, got ${describe(value)}`);
    }
    const unknown = Object.keys(value).find((key) => key !== 'positions');
    if (unknown !== undefined) throw new TypeError(`${where}: unknown logitLens option "${unknown}"; expected positions`);
    const { positions } = value;
    if (!(Array.isArray(positions) || ArrayBuffer.isView(positions)) || positions.length === 0) {
      throw new TypeError(`${where}: logitLens.positions must be a non-empty array of positions from 0 to ${n - 1}, got ${describe(positions)}`);
    }
    Array.prototype.forEach.call(positions, (position, index) => wholeNumber(where, `logitLens.positions[${index}]`,
      position, 0, n - 1, ` (the text's ${n} positions)`));
    return { positions: Int32Array.from(positions) };
  }

  function wholeNumber(where, name, value, low, high, why = '') {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < low || value > high) {
      throw new RangeError(`${where}: ${name} must be an integer from ${low} to ${high}${why}, got ${describe(value)}`);
    }
    return value;
  }

  function inductionScores(options = {}) {
    const where = 'model.inductionScores';
    alive(where);
    refuseEncoderDecoder(where);
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new TypeError(`${where}: expected an options object { length, seed }, got ${describe(options)}`);
    }
    checkOptions(where, options, INDUCTION_KEYS);
    const longest = Math.floor(info.maxPositions / 2);
    if (longest < 1) throw new RangeError(`${where}: the model's ${info.maxPositions} positions cannot hold a repeat`);
    const length = wholeNumber(where, 'length', options.length ?? 50, 1, longest,
      ` (two copies must fit the model's ${info.maxPositions} positions)`);
    const seed = wholeNumber(where, 'seed', options.seed ?? 1, 0, MAX_SEED);
    const isSpecial = (id) => tokenizer?.addedTokens?.isSpecial(id) ?? false;
    let once;
    try {
      once = randomTokenIds(length, seed, info.vocabSize, isSpecial);
    } catch (error) {
      throw new RangeError(`${where}: ${error.message}`);
    }
    const ids = new Int32Array(2 * length);
    ids.set(once);
    ids.set(once, length);
    return analyzeForward(where, ids, length).scores;
  }

  return { analyze, inductionScores };
}
