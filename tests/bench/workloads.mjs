// The benchmark's workloads (issue 5: S1-S4), their inputs, flop counts and
// double-precision references, shared by every engine.

export const SHAPES = {
  S1: { kind: 'attention', heads: 1, m: 64, n: 64, d: 64, label: 'S1 attention n=m=64 d=64 1 head' },
  S2: { kind: 'attention', heads: 8, m: 256, n: 256, d: 64, label: 'S2 attention n=m=256 d=64 8 heads' },
  S3: { kind: 'attention', heads: 12, m: 1024, n: 1024, d: 64, label: 'S3 attention n=m=1024 d=64 12 heads' },
  S4: { kind: 'layer', n: 128, dModel: 768, heads: 12, label: 'S4 layer n=128 dModel=768 12 heads + 4 projections' },
};

// Same structure, tiny sizes: `--quick` only proves the script still runs.
export const QUICK_SHAPES = {
  S1: { ...SHAPES.S1, m: 8, n: 8, d: 8 },
  S2: { ...SHAPES.S2, heads: 2, m: 12, n: 12, d: 8 },
  S3: { ...SHAPES.S3, heads: 2, m: 16, n: 16, d: 8 },
  S4: { ...SHAPES.S4, n: 6, dModel: 16, heads: 4 },
};

// Multiply-adds count 2 flops; softmax, scaling and biases are not counted
// (the usual convention, and the same for every engine).
export function flops(shape) {
  if (shape.kind === 'attention') return shape.heads * 4 * shape.m * shape.n * shape.d;
  const { n, dModel } = shape;
  return 4 * 2 * n * dModel * dModel + 2 * 2 * n * n * dModel;
}

// Deterministic inputs (xorshift32), uniform in [-1, 1) times `amplitude`.
function randomFloats(count, seed, amplitude = 1) {
  const values = new Float32Array(count);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < count; ++i) {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    values[i] = (state / 2 ** 32 * 2 - 1) * amplitude;
  }
  return values;
}

// Attention: Q [heads][m][d], K and V [heads][n][d], each head contiguous.
// Scores of unit-scale inputs spread the weights over many keys, the harder
// case for accuracy. Layer: x and the weights scaled like a trained layer
// (1/sqrt(dModel)) so the projected scores stay in a realistic range.
export function makeInputs(shape) {
  if (shape.kind === 'attention') {
    const { heads, m, n, d } = shape;
    return { q: randomFloats(heads * m * d, 1), k: randomFloats(heads * n * d, 2), v: randomFloats(heads * n * d, 3) };
  }
  const { n, dModel } = shape;
  const w = 1 / Math.sqrt(dModel);
  return {
    x: randomFloats(n * dModel, 4),
    wq: randomFloats(dModel * dModel, 5, 2 * w), wk: randomFloats(dModel * dModel, 6, 2 * w),
    wv: randomFloats(dModel * dModel, 7, w), wo: randomFloats(dModel * dModel, 8, w),
    bq: randomFloats(dModel, 9, 0.1), bk: randomFloats(dModel, 10, 0.1),
    bv: randomFloats(dModel, 11, 0.1), bo: randomFloats(dModel, 12, 0.1),
  };
}

// One head in doubles: q (m x d) at qOffset, k, v (n x d) at kvOffset.
function referenceHead(q, qOffset, qStride, k, v, kvOffset, kvStride, m, n, d, output, outOffset, outStride,
  weights, weightsOffset) {
  const scale = 1 / Math.sqrt(d);
  const row = new Float64Array(n);
  for (let i = 0; i < m; ++i) {
    let max = -Infinity;
    for (let j = 0; j < n; ++j) {
      let sum = 0;
      for (let p = 0; p < d; ++p) sum += q[qOffset + i * qStride + p] * k[kvOffset + j * kvStride + p];
      row[j] = sum * scale;
      if (row[j] > max) max = row[j];
    }
    let total = 0;
    for (let j = 0; j < n; ++j) total += row[j] = Math.exp(row[j] - max);
    for (let j = 0; j < n; ++j) {
      row[j] /= total;
      weights[weightsOffset + i * n + j] = row[j];
    }
    for (let p = 0; p < d; ++p) {
      let sum = 0;
      for (let j = 0; j < n; ++j) sum += row[j] * v[kvOffset + j * kvStride + p];
      output[outOffset + i * outStride + p] = sum;
    }
  }
}

function matmulDouble(a, b, rows, inner, cols, bias) {
  const c = new Float64Array(rows * cols);
  for (let i = 0; i < rows; ++i)
    for (let p = 0; p < inner; ++p) {
      const a_ip = a[i * inner + p];
      for (let j = 0; j < cols; ++j) c[i * cols + j] += a_ip * b[p * cols + j];
    }
  if (bias) for (let i = 0; i < rows; ++i) for (let j = 0; j < cols; ++j) c[i * cols + j] += bias[j];
  return c;
}

// { output, weights } as Float64Arrays, laid out as every engine returns
// them: attention output [heads][m][d], weights [heads][m][n]; layer output
// [n][dModel], weights [heads][n][n].
export function reference(shape, inputs) {
  if (shape.kind === 'attention') {
    const { heads, m, n, d } = shape;
    const output = new Float64Array(heads * m * d), weights = new Float64Array(heads * m * n);
    for (let h = 0; h < heads; ++h) {
      referenceHead(inputs.q, h * m * d, d, inputs.k, inputs.v, h * n * d, d, m, n, d, output, h * m * d, d,
        weights, h * m * n);
    }
    return { output, weights };
  }
  const { n, dModel, heads } = shape;
  const dk = dModel / heads;
  const q = matmulDouble(inputs.x, inputs.wq, n, dModel, dModel, inputs.bq);
  const k = matmulDouble(inputs.x, inputs.wk, n, dModel, dModel, inputs.bk);
  const v = matmulDouble(inputs.x, inputs.wv, n, dModel, dModel, inputs.bv);
  const concatenated = new Float64Array(n * dModel), weights = new Float64Array(heads * n * n);
  for (let h = 0; h < heads; ++h) {
    referenceHead(q, h * dk, dModel, k, v, h * dk, dModel, n, n, dk, concatenated, h * dk, dModel, weights, h * n * n);
  }
  return { output: matmulDouble(concatenated, inputs.wo, n, dModel, dModel, inputs.bo), weights };
}

// max |x - ref| / max |ref|: relative to the array's scale, so entries that
// are nearly zero do not turn rounding noise into huge ratios.
export function relativeError(actual, expected) {
  if (actual.length !== expected.length) return Infinity;
  let worst = 0, scale = 0;
  for (let i = 0; i < expected.length; ++i) {
    const difference = Math.abs(actual[i] - expected[i]);
    if (Number.isNaN(difference)) return Infinity;
    worst = Math.max(worst, difference);
    scale = Math.max(scale, Math.abs(expected[i]));
  }
  return worst / scale;
}
