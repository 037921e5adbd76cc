// Which of a trained model's attention weights the page holds: what it draws.
// Every head of every layer is layers x heads x n x n floats (GPT-2 small at
// 1024 tokens: 576 MiB), and at 512 tokens a run that returns them all costs
// 5x one that returns one head (tests/bench/incremental.mjs). So a run brings
// the head the heatmap, lines, table and steps views show, every head of the
// layer for "All heads" and the head average, and every layer only for the
// model view; the rest is fetched when the view, head or layer changes
// (model-worker.js weights: from the queries and keys the model kept, no
// forward). Below ALL_BELOW floats a run brings everything: then it costs
// little, and switching heads needs no round trip to the worker. Above it the
// model view and "All heads" get their heads pooled to the pixels they draw
// (model.run's attention { pool }: at 1024 tokens a small heatmap gives a
// token a quarter of a CSS pixel, so 4 x 4 tokens a block, 1/16 of the
// bytes), and a head opened from them is fetched in full.
// With the value-weighted switch on, the same heads come value-weighted
// (model.run's attention { valueWeighted: true }, headWeights' { valueWeighted }:
// from what the model kept, no second forward pass and no other head's n x n).
// An encoder-decoder's translation (below) likewise brings the kind shown's heads, or for its
// three-grid model view every kind's, and fetches another kind from its run's headWeights.
import { markLibraryData } from '../../views/attention-data.js';
import { fromRun } from '../../views/records.js';
import { cellSide } from '../../views/heatmap.js';
import { largestModelGrid, largestMultiple } from '../chart-fit.js';

export const ALL_BELOW = 2 ** 18; // floats (1 MiB): GPT-2 small at 42 tokens, the built-in model at its 128

const range = (count) => Array.from({ length: count }, (_, i) => i);

/**
 * What the page asks a run (or a fetch) for: every head ({ every: true }: the model view), or
 * { layer, heads } of one layer; for the small heatmaps of the model view and "All heads", with
 * `side`, the largest CSS px a head is drawn in, and the device's `pixelRatio` (the pool they allow).
 * @param settings the page's settings (view, layer, head)
 * @param info the model's { layers, heads }
 */
export function wantedAttention({ view, layer, head, attentionKind }, { layers, heads, kinds }, pixelRatio = globalThis.devicePixelRatio || 1) {
  // An encoder-decoder's (sizes from kindSizes): of the kind shown, whose stack `layers` counts.
  const kind = kinds ? { kind: attentionKind } : {};
  if (view === 'model') return { every: true, side: largestModelGrid, pixelRatio };
  const shownLayer = Math.min(layer, layers - 1);
  if (view === 'multiples') return { layer: shownLayer, heads: range(heads), side: largestMultiple, pixelRatio, ...kind };
  if (view === 'average') return { layer: shownLayer, heads: range(heads), ...kind };
  return { layer: shownLayer, heads: [head < heads ? head : 0], ...kind };
}

const wantsEvery = (wanted) => wanted === 'all' || wanted.every === true;

/**
 * The pool factor `wanted` allows at n tokens: the tokens a device pixel of its small heatmaps
 * holds along a side (heatmap.js: at least a quarter CSS px per token, its cell at wanted.side),
 * so that a pooled block is no larger than a pixel (a smaller heatmap than `side` pools less than
 * it could); 1 for views that draw each weight.
 */
export function allowedPool(wanted, n) {
  if (!wanted.side) return 1;
  const cell = cellSide(n, n, wanted.side, { compact: true });
  return Math.max(1, Math.min(n, Math.floor(1 / (cell * (wanted.pixelRatio ?? 1)))));
}

/**
 * The worker's model.run attention option for n tokens: everything when it is small, else the
 * wanted heads, pooled as far as the view allows; value-weighted attention with `valueWeighted`.
 */
export function attentionForRun(wanted, { layers, heads }, n, valueWeighted = false) {
  const weighted = valueWeighted ? { valueWeighted } : {};
  if (layers * heads * n * n <= ALL_BELOW) return valueWeighted ? weighted : 'all';
  const pool = allowedPool(wanted, n);
  const pooled = pool > 1 ? { pool } : {};
  if (!wantsEvery(wanted)) return { layers: [wanted.layer], heads: wanted.heads, ...pooled, ...weighted };
  return pool > 1 || valueWeighted ? { ...pooled, ...weighted } : 'all';
}

