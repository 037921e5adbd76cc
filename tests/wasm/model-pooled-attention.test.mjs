// Pooled attention through the public API: model.run's attention option
// { pool } and a result's headWeights(layer, head, { pool }) give each head
// as ceil(n/f) x ceil(n/f) blocks, each its f x f weights' largest, checked
// against the run's full weights pooled here in JavaScript (the reference
// tests/support/pooled-reference.mjs, written apart from the core's kernel): a fresh run and one that
// kept its first rows, n not divisible by f, chosen layers and heads, f = 1
// and f = n; bad factors are Errors naming the problem, leave the heap as it
// was, and the model keeps working.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { pooledReference } from '../support/pooled-reference.mjs';
import { assertBitIdentical, assertRefused, loadBoth } from './helpers.mjs';

const lenses = await loadBoth();

for (const lens of lenses) {
  for (const [arch, naming] of [['gpt2', 'bare'], ['llama', 'gqa']]) {
    describe(`${lens.simdLevel} module, tiny ${arch} (${naming}): pooled attention`, async () => {
      const checkpoint = tinyCheckpoint({ arch, naming, dtype: 'F32', seed: 41 });
      const model = await lens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
      after(() => model.dispose());
      const { layers, heads, vocabSize } = model.info;
      const n = 13;
      const ids = Array.from({ length: n }, (_, i) => (i * 7 + 3) % vocabSize);
      const full = () => {
        model.dropCache();
        return model.run({ ids, logits: 'none' });
      };

      test('a run pooled by f, fresh and with kept rows, holds the full weights pooled block by block', () => {
        const all = full();
        for (const f of [1, 2, 4, 5, n]) {
          const side = Math.ceil(n / f);
          for (const kept of [false, true]) {
            model.dropCache();
            if (kept) model.run({ ids: ids.slice(0, n - 3), logits: 'none' });
            const pooled = model.run({ ids, logits: 'none', attention: { pool: f } });
            assert.equal(pooled.reusedPositions, kept ? n - 3 : 0);
            assert.equal(pooled.attentionPool, f);
            assert.equal(pooled.attention.length, layers * heads * side * side);
            for (let layer = 0; layer < layers; layer++) {
              for (let head = 0; head < heads; head++) {
                const index = layer * heads + head;
                assertBitIdentical(pooled.attention.subarray(index * side * side, (index + 1) * side * side),
                  pooledReference(all.attention, index * n * n, n, n, f), `f ${f}, kept ${kept}, layer ${layer}, head ${head}`);
              }
            }
            assertBitIdentical(pooled.headWeights(layers - 1, heads - 1, { pool: f }),
              pooledReference(all.attention, (layers * heads - 1) * n * n, n, n, f), `headWeights pooled by ${f}`);
          }
        }
        assert.equal(all.attentionPool, 1);
      });

      test('chosen layers and heads pooled are those heads of every head pooled', () => {
        const all = full();
        const f = 3, side = Math.ceil(n / f);
        const chosen = model.run({ ids, logits: 'none', attention: { layers: [layers - 1], heads: [heads - 1, 0], pool: f } });
        assert.deepEqual([chosen.attentionLayers, chosen.attentionHeads], [[layers - 1], [0, heads - 1]]);
        [0, heads - 1].forEach((head, k) => {
          assertBitIdentical(chosen.attention.subarray(k * side * side, (k + 1) * side * side),
            pooledReference(all.attention, ((layers - 1) * heads + head) * n * n, n, n, f), `head ${head}`);
        });
      });

      test('a pool factor that is not an integer from 1 to n is an Error naming it; the heap stays; the model works on', () => {
        const all = full();
        const run = model.run({ ids, logits: 'none', attention: 'none' });
        for (const [bad, Kind] of [[0, RangeError], [NaN, RangeError], [n + 1, RangeError], [2.5, RangeError], ['2', TypeError]]) {
          const message = new RegExp(`pool must be an integer from 1 to ${n} \\(the number of tokens\\), got`);
          assertRefused(lens, () => model.run({ ids, attention: { pool: bad } }), Kind, message);
          assertRefused(lens, () => run.headWeights(0, 0, { pool: bad }), Kind, message);
        }
        assertRefused(lens, () => run.headWeights(0, 0, { size: 2 }), TypeError, /unknown option "size"; expected pool/);
        assertRefused(lens, () => model.run({ ids, attention: { pool: 2, stride: 1 } }), TypeError,
          /unknown attention option "stride"; expected layers, heads, pool/);
        // The same ids again: the model keeps what it kept, and a pooled run or head leaves nothing behind.
        const before = lens.heapBytesInUse();
        const again = model.run({ ids, logits: 'none', attention: { pool: 4 } });
        assert.equal(again.attention.length, layers * heads * 16);
        assert.equal(again.headWeights(0, 0, { pool: 4 }).length, 16);
        assert.equal(lens.heapBytesInUse(), before, 'heap after a pooled run and a pooled head');
        assertBitIdentical(again.headWeights(0, 0), all.attention.subarray(0, n * n), 'the full head after refusals');
      });
    });
  }
}
