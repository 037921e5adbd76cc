// The neuron view's numbers (BertViz's neuron view): for one head and one
// query token of an Explanation (model.explain, lens.explainSentence,
// lens.explainMatrices), the query vector q_i, each key vector k_j, their
// elementwise product q_i ∘ k_j, its sum q_i · k_j, that times the scale (and
// over the temperature), and the softmax weight the record holds. Computed
// here from the record's q and k, so the view shows where each score comes
// from; the weights are the record's own.
import { AttentionDataError } from './attention-data.js';

const fail = (message) => { throw new AttentionDataError(`neuron: ${message}`); };

/** Checks an Explanation for the fields the neuron view reads; returns it. */
export function neuronRecord(record) {
  if (record === null || typeof record !== 'object') fail('expected an Explanation (model.explain, lens.explainSentence or lens.explainMatrices)');
  const { n, nContext, heads, headWidth, q, k, weights, scaledScores } = record;
  for (const [name, value] of [['n', n], ['nContext', nContext], ['heads', heads], ['headWidth', headWidth]]) {
    if (!(Number.isInteger(value) && value > 0)) fail(`${name} must be a positive integer, got ${value}`);
  }
  if (!(record.scale > 0)) fail(`scale must be a positive number, got ${record.scale}`);
  const width = heads * headWidth; // q and k hold every head's columns (a kv head's repeated per query head)
  const expect = (name, value, length) => {
    if (!(value instanceof Float32Array) || value.length !== length) fail(`${name} must be a Float32Array of ${length} values, got ${value?.length ?? value}`);
  };
  expect('q', q, n * width);
  expect('k', k, nContext * width);
  expect('weights', weights, heads * n * nContext);
  expect('scaledScores', scaledScores, heads * n * nContext);
  return record;
}

/**
 * One head's and one query's numbers: { q (headWidth), keys: [{ k, product (headWidth each), dot,
 * scaled, weight, masked }] } with scaled = dot · scale / temperature and weight the record's softmax.
 */
export function neuronOf(record, head, query) {
  const { n, nContext, heads, headWidth, q, k, weights, scaledScores } = record;
  if (!(Number.isInteger(head) && head >= 0 && head < heads)) throw new RangeError(`attnlens/views: neuron: head must be an integer from 0 to ${heads - 1}, got ${head}`);
  if (!(Number.isInteger(query) && query >= 0 && query < n)) throw new RangeError(`attnlens/views: neuron: query must be an integer from 0 to ${n - 1}, got ${query}`);
  const width = heads * headWidth;
  const factor = record.scale / (record.temperature ?? 1);
  const queryVector = q.subarray(query * width + head * headWidth, query * width + (head + 1) * headWidth);
  const row = (head * n + query) * nContext;
  const keys = Array.from({ length: nContext }, (_, key) => {
    const keyVector = k.subarray(key * width + head * headWidth, key * width + (head + 1) * headWidth);
    const product = new Float32Array(headWidth);
    let dot = 0;
    for (let t = 0; t < headWidth; t += 1) {
      product[t] = queryVector[t] * keyVector[t];
      dot += product[t];
    }
    // A key the mask hid (causal, padding) has -Infinity as its scaled score and weight 0.
    const masked = scaledScores[row + key] === -Infinity;
    return { k: keyVector, product, dot, scaled: dot * factor, weight: weights[row + key], masked };
  });
  return { q: queryVector, keys };
}

/** The largest magnitude of the numbers, for one colour scale per vector kind (1 when all are 0). */
export function largest(vectors) {
  let most = 0;
  for (const vector of vectors) for (const value of vector) most = Math.max(most, Math.abs(value));
  return most || 1;
}