const holdsAll = (run) => run.attentionLayers.length === run.layers && run.attentionHeads.length === run.heads;

/**
 * A decoder's run as the views' data when it holds part of its attention: one layer's held heads
 * ({ tokens, weights [head][query][key], heads, causal, windows, pool }), with `held` { layer, heads,
 * pool }; or every head pooled, with `held` { pool } (pool > 1: model.run's attention { pool }, which
 * only the small heatmaps draw). Null when the run holds every layer and head in full: then the data is fromRun's.
 */
export function heldData(run) {
  const pool = run.attentionPool ?? 1;
  if (!run.attentionLayers || (holdsAll(run) && pool === 1)) return null;
  if (holdsAll(run)) return { data: markLibraryData(fromRun(run)), held: { pool } };
  const layer = run.attentionLayers[0];
  const data = markLibraryData({
    tokens: run.tokens, weights: run.attention, heads: run.attentionHeads.length, pool, causal: run.causal ?? false,
    windows: run.windows ? [run.windows[layer]] : null, quantity: run.attentionQuantity ?? 'weights',
  });
  return { data, held: { layer, heads: run.attentionHeads, pool } };
}

/** The layers and heads the page's controls offer for `shown`: the run's, though it holds fewer (an encoder-decoder's: of the kind shown). */
export function shownSizes({ model, record, held }) {
  if (held?.kinds) return { layers: held.layers, heads: record.heads, hasLayers: true, kinds: held.kinds };
  return held ? { layers: record.layers, heads: record.heads, hasLayers: true } : { layers: model.layers, heads: model.heads, hasLayers: model.hasLayers };
}

/**
 * Where the settings' layer and head are in the shown data (the views' layer and head options),
 * or null while that head is being fetched.
 */
export function shownIndex({ model, held }, { layer, head }) {
  if (!held || held.layer === undefined) return { layer: model.hasLayers ? layer : 0, head };
  const index = held.heads.indexOf(head);
  return layer === held.layer && index >= 0 ? { layer: 0, head: index } : null;
}

/**
 * True when `shown` (a model's run) lacks what `wanted` asks for: other heads, or weights pooled
 * more than the view allows (each weight, for the views that draw them).
 */
export function lacks({ held, record }, wanted) {
  if (!held) return false;
  // An encoder-decoder's: the model view draws its three kinds; the other views one, the kind shown.
  if (held.kinds && (wantsEvery(wanted) ? held.kinds.length < KINDS.length : !held.kinds.includes(wanted.kind))) return true;
  if ((held.pool ?? 1) > allowedPool(wanted, held.side ?? record.n)) return true;
  if (held.layer === undefined) return false;
  if (wantsEvery(wanted)) return true;
  return wanted.layer !== held.layer || wanted.heads.some((head) => !held.heads.includes(head));
}

/**
 * The worker's { layers, heads, pool, valueWeighted } for `wanted` of a run of n tokens, pooled as a run
 * would be, of the quantity the shown run holds (its attentionQuantity).
 */
export function fetchedHeads(wanted, { layers, heads }, n, quantity = 'weights') {
  const pool = layers * heads * n * n <= ALL_BELOW ? 1 : allowedPool(wanted, n);
  const weighted = quantity === 'valueWeighted' ? { valueWeighted: true } : {};
  if (!wantsEvery(wanted)) return { layers: [wanted.layer], heads: wanted.heads, pool, ...weighted };
  return { layers: range(layers), heads: range(heads), pool, ...weighted };
}

/** True while the weights the settings' view draws are being fetched (a model's run that holds too few). */
export function awaitsHeads(shown, settings) {
  return Boolean(shown?.held) && lacks(shown, wantedAttention(settings, shownSizes(shown)));
}

// ---- An encoder-decoder's translation (model-worker.js translate, translationWeights) ----
// Its run holds the kind shown (or for the model view every kind), pooled as its views allow:
// model.run's attention { kinds, layers, heads, pool }; the rest comes from the run's headWeights.

