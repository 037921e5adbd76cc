// The two contestants of the model-forward benchmark and the checks that
// must pass before either is timed, shared by Node (model-forward.mjs) and
// the Chromium page it serves (browser-safe: no node: imports).
//   attnlens         lens.loadModel + model.run({ ids }): attention, hidden
//                    and logits come back as fresh Float32Arrays
//   onnxruntime-web  the graph of onnx-gpt2.mjs, wasm backend, 1 thread:
//                    session.run returns every output copied out as well
// Both thus pay the same copies: 12 x 12 x n x n attention weights, n x 768
// hidden, n x 50257 logits (9.4 + 0.4 + 25.7 MB at n = 128).

import { relativeError } from './workloads.mjs';

export const SESSION_OPTIONS = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };

// ort.env as engines.mjs sets it: wasm backend, SIMD, one thread unless
// asked (two need a cross-origin isolated page).
export function configureOrt(ort, wasmPaths, threads = 1) {
  ort.env.wasm.wasmPaths = wasmPaths;
  ort.env.wasm.numThreads = threads === 2 ? 2 : 1;
  ort.env.wasm.simd = true;
  ort.env.logLevel = 'error';
}

// One onnxruntime-web forward: { attention: [Float32Array per layer], hidden, logits }.
export async function runOrt(ort, session, ids, layers) {
  const outputs = await session.run({ ids: new ort.Tensor('int32', ids, [ids.length]) });
  const attention = [];
  for (let i = 0; i < layers; ++i) attention.push(outputs[`attention.${i}`].data);
  return { attention, hidden: outputs.hidden.data, logits: outputs.logits.data };
}

// Layers' arrays -> one [layer][head][query][key] array (as attnlens returns it).
export function concatenate(arrays) {
  const out = new Float32Array(arrays.reduce((sum, a) => sum + a.length, 0));
  let offset = 0;
  for (const a of arrays) {
    out.set(a, offset);
    offset += a.length;
  }
  return out;
}

// Weights above the diagonal (key > query) that are not exactly 0: a
// causal softmax gives exact zeros there, as Hugging Face's does.
export function maskedNonzero(attention, n) {
  let count = 0;
  for (let block = 0; block < attention.length / (n * n); ++block) {
    for (let i = 0; i < n; ++i) {
      for (let j = i + 1; j < n; ++j) if (attention[block * n * n + i * n + j] !== 0) ++count;
    }
  }
  return count;
}

// Positions whose highest logit is the same token in both.
export function argmaxAgreement(a, b, n, vocab) {
  const argmax = (logits, row) => {
    let best = 0;
    for (let v = 1; v < vocab; ++v) if (logits[row * vocab + v] > logits[row * vocab + best]) best = v;
    return best;
  };
  let same = 0;
  for (let i = 0; i < n; ++i) same += argmax(a, i) === argmax(b, i);
  return same;
}

// attnlens' run against onnxruntime-web's (the numbers the benchmark prints
// and checks before timing).
export function compareForward(ours, theirs, { vocab }, n) {
  const attention = concatenate(theirs.attention);
  return {
    attention: relativeError(ours.attention, attention),
    hidden: relativeError(ours.hidden, theirs.hidden),
    logits: relativeError(ours.logits, theirs.logits),
    argmaxSame: argmaxAgreement(ours.logits, theirs.logits, n, vocab),
    maskedNonzero: { attnlens: maskedNonzero(ours.attention, n), onnx: maskedNonzero(attention, n) },
  };
}

// The problems (strings) that disqualify a comparison: outputs further apart
// than `tolerance`, or a masked weight that is not exactly 0.
export function comparisonProblems(comparison, tolerance, what) {
  const problems = [];
  for (const key of ['attention', 'hidden', 'logits']) {
    if (!(comparison[key] <= tolerance)) {
      problems.push(`${what}: ${key} differ by ${comparison[key].toExponential(2)} (relative) > ${tolerance}`);
    }
  }
  for (const [engine, count] of Object.entries(comparison.maskedNonzero)) {
    if (count) problems.push(`${what}: ${engine} has ${count} nonzero weights above the causal diagonal`);
  }
  return problems;
}
