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
export function wantedAttention({ view, layer, head }, { layers, heads }, pixelRatio = globalThis.devicePixelRatio || 1) {
  if (view === 'model') return { every: true, side: largestModelGrid, pixelRatio };
  const shownLayer = Math.min(layer, layers - 1);
  if (view === 'multiples') return { layer: shownLayer, heads: range(heads), side: largestMultiple, pixelRatio };
  if (view === 'average') return { layer: shownLayer, heads: range(heads) };
  return { layer: shownLayer, heads: [head < heads ? head : 0] };
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

/** The layers and heads the page's controls offer for `shown`: the run's, though it holds fewer. */
export function shownSizes({ model, record, held }) {
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
  if ((held.pool ?? 1) > allowedPool(wanted, record.n)) return true;
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
