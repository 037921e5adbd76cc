// The status line of a trained model's run (its data for the views is
// attnlens/views fromRun; compute.js shows it).
import { engineName } from '../engine-name.js';

/** The status line of a run, e.g. "sort-gpt2 · 6 tokens · 3 layers × 3 heads · forward pass in 0.21 ms (...)". */
export function runStatus({ name, run, simdLevel, threads, drawMs }) {
  const engine = engineName(simdLevel, threads);
  if (run.encoderDecoder) {
    const k = run.generated.tokens.length;
    return `${name} · ${run.n} source token${run.n === 1 ? '' : 's'} → ${k} generated in ${run.generated.elapsedMs.toFixed(1)} ms · `
      + `${run.layers} encoder + ${run.decoderLayers} decoder layers × ${run.heads} heads · forward pass in ${run.elapsedMs.toFixed(2)} ms `
      + `(${engine}, in a worker) · drawn in ${drawMs.toFixed(0)} ms`;
  }
  return `${name} · ${run.n} token${run.n === 1 ? '' : 's'} · ${run.layers} layer${run.layers === 1 ? '' : 's'} × `
    + `${run.heads} head${run.heads === 1 ? '' : 's'} · forward pass in ${run.elapsedMs.toFixed(2)} ms (${engine}, in a worker) · `
    + `drawn in ${drawMs.toFixed(0)} ms`;
}
