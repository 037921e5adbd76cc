// model.analyze and model.inductionScores: what each head does, measured on
// the attention of one forward pass (an encoder-decoder's: of its encoding
// and one decoder pass, seq2seq.js). The forward writes the weights to the
// heap and the core's analyses (src/analysis/) read them there, so only the
// scores, the rollout, the value-weighted attention and the logit lens come
// back to JavaScript. The last two read each layer's V, W_O and residual
// stream as the forward passes them (a LayerAnalyses observer of the run).
import { Heap } from '../heap.js';
import { readPositions, valueWeightedScratch, withKeptRunMethods, writeHeadWeights, writeValueWeighted } from './attention-choice.js';
import { describe } from '../validation.js';
import { seededRandom } from './seeded-random.js';

/** The detectors, in the order the core writes them (src/analysis/detectors.hpp). */
const DETECTORS = ['previousToken', 'firstToken', 'currentToken', 'duplicateToken', 'induction'];
const ANALYZE_KEYS = ['text', 'ids', 'topK', 'valueWeighted', 'logitLens'];
const SEQ2SEQ_ANALYZE_KEYS = [...ANALYZE_KEYS, 'target', 'targetIds'];
const INDUCTION_KEYS = ['length', 'seed'];
const MAX_SEED = 2 ** 32 - 1;
/** LayerStatus (src/analysis/layer_analyses.hpp) as a sentence; 0 is success. */
const LAYER_PROBLEMS = ['', 'out of WebAssembly memory for the value norms and the logit lens',
  'the forward pass returned no attention', 'the model has no LM head', 'topK is not from 1 to the vocabulary size',
  'a logit lens position is outside the text', 'the run\'s layers were not the logit lens\'s'];

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

/** The detectors' scores by name, from the core's DETECTORS.length x `headCount` floats. */
export function namedScores(scores, headCount) {
  return Object.fromEntries(DETECTORS.map((name, index) => [name, scores.slice(index * headCount, (index + 1) * headCount)]));
}

/**
 * The core's analyses of one stack of layers over one sequence: model.analyze's
 * (an encoder-decoder's per kind). `floats` counts its buffers before the run
 * (the memory check); allocate() makes them and its LayerAnalyses observer (an
 * address for the forward pass, or 0); after the forward, end() frees the
 * observer and finish() reads every result. keys: the keys each query attends
 * over (n, or a cross-attention's source tokens). detectors: the five
 * detectors and the rollout (period 0), or with period > 0 repeat induction
 * only (head_scores), or none (false). lensRows: positions the lens reads (0: none).
 * kept: the run goes through the model's cache, and what the model kept of
 * it gives the results afterwards: the value-weighted attention (writeKept,
 * not the observer during the forward), and the weights the detectors and
 * the rollout read, a layer at a time (finish), so that one layer's heads are
 * in memory, not every layer's (at 1024 tokens of GPT-2 small 50 MB, not 604).
 */
