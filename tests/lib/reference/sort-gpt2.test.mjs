// The proof that the GPT-2 reference is right: sort-gpt2 is a real trained
// checkpoint (3 layers, 3 heads, 48 wide) that sorts 6 digits from {0, 1, 2}.
// Read with the test-side safetensors reader and run by the float64 reference,
// it must emit the sorted digits for every one of the 3^6 = 729 inputs; a
// wrong layer norm, head split, Conv1D orientation or mask would not.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { modelDimensions, referenceForward, referenceTensorShapes } from '../../support/model-reference.mjs';
import { readSafetensors } from '../../support/safetensors.mjs';
import { canonicalTensors } from '../../support/tiny-checkpoints.mjs';

const folder = new URL('../../../../shared/models/sort-gpt2/', import.meta.url);
const config = JSON.parse(readFileSync(new URL('config.json', folder), 'utf8'));
const file = readSafetensors(readFileSync(new URL('model.safetensors', folder)));
const tensors = canonicalTensors('gpt2', file.tensors);

test('sort-gpt2: the file holds exactly the contract tensors, in the contract shapes', () => {
  const specs = referenceTensorShapes('gpt2', config);
  assert.deepEqual(Object.keys(tensors).sort(), specs.map((s) => s.name).sort());
  for (const { name, shape } of specs) {
    const hubName = name === 'lm_head.weight' ? name : `transformer.${name}`;
    assert.deepEqual(file.tensors[hubName].shape, shape, name);
    assert.equal(file.tensors[hubName].dtype, 'F32');
  }
  assert.equal(config.tie_word_embeddings, false);
  // Its head really is its own, so the test below exercises the untied path.
  assert.notDeepEqual(tensors['lm_head.weight'], tensors['wte.weight']);
});

// PyTorch's own float32 forward of this model on three sequences, from
// llm-viz's gpt-nano-sort-t0-partials.json (MIT, the same weights: its token
// embeddings equal this file's wte): idx [3, 11] and lm_head logits [3, 11, 3],
// base64 float32 little-endian exactly as that file stores them.
const pytorchIds = 'AAAAAAAAAAAAAABAAACAPwAAAAAAAIA/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAACAPwAAAEAAAABAAAAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAQAAAgD8AAABAAAAAQAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const pytorchLogits = '5qQDQWtwhMBNcynAWq4DQXGvhcADhyXAS5r/QLiLasANxjbA9NkDQVzfbMCZLEnAaP8BQVWOiMB2BBrAhCoGQW2mfMBh+zzAKyoFQe3rg8BufC7ASiD6QKhvOMAwK3rAbY+DwJXCxUDmc43A+hGkwOriw0ABR1nAosxjwJWnPsBMQfZA'
  + '5qQDQWtwhMBNcynAHYADQWDlV8DQXGLARW+0QLTf9L7gmpbA6u3xP9c5tz+qXV/AmbIZwEjq4T+qn8Q+MCgCQWCtj8Du/wbAOiEDQdXGg8Bg7ijAz3qYwAYsw0BaeGrA8e2xwOhDdL94ANhABJ45wEUCZcD8l/lAFVYgwEVZdcCfrPlAxzWLwOIdwUAsf3jAmGMCQdqwasCacE/AI/KhQBhuoT1YNJzAPu+aQF9wJT8Gz7PAGCPWPkxZWEA8eZbAe4sBQaPrN8DYo3/AfT2OwLTvykApfojAfMmtwGhWyEAzQlHAnebewOrXwj+M/ZNAKMpPwI9SVMDCLvhA4iYxwCeaacAfhvlA';

function float32s(base64) {
  const bytes = Buffer.from(base64, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}

test('sort-gpt2: logits equal PyTorch\'s on three recorded sequences (to float32 precision)', () => {
  const ids = float32s(pytorchIds);
  const expected = float32s(pytorchLogits);
  assert.equal(ids.length, 33);
  assert.equal(expected.length, 99);
  let largest = 0;
  for (let b = 0; b < 3; b++) {
    const { logits } = referenceForward('gpt2', config, tensors, ids.slice(b * 11, b * 11 + 11));
    for (let i = 0; i < 33; i++) {
      const difference = Math.abs(logits[i] - expected[b * 33 + i]);
      largest = Math.max(largest, difference);
      // Logits reach ~8; float32 has ~7 digits, so 2e-5 leaves room for PyTorch's rounding only.
      assert.ok(difference < 2e-5, `sequence ${b} entry ${i}: ${logits[i]} vs ${expected[b * 33 + i]}`);
    }
  }
  assert.ok(largest > 0, 'a float64 forward cannot match float32 bit for bit; identical would mean a mix-up');
});

// Greedy decoding: append the arg-max of the last position's logits.
function greedy(ids, steps) {
  const sequence = [...ids];
  let smallestMargin = Infinity;
  for (let s = 0; s < steps; s++) {
    const { logits } = referenceForward('gpt2', config, tensors, sequence);
    const last = Array.from(logits.subarray((sequence.length - 1) * 3, sequence.length * 3));
    const best = last.indexOf(Math.max(...last));
    const sorted = [...last].sort((a, b) => b - a);
    smallestMargin = Math.min(smallestMargin, sorted[0] - sorted[1]);
    sequence.push(best);
  }
  return { output: sequence.slice(ids.length), smallestMargin };
}

test('sort-gpt2: greedy decoding after each of the 729 inputs emits the sorted digits', (t) => {
  let smallestMargin = Infinity;
  const wrong = [];
  for (let code = 0; code < 729; code++) {
    const digits = Array.from({ length: 6 }, (_, i) => Math.floor(code / 3 ** i) % 3);
    const { output, smallestMargin: margin } = greedy(digits, 6);
    smallestMargin = Math.min(smallestMargin, margin);
    const expected = [...digits].sort((a, b) => a - b);
    if (output.join(' ') !== expected.join(' ')) wrong.push(`${digits.join(' ')} -> ${output.join(' ')}`);
  }
  assert.deepEqual(wrong, []);
  // The decisions are not close calls that float rounding could flip.
  t.diagnostic(`smallest top-1 minus top-2 logit over all 4374 steps: ${smallestMargin.toFixed(3)}`);
  assert.ok(smallestMargin > 0.1);
});

test('sort-gpt2: attention is causal and every row sums to 1 over the full 11 positions', () => {
  const ids = [2, 0, 1, 1, 0, 2, 0, 0, 1, 1, 2];
  const dims = modelDimensions('gpt2', config);
  const n = ids.length;
  assert.equal(n, dims.maxPositions);
  const { attention, hidden, logits } = referenceForward('gpt2', config, tensors, ids);
  assert.equal(attention.length, 3 * 3 * n * n);
  assert.equal(hidden.length, n * 48);
  assert.equal(logits.length, n * 3);
  for (let row = 0; row < 9 * n; row++) {
    const i = row % n;
    let sum = 0;
    for (let j = 0; j < n; j++) {
      sum += attention[row * n + j];
      if (j > i) assert.equal(attention[row * n + j], 0);
    }
    assert.ok(Math.abs(sum - 1) < 1e-12);
  }
  assert.throws(() => referenceForward('gpt2', config, tensors, [...ids, 0]), /12 tokens exceed 11 positions/);
});
