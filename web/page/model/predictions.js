// The model's guess for the next token: softmax of the last row of the
// logits (n x vocab, or the one row model.run({ logits: 'last' }) returns,
// with n = 1), top k ids with their probabilities. Float64 sums, and
// the row's maximum subtracted first, so a 50,000-entry row neither
// overflows nor loses the small probabilities.

/**
 * @param {Float32Array} logits n x vocab, row-major
 * @param {number} n rows (tokens)
 * @param {number} vocab columns
 * @param {number} k how many to return
 * @returns {Array<{ id: number, probability: number, logit: number }>} most probable first
 */
export function topPredictions(logits, n, vocab, k = 5) {
  const row = logits.subarray((n - 1) * vocab, n * vocab);
  let max = -Infinity;
  for (let i = 0; i < vocab; i += 1) if (row[i] > max) max = row[i];
  let sum = 0;
  for (let i = 0; i < vocab; i += 1) sum += Math.exp(row[i] - max);
  // Keep the k best in a small sorted list: one pass, no sort of the whole vocabulary.
  const best = [];
  for (let id = 0; id < vocab; id += 1) {
    const logit = row[id];
    if (best.length === k && logit <= best[k - 1].logit) continue;
    let at = best.length;
    while (at > 0 && best[at - 1].logit < logit) at -= 1;
    best.splice(at, 0, { id, logit });
    if (best.length > k) best.pop();
  }
  return best.map(({ id, logit }) => ({ id, logit, probability: Math.exp(logit - max) / sum }));
}

/**
 * The shown model run's next-token predictions: its own, or for a decoder's run, which comes without them
 * (predictionsPending), those of the store's `predictions` ({ text, trained, predictions }) when they are
 * this run's text's with this model; null until they arrive, and for a run without any.
 */
export function shownPredictions({ record, trained }, predictions) {
  if (!record.predictionsPending) return record.predictions;
  return predictions?.text === record.text && predictions.trained === trained ? predictions.predictions : null;
}
