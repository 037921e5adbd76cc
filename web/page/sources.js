// The page's sources of attention that run on this thread. Each offers what
// the custom elements compute with: compute(settings) -> the library's record
// (an Explanation); model/model-source.js is the third, a trained model in a
// worker (its record is a run). compute.js picks one and shows its record.
import { readMatrices } from '../views/input.js';

/** A sentence (and optionally a context sentence) through seeded random projections: lens.explainSentence. */
export function sentenceSource(lens) {
  return {
    compute({ text, context, dModel, heads, seed, causal, temperature, identity }) {
      return lens.explainSentence({
        text, context: context.trim() === '' ? undefined : context, dModel, heads, seed, causal, temperature, identity,
      });
    },
  };
}

/** The matrices typed in the editor (JSON or CSV, views/input.js): lens.explainMatrices, with the page's mask and temperature. */
export function matricesSource(lens) {
  return {
    compute({ matrixText, causal, temperature }) {
      const { options, tokens, contextTokens } = readMatrices(matrixText);
      const record = lens.explainMatrices({ ...options, causal, temperature });
      // The JSON's row labels, where the library has none for matrices.
      return tokens || contextTokens ? { ...record, tokens, contextTokens } : record;
    },
  };
}
