// What each head does on the text in front of you, measured from its weights
// (the patterns BertViz users look for by eye, named for them):
//   previous  mean attention from token i to token i - 1
//   first     mean attention from token i to token 0
// both over the queries i >= 2, because for i = 1 the previous token is the
// first one and the two roles could not be told apart. A head whose mean is
// above the threshold gets that role. Self-attention only (keys = queries).

/**
 * @param {Float32Array} weights [layer][head][query][key], n x n per head
 * @param {{ layers?: number, heads: number, n: number }} shape
 * @returns {{ layer, head, previous, first, role: 'previous token' | 'first token' | null }[]} one per layer x head
 *   (empty with fewer than 3 tokens: nothing to tell apart)
 */
export function headRoles(weights, { layers = 1, heads, n }, threshold = 0.5) {
  if (n < 3) return [];
  const roles = [];
  for (let layer = 0; layer < layers; layer += 1) {
    for (let head = 0; head < heads; head += 1) {
      const base = (layer * heads + head) * n * n;
      let previous = 0;
      let first = 0;
      for (let query = 2; query < n; query += 1) {
        previous += weights[base + query * n + query - 1];
        first += weights[base + query * n];
      }
      previous /= n - 2;
      first /= n - 2;
      const role = previous > threshold && previous >= first ? 'previous token' : first > threshold ? 'first token' : null;
      roles.push({ layer, head, previous, first, role });
    }
  }
  return roles;
}
