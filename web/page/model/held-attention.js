// Which of a trained model's attention weights the page holds: what it draws.
// Every head of every layer is layers x heads x n x n floats (GPT-2 small at
// 1024 tokens: 576 MiB), and at 512 tokens a run that returns them all costs
// 5x one that returns one head (tests/bench/incremental.mjs). So a run brings
// the head the heatmap, lines, table and steps views show, every head of the
// layer for "All heads" and the head average, and every layer only for the
// model view; the rest is fetched when the view, head or layer changes
// (model-worker.js weights: from the queries and keys the model kept, no
// forward). Below ALL_BELOW floats a run brings everything: then it costs
// little, and switching heads needs no round trip to the worker.
import { markLibraryData } from '../../views/attention-data.js';

export const ALL_BELOW = 2 ** 18; // floats (1 MiB): GPT-2 small at 42 tokens, the built-in model at its 128

const range = (count) => Array.from({ length: count }, (_, i) => i);

/**
 * What the page asks a run (or a fetch) for: 'all', or { layer, heads } of one layer.
 * @param settings the page's settings (view, layer, head)
 * @param info the model's { layers, heads }
 */
export function wantedAttention({ view, layer, head }, { layers, heads }) {
  if (view === 'model') return 'all';
  const shownLayer = Math.min(layer, layers - 1);
  if (view === 'multiples' || view === 'average') return { layer: shownLayer, heads: range(heads) };
  return { layer: shownLayer, heads: [head < heads ? head : 0] };
}

/** The worker's choice for n tokens: everything when it is small, else what is wanted. */
export function attentionForRun(wanted, { layers, heads }, n) {
  return layers * heads * n * n <= ALL_BELOW ? 'all' : wanted;
}

const holdsAll = (run) => run.attentionLayers.length === run.layers && run.attentionHeads.length === run.heads;

/**
 * A decoder's run as the views' data when it holds part of its attention: one layer's held heads
 * ({ tokens, weights [head][query][key], heads, causal, windows }), with `held` { layer, heads }
 * (null when the run holds every layer and head: then the data is fromRun's).
 */
export function heldData(run) {
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
  if (!held) return { layer: model.hasLayers ? layer : 0, head };
  const index = held.heads.indexOf(head);
  return layer === held.layer && index >= 0 ? { layer: 0, head: index } : null;
}

/** True when `shown` (a model's run) lacks what `wanted` asks for. */
export function lacks({ held }, wanted) {
  if (!held) return false;
  if (wanted === 'all') return true;
  return wanted.layer !== held.layer || wanted.heads.some((head) => !held.heads.includes(head));
}

/** The worker's { layers, heads } for `wanted` ('all': every one). */
export function fetchedHeads(wanted, { layers, heads }) {
  return wanted === 'all' ? { layers: range(layers), heads: range(heads) } : { layers: [wanted.layer], heads: wanted.heads };
}

/** True while the weights the settings' view draws are being fetched (a model's run that holds too few). */
export function awaitsHeads(shown, settings) {
  return Boolean(shown?.held) && lacks(shown, wantedAttention(settings, shownSizes(shown)));
}
