// The model worker: holds the attnlens module and one loaded model, so that
// converting weights and running forward passes never block the page.
//
// Messages in:  { id, type: 'load' | 'run' | 'predictions' | 'weights' | 'translate' | 'translationWeights' | 'explain' | 'analyze' | 'logitLens' | 'inductionScores', payload }
//               { cancel: id }                   aborts that request's download (loadModel's signal)
// Messages out: { id, progress }                 while loading, and per generated token while translating
//               { id, ok: true, value }           the answer (big arrays transferred, not copied)
//               { id, ok: false, error: { name, message } }
// Requests run one at a time, in the order they came: a run posted while a
// model loads waits for it instead of running on the old one.
import { load } from 'attnlens';
import { pooledSide } from '../../lib/model/attention-choice.js';
import { translate } from '../../elements/translate.js';
import { tokenIds } from '../../views/input.js';
import { attentionForRun, attentionForTranslation } from './held-attention.js';
import { topPredictions } from './predictions.js';
import { keptTranslationHeads, runAttention } from './translation-heads.js';

let lensPromise = null;
let lensApi = null; // once loaded
let model = null;
// The page's last run ({ text, result }): the heads it did not ask for come
// from its result's headWeights (the kept queries and keys), and its predictions
// from computeLogits, without a forward. An analysis through the cache replaces
// what the model keeps, and its result has the same methods: it becomes lastRun.
let lastRun = null;
// An encoder-decoder's last translation ({ ids, targetIds, result }): more of its attention
// comes from its run's headWeights while the model keeps that run (translationWeights).
let lastTranslation = null;

// A clock the page can compare with its own (performance.now() counts from
// each context's own origin): milliseconds since the epoch, sub-millisecond.
const clock = () => performance.timeOrigin + performance.now();

function lens() {
  lensPromise ??= load();
  return lensPromise;
}

// The positions of the mask tokens a masked-LM head fills in: BERT's,
// DistilBERT's and ELECTRA's [MASK], RoBERTa's and XLM-R's <mask> (each
// tokenizer keeps its mask token whole, as an added special token).
const MASK_TOKENS = new Set(['[MASK]', '<mask>']);
function maskPositions(tokens) {
  return tokens.flatMap((token, position) => (MASK_TOKENS.has(token) ? [position] : []));
}

// A request's input: the text, or a translation's source and target ids (an encoder-decoder's run).
function inputOf({ text, ids, targetIds }) {
  return targetIds ? { ids, targetIds } : modelInput(text);
}

function requireModel() {
  if (!model) throw new Error('No model is loaded: open a model\'s files first.');
  return model;
}

// A model loaded without a tokenizer takes token ids: "15496 995" or "15496, 995".
function modelInput(text) {
  if (requireModel().info.tokenizer !== null) return { text };
  const ids = tokenIds(text);
  if (!ids) {
    throw new Error('This model was loaded without a tokenizer, so it reads token ids: type numbers separated by '
      + 'spaces (e.g. 464 3290 3332), or load its tokenizer.json (or vocab.json + merges.txt, vocab.txt, or source.spm + target.spm + vocab.json) too.');
  }
  return { ids };
}

// Arrays whose buffer is theirs alone can be transferred (moved, not
// copied); a view into a bigger buffer is copied out first, so neither the
// WebAssembly memory nor a shared buffer is ever detached.
function movable(value, transfer) {
  const own = value.byteOffset === 0 && value.byteLength === value.buffer.byteLength
    && !(globalThis.SharedArrayBuffer && value.buffer instanceof SharedArrayBuffer);
  const array = own ? value : value.slice();
  transfer.add(array.buffer);
  return array;
}

function tokenLabel(id) {
  try {
    return model.decode([id]);
  } catch {
    return String(id);
  }
}

// The top k next tokens after the last of `rows` rows of logits, with their labels.
function topRows(current, logits, rows, topK) {
  return topPredictions(logits, rows, current.info.vocabSize, topK).map((p) => ({ ...p, token: tokenLabel(p.id) }));
}

