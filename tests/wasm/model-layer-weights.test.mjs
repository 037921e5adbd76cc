// A run result's layerWeights(layer, { heads?, pool?, valueWeighted? }): several heads of one layer in one
// call (value-weighted: the layer's W_O unpacked once, not once a head), bit for bit what headWeights gives a
// head at a time and what the run's own attention { layers: [layer], heads, pool, valueWeighted } holds,
// for a fresh run and one that kept its first rows, weights and value-weighted, pooled or not; its chosen
// heads come ascending; bad options are Errors naming them and leave the heap as it was; it is valid until
// the model's next run; it is not data (structuredClone leaves it out); nothing leaks.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertBitIdentical, assertRefused, loadBoth } from './helpers.mjs';

const lenses = await loadBoth();

for (const lens of lenses) {
  for (const { arch, naming, seed } of [{ arch: 'gpt2', naming: 'bare', seed: 51 }, { arch: 'llama', naming: 'gqa', seed: 52 },
    { arch: 'bert', naming: 'bare', seed: 53 }]) {
    describe(`${lens.simdLevel} module, tiny ${arch}: layerWeights`, async () => {
      const checkpoint = tinyCheckpoint({ arch, naming, dtype: 'F32', seed });
      const model = await lens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
      after(() => model.dispose());
      const { layers, heads, vocabSize } = model.info;
      const ids = Array.from({ length: Math.min(17, model.info.maxPositions) }, (_, i) => (i * 5 + 2) % vocabSize);
      const n = ids.length;

      test('every head and chosen heads, weights and value-weighted, pooled or not, fresh or with kept rows: the bits of headWeights and of the run\'s attention', () => {
        for (const kept of [false, true]) {
          for (const valueWeighted of [false, true]) {
            for (const pool of [1, 3]) {
              const label = `kept ${kept}, valueWeighted ${valueWeighted}, pool ${pool}`;
              const size = Math.ceil(n / pool) ** 2;
              for (const layer of [0, layers - 1]) {
                model.dropCache();
                if (kept) model.run({ ids: ids.slice(0, n - 2), logits: 'none' });
                const run = model.run({ ids, logits: 'none', attention: { layers: [layer], pool, valueWeighted } });
                assert.equal(run.reusedPositions, kept && model.info.causal ? n - 2 : 0);
                const whole = run.layerWeights(layer, { pool, valueWeighted });
                assert.equal(whole.length, heads * size);
                assertBitIdentical(whole, run.attention, `${label}: layer ${layer}, every head, against the run's attention`);
                for (let head = 0; head < heads; head += 1) {
                  assertBitIdentical(whole.subarray(head * size, (head + 1) * size), run.headWeights(layer, head, { pool, valueWeighted }),
                    `${label}: layer ${layer} head ${head} against headWeights`);
                }
                // Chosen heads, given in any order, come ascending.
                const chosen = run.layerWeights(layer, { heads: [heads - 1, 0], pool, valueWeighted });
                const expected = heads > 1 ? [0, heads - 1] : [0];
                assert.equal(chosen.length, expected.length * size);
                expected.forEach((head, index) => assertBitIdentical(chosen.subarray(index * size, (index + 1) * size),
                  whole.subarray(head * size, (head + 1) * size), `${label}: chosen head ${head}`));
              }
            }
          }
        }
      });

      test('bad options are Errors naming them, the heap stays; valid until the next run; not data; no leak', () => {
        const run = model.run({ ids, logits: 'none', attention: 'none' });
        const where = /^model\.run result layerWeights: /;
        assertRefused(lens, () => run.layerWeights(layers), RangeError, new RegExp(`${where.source}layer must be an integer from 0 to ${layers - 1}, got ${layers}$`));
        assertRefused(lens, () => run.layerWeights(0, null), TypeError, new RegExp(`${where.source}options must be an object \\{ heads\\?, pool\\?, valueWeighted\\? \\}, got null$`));
        assertRefused(lens, () => run.layerWeights(0, { head: 0 }), TypeError, /unknown option "head"; expected heads, pool, valueWeighted$/);
        assertRefused(lens, () => run.layerWeights(0, { heads: 0 }), TypeError, /heads must be an array of head indices, got 0$/);
        assertRefused(lens, () => run.layerWeights(0, { heads: [heads] }), RangeError, new RegExp(`heads must hold integers from 0 to ${heads - 1}, got ${heads}$`));
        assertRefused(lens, () => run.layerWeights(0, { heads: [0, 0] }), RangeError, /heads lists an index twice$/);
        assertRefused(lens, () => run.layerWeights(0, { pool: 0 }), RangeError, /pool must be an integer from 1 to/);
        assertRefused(lens, () => run.layerWeights(0, { valueWeighted: 'yes' }), TypeError, /valueWeighted must be true or false, got "yes"$/);
        assert.equal(run.layerWeights(0, { heads: [] }).length, 0, 'no head chosen: nothing');
        assert.equal(structuredClone(run).layerWeights, undefined, 'the function is not copied');

        const before = lens.heapBytesInUse();
        const again = model.run({ ids, logits: 'none', attention: 'none' });
        again.layerWeights(0, { valueWeighted: true, pool: 2 });
        again.layerWeights(layers - 1);
        assert.equal(lens.heapBytesInUse(), before, 'heap after layerWeights');
        model.run({ ids: ids.slice(1), logits: 'none', attention: 'none' });
        assert.throws(() => again.layerWeights(0), { name: 'Error', message: /layerWeights is valid until the model's next run/ });
      });
    });
  }
}
