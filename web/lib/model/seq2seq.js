// An encoder-decoder's run (source and target at once) and greedy
// generation for every model with an LM head, over the core's one
// encoder-decoder session per model (ModelHandle.encode / decode /
// endSession, src/model/seq2seq.hpp): the encoder runs once, and each
// generated token is one decoder step that reuses the cached keys and
// values of the tokens before it.
import { Heap, now } from '../heap.js';
import { availableMemory, describe, formatBytes, markChecked } from '../validation.js';
import { namedScores, stackAnalyses } from './analysis.js';
import { choiceFlags, keptReader, pooledSide, readIndex, readPool, readSeq2seqChoice } from './attention-choice.js';

const SEQ2SEQ_RUN_KEYS = ['text', 'ids', 'target', 'targetIds', 'attention'];
const EXPLAIN_KEYS = ['text', 'ids', 'target', 'targetIds', 'layer', 'head', 'kind'];
/** An encoder-decoder's kinds of attention, in the order the core numbers them (seq2seq.hpp AttentionKind). */
export const ATTENTION_KINDS = ['encoder', 'decoder', 'cross'];
const GENERATE_KEYS = ['text', 'ids', 'maxTokens', 'onToken'];

// The first index of the largest value, as torch.argmax picks.
function argmax(values) {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

/**
 * What greedy decoding reads from config.json, as transformers' generate
 * does: eos_token_id (one id, a list as Llama 3's, or none), the ids it
 * stops after; and bad_words_ids, token sequences it never completes (opus-mt
 * lists [[pad]]: its pad token was never trained as an output). A bad
 * sequence's last token is barred whenever the tokens before it end the
 * decoder's input (the prompt or the decoder start id, then what was generated).
 * @returns {{ eosIds: Set<number>, badWords: number[][] }}
 * @throws {RangeError} for bad_words_ids that is not a list of non-empty lists of ids in the vocabulary
 */
export function generationRulesOf(hub, vocabSize) {
  const given = hub.eos_token_id;
  const eosIds = new Set((Array.isArray(given) ? given : [given]).filter((id) => Number.isInteger(id) && id >= 0));
  const bad = hub.bad_words_ids;
  if (bad === undefined || bad === null) return { eosIds, badWords: [] };
  const isId = (id) => Number.isInteger(id) && id >= 0 && id < vocabSize;
  if (!Array.isArray(bad) || !bad.every((words) => Array.isArray(words) && words.length > 0 && words.every(isId))) {
    throw new RangeError(`attnlens.loadModel: config.json "bad_words_ids" must be a list of non-empty lists of token ids ` +
      `from 0 to ${vocabSize - 1}, got ${describe(bad)}`);
  }
  return { eosIds, badWords: bad.map((words) => [...words]) };
}

// The ids bad_words_ids bars after `context` (the decoder's input so far).
function barredIds(badWords, context) {
  const barred = [];
  for (const words of badWords) {
    const before = words.length - 1;
    if (before > context.length) continue;
    let matches = true;
    for (let k = 0; k < before && matches; k++) matches = context[context.length - before + k] === words[k];
    if (matches) barred.push(words[before]);
  }
  return barred;
}

// Greedy's choice: the largest logit, barred ids left out.
function choose(logits, barred) {
  for (const id of barred) logits[id] = -Infinity;
  return argmax(logits);
}

/**
 * run (encoder-decoders) and generate, sharing model.js's checks.
 * @param {object} parts { module, handle, info, core, tokenizer, generation ({ eosIds, badWords }), alive, checkOptions, readInput, checkFinite, run, tokenText, decode }
 */
export function seq2seqMethods(parts) {
  const { module, handle, info, tokenizer, alive, checkOptions, readInput, checkFinite } = parts;
  const { eosIds, badWords } = parts.generation;
  const { decoderLayers, heads } = info;
  // The core keeps one session per model: a call made from inside onToken must not replace it.
  let busy = false;

  function enter(where) {
    alive(where);
    if (busy) throw new Error(`${where}: this model is generating; call it again after generate returns`);
  }

  function checkSeq2seqMemory(where, n, m, outputFloats, { traced = false, kept = false } = {}) {
    const bytes = 4 * outputFloats + handle.seq2seqBytes(n, m, traced, kept);
    const available = availableMemory(module);
    if (bytes > available) {
      throw new RangeError(`${where}: ${n} source and ${m} target tokens need about ${formatBytes(bytes)} of ` +
        `WebAssembly memory, more than the ${formatBytes(available)} available; use fewer tokens`);
    }
  }

  // The decoder's inputs: targetIds as given, or target text after the decoder start id.
  function readTarget(where, options) {
    const { ids, tokens } = readInput(where, options, 'target', 'targetIds');
    if (options.target === undefined) return { ids, tokens };
    if (ids.length + 1 > info.maxPositions) {
      throw new RangeError(`${where}: the target has ${ids.length + 1} tokens with the decoder start, more than the ` +
        `model's ${info.maxPositions} positions`);
    }
    return { ids: Int32Array.of(info.decoderStartId, ...ids), tokens: [parts.tokenText(info.decoderStartId), ...tokens] };
  }

  // Runs the session and ends it (its caches are freed with the heap), or
  // with `keep` (model.run's) leaves it for headWeights when the body returns.
  function inSession(where, body, { keep = false } = {}) {
    const heap = new Heap(module, where);
    busy = true;
    let kept = false;
    try {
      const result = body(heap, (call, ...args) => {
        const error = handle[call](...args);
        if (error) throw new RangeError(`${where}: ${error}`);
      });
      kept = keep;
      return result;
    } finally {
      busy = false;
      if (!kept) handle.endSession();
      heap.release();
    }
  }

  // [chosen layer][chosen head][query][key] of each kind, each head pooled: its rows x keys and floats.
  function chosenSizes(choice, n, m) {
    const sides = { encoder: [n, n], decoder: [m, m], cross: [m, n] };
    return Object.fromEntries(Object.entries(sides).map(([kind, [rows, keys]]) => {
      const size = pooledSide(rows, choice.pool) * pooledSide(keys, choice.pool);
      return [kind, { rows, keys, floats: choice.layers[kind].length * choice.heads.length * size }];
    }));
  }

  // model.run of an encoder-decoder: the kinds, layers and heads `attention` chooses (every one by
  // default), and a session kept afterwards (until the model's next call that encodes, or
  // dropCache) for headWeights of any other.
  function runSeq2seq(options) {
    const where = 'model.run';
    enter(where);
    checkOptions(where, options, SEQ2SEQ_RUN_KEYS);
    const source = readInput(where, { text: options.text, ids: options.ids });
    const target = readTarget(where, options);
    const n = source.n, m = target.ids.length;
    const choice = readSeq2seqChoice(where, options.attention, info, n, m);
    const chosen = chosenSizes(choice, n, m);
    const sizes = {
      attention: chosen.encoder.floats, decoderAttention: chosen.decoder.floats, crossAttention: chosen.cross.floats,
      logits: m * info.vocabSize,
    };
    handle.dropCache(); // the last run's session: the next encoding frees it anyway
    checkSeq2seqMemory(where, n, m, Object.values(sizes).reduce((a, b) => a + b, 0), { kept: true });
    return inSession(where, (heap, call) => {
      const at = Object.fromEntries(Object.entries(sizes).map(([name, count]) => [name, count ? heap.floats(count) : 0]));
      // The layers' flags of each stack, then the heads' (0: every one in full).
      const flags = (layers, stack) => (choice.every ? 0 : heap.copyIn(choiceFlags({ layers, heads: choice.heads }, { layers: stack, heads })));
      const decoderLayersChosen = choice.kinds.includes('decoder') ? choice.layers.decoder : choice.layers.cross;
      const started = now();
      call('encode', heap.copyIn(source.ids), n, m, at.attention, flags(choice.layers.encoder, info.layers), choice.pool, 0, true);
      call('decode', heap.copyIn(target.ids), m, at.decoderAttention, at.crossAttention, flags(decoderLayersChosen, decoderLayers),
        choice.pool, at.logits, 0, 0, 0);
      const elapsedMs = now() - started;
      const outputs = Object.fromEntries(Object.entries(sizes).map(([name, count]) => [name, heap.readFloats(at[name], count)]));
      checkFinite(where, Object.entries(outputs));
      const result = markChecked({
        ids: source.ids, tokens: source.tokens, n, targetIds: target.ids, targetTokens: target.tokens, m,
        layers: info.layers, decoderLayers, heads, causal: false, ...outputs,
        attentionKinds: choice.kinds, attentionLayers: choice.layers, attentionHeads: choice.heads, attentionPool: choice.pool,
        logitsFrom: 0, elapsedMs, cacheBytes: handle.cacheBytes(),
      });
      // Not enumerable, as a decoder's run's: the result stays plain data for postMessage.
      Object.defineProperty(result, 'headWeights', { value: keptHeadWeights(n, m, handle.cacheGeneration()) });
      return result;
    }, { keep: true });
  }

  // A run's headWeights(kind, layer, head, { pool? }): one head of one kind recomputed from the
  // queries and keys the session kept (Seq2SeqSession::head_weights).
  function keptHeadWeights(n, m, generation) {
    const { requireKept, compute, readOptions } = keptReader({ module, handle, generation, alive, Heap });
    return function headWeights(kind, layer, head, options = {}) {
      const where = 'model.run result headWeights';
      requireKept(where, 'queries and keys', 'headWeights');
      const index = ATTENTION_KINDS.indexOf(kind);
      if (index < 0) {
        throw new RangeError(`${where}: kind must be 'encoder', 'decoder' or 'cross' (an encoder-decoder's three kinds of ` +
          `attention), got ${describe(kind)}`);
      }
      readIndex(where, layer, index === 0 ? info.layers : decoderLayers, 'layer', ` (the ${index === 0 ? 'encoder' : 'decoder'}'s layers)`);
      readIndex(where, head, heads, 'head');
      readOptions(where, options, ['pool']);
      const pool = readPool(where, options.pool, Math.max(n, m), 'pool', 'the number of source or target tokens, whichever is more');
      const rows = index === 0 ? n : m, keys = index === 1 ? m : n;
      const size = pooledSide(rows, pool) * pooledSide(keys, pool);
      return compute(where, size, (out) => handle.headWeights(index, layer, head, pool, out)).out;
    };
  }

  // model.explain: one kind's sublayer of one layer, every step (the core's
  // own session: Model::explain_seq2seq). Its record's tokens are the
  // queries' (the source's for the encoder, else the target's), its
  // contextTokens the keys' (the source's for cross-attention).
  function explainSeq2seq(options, index) {
    const where = 'model.explain';
    enter(where);
    checkOptions(where, options, EXPLAIN_KEYS);
    const kind = ATTENTION_KINDS.indexOf(options.kind);
    if (kind < 0) {
      throw new RangeError(`${where}: kind must be 'encoder', 'decoder' or 'cross' (an encoder-decoder's three kinds of ` +
        `attention), got ${describe(options.kind)}`);
    }
    const layers = kind === 0 ? info.layers : decoderLayers;
    const layer = index(where, options.layer ?? 0, layers, `layer of the ${kind === 0 ? 'encoder' : 'decoder'}`);
    const head = index(where, options.head ?? 0, heads, 'head');
    const source = readInput(where, { text: options.text, ids: options.ids });
    const hasTarget = options.target !== undefined || options.targetIds !== undefined;
    if (kind > 0 && !hasTarget) {
      throw new TypeError(`${where}: the ${options.kind} kind needs the decoder's inputs: pass target or targetIds`);
    }
    const target = hasTarget ? readTarget(where, options) : null;
    const n = source.n, m = target?.ids.length ?? 0;
    checkSeq2seqMemory(where, n, Math.max(m, 1), 0, { traced: true });
    const heap = new Heap(module, where);
    try {
      const started = now();
      const record = handle.explain(heap.copyIn(source.ids), n, layer, 0, heap.copyIn(target?.ids), m, kind);
      const elapsedMs = now() - started;
      if (record.error) throw new RangeError(`${where}: ${record.error}`);
      checkFinite(where, [['weights', record.weights], ['output', record.output], ['layerOutput', record.layerOutput]]);
      const queries = kind === 0 ? source.tokens : target.tokens;
      return markChecked(Object.assign(record, {
        tokens: queries, contextTokens: kind === 2 ? source.tokens : queries, ids: source.ids,
        targetIds: target?.ids ?? null, head, elapsedMs,
      }));
    } finally {
      heap.release();
    }
  }

  // model.analyze of an encoder-decoder: one encoding and one decoder step
  // over the whole target, observed per kind (analysis.js stackAnalyses):
  // the encoder's and the decoder's self-attention get the detectors, the
  // rollout and value-weighted attention; cross-attention value-weighted
  // attention; the decoder the logit lens (its LM head reads the decoder).
  function analyzeSeq2seq(where, options, { topK, withWeighted, readLens }) {
    enter(where);
    const source = readInput(where, { text: options.text, ids: options.ids });
    if (options.target === undefined && options.targetIds === undefined) {
      throw new TypeError(`${where}: an encoder-decoder is analyzed over a source and a target: pass target or ` +
        "targetIds (the decoder's inputs)");
    }
    const target = readTarget(where, options);
    const n = source.n, m = target.ids.length;
    const lens = readLens(options.logitLens ?? true, m);
    const lensRows = lens && parts.core.hasLmHead ? lens.positions?.length ?? m : 0;
    const stacks = {
      encoder: stackAnalyses(module, info, where, { layers: info.layers, n, weighted: withWeighted }),
      decoder: stackAnalyses(module, info, where, { layers: decoderLayers, n: m, weighted: withWeighted, lensRows, topK }),
      cross: stackAnalyses(module, info, where, { layers: decoderLayers, n: m, keys: n, detectors: false, weighted: withWeighted }),
    };
    const all = Object.values(stacks);
    handle.dropCache(); // a run's kept session: this encoding replaces it
    checkSeq2seqMemory(where, n, m, all.reduce((sum, stack) => sum + stack.floats, 0));
    const positions = lens?.positions ?? null;
    return inSession(where, (heap, call) => {
      try {
        const [encoder, decoder, cross] = all.map((stack) => stack.allocate(heap, positions));
        const ids = { source: heap.copyIn(source.ids), target: heap.copyIn(target.ids) };
        call('encode', ids.source, n, m, encoder.attention, 0, 1, encoder.observer, false);
        call('decode', ids.target, m, decoder.attention, cross.attention, 0, 1, 0, 0, decoder.observer, cross.observer);
        const problem = all.map((stack) => stack.end()).find(Boolean);
        if (problem) throw new RangeError(problem);
        const ofEncoder = stacks.encoder.finish(heap, ids.source, checkFinite);
        const ofDecoder = stacks.decoder.finish(heap, ids.target, checkFinite, positions);
        const ofCross = stacks.cross.finish(heap, 0, checkFinite);
        return {
          encoderDecoder: true, ids: source.ids, tokens: source.tokens, n, targetIds: target.ids, targetTokens: target.tokens, m,
          layers: info.layers, decoderLayers, heads,
          scores: namedScores(ofEncoder.scores, info.layers * heads), rollout: ofEncoder.rollout, valueWeighted: ofEncoder.valueWeighted,
          decoderScores: namedScores(ofDecoder.scores, decoderLayers * heads), decoderRollout: ofDecoder.rollout,
          decoderValueWeighted: ofDecoder.valueWeighted, crossValueWeighted: ofCross.valueWeighted, logitLens: ofDecoder.logitLens,
        };
      } finally {
        for (const stack of all) stack.end();
      }
    });
  }

  function readGenerateOptions(where, options, limit) {
    const { maxTokens, onToken } = options;
    if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > limit) {
      throw new RangeError(`${where}: maxTokens must be an integer from 1 to ${limit} (the model's positions` +
        `${info.encoderDecoder ? '' : ' less the prompt, plus 1'}), got ${describe(maxTokens)}`);
    }
    if (onToken !== undefined && typeof onToken !== 'function') {
      throw new TypeError(`${where}: onToken must be a function, got ${describe(onToken)}`);
    }
    return { maxTokens, onToken };
  }

  // What every generate returns besides an encoder-decoder's cross-attention.
  function generated(ids, started) {
    const array = Int32Array.from(ids);
    return {
      ids: array, tokens: ids.map((id) => parts.tokenText(id)),
      // What a translation shows: the tokens without <s>, </s> and the like.
      text: tokenizer ? parts.decode(array, { skipSpecialTokens: true }) : null, elapsedMs: now() - started,
    };
  }

  // Greedy decoding, one decoder step per token; each token's cross-attention
  // is the row of the step that chose it ([layer][head][source]).
  function generateSeq2seq(where, options) {
    const source = readInput(where, { text: options.text, ids: options.ids });
    const { maxTokens, onToken } = readGenerateOptions(where, options, info.maxPositions);
    const n = source.n, row = decoderLayers * heads * n;
    handle.dropCache(); // a run's kept session: this encoding replaces it
    checkSeq2seqMemory(where, n, maxTokens, row * maxTokens + info.vocabSize);
    const started = now();
    const { ids, rows } = inSession(where, (heap, call) => {
      call('encode', heap.copyIn(source.ids), n, maxTokens, 0, 0, 1, 0, false);
      const step = { ids: heap.copyIn(Int32Array.of(info.decoderStartId)), crossAttention: heap.floats(row), logits: heap.floats(info.vocabSize) };
      const out = { ids: [], rows: [] };
      while (out.ids.length < maxTokens) {
        call('decode', step.ids, 1, 0, step.crossAttention, 0, 1, step.logits, 0, 0, 0);
        const logits = heap.readFloats(step.logits, info.vocabSize);
        const crossAttention = heap.readFloats(step.crossAttention, row);
        checkFinite(where, [['logits', logits], ['crossAttention', crossAttention]]);
        const id = choose(logits, barredIds(badWords, [info.decoderStartId, ...out.ids]));
        out.ids.push(id);
        out.rows.push(crossAttention);
        onToken?.({ id, token: parts.tokenText(id), index: out.ids.length - 1, crossAttention });
        if (eosIds.has(id)) break;
        module.HEAP32[step.ids >>> 2] = id;
      }
      return out;
    });
    // [layer][head][step][source], as run's crossAttention with the generated tokens as the target.
    const k = ids.length, crossAttention = new Float32Array(decoderLayers * heads * k * n);
    rows.forEach((stepRow, t) => {
      for (let block = 0; block < decoderLayers * heads; block++) {
        crossAttention.set(stepRow.subarray(block * n, (block + 1) * n), (block * k + t) * n);
      }
    });
    return { ...generated(ids, started), sourceIds: source.ids, sourceTokens: source.tokens, crossAttention };
  }

  // A decoder-only model: the prompt's continuation, one forward pass per
  // token (model.run's last row of logits).
  function generateDecoderOnly(where, options) {
    const prompt = readInput(where, { text: options.text, ids: options.ids });
    // The last token is chosen, never run: n + maxTokens - 1 positions.
    const { maxTokens, onToken } = readGenerateOptions(where, options, info.maxPositions - prompt.n + 1);
    const started = now();
    const ids = [];
    const context = Array.from(prompt.ids);
    while (ids.length < maxTokens) {
      const id = choose(parts.run({ ids: context, logits: 'last' }).logits, barredIds(badWords, context));
      ids.push(id);
      context.push(id);
      onToken?.({ id, token: parts.tokenText(id), index: ids.length - 1 });
      if (eosIds.has(id)) break;
    }
    return { ...generated(ids, started), promptIds: prompt.ids, promptTokens: prompt.tokens };
  }

  function generate(options) {
    const where = 'model.generate';
    enter(where);
    checkOptions(where, options, GENERATE_KEYS);
    if (!parts.core.hasLmHead) throw new Error(`${where}: this model has no LM head to predict tokens with`);
    if (info.encoderDecoder) return generateSeq2seq(where, options);
    busy = true;
    try {
      return generateDecoderOnly(where, options);
    } finally {
      busy = false;
    }
  }

  // model.dropCache: the session a run kept; refused while generate's own session runs.
  function dropCache() {
    enter('model.dropCache');
    handle.dropCache();
  }

  return { runSeq2seq, explainSeq2seq, analyzeSeq2seq, generate, dropCache };
}
