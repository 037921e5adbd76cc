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
/** Positions the logit lens sends through the LM head at once (LayerAnalyses::kLensRows). */
const LENS_ROWS = 16;
/** LayerStatus (src/analysis/layer_analyses.hpp) as a sentence; 0 is success. */
const LAYER_PROBLEMS = ['', 'out of WebAssembly memory for the value norms and the logit lens',
  'the forward pass returned no attention', 'the model has no LM head', 'topK is not from 1 to the vocabulary size'];

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
  // (withWeighted) and (topK > 0) the logit lens; else repeat induction only.
  // The analyses read one stack of layers over one sequence.
  function refuseEncoderDecoder(where) {
    if (info.encoderDecoder) throw new Error(`${where}: encoder-decoder models are not analyzed yet; use model.run`);
  }

  function analyzeForward(where, ids, period, topK = 0, withWeighted = true) {
    const n = ids.length, headCount = info.layers * info.heads;
    const attentionCount = headCount * n * n;
    const scoresCount = period ? headCount : DETECTORS.length * headCount;
    const rolloutCount = period ? 0 : info.layers * n * n;
    const weightedCount = period || !withWeighted ? 0 : attentionCount, lensCount = info.layers * n * topK;
    // What the layer analyses allocate besides: W_O unpacked, one head's v W_O rows, the norms, W_O^h packed;
    // a block of positions' normalized rows and logits.
    const layerScratch = (weightedCount ? info.heads * info.headWidth * info.dModel + n * info.dModel + headCount +
      (info.headWidth + 8) * info.dModel : 0) + (topK ? Math.min(n, LENS_ROWS) * (info.dModel + info.vocabSize) : 0);
    checkMemory(where, n, attentionCount + scoresCount + rolloutCount + n + weightedCount + 2 * lensCount + layerScratch);
    const heap = new Heap(module, where);
    let observer = 0;
    try {
      const run = { ids: heap.copyIn(ids), count: n, attention: heap.floats(attentionCount), hidden: 0, logits: 0,
        keyMask: 0, logitsFrom: 0, observer: 0 };
      const valueWeighted = weightedCount ? heap.floats(weightedCount) : 0;
      const lensIds = lensCount ? heap.floats(lensCount) : 0,  // int32s: 4 bytes as floats
        lensProbs = lensCount ? heap.floats(lensCount) : 0;
      if (valueWeighted || lensIds) {
        observer = run.observer = module._attnlens_layer_analyses(topK, lensIds, lensProbs, valueWeighted);
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
    // product per layer (for GPT-2 small about four forward passes), so a page
    // that shows only the detectors asks for neither.
    const [withWeighted, withLens] = ['valueWeighted', 'logitLens'].map((name) => {
      const value = options[name] ?? true;
      if (typeof value !== 'boolean') throw new TypeError(`${where}: ${name} must be true or false, got ${describe(value)}`);
      return value;
    });
    const { ids, tokens, n } = readInput(where, options);
    const { scores, rollout, valueWeighted, logitLens } =
      analyzeForward(where, ids, 0, core.hasLmHead && withLens ? topK : 0, withWeighted);
    const headCount = info.layers * info.heads;
    const named = {};
    DETECTORS.forEach((name, index) => {
      named[name] = scores.slice(index * headCount, (index + 1) * headCount);
    });
    return { ids, tokens, n, layers: info.layers, heads: info.heads, scores: named, rollout, valueWeighted, logitLens };
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
