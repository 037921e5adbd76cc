// Float64 references of model.analyze's measures, written from their
// definitions (shared by the decoder-only and the encoder-decoder tests):
// - each detector as sum(A o P) / sum(A) over its 0/1 pattern (TransformerLens'
//   detect_head "mul" with its defaults);
// - rollout as the product of 0.5 * mean-of-heads + 0.5 * I;
// - value-weighted attention as α_ij ‖v_j W_O^h‖, rows normalised;
// - the logit lens's top k by a full sort.

export const DETECTORS = ['previousToken', 'firstToken', 'currentToken', 'duplicateToken', 'induction'];

// The five patterns as explicit n x n 0/1 matrices, built as TransformerLens
// builds them: duplicate = (ids[j] == ids[i]) strictly below the diagonal,
// induction = duplicate shifted one key to the right.
function patterns(ids) {
  const n = ids.length;
  const matrix = (cell) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => cell(i, j)));
  const duplicate = matrix((i, j) => (j < i && ids[i] === ids[j] ? 1 : 0));
  return {
    previousToken: matrix((i, j) => (j === i - 1 ? 1 : 0)),
    firstToken: matrix((i, j) => (i >= 1 && j === 0 ? 1 : 0)),
    currentToken: matrix((i, j) => (i === j ? 1 : 0)),
    duplicateToken: duplicate,
    induction: matrix((i, j) => (j >= 1 && j <= i ? duplicate[i][j - 1] : 0)),
  };
}

export function referenceScores(attention, ids, layers, heads) {
  const n = ids.length, p = patterns(ids);
  const scores = Object.fromEntries(DETECTORS.map((name) => [name, new Float64Array(layers * heads)]));
  for (let head = 0; head < layers * heads; head++) {
    let total = 0;
    const matched = Object.fromEntries(DETECTORS.map((name) => [name, 0]));
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const a = attention[(head * n + i) * n + j];
        total += a;
        for (const name of DETECTORS) matched[name] += a * p[name][i][j];
      }
    }
    for (const name of DETECTORS) scores[name][head] = total > 0 ? matched[name] / total : 0;
  }
  return scores;
}

export function referenceRollout(attention, n, layers, heads) {
  const out = new Float64Array(layers * n * n);
  let previous = null;
  for (let l = 0; l < layers; l++) {
    const mixed = new Float64Array(n * n);
    for (let h = 0; h < heads; h++) {
      for (let k = 0; k < n * n; k++) mixed[k] += (0.5 / heads) * attention[(l * heads + h) * n * n + k];
    }
    for (let i = 0; i < n; i++) mixed[i * n + i] += 0.5;
    const current = out.subarray(l * n * n, (l + 1) * n * n);
    if (!previous) current.set(mixed);
    else {
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          let sum = 0;
          for (let k = 0; k < n; k++) sum += mixed[i * n + k] * previous[k * n + j];
          current[i * n + j] = sum;
        }
      }
    }
    previous = current;
  }
  return out;
}

// The k largest logits' ids (ties: smaller id) and their softmax probabilities, row by row.
export function topK(logits, rows, vocab, k) {
  const ids = [], probs = [];
  for (let r = 0; r < rows; r++) {
    const row = Array.from(logits.subarray(r * vocab, (r + 1) * vocab));
    const largest = Math.max(...row);
    const total = row.reduce((sum, x) => sum + Math.exp(x - largest), 0);
    const order = row.map((_, id) => id).sort((a, b) => row[b] - row[a] || a - b).slice(0, k);
    ids.push(...order);
    probs.push(...order.map((id) => Math.exp(row[id] - largest) / total));
  }
  return { ids, probs };
}

/**
 * Value-weighted attention of one sublayer, [head][query][key] (m x n per
 * head): α_ij ‖v_j W_O^h‖ / Σ_j. v: n rows of heads x headWidth (each query
 * head's own columns); woAt(e, c): the output projection's entry from column
 * e of the heads to output c; weights [head][query][key].
 */
export function referenceValueWeighted({ v, weights, m, n, woAt }, heads, headWidth, d) {
  const width = heads * headWidth, out = [];
  for (let h = 0; h < heads; h++) {
    const norms = Array.from({ length: n }, (_, j) => {
      let sum = 0;
      for (let c = 0; c < d; c++) {
        let value = 0;
        for (let e = h * headWidth; e < (h + 1) * headWidth; e++) value += v[j * width + e] * woAt(e, c);
        sum += value * value;
      }
      return Math.sqrt(sum);
    });
    for (let i = 0; i < m; i++) {
      const row = norms.map((norm, j) => weights[(h * m + i) * n + j] * norm);
      const total = row.reduce((a, b) => a + b, 0);
      out.push(...row.map((value) => value / total));
    }
  }
  return out;
}
