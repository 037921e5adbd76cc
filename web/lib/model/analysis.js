// model.analyze and model.inductionScores: what each head does, measured on
// the attention of one forward pass. The forward writes the weights to the
// heap and the core's analyses (src/analysis/) read them there, so only the
// scores and the rollout come back to JavaScript.
import { Heap } from '../heap.js';
import { describe } from '../validation.js';
import { seededRandom } from './seeded-random.js';

/** The detectors, in the order the core writes them (src/analysis/detectors.hpp). */
const DETECTORS = ['previousToken', 'firstToken', 'currentToken', 'duplicateToken', 'induction'];
const ANALYZE_KEYS = ['text', 'ids'];
const INDUCTION_KEYS = ['length', 'seed'];
const MAX_SEED = 2 ** 32 - 1;

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
export function analysisMethods({ module, handle, info, tokenizer, alive, checkOptions, readInput, checkMemory, checkFinite }) {
  // One forward pass (attention only), then the core's analyses over it
  // (module._attnlens_analyze, src/bindings/analysis_bindings.cpp), which
  // allocate nothing: every buffer is counted and allocated here.
  // period 0: the five detectors and the rollout; else repeat induction only.
  function analyzeForward(where, ids, period) {
    const n = ids.length, headCount = info.layers * info.heads;
    const attentionCount = headCount * n * n;
    const scoresCount = period ? headCount : DETECTORS.length * headCount;
    const rolloutCount = period ? 0 : info.layers * n * n;
    checkMemory(where, n, attentionCount + scoresCount + rolloutCount + n);
    const heap = new Heap(module, where);
    try {
      const run = { ids: heap.copyIn(ids), count: n, attention: heap.floats(attentionCount), hidden: 0, logits: 0,
        keyMask: 0, logitsFrom: 0 };
      const error = handle.run(run);
      if (error) throw new RangeError(`${where}: ${error}`);
      if (!Number.isFinite(module.maxMagnitude(run.attention, attentionCount))) {
        checkFinite(where, [['attention', heap.readFloats(run.attention, attentionCount)]]);
      }
      const scores = heap.floats(scoresCount);
      const rollout = rolloutCount ? heap.floats(rolloutCount) : 0, row = rolloutCount ? heap.floats(n) : 0;
      // 1 only for a shape past the memory or a missing buffer, which the checks above rule out.
      if (module._attnlens_analyze(run.attention, run.ids, info.layers, info.heads, n, period, scores, rollout, row) !== 0) {
        throw new RangeError(`${where}: the core refused the analysis of ${n} tokens`);
      }
      return { scores: heap.readFloats(scores, scoresCount), rollout: rollout ? heap.readFloats(rollout, rolloutCount) : null };
    } finally {
      heap.release();
    }
  }

  function analyze(options) {
    const where = 'model.analyze';
    alive(where);
    checkOptions(where, options, ANALYZE_KEYS);
    const { ids, tokens, n } = readInput(where, options);
    const { scores, rollout } = analyzeForward(where, ids, 0);
    const headCount = info.layers * info.heads;
    const named = {};
    DETECTORS.forEach((name, index) => {
      named[name] = scores.slice(index * headCount, (index + 1) * headCount);
    });
    return { ids, tokens, n, layers: info.layers, heads: info.heads, scores: named, rollout };
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
