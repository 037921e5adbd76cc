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
// model view gets every head pooled to the pixels it draws (model.run's
// attention { pool }: at 1024 tokens a small heatmap gives a token a quarter
// of a CSS pixel, so 4 x 4 tokens a block, 1/16 of the bytes), and a head
// opened from it is fetched in full.
import { markLibraryData } from '../../views/attention-data.js';
import { cellSide } from '../../views/heatmap.js';
import { largestModelGrid } from '../chart-fit.js';

export const ALL_BELOW = 2 ** 18; // floats (1 MiB): GPT-2 small at 42 tokens, the built-in model at its 128

const range = (count) => Array.from({ length: count }, (_, i) => i);

/**
 * What the page asks a run (or a fetch) for: { every: true, pixelRatio } (the model view: every
 * head, as many device pixels as CSS pixels), or { layer, heads } of one layer.
 * @param settings the page's settings (view, layer, head)
 * @param info the model's { layers, heads }
 */
export function wantedAttention({ view, layer, head }, { layers, heads }, pixelRatio = globalThis.devicePixelRatio || 1) {
  if (view === 'model') return { every: true, pixelRatio };
  const shownLayer = Math.min(layer, layers - 1);
  if (view === 'multiples' || view === 'average') return { layer: shownLayer, heads: range(heads) };
  return { layer: shownLayer, heads: [head < heads ? head : 0] };
}

const wantsEvery = (wanted) => wanted === 'all' || wanted.every === true;

/**
 * The pool factor of the model view's weights at n tokens: the tokens a device pixel of its small
 * heatmaps holds along a side (heatmap.js: at least a quarter CSS px per token), so that a pooled
 * block is no larger than a pixel (a larger side than the page's would draw only pools less).
 */
export function modelViewPool(n, pixelRatio = 1) {
  const cell = cellSide(n, n, largestModelGrid, { compact: true });
  return Math.max(1, Math.min(n, Math.floor(1 / (cell * pixelRatio))));
}

/**
 * The worker's model.run attention option for n tokens: everything when it is small, every head
 * pooled to the model view's pixels, or one layer's wanted heads.
 */
export function attentionForRun(wanted, { layers, heads }, n) {
  if (layers * heads * n * n <= ALL_BELOW) return 'all';
  if (!wantsEvery(wanted)) return { layers: [wanted.layer], heads: wanted.heads };
  const pool = modelViewPool(n, wanted.pixelRatio ?? 1);
  return pool > 1 ? { pool } : 'all';
}

const holdsAll = (run) => run.attentionLayers.length === run.layers && run.attentionHeads.length === run.heads;

/**
 * A decoder's run as the views' data when it holds part of its attention: one layer's held heads
 * ({ tokens, weights [head][query][key], heads, causal, windows }), with `held` { layer, heads };
 * or every head pooled (model.run's attention { pool }: only the model view draws it), with `held`
 * { pool }. Null when the run holds every layer and head in full: then the data is fromRun's.
 */
export function heldData(run) {
  if (run.attentionPool > 1) {
    const data = markLibraryData({
      tokens: run.tokens, weights: run.attention, layers: run.layers, heads: run.heads, pool: run.attentionPool,
      causal: run.causal ?? false, windows: run.windows ?? null,
    });
    return { data, held: { pool: run.attentionPool } };
  }
  if (!run.attentionLayers || holdsAll(run)) return null;
  const layer = run.attentionLayers[0];
  const data = markLibraryData({
    tokens: run.tokens, weights: run.attention, heads: run.attentionHeads.length, causal: run.causal ?? false,
    windows: run.windows ? [run.windows[layer]] : null,
  });
  return { data, held: { layer, heads: run.attentionHeads } };
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
  if (!held || held.pool) return { layer: model.hasLayers ? layer : 0, head };
  const index = held.heads.indexOf(head);
  return layer === held.layer && index >= 0 ? { layer: 0, head: index } : null;
}

/** True when `shown` (a model's run) lacks what `wanted` asks for: pooled heads serve only the model view. */
export function lacks({ held }, wanted) {
  if (!held) return false;
  if (held.pool) return !wantsEvery(wanted);
  if (wantsEvery(wanted)) return true;
  return wanted.layer !== held.layer || wanted.heads.some((head) => !held.heads.includes(head));
}

/** The worker's { layers, heads, pool } for `wanted` of a run of n tokens (every head: pooled as a run would be). */
export function fetchedHeads(wanted, { layers, heads }, n) {
  if (!wantsEvery(wanted)) return { layers: [wanted.layer], heads: wanted.heads, pool: 1 };
  const choice = attentionForRun(wanted, { layers, heads }, n);
  return { layers: range(layers), heads: range(heads), pool: choice.pool ?? 1 };
}

/** True while the weights the settings' view draws are being fetched (a model's run that holds too few). */
export function awaitsHeads(shown, settings) {
  return Boolean(shown?.held) && lacks(shown, wantedAttention(settings, shownSizes(shown)));
}