const KINDS = ['encoder', 'decoder', 'cross'];
const KIND_ARRAYS = { encoder: 'attention', decoder: 'decoderAttention', cross: 'crossAttention' };
// A kind's rows and keys: the source's n tokens, the decoder's m inputs.
const kindSides = ({ n, m }, kind) => ({ encoder: [n, n], decoder: [m, m], cross: [m, n] })[kind];

/** The sizes wantedAttention reads for an encoder-decoder's kind: its stack's layers, the heads, and `kinds` (the mark of one). */
export const kindSizes = ({ layers, decoderLayers, heads }, kind) => ({ layers: kind === 'encoder' ? layers : decoderLayers, heads, kinds: KINDS });

// The side a translation's pool is chosen by: the model view's smallest grid (its three pooled alike), else the kind's largest side.
const poolSide = (wanted, sizes) => (wantsEvery(wanted) ? Math.min(sizes.n, sizes.m) : Math.max(...kindSides(sizes, wanted.kind)));

/**
 * The worker's model.run attention option for a translation of n source and m target tokens: everything
 * when it is small, else what `wanted` (of the kind shown) draws, pooled as far as its view allows.
 */
export function attentionForTranslation(wanted, { layers, decoderLayers, heads }, { n, m }) {
  if (heads * (layers * n * n + decoderLayers * (m * m + m * n)) <= ALL_BELOW) return 'all';
  const pool = allowedPool(wanted, poolSide(wanted, { n, m }));
  const pooled = pool > 1 ? { pool } : {};
  if (wantsEvery(wanted)) return pool > 1 ? pooled : 'all';
  return { kinds: [wanted.kind], layers: [wanted.layer], heads: wanted.heads, ...pooled };
}

/** The worker's { kinds, layers, heads, pool } for `wanted` of a translation, as attentionForTranslation would ask a run. */
export function fetchedTranslationHeads(wanted, info, sizes) {
  const choice = attentionForTranslation(wanted, info, sizes);
  if (choice === 'all') return wantsEvery(wanted) ? { kinds: KINDS, heads: range(info.heads), pool: 1 } : { kinds: [wanted.kind], layers: [wanted.layer], heads: wanted.heads, pool: 1 };
  return { kinds: choice.kinds ?? KINDS, ...(choice.layers ? { layers: choice.layers } : {}), heads: choice.heads ?? range(info.heads), pool: choice.pool ?? 1 };
}

/**
 * A translation's run as the views' data of `kind` when it holds part of its attention (other kinds,
 * layers or heads, or pooled): the kind's held heads, or every head pooled; `held` says what it holds
 * ({ kinds, kind, layers: the kind's stack, side: what its pool was chosen by, pool, and for one
 * layer's heads layer and heads}). While the kind shown is not held, the data is a held kind's (the
 * page fetches the one shown). Null when the run holds everything in full: then the data is fromRun's.
 */
export function heldTranslationData(run, kind) {
  const { attentionKinds: kinds, attentionLayers: layersOf, attentionHeads: heads } = run;
  const pool = run.attentionPool ?? 1;
  if (!kinds || kinds.length === 0) return null;
  const stack = (k) => (k === 'encoder' ? run.layers : run.decoderLayers);
  const everything = kinds.length === KINDS.length && heads.length === run.heads && KINDS.every((k) => layersOf[k].length === stack(k));
  if (everything && pool === 1) return null;
  const shown = kinds.includes(kind) ? kind : kinds[0];
  const held = { kinds, kind: shown, layers: stack(kind), pool }; // layers: the kind chosen's, for the layer control
  if (everything) return { data: markLibraryData(fromRun(run, { kind: shown })), held: { ...held, side: Math.min(run.n, run.m) } };
  const [rows, keys] = kindSides(run, shown);
  const data = markLibraryData({
    tokens: shown === 'encoder' ? run.tokens : run.targetTokens, ...(shown === 'cross' ? { keyTokens: run.tokens } : {}),
    weights: run[KIND_ARRAYS[shown]], heads: heads.length, pool, causal: shown === 'decoder',
  });
  return { data, held: { ...held, side: Math.max(rows, keys), layer: layersOf[shown][0], heads } };
}
