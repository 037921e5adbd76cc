// model.analyze's logit lens and value-weighted attention against float64
// references written here from tests/support/model-reference.mjs:
// - value-weighted: ‖α_ij · v_j W_O^h‖ from the reference trace's own V (each
//   query head's kv group's columns) and W_O ([in, out]), rows normalised;
// - logit lens after layer l: the reference model cut after layer l (its
//   config's layer count l + 1), whose logits are exactly the residual stream
//   after layer l through the final norm and LM head; top-k by a full sort.
// On tiny random GPT-2, Llama (grouped-query) and GPT-NeoX checkpoints, BERT
// without its head (logitLens null), and BERT and an ELECTRA generator with
// their masked-LM heads (the lens reads each layer through the head).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { referenceValueWeighted, topK } from '../support/analysis-reference.mjs';
import { referenceForward } from '../support/model-reference.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertClose, loadBoth } from './helpers.mjs';

const lenses = await loadBoth();
const LAYER_KEYS = { gpt2: 'n_layer' };  // the rest: num_hidden_layers
const cases = [
  { arch: 'gpt2', naming: 'bare', seed: 41 },
  { arch: 'llama', naming: 'gqa', seed: 42 },
  { arch: 'gpt_neox', seed: 43 },
  { arch: 'bert', naming: 'bare', seed: 44 },
  { arch: 'bert', naming: 'hub', seed: 45 },
  { arch: 'electra', naming: 'generator', seed: 46 },
];

// Every layer's, from the reference trace's V and W_O ([in, out]).
function referenceLayersValueWeighted(trace, n, heads, headWidth, d) {
  return trace.flatMap(({ v, wo, weights }) =>
    referenceValueWeighted({ v, weights, m: n, n, woAt: (e, c) => wo[e * d + c] }, heads, headWidth, d));
}

function referenceLens(arch, config, tensors, ids, layers, vocab, k) {
  const ids_ = [], probs = [];
  for (let l = 0; l < layers; l++) {
    const cut = { ...config, [LAYER_KEYS[arch] ?? 'num_hidden_layers']: l + 1 };
    const { logits } = referenceForward(arch, cut, tensors, ids);
    const top = topK(logits, ids.length, vocab, k);
    ids_.push(...top.ids);
    probs.push(...top.probs);
  }
  return { ids: ids_, probs };
}

