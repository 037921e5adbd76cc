// A trained model's run as the views need it: the chosen layer's weights
// shaped like the random-projection results (views/data.js attentionModel),
// so every view draws either without knowing which it is. Pure data.
import { engineName } from '../engine-name.js';

/**
 * @param {object} run from the model worker: { tokens, n, layers, heads, attention [layer][head][query][key] }
 * @param {number} layer
 * @returns the view model: { queryTokens, keyTokens, crossAttention, heads, n, nKeys, weights [head][query][key], layer }
 */
export function layerViewModel(run, layer) {
  const size = run.heads * run.n * run.n;
  return {
    queryTokens: run.tokens, keyTokens: run.tokens, crossAttention: false,
    heads: run.heads, n: run.n, nKeys: run.n,
    weights: run.attention.subarray(layer * size, (layer + 1) * size),
    result: null, // the step-by-step numbers come separately, from model.explain
    layer,
  };
}

/** One head of one layer: a view (no copy) of n x n weights. */
export function headOf(run, layer, head) {
  const size = run.n * run.n;
  const start = (layer * run.heads + head) * size;
  return run.attention.subarray(start, start + size);
}

/** The status line of a run, e.g. "sort-gpt2 · 6 tokens · 3 layers × 3 heads · forward pass in 0.21 ms (...)". */
export function runStatus({ name, run, simdLevel, threads, drawMs }) {
  const engine = engineName(simdLevel, threads);
  return `${name} · ${run.n} token${run.n === 1 ? '' : 's'} · ${run.layers} layer${run.layers === 1 ? '' : 's'} × `
    + `${run.heads} head${run.heads === 1 ? '' : 's'} · forward pass in ${run.elapsedMs.toFixed(2)} ms (${engine}, in a worker) · `
    + `drawn in ${drawMs.toFixed(0)} ms`;
}