export function stackAnalyses(module, info, where, {
  layers, n, keys = n, detectors = true, period = 0, weighted = false, kept = false, lensRows = 0, topK = 0,
}) {
  const headCount = layers * info.heads;
  // Through the cache: one layer's weights and scores at a time.
  const heldHeads = kept ? info.heads : headCount;
  const sizes = {
    attention: heldHeads * n * keys, scores: !detectors ? 0 : period ? heldHeads : DETECTORS.length * heldHeads,
    rollout: detectors && !period ? layers * n * n : 0, row: detectors && !period ? n : 0,
    valueWeighted: weighted ? headCount * n * keys : 0, lens: layers * lensRows * topK, lensProbs: layers * lensRows * topK,
  };
  // What the layer analyses allocate besides, as the core counts it: the
  // lens sends every layer's rows through the LM head together.
  const observed = weighted && !kept;
  const scratch = (observed || lensRows ? module._attnlens_layer_analyses_floats(keys, layers * lensRows, observed ? 1 : 0,
    info.dModel, info.vocabSize, info.heads, info.headWidth) : 0) + (weighted && kept ? valueWeightedScratch(info, n) : 0);
  let at = null, observer = 0;
  return {
    floats: Object.values(sizes).reduce((a, b) => a + b, 0) + lensRows + scratch,
    allocate(heap, positions = null) {
      // at.lens holds the lens's ids: int32s, 4 bytes as floats.
      at = Object.fromEntries(Object.entries(sizes).map(([name, count]) => [name, count ? heap.floats(count) : 0]));
      at.positions = at.lens && positions ? heap.copyIn(positions) : 0;
      if (observed || at.lens) {
        observer = module._attnlens_layer_analyses(topK, at.lens, at.lensProbs, at.positions, at.positions ? lensRows : 0,
          observed ? at.valueWeighted : 0, layers);
        if (!observer) throw new RangeError(`${where}: ${LAYER_PROBLEMS[1]}`);
      }
      // Through the cache the run itself returns no weights: finish() reads them from what it kept.
      return { attention: kept ? 0 : at.attention, observer };
    },
    // kept: every head's value-weighted attention from the run the model keeps (the bits the
    // observer computes: the same weights and values through the same value_weighted.hpp).
    writeKept(heap, handle) {
      if (!weighted || !kept) return;
      const every = (count) => Array.from({ length: count }, (_, index) => index);
      writeValueWeighted({ handle, info, n }, heap, { layers: every(layers), heads: every(info.heads), pool: 1 }, at.valueWeighted, where);
    },
    // Frees the observer (safe twice): '' or the problem it met, as a sentence.
    end() {
      const status = observer ? module._attnlens_layer_analyses_end(observer) : 0;
      observer = 0;
      return status ? `${where}: ${LAYER_PROBLEMS[status] ?? `the layer analyses failed (${status})`}` : '';
    },
    // ids: the sequence's ids on the heap (the duplicate-token and induction patterns).
    // handle: the model's, whose kept run gives the weights a layer at a time (kept).
    finish(heap, ids, checkFinite, positions = null, handle = null) {
      const read = (name) => (at[name] ? heap.readFloats(at[name], sizes[name]) : null);
      const checkAttention = () => {
        if (!Number.isFinite(module.maxMagnitude(at.attention, sizes.attention))) {
          checkFinite(where, [['attention', heap.readFloats(at.attention, sizes.attention)]]);
        }
      };
      // The detectors and the rollout of `count` layers from `first` on, their weights at at.attention.
      const analyzeLayers = (first, count) => {
        checkAttention();
        const layerFloats = 4 * n * n, rollout = at.rollout && at.rollout + first * layerFloats;
        // 1 only for a shape past the memory or a missing buffer, which the checks before rule out.
        if (module._attnlens_analyze(at.attention, ids, count, info.heads, n, period, at.scores, rollout, at.row,
          first > 0 ? rollout - layerFloats : 0) !== 0) {
          throw new RangeError(`${where}: the core refused the analysis of ${n} tokens`);
        }
      };
      let scores;
      if (detectors && kept) {
        // Each layer's heads from the kept queries and keys (the bits the run would have returned),
        // its scores placed where the core's [detector][layer * heads + head] puts them.
        const perLayer = sizes.scores / info.heads;
        scores = new Float32Array(perLayer * headCount);
        const everyHead = Array.from({ length: info.heads }, (_, head) => head);
        for (let layer = 0; layer < layers; layer++) {
          const error = writeHeadWeights(handle, layer, everyHead, 1, at.attention, n * keys);
          if (error) throw new RangeError(`${where}: ${error}`);
          analyzeLayers(layer, 1);
          const layerScores = read('scores');
          for (let detector = 0; detector < perLayer; detector++) {
            scores.set(layerScores.subarray(detector * info.heads, (detector + 1) * info.heads),
              detector * headCount + layer * info.heads);
          }
        }
      } else if (detectors) {
        analyzeLayers(0, layers);
        scores = read('scores');
      } else {
        checkAttention();
      }
      return {
        scores: scores ?? null, rollout: read('rollout'), valueWeighted: read('valueWeighted'),
        logitLens: at.lens ? {
          ids: module.HEAP32.slice(at.lens >>> 2, (at.lens >>> 2) + sizes.lens), probs: read('lensProbs'),
          positions: positions ? positions.slice() : Int32Array.from({ length: n }, (_, i) => i),
        } : null,
      };
    },
  };
}

/**
 * @param {object} model what model.js shares: module, handle, info, tokenizer
 *   and its checks (alive, checkOptions, readInput, checkMemory, checkFinite),
 *   and seq2seq.js's analyzeSeq2seq (an encoder-decoder's analyze)
 */
