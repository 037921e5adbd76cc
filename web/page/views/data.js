// Data preparation for the views: slicing and reshaping what the library
// returned. No attention math lives here (the WASM core computed every
// number); only views of those numbers.

// The model the views draw, built once per library result.
//   queryTokens, keyTokens: labels of the rows (queries) and columns (keys)
//   heads, n (queries), nKeys, weights: Float32Array [head][query][key]
// `crossAttention`: keys and values came from a second sentence or matrix.
export function attentionModel(result, { crossAttention = false } = {}) {
  const queryTokens = tokenTexts(result.tokens) ?? rowLabels(result.n, 't');
  const keyTokens = crossAttention ? tokenTexts(result.contextTokens) ?? rowLabels(result.nContext, 'c') : queryTokens;
  return {
    queryTokens, keyTokens, crossAttention,
    heads: result.heads, n: result.n, nKeys: result.nContext, weights: result.weights, result,
  };
}

// Tokens as plain strings (the contract says string[]; objects with a `text`
// field are accepted too, so a richer token type would not break the page).
function tokenTexts(tokens) {
  if (!tokens || tokens.length === 0) return null;
  return tokens.map((token) => (typeof token === 'string' ? token : String(token.text)));
}

// Labels for matrices typed by hand, which have no tokens: t0, t1, ...
export function rowLabels(count, prefix = 't') {
  return Array.from({ length: count }, (_, index) => `${prefix}${index}`);
}

// The weights of one head: a view (no copy) of n x nKeys values.
export function headWeights(model, head) {
  const size = model.n * model.nKeys;
  return model.weights.subarray(head * size, (head + 1) * size);
}

// Mean over heads, cell by cell: the "head average" view.
export function averageOverHeads(model) {
  const size = model.n * model.nKeys;
  const mean = new Float32Array(size);
  for (let head = 0; head < model.heads; head += 1) {
    const weights = headWeights(model, head);
    for (let index = 0; index < size; index += 1) mean[index] += weights[index];
  }
  for (let index = 0; index < size; index += 1) mean[index] /= model.heads;
  return mean;
}

// Nested arrays [row][col] from a flat row-major array (for JSON export).
export function toNested(values, rows, cols) {
  return Array.from({ length: rows }, (_, row) => Array.from(values.subarray(row * cols, (row + 1) * cols)));
}
