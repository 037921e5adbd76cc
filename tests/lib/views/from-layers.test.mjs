// fromLayers: attention from engines that return one tensor per layer, here
// onnxruntime-web's own Tensor class (transformers.js Tensors have the same
// { data, dims }), turned into the views' [layer][head][query][key] data.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Tensor } from 'onnxruntime-web';
import { AttentionDataError, attentionData, fromLayers } from '../../../web/views/attention-data.js';

// A row-stochastic [1, heads, n, n] tensor whose values say where they came from.
function layerTensor(layer, heads, n) {
  const data = new Float32Array(heads * n * n);
  for (let h = 0; h < heads; h++) {
    for (let q = 0; q < n; q++) {
      for (let k = 0; k < n; k++) data[(h * n + q) * n + k] = (1 + layer + h + k) / (n * (1 + layer + h) + (n * (n - 1)) / 2);
    }
  }
  return new Tensor('float32', data, [1, heads, n, n]);
}

test('fromLayers copies each layer tensor into [layer][head][query][key] that every view accepts', () => {
  const tokens = ['a', 'b', 'c'];
  const layers = [layerTensor(0, 2, 3), layerTensor(1, 2, 3), layerTensor(2, 2, 3)];
  const data = fromLayers(tokens, layers);
  assert.equal(data.layers, 3);
  assert.equal(data.heads, 2);
  assert.equal(data.weights.length, 3 * 2 * 3 * 3);
  for (let layer = 0; layer < 3; layer++) {
    for (let i = 0; i < 18; i++) assert.equal(data.weights[layer * 18 + i], layers[layer].data[i]);
  }
  const model = attentionData(data); // rows sum to 1, shapes agree
  assert.deepEqual([model.layers, model.heads, model.n, model.nKeys], [3, 2, 3, 3]);
  // [heads, n, n] without the batch works too.
  const unbatched = fromLayers(tokens, [new Tensor('float32', layers[0].data, [2, 3, 3])]);
  assert.deepEqual(unbatched.weights, layers[0].data);
});

test('fromLayers names what is wrong with the tensors', () => {
  const tokens = ['a', 'b', 'c'];
  const cases = [
    [[], /layers must be a non-empty array/],
    [[new Tensor('float32', new Float32Array(36), [2, 2, 3, 3])], /batch of 2/],
    [[new Tensor('float32', new Float32Array(8), [1, 2, 2, 2])], /dims must be \[1, heads, 3, 3\]/],
    [[layerTensor(0, 2, 3), layerTensor(0, 1, 3)], /layers\[1\] has 1 heads, layers\[0\] has 2/],
    [[{ data: [1, 2], dims: [1, 1, 3, 3] }], /data must be a Float32Array of 1\*3\*3 values/],
  ];
  for (const [layers, message] of cases) assert.throws(() => fromLayers(tokens, layers), (error) => error instanceof AttentionDataError && message.test(error.message));
});
