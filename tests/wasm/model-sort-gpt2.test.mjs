// A real trained checkpoint through the public API: ../shared/models/sort-gpt2
// (GPT-2, 3 layers x 3 heads, trained to sort six digits from {0, 1, 2}).
// Greedy decoding must sort every input, and the attention, hidden state and
// logits must match the independent float64 forward of tests/support.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { referenceForward } from '../support/model-reference.mjs';
import { readSafetensors } from '../support/safetensors.mjs';
import { assertClose, loadBoth, repoRoot } from './helpers.mjs';

const folder = `${repoRoot}../shared/models/sort-gpt2`;
const files = {
  config: readFileSync(`${folder}/config.json`, 'utf8'),
  weights: readFileSync(`${folder}/model.safetensors`),
  tokenizer: readFileSync(`${folder}/tokenizer.json`, 'utf8'),
};
const config = JSON.parse(files.config);

// The file's tensors in float64 under the canonical (unprefixed) names.
const referenceTensors = Object.fromEntries(Object.entries(readSafetensors(files.weights).tensors)
  .map(([name, tensor]) => [name.replace(/^transformer\./, ''), tensor.values]));

const lenses = await loadBoth();

// Every sequence of six digits from {0, 1, 2}, in order: 729 inputs.
const allInputs = Array.from({ length: 3 ** 6 }, (_, index) =>
  Array.from({ length: 6 }, (_, position) => Math.floor(index / 3 ** (5 - position)) % 3));

function argmax(values, start, length) {
  let best = 0;
  for (let i = 1; i < length; i++) if (values[start + i] > values[start + best]) best = i;
  return best;
}

for (const lens of lenses) {
  const label = lens.simd ? 'simd' : 'scalar';

  test(`sort-gpt2 (${label}): info describes the checkpoint`, async () => {
    const model = await lens.loadModel(files);
    try {
      const parameters = Object.values(referenceTensors).reduce((sum, values) => sum + values.length, 0);
      const { weightBytes, ...info } = model.info;
      assert.deepEqual({ ...info, loadMs: 0 }, {
        architecture: 'gpt2', causal: true, encoderDecoder: false, decoderLayers: 0, decoderStartId: null, layers: 3, heads: 3, kvHeads: 3, dModel: 48, headWidth: 16, vocabSize: 3, maxPositions: 11,
        parameters, dtype: 'F32', weightStorage: 'float32', lmHead: 'next-token', tiedLmHead: false, tokenizer: 'word-level', ignoredTensors: [],
        loadMs: 0, modelType: 'gpt2', windows: [0, 0, 0],
      });
      // float32, plus the zero columns that pad the last panel of each matrix (the 3-token LM head most).
      assert.ok(weightBytes >= 4 * parameters && weightBytes < 4 * parameters * 1.2, `${weightBytes} bytes`);
      assert.deepEqual(Array.from(model.tokenize('2 0 1').ids), [2, 0, 1]);
    } finally {
      model.dispose();
    }
  });

  test(`sort-gpt2 (${label}): greedy decoding sorts all 729 inputs`, async () => {
    const model = await lens.loadModel(files);
    try {
      for (const digits of allInputs) {
        const ids = [...digits];
        for (let step = 0; step < 6; step++) {
          const { logits, n } = model.run({ ids });
          ids.push(argmax(logits, (n - 1) * 3, 3));
        }
        const sorted = [...digits].sort((a, b) => a - b);
        assert.deepEqual(ids.slice(6), sorted, `input ${digits.join(' ')} gave ${ids.slice(6).join(' ')}`);
      }
      // The same through text and the tokenizer.
      const { logits, tokens } = model.run({ text: '2 1 0 2 1 0 0 0 1' });
      assert.deepEqual(tokens, ['2', '1', '0', '2', '1', '0', '0', '0', '1']);
      assert.equal(argmax(logits, 8 * 3, 3), 1);
    } finally {
      model.dispose();
    }
  });

  test(`sort-gpt2 (${label}): attention, hidden state and logits match the float64 forward`, async () => {
    const model = await lens.loadModel(files);
    try {
      // Inputs of every length the model takes, up to its 11 positions.
      for (const [index, digits] of allInputs.filter((_, i) => i % 37 === 0).entries()) {
        const ids = [...digits, ...digits].slice(0, 1 + (index % 11));
        const actual = model.run({ ids });
        const expected = referenceForward('gpt2', config, referenceTensors, ids);
        assert.equal(actual.attention.length, 3 * 3 * ids.length * ids.length);
        assertClose(actual.attention, expected.attention, { atol: 1e-4, rtol: 0, label: `attention ${ids}` });
        assertClose(actual.hidden, expected.hidden, { atol: 1e-4, rtol: 1e-4, label: `hidden ${ids}` });
        assertClose(actual.logits, expected.logits, { atol: 1e-4, rtol: 1e-4, label: `logits ${ids}` });
      }
    } finally {
      model.dispose();
    }
  });
}
