// Value-weighted attention on demand: model.run's attention { valueWeighted: true } (with layers,
// heads and pool) and a result's headWeights(layer, head, { valueWeighted: true }) compute it from
// what the model keeps of the run (no second forward pass, one head's n x n at a time), checked
// against the float64 reference (tests/support/analysis-reference.mjs: ‖α_ij · v_j W_O^h‖ from the
// reference trace's own V and W_O, rows normalised), pooled by the JavaScript block-max reference;
// a fresh run, one that kept its first rows, chosen layers and heads; model.analyze's valueWeighted
// agrees; bad options are Errors naming them, leave the heap as it was; nothing leaks.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { referenceValueWeighted } from '../support/analysis-reference.mjs';
import { referenceForward } from '../support/model-reference.mjs';
import { pooledReference } from '../support/pooled-reference.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertClose, assertRefused, loadBoth } from './helpers.mjs';

const lenses = await loadBoth();
const near = { atol: 1e-5, rtol: 1e-4 };

for (const lens of lenses) {
  for (const { arch, naming, seed } of [{ arch: 'gpt2', naming: 'bare', seed: 41 }, { arch: 'llama', naming: 'gqa', seed: 42 },
    { arch: 'bert', naming: 'bare', seed: 44 }]) {
    describe(`${lens.simdLevel} module, tiny ${arch}: run's value-weighted attention`, async () => {
      const checkpoint = tinyCheckpoint({ arch, naming, dtype: 'F32', seed });
      const model = await lens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
      after(() => model.dispose());
      const { layers, heads, headWidth, dModel, vocabSize } = model.info;
      const ids = Array.from({ length: Math.min(19, model.info.maxPositions) }, (_, i) => (i * 7 + 3) % vocabSize);
      const n = ids.length;
      const trace = referenceForward(arch, checkpoint.config, checkpoint.tensors, ids, { trace: true }).layers;
      // [layer][head][query][key], float64 rounded once to float32 (the pooled reference's input).
      const expected = Float32Array.from(trace.flatMap(({ v, wo, weights }) =>
        referenceValueWeighted({ v, weights, m: n, n, woAt: (e, c) => wo[e * dModel + c] }, heads, headWidth, dModel)));
      const head = (layer, h) => expected.subarray((layer * heads + h) * n * n, (layer * heads + h + 1) * n * n);

      test('every layer and head, fresh and with kept rows, matches float64; analyze agrees', () => {
        for (const kept of [false, true]) {
          model.dropCache();
          if (kept) model.run({ ids: ids.slice(0, n - 3), logits: 'none' });
          const run = model.run({ ids, logits: 'none', attention: { valueWeighted: true } });
          assert.equal(run.reusedPositions, kept && model.info.causal ? n - 3 : 0);
          assert.equal(run.attentionQuantity, 'valueWeighted');
          assert.equal(run.attention.length, layers * heads * n * n);
          assertClose(run.attention, expected, { ...near, label: `valueWeighted, kept ${kept}` });
        }
        const analyzed = model.analyze({ ids, logitLens: false }).valueWeighted;
        assertClose(model.run({ ids, logits: 'none', attention: { valueWeighted: true } }).attention, analyzed,
          { atol: 1e-6, rtol: 1e-5, label: 'run against analyze' });
        assert.equal(model.run({ ids, logits: 'none' }).attentionQuantity, 'weights');
      });

      test('chosen layers and heads, pooled or not, and headWeights are those heads of the reference', () => {
        model.dropCache();
        model.run({ ids: ids.slice(0, n - 2), logits: 'none' });
        for (const f of [1, 4]) {
          const side = Math.ceil(n / f);
          const run = model.run({ ids, logits: 'none', attention: { layers: [layers - 1, 0], heads: [heads - 1, 0], pool: f, valueWeighted: true } });
          assert.deepEqual([run.attentionLayers, run.attentionHeads, run.attentionPool], [[0, layers - 1], [0, heads - 1], f]);
          let index = 0;
          for (const layer of [0, layers - 1]) {
            for (const h of [0, heads - 1]) {
              const want = pooledReference(head(layer, h), 0, n, n, f);
              assertClose(run.attention.subarray(index * side * side, ++index * side * side), want, { ...near, label: `pool ${f}, layer ${layer}, head ${h}` });
              assertClose(run.headWeights(layer, h, { pool: f, valueWeighted: true }), want, { ...near, label: `headWeights pool ${f}` });
            }
          }
        }
      });

      test('bad options are Errors naming them; the heap stays; no leak', () => {
        const run = model.run({ ids, logits: 'none', attention: 'none' });
        assertRefused(lens, () => model.run({ ids, attention: { valueWeighted: 'yes' } }), TypeError,
          /^model\.run: attention\.valueWeighted must be true or false, got "yes"$/);
        assertRefused(lens, () => run.headWeights(0, 0, { valueWeighted: 1 }), TypeError,
          /^model\.run result headWeights: valueWeighted must be true or false, got 1$/);
        assertRefused(lens, () => run.headWeights(0, 0, { valueWeighted: true, pool: 0 }), RangeError, /pool must be an integer from 1/);
        assertRefused(lens, () => model.run({ ids, attention: { valueWeighted: true, pool: n + 1 } }), RangeError,
          /attention\.pool must be an integer from 1/);
        const before = lens.heapBytesInUse();
        const again = model.run({ ids, logits: 'none', attention: { valueWeighted: true, pool: 2 } });
        again.headWeights(0, 0, { valueWeighted: true });
        assert.equal(lens.heapBytesInUse(), before, 'heap after value-weighted runs and heads');
        model.run({ ids: ids.slice(1), logits: 'none' });
        assert.throws(() => again.headWeights(0, 0, { valueWeighted: true }), /headWeights is valid until the model's next run/);
      });
    });
  }
}
