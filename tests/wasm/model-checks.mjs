// What the model tests check a forward pass with: seeded ids, and the
// float32 results against the float64 reference (tests/support/model-reference.mjs).
import assert from 'node:assert/strict';
import { assertClose } from './helpers.mjs';

// A fixed, seeded id sequence of length n below the vocabulary size.
export function idsFor(vocabSize, n, seed) {
  let state = seed >>> 0;
  return Array.from({ length: n }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % vocabSize;
  });
}

// Attention to 1e-4 absolute (weights are in [0, 1]); hidden states and
// logits O(1), to 2e-4 relative.
export function assertMatchesReference(actual, expected, label) {
  assertClose(actual.attention, expected.attention, { atol: 1e-4, rtol: 0, label: `${label} attention` });
  assertClose(actual.hidden, expected.hidden, { atol: 2e-4, rtol: 2e-4, label: `${label} hidden` });
  if (expected.logits === null) assert.equal(actual.logits, null, `${label}: a model without an LM head gives no logits`);
  else assertClose(actual.logits, expected.logits, { atol: 2e-4, rtol: 2e-4, label: `${label} logits` });
}

// An encoder-decoder's run against its float64 reference: the three kinds of
// attention to 1e-4 absolute, logits to 2e-4 relative.
export function assertSeq2seqMatches(actual, expected, label) {
  for (const name of ['attention', 'decoderAttention', 'crossAttention']) {
    assertClose(actual[name], expected[name], { atol: 1e-4, rtol: 0, label: `${label} ${name}` });
  }
  assertClose(actual.logits, expected.logits, { atol: 2e-4, rtol: 2e-4, label: `${label} logits` });
}

// A tiny checkpoint's files loaded by `lens` (other weights bytes when given).
export const loadCheckpoint = (lens, checkpoint, weights = checkpoint.files['model.safetensors']) =>
  lens.loadModel({ config: checkpoint.files['config.json'], weights });
