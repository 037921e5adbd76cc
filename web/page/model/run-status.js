// The status line of a trained model's run (its data for the views is
// attnlens/views fromRun; compute.js shows it).
import { engineName } from '../engine-name.js';

/** The status line of a run, e.g. "sort-gpt2 · 6 tokens · 3 layers × 3 heads · forward pass in 0.21 ms (...)". */
export function runStatus({ name, run, simdLevel, threads, drawMs }) {
  const engine = engineName(simdLevel, threads);
  return `${name} · ${run.n} token${run.n === 1 ? '' : 's'} · ${run.layers} layer${run.layers === 1 ? '' : 's'} × `
    + `${run.heads} head${run.heads === 1 ? '' : 's'} · forward pass in ${run.elapsedMs.toFixed(2)} ms (${engine}, in a worker) · `
    + `drawn in ${drawMs.toFixed(0)} ms`;
}