export function analysisMethods({ module, handle, info, core, tokenizer, alive, checkOptions, readInput, checkMemory, checkFinite, analyzeSeq2seq }) {
  // One forward pass (attention only), then the core's analyses over it
  // (module._attnlens_analyze, src/bindings/analysis_bindings.cpp), which
  // allocate nothing: every buffer is counted and allocated here. The layer
  // analyses (an observer of the same pass) allocate only their scratch,
  // counted here too, and report running out of it as a status.
  // period 0: the five detectors, the rollout, value-weighted attention
  // (withWeighted) and (topK > 0) the logit lens of `positions` (an
  // Int32Array; null: every position); else repeat induction only.
  // A causal model's analysis without the logit lens comes from a forward
  // through the cache model.run keeps: a text that begins as the kept run's
  // ids recomputes only the positions after them, the cached path returns
  // every head's full weights, kept rows recomputed from the kept queries
  // and keys, the bits of a fresh run (forward.hpp RunRequest::cache), and
  // value-weighted attention is computed afterwards from the kept values
  // (kept_value_weighted.hpp). Like a run, it replaces what the model kept,
  // so the last run result's headWeights, layerWeights and computeLogits are
  // refused afterwards (the cache generation, keptReader), and the analysis's
  // result has them instead, over its own ids. The lens reads
  // every position's residual stream during the forward (an observer: the
  // core then computes every position and keeps nothing), an encoder's
  // changed token changes every row (the cache would hold a copy for
  // nothing), and induction's random sequence would evict the user's text:
  // those keep the uncached forward.
  function analyzeForward(where, ids, period, topK = 0, withWeighted = true, positions = null) {
    const n = ids.length, lensRows = topK ? positions?.length ?? n : 0, weighted = !period && withWeighted;
    const cached = info.causal && !period && !lensRows;
    const stack = stackAnalyses(module, info, where, { layers: info.layers, n, period, weighted, kept: cached, lensRows, topK });
    checkMemory(where, n, stack.floats);
    const heap = new Heap(module, where);
    try {
      const { attention, observer } = stack.allocate(heap, positions);
      const run = { ids: heap.copyIn(ids), count: n, attention, hidden: 0, logits: 0,
        keyMask: 0, logitsFrom: 0, observer, chosen: 0, cached, pool: 1 };
      const error = handle.run(run);
      if (error) throw new RangeError(`${where}: ${error}`);
      const problem = stack.end();
      if (problem) throw new RangeError(problem);
      stack.writeKept(heap, handle);
      try {
        // Through the cache, the run the model now keeps is this one: its generation (keptReader), else null.
        return { ...stack.finish(heap, run.ids, checkFinite, positions, handle), generation: cached ? handle.cacheGeneration() : null };
      } catch (refused) {
        // As model.run: a refused run leaves nothing behind, what it kept overflowed too.
        if (cached) handle.dropCache();
        throw refused;
      }
    } finally {
      stack.end();
      heap.release();
    }
  }

  function analyze(options) {
    const where = 'model.analyze';
    alive(where);
    checkOptions(where, options, info.encoderDecoder ? SEQ2SEQ_ANALYZE_KEYS : ANALYZE_KEYS);
    // The default, 5, shrinks to a smaller vocabulary; a topK asked for does not.
    const topK = wholeNumber(where, 'topK', options.topK ?? Math.min(5, info.vocabSize), 1, info.vocabSize, ' (the vocabulary size)');
    // The two per-layer measures can be left out: the lens costs an LM-head
    // product per layer and position (for GPT-2 small about half a forward
    // pass per layer), so a page that shows only the detectors asks for
    // neither, and one that shows a few positions asks for those. (The
    // core reads the LM head once for all layers' rows, or once per block of
    // rows when their logits pass its scratch.)
    const withWeighted = options.valueWeighted ?? true;
    if (typeof withWeighted !== 'boolean') {
      throw new TypeError(`${where}: valueWeighted must be true or false, got ${describe(withWeighted)}`);
    }
    // An encoder-decoder's lens reads the decoder: its positions are the target's.
    if (info.encoderDecoder) {
      return analyzeSeq2seq(where, options, { topK, withWeighted, readLens: (value, m) => readLens(where, value, m, 'target') });
    }
    const { ids, tokens, n } = readInput(where, options);
    const lens = readLens(where, options.logitLens ?? true, n);
    const { scores, rollout, valueWeighted, logitLens, generation } =
      analyzeForward(where, ids, 0, core.hasLmHead && lens ? topK : 0, withWeighted, lens?.positions ?? null);
    const result = { ids, tokens, n, layers: info.layers, heads: info.heads, scores: namedScores(scores, info.layers * info.heads),
      rollout, valueWeighted, logitLens };
    // Through the cache the model keeps this analysis's run, as it keeps a run's: the same methods read it,
    // so that a page's next heads or predictions of these ids need no forward (the worker's lastRun).
    if (generation === null) return result;
    return withKeptRunMethods(result, { module, handle, info, n, generation, alive, Heap, checkFinite, owner: 'model.analyze result' });
  }

  // logitLens: true (every position), false, or { positions }: the positions
  // (0 to n - 1, any order) whose lens is computed. -> null (no lens) or { positions: Int32Array | null }.
  function readLens(where, value, n, sequence = 'text') {
    if (typeof value === 'boolean') return value ? { positions: null } : null;
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !('positions' in value)) {
      throw new TypeError(`${where}: logitLens must be true, false or { positions }, got ${describe(value)}`);
    }
    const unknown = Object.keys(value).find((key) => key !== 'positions');
    if (unknown !== undefined) throw new TypeError(`${where}: unknown logitLens option "${unknown}"; expected positions`);
    return { positions: readPositions(where, value.positions, n, 'logitLens.positions', ` (the ${sequence}'s ${n} positions)`) };
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
    if (info.encoderDecoder) {
      throw new Error(`${where}: encoder-decoder models are not scored on repeated random tokens; model.analyze gives ` +
        'their encoder\'s and decoder\'s detectors, induction included, on your own source and target');
    }
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
