// A loaded model: tokenize, run, explain and dispose over one ModelHandle.
//
// run() returns the chosen layers' and heads' attention (every one by
// default) as one Float32Array [layer][head][query][key], the last hidden
// state and the logits; explain()
// returns one layer's every step in the Explanation shape explainMatrices()
// gives, so the page's step-by-step view shows a real model's numbers.
import { Heap, now } from '../heap.js';
import { analysisMethods } from './analysis.js';
import {
  choiceFlags, pooledSide, readAttentionChoice, valueWeightedScratch, withKeptRunMethods, writeValueWeighted,
} from './attention-choice.js';
import { seq2seqMethods } from './seq2seq.js';
import {
  availableMemory, describe, firstNonFinite, formatBytes, limitsOf, markChecked, MAX_TEXT_LENGTH, readInto,
} from '../validation.js';

const RUN_KEYS = ['text', 'ids', 'keyMask', 'logits', 'attention', 'into'];
const LOGITS_CHOICES = "'all', 'last', 'none' or false";
const EXPLAIN_KEYS = ['text', 'ids', 'keyMask', 'layer', 'head'];

/**
 * @param {object} module the Embind module
 * @param {object} handle its ModelHandle, loaded and finished
 * @param {object} info the public model.info
 * @param {object} core the ModelConfig the handle was made with
 * @param {object|null} tokenizer from tokenizers/, or null (ids only)
 * @param {{ eosIds: Set<number>, badWords: number[][] }} [generation] what generate reads from config.json (seq2seq.js's generationRulesOf)
 */
