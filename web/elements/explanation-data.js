// An Explanation (lens.explainSentence, lens.explainMatrices) as the data of
// the attention views: its tokens (or row labels) and its weights.

const labels = (count, prefix) => Array.from({ length: count }, (_, index) => `${prefix}${index}`);

/** { tokens, keyTokens, weights, heads } for attnlens/views; rows without tokens are t0, t1, ... (keys c0, c1, ...). */
export function attentionOf(explanation, crossAttention) {
  const tokens = explanation.tokens ?? labels(explanation.n, 't');
  const keyTokens = crossAttention ? explanation.contextTokens ?? labels(explanation.nContext, 'c') : null;
  return { tokens, keyTokens, weights: explanation.weights, heads: explanation.heads };
}
