// The tests' reference for pooled attention (src/attention/pooled.hpp, model.run's attention { pool }):
// one head's rows x cols weights, at `offset` of `weights`, as ceil(rows/f) x ceil(cols/f) blocks,
// each block's largest weight, found by visiting the block's cells one by one.
export function pooledReference(weights, offset, rows, cols, f) {
  const [blockRows, blockCols] = [Math.ceil(rows / f), Math.ceil(cols / f)];
  return Float32Array.from({ length: blockRows * blockCols }, (_, index) => {
    const [blockRow, blockCol] = [Math.floor(index / blockCols), index % blockCols];
    let largest = -Infinity;
    for (let row = blockRow * f; row < Math.min(rows, blockRow * f + f); row++) {
      for (let col = blockCol * f; col < Math.min(cols, blockCol * f + f); col++) largest = Math.max(largest, weights[offset + row * cols + col]);
    }
    return largest;
  });
}