// A masked-LM head's top k guesses at each of `positions` (none: no logits computed), from what the
// model kept of `result`'s run: each row the bits a run with logits 'all' gives there.
function predictAtMasks(current, result, positions, topK) {
  if (positions.length === 0) return [];
  const logits = result.computeLogits({ positions });
  const vocab = current.info.vocabSize;
  return positions.map((position, i) =>
    ({ position, predictions: topRows(current, logits.subarray(i * vocab, (i + 1) * vocab), 1, topK) }));
}

const handlers = {
  // The previous model keeps working until the new one has loaded, so a bad
  // file costs nothing; only when both would not fit in memory together is
  // the old one freed first.
  // `from` (a folder URL) is downloaded by the library, through its cache; else the files' bytes came along.
  async load({ from, config, weights, tokenizer }, progress, signal) {
    const api = await lens();
    lensApi = api;
    const files = from ? { from, signal } : { config, weights, ...(tokenizer ? { tokenizer } : {}) };
    const options = { ...files, onProgress: progress };
    let next;
    try {
      next = await api.loadModel(options);
    } catch (error) {
      if (!model || !/memory/i.test(error.message)) throw error;
      model.dispose();
      model = null;
      next = await api.loadModel(options);
    }
    model?.dispose();
    model = next;
    lastRun = null;
    return { value: { info: { ...model.info }, simd: api.simd, simdLevel: api.simdLevel, threads: api.threads, version: api.version } };
  },

  // `timing` says where a run's time went (tests/bench/typing.mjs reads it):
  // model.run whole (tokenizing, the forward, copying out) and its forward
  // alone, what came after it (a masked-LM head's predictions; a decoder's
  // come later, through 'predictions'), and when the answer left (clock()).
  // With `valueWeighted` (the page's switch), the views draw value-weighted
  // attention: the run's attention { valueWeighted: true } gives the heads the
  // page draws so, from what the model keeps (no second forward pass).
  // `attention`: what the page draws, every head or { layer, heads } (held-attention.js): at 512
  // tokens of GPT-2 small every head costs 5x one head's run (tests/bench/incremental.mjs).
  // A decoder's run carries no predictions (`predictionsPending`): the page
  // draws its attention first, then asks for them ('predictions'), so the LM
  // head (for GPT-2 small a third of a one-token forward's weights) is not
  // on the way from a keystroke to the heatmap.
  run({ text, topK = 5, valueWeighted = false, attention = 'all' }) {
    const startedAt = clock();
    const current = requireModel();
    const masked = current.info.lmHead === 'masked';
    // A masked-LM head predicts at each [MASK], wherever it is: its run computes no logits, and the
    // head then only the mask positions' rows (computeLogits { positions }): at 512 tokens of BERT base
    // every row's would be 62.5 MB and a quarter of the forward, for a text with one mask or none.
    // The text is tokenized once: the attention asked for depends on its length, and the run
    // takes its ids (at 1024 tokens a second tokenization cost ~1 ms, more under load).
    const input = modelInput(text);
    const tokenized = input.ids ? null : current.tokenize(text);
    const ids = input.ids ?? tokenized.ids;
    lastRun = null;
    const choice = attentionForRun(attention, current.info, ids.length, valueWeighted);
    // Ids the library would refuse (none, or beyond the model's vocabulary) go in as the text, so its error names the text.
    const asIds = ids.length > 0 && ids.every((id) => id < current.info.vocabSize);
    const result = current.run({ ...(asIds ? { ids } : input), logits: 'none', attention: choice });
    // The tokenizer's own token texts (a run of ids names each token by its id's text).
    const tokens = tokenized?.tokens ?? result.tokens;
    lastRun = { text, result };
    const ranAt = clock();
    const transfer = new Set();
    // Per mask token, its position and the head's guesses there (the row's own softmax).
    const maskPredictions = masked ? predictAtMasks(current, result, maskPositions(tokens), topK) : null;
    const value = {
      // What the worker keeps (tests/browser/long-context-page.test.mjs): the model's kept queries, keys and
      // values, the positions this run took from them, and the WebAssembly heap in use (weights and cache).
      reusedPositions: result.reusedPositions, cacheBytes: result.cacheBytes, heapBytesInUse: lensApi.heapBytesInUse(),
      ids: Array.from(result.ids), tokens, n: result.n, layers: result.layers, heads: result.heads, causal: result.causal,
      windows: result.windows ? Array.from(result.windows) : null,
      attention: movable(result.attention, transfer), attentionLayers: result.attentionLayers, attentionHeads: result.attentionHeads,
      attentionPool: result.attentionPool, attentionQuantity: result.attentionQuantity,
      elapsedMs: result.elapsedMs, predictions: null, maskPredictions, predictionsPending: current.info.lmHead !== null && !masked,
    };
    const postedAt = clock();
    value.timing = { startedAt, runMs: ranAt - startedAt, forwardMs: result.elapsedMs, predictionsMs: postedAt - ranAt, postedAt };
    return { value, transfer };
  },

  // The next-token predictions of the last run, once the page drew its
  // attention: its last position's logits from what the model kept (the
  // bits a run with logits 'last' gives), or, when something else ran the
  // model since, a run of that text. null when the last run is another
  // text's (the page asks for that one's). `forward` says whether one was needed.
  predictions({ text, topK = 5 }) {
    const current = requireModel();
    if (lastRun?.text !== text) return { value: { text, predictions: null } };
    const startedAt = clock();
    let logits;
    let forward = false;
    try {
      logits = lastRun.result.computeLogits('last');
    } catch {
      const result = current.run({ ...modelInput(text), logits: 'last', attention: 'none' });
      lastRun = { text, result };
      logits = result.logits;
      forward = true;
    }
    return { value: { text, predictions: topRows(current, logits, 1, topK), predictionsMs: clock() - startedAt, forward } };
  },

  // More heads of the last run's text (switching head, layer or view): from
  // what the model kept of that run (or of this text's analysis through the
  // cache), n x n per head and no forward; a run without logits when something
  // else (an analysis of another text, a translation) ran the model since.
  // `forward` says whether one was needed.
  // `pool`: each head pooled by it (the model view's, held-attention.js fetchedHeads);
  // `valueWeighted`: the heads' value-weighted attention (the switch on).
  weights({ text, layers, heads, pool = 1, valueWeighted = false }) {
    const current = requireModel();
    const n = lastRun?.text === text ? lastRun.result.n : 0;
    let attention = null;
    let forward = false;
    if (n > 0) {
      try {
        // A layer's heads in one call: value-weighted, its W_O is unpacked once, not once a head.
        const layerSize = heads.length * pooledSide(n, pool) ** 2;
        attention = new Float32Array(layers.length * layerSize);
        layers.forEach((layer, index) => attention.set(lastRun.result.layerWeights(layer, { heads, pool, valueWeighted }), index * layerSize));
      } catch {
        attention = null; // the model ran since: its kept queries and keys are another text's
      }
    }
    if (attention === null) {
      lastRun = null;
      const result = current.run({ ...modelInput(text), logits: 'none', attention: { layers, heads, pool, valueWeighted } });
      lastRun = { text, result };
      attention = result.attention;
      forward = true;
    }
    const transfer = new Set();
    const attentionQuantity = valueWeighted ? 'valueWeighted' : 'weights';
    return { value: { text, attention: movable(attention, transfer), attentionLayers: layers, attentionHeads: heads, attentionPool: pool, attentionQuantity, forward }, transfer };
  },

  // An encoder-decoder translates (elements/translate.js): each token is posted
  // as generate chooses it (progress), then the run gives the attention the
  // views draw (held-attention.js attentionForTranslation: everything while
  // small, else the kind shown's heads, or every kind's for the model view). `stop` (a shared Int32Array, where the page is
  // cross-origin isolated) lets the page end a translation whose text changed:
  // generate runs synchronously, so no message could reach the worker meanwhile.
  translate({ text, maxTokens, stop, valueWeighted, attention = 'all' }, progress) {
    const startedAt = clock();
    const current = requireModel();
    const input = modelInput(text);
    // The first token's message also says what its cross-attention row is over (the source) and the
    // decoder's first input, so the page can draw each row as it comes (model/cross-stream.js).
    const source = () => {
      const { ids, tokens } = input.ids ? { ids: input.ids, tokens: input.ids.map((id) => current.tokenText(id)) } : current.tokenize(text);
      return { sourceIds: Array.from(ids), sourceTokens: tokens, startToken: current.tokenText(current.info.decoderStartId) };
    };
    lastTranslation = null;
    const { generated, run: result } = translate(current, input, {
      maxTokens,
      // What the page draws of the kind shown (held-attention.js), once the source's and target's lengths are known.
      attention: attention === 'all' ? 'all' : (sizes) => attentionForTranslation(attention, current.info, sizes),
      onToken: ({ id, token, index, crossAttention }, limit) => {
        if (stop && Atomics.load(stop, 0) !== 0) throw new DOMException('The text changed: translation stopped.', 'AbortError');
        progress({ phase: 'token', id, token, index, maxTokens: limit, elapsedMs: clock() - startedAt, crossAttention, ...(index === 0 ? source() : {}) });
      },
    });
    const both = { ids: generated.sourceIds, targetIds: [current.info.decoderStartId, ...generated.ids] };
    lastTranslation = { ids: Array.from(both.ids), targetIds: both.targetIds, result };
    const transfer = new Set();
    // With the switch on, each kind's value-weighted attention (model.analyze) replaces its weights in the views,
    // which then draw no weights: those stay in the worker (switching back translates again).
    const weighted = valueWeighted ? current.analyze({ ...both, logitLens: false }) : {};
    const weights = (array) => (valueWeighted ? null : movable(array, transfer));
    const value = {
      encoderDecoder: true, ids: Array.from(result.ids), tokens: result.tokens, n: result.n,
      targetIds: Array.from(result.targetIds), targetTokens: result.targetTokens, m: result.m,
      layers: result.layers, decoderLayers: result.decoderLayers, heads: result.heads, causal: false,
      ...runAttention(result), attention: weights(result.attention), decoderAttention: weights(result.decoderAttention),
      crossAttention: weights(result.crossAttention), elapsedMs: result.elapsedMs,
      generated: { ids: Array.from(generated.ids), tokens: generated.tokens, text: generated.text, elapsedMs: generated.elapsedMs },
      predictions: null, maskPredictions: null,
    };
    for (const name of ['valueWeighted', 'decoderValueWeighted', 'crossValueWeighted']) value[name] = weighted[name] ? movable(weighted[name], transfer) : null;
    const postedAt = clock();
    value.timing = { startedAt, runMs: postedAt - startedAt, forwardMs: result.elapsedMs, predictionsMs: 0, postedAt };
    return { value, transfer };
  },

  // More of a translation's attention (switching kind, head, layer or view): from its run's headWeights
  // while the model keeps that run, else (an analysis ran since) a run of its source and target with only these.
  translationWeights({ ids, targetIds, kinds, layers, heads, pool = 1 }) {
    const same = (a, b) => a.length === b.length && a.every((id, i) => id === b[i]);
    const kept = lastTranslation && same(lastTranslation.ids, ids) && same(lastTranslation.targetIds, targetIds) ? lastTranslation.result : null;
    let value = null;
    try {
      value = kept && { ...keptTranslationHeads(kept, { kinds, layers, heads, pool }), forward: false };
    } catch {
      value = null; // the model ran since: its kept queries and keys are another run's
    }
    if (!value) {
      const result = requireModel().run({ ids, targetIds, attention: { kinds, ...(layers ? { layers } : {}), heads, pool } });
      lastTranslation = { ids, targetIds, result };
      value = { ...runAttention(result), forward: true };
    }
    const transfer = new Set();
    for (const name of ['attention', 'decoderAttention', 'crossAttention']) value[name] = movable(value[name], transfer);
    return { value, transfer };
  },

  // An encoder-decoder's: the `kind` of attention of its translation's run.
  explain({ layer, head, kind, ...input }) {
    const explanation = requireModel().explain({ ...inputOf(input), ...(input.targetIds ? { kind } : {}), layer, head });
    const transfer = new Set();
    const value = {};
    for (const [key, field] of Object.entries(explanation)) {
      value[key] = field instanceof Float32Array ? movable(field, transfer) : field;
    }
    // contextX is x itself for self-attention: send it once.
    if (explanation.contextX === explanation.x) value.contextX = value.x;
    value.ids = Array.from(explanation.ids);
    return { value, transfer };
  },

  // What each head does on this text: the detectors' scores and the rollout
  // (model.analyze), without the per-layer measures the tab does not show.
  // An encoder-decoder's: the encoder's (kind 'encoder'), else the decoder's
  // self-attention (cross-attention has neither).
  // A causal model's goes through what the model kept (the last run's methods are
  // refused after it) and leaves its own run kept, with the methods of a run's
  // result: it becomes lastRun, so the text's predictions and other heads need no
  // forward. Other models' analyses leave what the model keeps, and lastRun, as they are.
  analyze({ kind, ...input }) {
    const all = requireModel().analyze({ ...inputOf(input), valueWeighted: false, logitLens: false });
    if (all.computeLogits) lastRun = { text: input.text, result: all };
    const decoder = all.encoderDecoder && kind !== 'encoder';
    const result = decoder ? { ids: all.targetIds, tokens: all.targetTokens, n: all.m, layers: all.decoderLayers, heads: all.heads,
      scores: all.decoderScores, rollout: all.decoderRollout } : all;
    const transfer = new Set();
    const scores = {};
    for (const [name, values] of Object.entries(result.scores)) scores[name] = movable(values, transfer);
    const value = {
      text: input.text, ids: Array.from(result.ids), tokens: result.tokens, n: result.n, layers: result.layers, heads: result.heads,
      scores, rollout: movable(result.rollout, transfer), kind: all.encoderDecoder ? (decoder ? 'decoder' : 'encoder') : null,
    };
    return { value, transfer };
  },

  // The logit lens alone (model.analyze with logitLens: true), asked for only
  // when the Analysis tab's section is opened: it costs about four forward
  // passes on GPT-2 small. Only the last `columns` positions of a longer text
  // (logitLens: { positions }): the columns the section draws. The text of
  // each token it names comes along.
  // An encoder-decoder's is its decoder's, over the target.
  logitLens({ text, topK, columns, ...ids }) {
    const input = inputOf({ text, ...ids });
    const n = (input.targetIds ?? input.ids)?.length ?? requireModel().tokenize(text).ids.length;
    const lens = n > columns ? { positions: Array.from({ length: columns }, (_, i) => n - columns + i) } : true;
    const result = requireModel().analyze({ ...input, topK, valueWeighted: false, logitLens: lens });
    if (!result.logitLens) throw new TypeError('This model has no language-model head, so it has no logit lens (a BERT encoder predicts no next token).');
    const labels = Object.fromEntries([...new Set(result.logitLens.ids)].map((id) => [id, tokenLabel(id)]));
    const transfer = new Set();
    const logitLens = { ids: movable(result.logitLens.ids, transfer), probs: movable(result.logitLens.probs, transfer),
      positions: movable(result.logitLens.positions, transfer) };
    return { value: { text, tokens: result.targetTokens ?? result.tokens, n: result.m ?? result.n, layers: result.decoderLayers ?? result.layers, logitLens, labels }, transfer };
  },

  // Induction on a seeded random sequence repeated twice (model.inductionScores).
  inductionScores({ length, seed }) {
    const transfer = new Set();
    return { value: movable(requireModel().inductionScores({ length, seed }), transfer), transfer };
  },
};

let queue = Promise.resolve();
const cancels = new Map(); // request id -> its AbortController, until it answers

self.addEventListener('message', ({ data }) => {
  if (data.cancel !== undefined) {
    cancels.get(data.cancel)?.abort();
    return;
  }
  const { id, type, payload } = data;
  const controller = new AbortController();
  cancels.set(id, controller);
  queue = queue.then(async () => {
    try {
      const handler = handlers[type];
      if (!handler) throw new Error(`unknown request "${type}"`);
      const progress = (event) => self.postMessage({ id, progress: event });
      const { value, transfer } = await handler(payload ?? {}, progress, controller.signal);
      self.postMessage({ id, ok: true, value }, [...(transfer ?? [])]);
    } catch (error) {
      self.postMessage({
        id, ok: false,
        // A failed download's reason, status and url (README, "Downloads") let the page advise on it.
        error: {
          name: error?.name ?? 'Error', message: error?.message ?? String(error), modelLoaded: model !== null,
          reason: error?.reason, status: error?.status, url: error?.url,
        },
      });
    } finally {
      cancels.delete(id);
    }
  });
});