for (const lens of lenses) {
  const label = lens.simd ? 'simd' : 'scalar';
  for (const { arch, naming, seed } of cases) {
    test(`analyze (${label}, tiny ${arch}): value-weighted attention and the logit lens match float64 references`, async () => {
      const checkpoint = tinyCheckpoint({ arch, naming, dtype: 'F32', seed });
      const model = await lens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
      try {
        const { layers, heads, headWidth, dModel, vocabSize } = model.info;
        const ids = Array.from({ length: Math.min(19, model.info.maxPositions) }, (_, i) => (i * 7 + 3) % vocabSize);
        const n = ids.length;
        for (const topK_ of [undefined, 3]) {
          const before = lens.heapBytesInUse();
          const result = model.analyze({ ids, topK: topK_ });
          assert.equal(lens.heapBytesInUse(), before, 'analyze left memory allocated');
          const reference = referenceForward(arch, checkpoint.config, checkpoint.tensors, ids, { trace: true });
          assert.ok(result.valueWeighted instanceof Float32Array && result.valueWeighted.length === layers * heads * n * n);
          assertClose(result.valueWeighted, referenceLayersValueWeighted(reference.layers, n, heads, headWidth, dModel),
            { atol: 1e-5, rtol: 1e-4, label: 'valueWeighted' });
          for (let row = 0; row < layers * heads * n; row++) {
            const sum = result.valueWeighted.subarray(row * n, (row + 1) * n).reduce((a, b) => a + b, 0);
            assert.ok(Math.abs(sum - 1) < 1e-5, `valueWeighted row ${row} sums to ${sum}`);
          }
          assert.equal(model.info.lmHead === null, naming === 'bare' && arch === 'bert');
          if (model.info.lmHead === null) {
            assert.equal(result.logitLens, null, 'no LM head, no logit lens');
            continue;
          }
          const k = topK_ ?? 5;
          assert.ok(result.logitLens.ids instanceof Int32Array && result.logitLens.ids.length === layers * n * k);
          assert.ok(result.logitLens.probs instanceof Float32Array && result.logitLens.probs.length === layers * n * k);
          const expected = referenceLens(arch, checkpoint.config, checkpoint.tensors, ids, layers, vocabSize, k);
          assert.deepEqual(Array.from(result.logitLens.ids), expected.ids, 'logit lens ids');
          assertClose(result.logitLens.probs, expected.probs, { atol: 1e-5, rtol: 1e-4, label: 'logit lens probs' });
          // After the last layer: the model's own logits, top k.
          const own = topK(model.run({ ids }).logits, n, vocabSize, k);
          const last = (layers - 1) * n * k;
          assert.deepEqual(Array.from(result.logitLens.ids.subarray(last)), own.ids, 'last layer = model.run top k');
          assertClose(result.logitLens.probs.subarray(last), own.probs, { atol: 1e-6, rtol: 1e-5, label: 'last layer probs' });
        }
      } finally {
        model.dispose();
      }
    });
  }

  test(`analyze (${label}): valueWeighted: false and logitLens: false leave those out, the rest unchanged`, async () => {
    const checkpoint = tinyCheckpoint({ arch: 'gpt2', naming: 'bare', dtype: 'F32', seed: 46 });
    const model = await lens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
    try {
      const ids = [3, 1, 4, 1, 5, 9, 2, 6];
      const full = model.analyze({ ids });
      const before = lens.heapBytesInUse();
      for (const [flags, weighted, lensOn] of [[{ valueWeighted: false }, false, true], [{ logitLens: false }, true, false],
        [{ valueWeighted: false, logitLens: false }, false, false]]) {
        const part = model.analyze({ ids, ...flags });
        // Without the lens a causal model's analysis keeps its queries, keys and values, as a run
        // does (model-analysis-kept.test.mjs); dropCache frees them, and nothing else may be left.
        if (!lensOn) model.dropCache();
        assert.equal(lens.heapBytesInUse(), before, `${JSON.stringify(flags)} left memory allocated`);
        assert.deepEqual(part.valueWeighted, weighted ? full.valueWeighted : null, `${JSON.stringify(flags)}: valueWeighted`);
        assert.deepEqual(part.logitLens, lensOn ? full.logitLens : null, `${JSON.stringify(flags)}: logitLens`);
        assert.deepEqual(part.scores, full.scores, `${JSON.stringify(flags)}: the detectors do not change`);
        assert.deepEqual(part.rollout, full.rollout, `${JSON.stringify(flags)}: the rollout does not change`);
      }
      assert.throws(() => model.analyze({ ids, valueWeighted: 'no' }),
        (error) => error instanceof TypeError && error.message === 'model.analyze: valueWeighted must be true or false, got "no"');
      assert.equal(lens.heapBytesInUse(), before);
    } finally {
      model.dispose();
    }
  });

  test(`analyze (${label}): logitLens: { positions } gives the full lens's cells of those positions, bit for bit`, async () => {
    const checkpoint = tinyCheckpoint({ arch: 'gpt2', naming: 'bare', dtype: 'F32', seed: 47 });
    const model = await lens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
    try {
      const { layers } = model.info, ids = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3], n = ids.length, k = 3;
      const full = model.analyze({ ids, topK: k, valueWeighted: false }).logitLens;
      assert.deepEqual(Array.from(full.positions), ids.map((_, i) => i), 'the full lens reads every position');
      const before = lens.heapBytesInUse();
      for (const positions of [[n - 1], [7, 0, 7, 2], Int32Array.of(4, 9)]) {
        const part = model.analyze({ ids, topK: k, valueWeighted: false, logitLens: { positions } }).logitLens;
        assert.equal(lens.heapBytesInUse(), before, 'analyze left memory allocated');
        const P = positions.length;
        assert.deepEqual(Array.from(part.positions), Array.from(positions));
        assert.ok(part.ids instanceof Int32Array && part.ids.length === layers * P * k);
        assert.ok(part.probs instanceof Float32Array && part.probs.length === layers * P * k);
        for (let layer = 0; layer < layers; layer++) {
          for (let i = 0; i < P; i++) {
            const at = (layer * P + i) * k, from = (layer * n + positions[i]) * k;
            assert.deepEqual(part.ids.subarray(at, at + k), full.ids.subarray(from, from + k), `layer ${layer}, position ${positions[i]}: ids`);
            assert.deepEqual(part.probs.subarray(at, at + k), full.probs.subarray(from, from + k), `layer ${layer}, position ${positions[i]}: probs`);
          }
        }
      }
      const refused = [
        [{ positions: [n] }, RangeError, `model.analyze: logitLens.positions[0] must be an integer from 0 to ${n - 1} (the text's ${n} positions), got ${n}`],
        [{ positions: [0, 1.5] }, RangeError, `model.analyze: logitLens.positions[1] must be an integer from 0 to ${n - 1} (the text's ${n} positions), got 1.5`],
        [{ positions: [] }, TypeError, `model.analyze: logitLens.positions must be a non-empty array of positions from 0 to ${n - 1}, got Array(0)`],
        [{ positions: [0], extra: 1 }, TypeError, 'model.analyze: unknown logitLens option "extra"; expected positions'],
        ['no', TypeError, 'model.analyze: logitLens must be true, false or { positions }, got "no"'],
      ];
      for (const [logitLens, type, message] of refused) {
        assert.throws(() => model.analyze({ ids, logitLens }), (error) => error instanceof type && error.message === message,
          `logitLens ${JSON.stringify(logitLens)}`);
      }
      assert.equal(lens.heapBytesInUse(), before);
    } finally {
      model.dispose();
    }
  });

  // The core sends the lens rows of every layer through the LM head in one
  // product: each row must still be what the model cut after that layer
  // (the same seeded tensors, fewer layers) returns from model.run.
  for (const { arch, naming, layerKey, layerCount } of [{ arch: 'gpt2', naming: 'bare', layerKey: 'n_layer', layerCount: 4 },
    { arch: 'llama', naming: 'gqa', layerKey: 'num_hidden_layers', layerCount: 3 }]) {
    test(`analyze (${label}, tiny ${arch}): the lens of several positions and layers is each cut model's model.run logits, top k`, async () => {
      const load = (layers) => {
        const checkpoint = tinyCheckpoint({ arch, naming, dtype: 'F32', seed: 48, [layerKey]: layers });
        return lens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
      };
      const model = await load(layerCount);
      try {
        const { vocabSize } = model.info, ids = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5], n = ids.length, k = 4;
        const positions = [n - 1, 0, 5, 5, 8], P = positions.length;
        const before = lens.heapBytesInUse();
        const got = model.analyze({ ids, topK: k, valueWeighted: false, logitLens: { positions } }).logitLens;
        assert.equal(lens.heapBytesInUse(), before, 'analyze left memory allocated');
        for (let layer = 0; layer < layerCount; layer++) {
          const cut = await load(layer + 1);
          try {
            const logits = cut.run({ ids }).logits;
            const rows = new Float32Array(P * vocabSize);
            positions.forEach((position, i) => rows.set(logits.subarray(position * vocabSize, (position + 1) * vocabSize), i * vocabSize));
            const own = topK(rows, P, vocabSize, k), at = layer * P * k;
            assert.deepEqual(Array.from(got.ids.subarray(at, at + P * k)), own.ids, `layer ${layer}: ids`);
            assertClose(got.probs.subarray(at, at + P * k), own.probs, { atol: 1e-6, rtol: 1e-5, label: `layer ${layer}: probs` });
          } finally {
            cut.dispose();
          }
        }
      } finally {
        model.dispose();
      }
    });
  }

  test(`analyze (${label}): a bad topK is refused by name, nothing leaks`, async () => {
    const checkpoint = tinyCheckpoint({ arch: 'gpt2', naming: 'bare', dtype: 'F32', seed: 45 });
    const model = await lens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
    try {
      const { vocabSize } = model.info, before = lens.heapBytesInUse();
      const message = (got) => new RegExp(`^model\\.analyze: topK must be an integer from 1 to ${vocabSize} \\(the vocabulary size\\), got ${got}$`);
      for (const [topK, got] of [[0, '0'], [vocabSize + 1, String(vocabSize + 1)], [2.5, '2\\.5'], ['3', '"3"'], [-1, '-1'], [NaN, 'NaN']]) {
        assert.throws(() => model.analyze({ ids: [0, 1], topK }), (error) => error instanceof RangeError && message(got).test(error.message), `topK ${topK}`);
      }
      assert.equal(lens.heapBytesInUse(), before);
      const all = model.analyze({ ids: [0, 1], topK: vocabSize });  // every token: probabilities sum to 1
      for (let row = 0; row < model.info.layers * 2; row++) {
        const sum = all.logitLens.probs.subarray(row * vocabSize, (row + 1) * vocabSize).reduce((a, b) => a + b, 0);
        assert.ok(Math.abs(sum - 1) < 1e-5, `row ${row} sums to ${sum}`);
        assert.deepEqual(Array.from(all.logitLens.ids.subarray(row * vocabSize, (row + 1) * vocabSize)).sort((a, b) => a - b),
          Array.from({ length: vocabSize }, (_, i) => i));
      }
      assert.equal(lens.heapBytesInUse(), before);
    } finally {
      model.dispose();
    }
  });
}
