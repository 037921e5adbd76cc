// Double-precision reference implementations, written straight from the
// formulas with plain loops and nothing shared with the C++ core or web/lib:
//   weights = softmax(Q K^T * scale / temperature), masked keys -> 0
//   output  = weights V
// Matrices are row-major arrays (any array-like in, Float64Array out).
import { seededRandom as seededNumbers } from '../../web/lib/model/seeded-random.js';

export function matmul(a, b, rows, inner, cols) {
  const c = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      let sum = 0;
      for (let t = 0; t < inner; t++) sum += a[i * inner + t] * b[t * cols + j];
      c[i * cols + j] = sum;
    }
  }
  return c;
}

// Query i sees key j unless the key mask hides j or the causal mask does:
// with m queries and n keys the queries are the last m positions, so query i
// sits at position i + (n - m) and sees keys j <= i + n - m.
export function keyVisible({ m, n, causal = false, keyMask }, i, j) {
  if (keyMask && keyMask[j] === 0) return false;
  if (causal && j > i + n - m) return false;
  return true;
}

export function attentionReference({ q, k, v, m, n, dk, dv, causal = false, keyMask, scale, temperature = 1 }) {
  const multiplier = (scale ?? 1 / Math.sqrt(dk)) / temperature;
  const scores = new Float64Array(m * n);
  const scaledScores = new Float64Array(m * n);
  const weights = new Float64Array(m * n);
  const output = new Float64Array(m * dv);
  for (let i = 0; i < m; i++) {
    let max = -Infinity;
    for (let j = 0; j < n; j++) {
      let dot = 0;
      for (let t = 0; t < dk; t++) dot += q[i * dk + t] * k[j * dk + t];
      scores[i * n + j] = dot;
      scaledScores[i * n + j] = keyVisible({ m, n, causal, keyMask }, i, j) ? dot * multiplier : -Infinity;
      max = Math.max(max, scaledScores[i * n + j]);
    }
    if (max === -Infinity) continue; // every key hidden: zero weights, zero output
    let sum = 0;
    for (let j = 0; j < n; j++) {
      const e = Math.exp(scaledScores[i * n + j] - max);
      weights[i * n + j] = e;
      sum += e;
    }
    for (let j = 0; j < n; j++) weights[i * n + j] /= sum;
    for (let c = 0; c < dv; c++) {
      let acc = 0;
      for (let j = 0; j < n; j++) acc += weights[i * n + j] * v[j * dv + c];
      output[i * dv + c] = acc;
    }
  }
  return { scores, scaledScores, weights, output };
}

function addBias(matrix, bias, rows, cols) {
  if (!bias) return matrix;
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) matrix[i * cols + j] += bias[j];
  return matrix;
}

function columns(matrix, rows, stride, first, width) {
  const out = new Float64Array(rows * width);
  for (let i = 0; i < rows; i++) for (let j = 0; j < width; j++) out[i * width + j] = matrix[i * stride + first + j];
  return out;
}

// Every intermediate of multi-head attention, [head][query][key] for per-head arrays.
export function multiHeadReference({ x, n, dModel, heads, wq, wk, wv, wo, bq, bk, bv, bo, context, nContext,
  causal = false, keyMask, temperature = 1 }) {
  const d = dModel;
  const keysInput = context ?? x;
  const nk = context ? nContext : n;
  const dk = d / heads;
  const q = addBias(matmul(x, wq, n, d, d), bq, n, d);
  const k = addBias(matmul(keysInput, wk, nk, d, d), bk, nk, d);
  const v = addBias(matmul(keysInput, wv, nk, d, d), bv, nk, d);
  const scores = new Float64Array(heads * n * nk);
  const scaledScores = new Float64Array(heads * n * nk);
  const weights = new Float64Array(heads * n * nk);
  const concatenatedHeads = new Float64Array(n * d);
  for (let h = 0; h < heads; h++) {
    const head = attentionReference({
      q: columns(q, n, d, h * dk, dk), k: columns(k, nk, d, h * dk, dk), v: columns(v, nk, d, h * dk, dk),
      m: n, n: nk, dk, dv: dk, causal, keyMask, temperature,
    });
    scores.set(head.scores, h * n * nk);
    scaledScores.set(head.scaledScores, h * n * nk);
    weights.set(head.weights, h * n * nk);
    for (let i = 0; i < n; i++) for (let j = 0; j < dk; j++) concatenatedHeads[i * d + h * dk + j] = head.output[i * dk + j];
  }
  const output = addBias(matmul(concatenatedHeads, wo, n, d, d), bo, n, d);
  return { q, k, v, scores, scaledScores, weights, concatenatedHeads, output };
}

// PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)).
export function positionalEncoding(position, column, dModel) {
  const angle = position / Math.pow(10000, (2 * Math.floor(column / 2)) / dModel);
  return column % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
}

// The project's seeded generator (web/lib/model/seeded-random.js) with helpers, so
// every random case is reproducible.
export function seededRandom(seed) {
  const next = seededNumbers(seed);
  return {
    next,
    integer: (min, max) => min + Math.floor(next() * (max - min + 1)),
    uniform: (min, max) => min + next() * (max - min),
    floats: (count, min = -1, max = 1) => Float32Array.from({ length: count }, () => min + next() * (max - min)),
    mask: (count, keepProbability = 0.7) => Uint8Array.from({ length: count }, () => (next() < keepProbability ? 1 : 0)),
    pick: (list) => list[Math.floor(next() * list.length)],
  };
}