export function createModel(module, handle, info, core, tokenizer, generation = { eosIds: new Set(), badWords: [] }) {
  let disposed = false;

  function alive(where) {
    if (disposed) throw new Error(`${where}: this model was disposed; load it again with lens.loadModel`);
  }

  function checkOptions(where, options, keys) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new TypeError(`${where}: expected an options object with text or ids, got ${describe(options)}`);
    }
    for (const key of Object.keys(options)) {
      if (!keys.includes(key)) throw new TypeError(`${where}: unknown option "${key}"; expected one of ${keys.join(', ')}`);
    }
  }

  // side 'target': an encoder-decoder's target text, which a Marian tokenizer reads with target.spm.
  function tokenize(text, where = 'model.tokenize', side = 'source') {
    alive(where);
    if (!tokenizer) {
      throw new Error(`${where}: this model was loaded without a tokenizer; pass { ids } or load it with ` +
        'tokenizer.json (or vocab.json + merges.txt, vocab.txt, or source.spm + target.spm + vocab.json)');
    }
    if (typeof text !== 'string') throw new TypeError(`${where}: text must be a string, got ${describe(text)}`);
    if (text.length > MAX_TEXT_LENGTH) {
      throw new RangeError(`${where}: text must be at most ${MAX_TEXT_LENGTH} characters long, got ${text.length}`);
    }
    const { ids, tokens, offsets } = side === 'target' && tokenizer.encodeTarget ? tokenizer.encodeTarget(text) : tokenizer.encode(text);
    return { ids, tokens, offsets };
  }

  // The ids of one call, from { text } or { ids } (an encoder-decoder's
  // target: textKey 'target', idsKey 'targetIds'), checked against the model.
  function readInput(where, options, textKey = 'text', idsKey = 'ids') {
    const hasText = options[textKey] !== undefined, hasIds = options[idsKey] !== undefined;
    if (hasText === hasIds) throw new TypeError(`${where}: pass exactly one of ${textKey} and ${idsKey}`);
    let ids, tokens;
    if (hasText) {
      ({ ids, tokens } = tokenize(options[textKey], where, textKey === 'target' ? 'target' : 'source'));
      if (ids.length === 0) throw new RangeError(`${where}: ${textKey} must give at least one token, got ${describe(options[textKey])}`);
    } else {
      const given = options[idsKey];
      if (!(Array.isArray(given) || (ArrayBuffer.isView(given) && !(given instanceof DataView)))) {
        throw new TypeError(`${where}: ${idsKey} must be an Int32Array or an array of token ids, got ${describe(given)}`);
      }
      if (given.length === 0) throw new RangeError(`${where}: ${idsKey} must hold at least one token id, got none`);
      ids = new Int32Array(given.length);
      for (let i = 0; i < given.length; i++) {
        const id = Number(given[i]);
        if (!Number.isInteger(id) || id < 0 || id >= info.vocabSize) {
          throw new RangeError(`${where}: ${idsKey}[${i}] must be an integer from 0 to ${info.vocabSize - 1} (the vocabulary), ` +
            `got ${describe(given[i])}`);
        }
        ids[i] = id;
      }
      tokens = Array.from(ids, (id) => (tokenizer ? tokenizer.tokenText(id) : String(id)));
    }
    if (ids.length > info.maxPositions) {
      throw new RangeError(`${where}: the input has ${ids.length} tokens, more than the model's ${info.maxPositions} ` +
        'positions');
    }
    const bad = ids.findIndex((id) => id >= info.vocabSize);
    if (bad >= 0) {
      throw new RangeError(`${where}: the tokenizer gave id ${ids[bad]} (token ${JSON.stringify(tokens[bad])}), ` +
        `outside the model's vocabulary of ${info.vocabSize}`);
    }
    const keyMask = readKeyMask(where, options.keyMask, ids.length);
    return { ids, tokens, keyMask, n: ids.length };
  }

  function readKeyMask(where, keyMask, n) {
    if (keyMask === undefined || keyMask === null) return null;
    if (!(keyMask instanceof Uint8Array)) {
      throw new TypeError(`${where}: keyMask must be a Uint8Array of length n = ${n} (1 = keep, 0 = mask), got ${describe(keyMask)}`);
    }
    if (keyMask.length !== n) throw new RangeError(`${where}: keyMask must be of length n = ${n}, got length ${keyMask.length}`);
    return keyMask;
  }

  // The bytes the kept cache grows by for a run of n tokens: the queries,
  // keys and values of every layer and the residual stream, per position
  // (src/model/forward.cpp reserve: at least a quarter more positions each
  // time, rounded up to whole panels, allocated before the old blocks are
  // freed; the values' head width rounded up to whole panels too,
  // attention/packed_cache.hpp). `kept`: its bytes now, which count 5 bytes
  // per id of the last run too (at most one per position).
  function cacheGrowthBytes(n, kept) {
    const { panelWidth } = limitsOf(module);
    const wholePanels = (count) => Math.ceil(count / panelWidth) * panelWidth;
    const perPosition = 4 * (info.layers * ((info.heads + info.kvHeads) * info.headWidth +
      info.kvHeads * wholePanels(info.headWidth)) + info.dModel);
    const capacity = Math.floor(kept / (perPosition + 5));
    if (n <= capacity) return 0;
    return perPosition * wholePanels(Math.max(n, Math.min(info.maxPositions, capacity + Math.floor(capacity / 4))));
  }

  // Refuses a call whose buffers would not fit: the outputs JavaScript
  // allocates, and what the core allocates for it, as the core counts it
  // (handle.runBytes / explainBytes, src/model/footprint.cpp). A run counts
  // the growth of what the model keeps too; when only the kept cache stands
  // in the way, it is dropped first (the run then computes every position).
  function checkMemory(where, n, outputFloats, call = 'run') {
    const working = call === 'explain' ? handle.explainBytes(n) : handle.runBytes(n);
    const kept = call === 'run' ? handle.cacheBytes() : 0;
    const bytes = 4 * outputFloats + working;
    const available = availableMemory(module);
    if (bytes + (call === 'run' ? cacheGrowthBytes(n, kept) : 0) <= available) return;
    if (kept > 0 && bytes + cacheGrowthBytes(n, 0) <= available + kept) {
      handle.dropCache();
      return;
    }
    const growth = call === 'run' ? cacheGrowthBytes(n, 0) : 0;
    throw new RangeError(`${where}: ${n} tokens need about ${formatBytes(bytes + growth)} of WebAssembly memory` +
      `${growth ? ` (${formatBytes(growth)} of it for the queries, keys and values the model keeps)` : ''}, more than the ` +
      `${formatBytes(available + kept)} available; use fewer tokens`);
  }

  // Which rows of logits a run computes: 'all' (n rows), 'last' (the last
  // position's, what predicting the next token needs: the LM head is a
  // vocab x dModel product per row, most of a small model's forward) or 'none'.
  function readLogits(where, value) {
    if (value === undefined) return 'all';
    if (value === 'all' || value === 'last' || value === 'none') return value;
    if (value === false) return 'none';
    if (typeof value === 'string') throw new RangeError(`${where}: logits must be ${LOGITS_CHOICES}, got ${describe(value)}`);
    throw new TypeError(`${where}: logits must be ${LOGITS_CHOICES}, got ${describe(value)}`);
  }

  // Finite weights can still overflow float32 in a forward pass (huge
  // activations give Infinity, then NaN through a norm or a softmax): such a
  // result is refused, never handed to a plot. `arrays`: [name, array].
  function checkFinite(where, arrays) {
    for (const [name, array] of arrays) {
      const bad = array ? firstNonFinite(array) : -1;
      if (bad >= 0) {
        throw new RangeError(`${where}: the forward pass overflowed float32 (${name}[${bad}] = ${array[bad]}): this ` +
          "model's weights make its activations too large for float32 arithmetic");
      }
    }
  }

  function run(options) {
    const where = 'model.run';
    alive(where);
    if (info.encoderDecoder) return runSeq2seq(options);
    checkOptions(where, options, RUN_KEYS);
    const logitsChoice = readLogits(where, options.logits);
    const { ids, tokens, keyMask, n } = readInput(where, options);
    const noLogits = !core.hasLmHead ? 'the model has no LM head'
      : logitsChoice === 'none' ? `logits is ${describe(options.logits)}` : undefined;
    // The position of the first logits row returned (the core computes rows logitsFrom..n-1); null: none.
    const logitsFrom = noLogits ? null : logitsChoice === 'last' ? n - 1 : 0;
    const choice = readAttentionChoice(where, options.attention, info, n);
    const side = pooledSide(n, choice.pool);
    const attentionCount = choice.layers.length * choice.heads.length * side * side;
    const hiddenCount = n * info.dModel;
    const logitsRows = logitsFrom === null ? 0 : n - logitsFrom;
    const logitsCount = logitsRows * info.vocabSize;
    const into = readInto(where, options.into, [
      { name: 'attention', length: attentionCount,
        lengthText: () => (choice.pool > 1
          ? `layers*heads*ceil(n/pool)^2 = ${choice.layers.length}*${choice.heads.length}*${side}*${side} = ${attentionCount}`
          : `layers*heads*n*n = ${choice.layers.length}*${choice.heads.length}*${n}*${n} = ${attentionCount}`) },
      { name: 'hidden', length: hiddenCount, lengthText: () => `n*dModel = ${n}*${info.dModel} = ${hiddenCount}` },
      { name: 'logits', length: logitsCount,
        lengthText: () => `${logitsRows === 1 ? '1' : 'n'}*vocabSize = ${logitsRows}*${info.vocabSize} = ${logitsCount}`,
        absentBecause: noLogits },
    ]);
    // A pooled run whose first rows were kept recomputes each head's n x n before pooling it; value-weighted
    // attention is computed after the forward, from what the model keeps (writeValueWeighted).
    const scratch = choice.valueWeighted ? valueWeightedScratch(info, n) : choice.pool > 1 ? n * n : 0;
    checkMemory(where, n, attentionCount + hiddenCount + logitsCount + scratch);
    const heap = new Heap(module, where);
    try {
      const attention = attentionCount ? heap.floats(attentionCount) : 0;
      const request = {
        ids: heap.copyIn(ids),
        count: n,
        attention: choice.valueWeighted ? 0 : attention,
        hidden: heap.floats(hiddenCount),
        logits: logitsCount ? heap.floats(logitsCount) : 0,
        keyMask: heap.copyIn(keyMask),
        logitsFrom: logitsFrom ?? 0,
        observer: 0,
        chosen: choice.every ? 0 : heap.copyIn(choiceFlags(choice, info)),
        cached: true,
        pool: choice.pool,
      };
      const started = now();
      const error = handle.run(request);
      const elapsedMs = now() - started;
      if (error) throw new RangeError(`${where}: ${error}`);
      if (choice.valueWeighted) writeValueWeighted({ handle, info, n }, heap, choice, attention, where);
      // One SIMD scan of each output in the heap; the JS scan only names the bad element.
      for (const [name, pointer, count] of [['attention', attention, attentionCount],
        ['hidden', request.hidden, hiddenCount], ['logits', request.logits, logitsCount]]) {
        if (count && !Number.isFinite(module.maxMagnitude(pointer, count))) {
          // A refused run leaves nothing behind: what it kept overflowed too.
          handle.dropCache();
          checkFinite(where, [[name, heap.readFloats(pointer, count)]]);
        }
      }
      const result = markChecked({
        ids, tokens, n,
        layers: info.layers,
        heads: info.heads,
        causal: info.causal,
        windows: info.windows,
        // A copy of the padding mask the run used (views draw the keys it hid as hidden), or null.
        keyMask: keyMask && keyMask.slice(),
        attention: attentionCount ? heap.readFloats(attention, attentionCount, into.attention)
          : new Float32Array(0),
        attentionLayers: choice.layers,
        attentionHeads: choice.heads,
        // Each head's weights pooled by this factor (ceil(n/pool) squared blocks, each its largest weight); 1: in full.
        attentionPool: choice.pool,
        // What `attention` holds: the weights, or value-weighted attention (attention { valueWeighted: true }).
        attentionQuantity: choice.valueWeighted ? 'valueWeighted' : 'weights',
        hidden: heap.readFloats(request.hidden, hiddenCount, into.hidden),
        logits: logitsCount ? heap.readFloats(request.logits, logitsCount, into.logits) : null,
        logitsFrom,
        elapsedMs,
        // The model keeps its last run's queries, keys and values (dropCache frees
        // them): the positions this run took from them, and their bytes now.
        reusedPositions: handle.reusedPositions(),
        cacheBytes: handle.cacheBytes(),
      });
      // headWeights, layerWeights and computeLogits, not enumerable: the result stays plain data.
      return withKeptRunMethods(result, { module, handle, info, n, generation: handle.cacheGeneration(), alive, Heap, checkFinite });
    } finally {
      heap.release();
    }
  }

  function layerIndex(where, value, size, name) {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value >= size) {
      throw new RangeError(`${where}: ${name} must be an integer from 0 to ${size - 1}, got ${describe(value)}`);
    }
    return value;
  }

  function explain(options) {
    const where = 'model.explain';
    alive(where);
    if (info.encoderDecoder) return explainSeq2seq(options, layerIndex);
    if (options?.kind !== undefined) {
      throw new TypeError(`${where}: kind chooses an encoder-decoder's attention (BART, Marian, T5); this ` +
        `${info.architecture} model has one kind, its own self-attention: leave kind out`);
    }
    checkOptions(where, options, EXPLAIN_KEYS);
    const layer = layerIndex(where, options.layer ?? 0, info.layers, 'layer');
    const head = layerIndex(where, options.head ?? 0, info.heads, 'head');
    const { ids, tokens, keyMask, n } = readInput(where, options);
    checkMemory(where, n, 0, 'explain');
    const heap = new Heap(module, where);
    try {
      const started = now();
      const record = handle.explain(heap.copyIn(ids), n, layer, heap.copyIn(keyMask), 0, 0, -1);
      const elapsedMs = now() - started;
      if (record.error) throw new RangeError(`${where}: ${record.error}`);
      // The module's record as is (src/bindings/record.hpp), with what only
      // JavaScript knows: the tokens, the ids, the head to show, the time.
      checkFinite(where, [['weights', record.weights], ['output', record.output], ['layerOutput', record.layerOutput]]);
      return markChecked(Object.assign(record, { tokens, contextTokens: tokens, ids, head, elapsedMs }));
    } finally {
      heap.release();
    }
  }

  function decode(ids, { skipSpecialTokens = false } = {}) {
    alive('model.decode');
    if (!tokenizer) throw new Error('model.decode: this model was loaded without a tokenizer');
    return tokenizer.decode(Array.from(ids), { skipSpecialTokens: skipSpecialTokens === true });
  }

  // A readable label for one id (" café" for GPT-2's "Ġcafé"), for plots and predictions.
  function tokenText(id) {
    alive('model.tokenText');
    if (!Number.isInteger(id) || id < 0 || id >= info.vocabSize) {
      throw new RangeError(`model.tokenText: id must be an integer from 0 to ${info.vocabSize - 1}, got ${describe(id)}`);
    }
    return tokenizer ? tokenizer.tokenText(id) : String(id);
  }

  // Frees what the model keeps of its last run: the next run computes every position.
  // (An encoder-decoder's: the session its run kept for headWeights, seq2seq.js.)
  function dropCache() {
    if (info.encoderDecoder) return dropSeq2seqCache();
    alive('model.dropCache');
    handle.dropCache();
  }

  function dispose() {
    if (disposed) return;
    disposed = true;
    handle.delete();
  }

  const { runSeq2seq, explainSeq2seq, analyzeSeq2seq, generate, dropCache: dropSeq2seqCache } = seq2seqMethods({
    module, handle, info, core, tokenizer, generation, alive, checkOptions, readInput, checkFinite, run, tokenText, decode,
  });

  const { analyze, inductionScores } = analysisMethods({
    module, handle, info, core, tokenizer, alive, checkOptions, readInput, checkMemory, checkFinite, analyzeSeq2seq,
  });

  return Object.freeze({
    info,
    get disposed() {
      return disposed;
    },
    tokenize: (text) => tokenize(text),
    run,
    explain,
    analyze,
    inductionScores,
    generate,
    decode,
    tokenText,
    dropCache,
    dispose,
  });
}
