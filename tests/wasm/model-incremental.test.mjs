// The incremental forward through the public API: a causal model keeps its
// last run, and a run whose ids begin as the last run's gives the same bits
// as a fresh run (the same model after dropCache) for appends, deletions,
// edits in the middle, a changed key mask and seeded random edits, with
// logits 'all' and 'last', on learned positions (GPT-2; OPT's, counted over
// the kept tokens), rotary with grouped-query attention (Llama), a sliding
// window (Mistral) and scaled embeddings (Gemma); it reports
// the positions it reused and its bytes, and dropCache frees them all. The
// attention option returns the chosen layers and heads (the numbers of
// 'all'), headWeights any head's weights afterwards and computeLogits the
// logits (the bits of the run's), until the next run.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertBitIdentical, loadBoth } from './helpers.mjs';

const lenses = await loadBoth();

// A seeded generator of integers below `limit`.
function seeded(seed) {
  let state = seed >>> 0;
  return (limit) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % limit;
  };
}

// OPT: learned positions counted over the tokens the key mask keeps, from an offset; 350m's word
// embeddings projected before the positions are added, and its head projected out; post-norm: no
// final norm. Gemma: scaled embeddings. (A cached run embeds only the positions it computes.)
const checkpoints = [['gpt2', 'bare'], ['llama', 'gqa'], ['mistral', 'window'], ['opt', '125m'], ['opt', '350m'],
  ['opt', 'post-norm'], ['gemma', '2b']];

for (const lens of lenses) {
  for (const [arch, naming] of checkpoints) {
    describe(`${lens.simdLevel} module, tiny ${arch} (${naming}): incremental runs`, async () => {
      const checkpoint = tinyCheckpoint({ arch, naming, dtype: 'F32', seed: 31 });
      const files = { config: checkpoint.config, weights: checkpoint.files['model.safetensors'] };
      const model = await lens.loadModel(files);
      after(() => model.dispose());
      const { vocabSize, maxPositions } = model.info;

      // A fresh run's outputs: the same model with nothing kept.
      function fresh(options) {
        model.dropCache();
        const run = model.run(options);
        assert.equal(run.reusedPositions, 0);
        return run;
      }
      function same(run, reference, label) {
        assertBitIdentical(run.attention, reference.attention, `${label}: attention`);
        assertBitIdentical(run.hidden, reference.hidden, `${label}: hidden`);
        if (reference.logits) assertBitIdentical(run.logits, reference.logits, `${label}: logits`);
        assert.equal(run.logitsFrom, reference.logitsFrom, label);
      }

      test('appends, deletions, edits, key masks and random edits give the bits of a fresh run', () => {
        const random = seeded(5);
        let ids = Array.from({ length: 9 }, () => random(vocabSize));
        let keyMask;
        let previous = null;
        // Runs incrementally after `previous`, then fresh; expects `reused` positions taken (null: not checked).
        const step = (label, reused, logits = 'all') => {
          const options = keyMask ? { ids, keyMask, logits } : { ids, logits };
          if (previous) model.run(previous);  // the cache holds `previous`
          const run = model.run(options);
          if (reused !== null) assert.equal(run.reusedPositions, reused, `${label}: reused positions`);
          assert.ok(run.cacheBytes > 0, label);
          same(run, fresh(options), label);
          previous = options;
        };
        step('first run', 0);
        ids = [...ids, random(vocabSize)], step('append one', 9);
        ids = [...ids, 1, 2, 3], step('append three', 10, 'last');
        ids = ids.slice(0, -2), step('delete two at the end', 10);  // the last row is always computed
        ids = ids.with(5, (ids[5] + 1) % vocabSize), step('edit in the middle', 5);
        ids = ids.toSpliced(3, 1), step('delete in the middle', 3, 'last');
        keyMask = Uint8Array.from(ids, (_, i) => (i === 6 ? 0 : 1)), step('a different key mask', 6);
        keyMask = undefined, step('no key mask again', 6);
        for (let i = 0; i < 12; i++) {
          const at = random(ids.length), id = random(vocabSize);
          const kind = random(4);
          if (kind === 0 && ids.length < maxPositions) ids = [...ids, id];
          else if (kind === 1 && ids.length < maxPositions) ids = ids.toSpliced(at, 0, id);
          else if (kind === 2 && ids.length > 2) ids = ids.toSpliced(at, 1);
          else ids = ids.with(at, id);
          step(`random edit ${i}`, null, random(2) ? 'all' : 'last');
        }
      });

      test("chosen layers and heads, 'none', and headWeights afterwards give the numbers of 'all'", () => {
        const { layers, heads } = model.info;
        const ids = Array.from({ length: 8 }, (_, i) => (i * 7 + 3) % vocabSize), n = ids.length, square = n * n;
        const all = fresh({ ids });
        const slice = (layer, head) => all.attention.subarray((layer * heads + head) * square, (layer * heads + head + 1) * square);
        model.run({ ids: ids.slice(0, 5) });
        const chosen = model.run({ ids, attention: { layers: [layers - 1], heads: [1, 0] } });
        assert.equal(chosen.reusedPositions, 5);
        assert.deepEqual([chosen.attentionLayers, chosen.attentionHeads], [[layers - 1], [0, 1]]);
        assert.equal(chosen.attention.length, 2 * square);
        assertBitIdentical(chosen.attention.subarray(0, square), slice(layers - 1, 0), 'chosen head 0');
        assertBitIdentical(chosen.attention.subarray(square), slice(layers - 1, 1), 'chosen head 1');
        assertBitIdentical(chosen.hidden, all.hidden, 'hidden with chosen heads');
        const none = model.run({ ids: [...ids, 1], attention: 'none' });
        assert.equal(none.attention.length, 0);
        model.run({ ids, attention: 'none' });  // a deletion: the cache keeps `ids` again
        const kept = model.run({ ids, attention: { heads: [] } });
        assertBitIdentical(kept.hidden, all.hidden, "hidden with attention 'none'");
        for (let layer = 0; layer < layers; layer++) {
          for (let head = 0; head < heads; head++) {
            assertBitIdentical(kept.headWeights(layer, head), slice(layer, head), `headWeights(${layer}, ${head})`);
          }
        }
        assert.throws(() => kept.headWeights(layers, 0), { name: 'RangeError', message: /layer must be an integer from 0 to/ });
        model.run({ ids });
        assert.throws(() => kept.headWeights(0, 0), { name: 'Error', message: /valid until the model's next run/ });
        model.dropCache();
        assert.throws(() => all.headWeights(0, 0), { name: 'Error', message: /valid until the model's next run/ });
      });

      test("computeLogits afterwards gives the bits of the run's logits, until the next run", () => {
        const ids = Array.from({ length: 10 }, (_, i) => (i * 5 + 2) % vocabSize), n = ids.length;
        const reference = fresh({ ids });
        model.run({ ids: ids.slice(0, 7), logits: 'none' });
        const run = model.run({ ids, attention: { layers: [0], heads: [0] }, logits: 'none' });
        assert.equal(run.reusedPositions, 7);
        assert.equal(run.logits, null);
        assertBitIdentical(run.computeLogits(), reference.logits.subarray((n - 1) * vocabSize), "computeLogits() (the last row)");
        assertBitIdentical(run.computeLogits('last'), reference.logits.subarray((n - 1) * vocabSize), "computeLogits('last')");
        assertBitIdentical(run.computeLogits('all'), reference.logits, "computeLogits('all')");
        assert.throws(() => run.computeLogits('first'), { name: 'RangeError', message: /which must be 'last', 'all' or \{ positions \}, got "first"/ });
        assert.throws(() => run.computeLogits(1), { name: 'TypeError', message: /which must be 'last', 'all' or \{ positions \}, got 1/ });
        model.run({ ids });
        assert.throws(() => run.computeLogits(), { name: 'Error', message: /computeLogits is valid until the model's next run/ });
      });

      test('a bad attention choice is refused, naming it', () => {
        for (const [attention, type, message] of [
          ['some', RangeError, /attention must be 'all', 'none' or \{ layers\?, heads\?, pool\?, valueWeighted\? \}/],
          [{ layers: [99] }, RangeError, /attention\.layers must hold integers from 0 to/],
          [{ heads: [0, 0] }, RangeError, /attention\.heads lists an index twice/],
          [{ head: [0] }, TypeError, /unknown attention option "head"/],
          [{ layers: 1 }, TypeError, /attention\.layers must be an array/],
        ]) {
          assert.throws(() => model.run({ ids: [1, 2], attention }), { name: type.name, message });
        }
        assert.throws(() => model.run({ ids: [1, 2], attention: { heads: [0] }, into: { attention: new Float32Array(3) } }),
          { name: 'RangeError', message: /attention/ });
      });

      test('dropCache frees what the model keeps: no memory leaks', () => {
        model.dropCache();
        const before = lens.heapBytesInUse();
        const run = model.run({ ids: [1, 2, 3, 4] });
        assert.ok(run.cacheBytes > 0);
        model.run({ ids: [1, 2, 3, 4, 5] });
        model.dropCache();
        assert.equal(lens.heapBytesInUse(), before);
        assert.equal(model.run({ ids: [1, 2, 3] }).reusedPositions, 0);
      });
    });
  }
}

describe('an encoder recomputes every position', async () => {
  const lens = lenses[0];
  const checkpoint = tinyCheckpoint({ arch: 'bert', naming: 'bare', dtype: 'F32', seed: 31 });
  const model = await lens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
  after(() => model.dispose());
  test('its runs reuse no position, and keep what headWeights needs', () => {
    model.run({ ids: [1, 2, 3] });
    const run = model.run({ ids: [1, 2, 3, 4], attention: 'none' });
    assert.equal(run.reusedPositions, 0);
    assert.ok(run.cacheBytes > 0);
    model.dropCache();
    const all = model.run({ ids: [1, 2, 3, 4] });
    const { heads } = model.info;
    assertBitIdentical(all.headWeights(1, 1),
      all.attention.subarray((heads + 1) * 16, (heads + 2) * 16), 'an encoder head');
  });
});

test('computeLogits of a model kept at 16 bits gives the bits of its run', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'llama', naming: 'gqa', dtype: 'F16', seed: 33 });
  const model = await lenses[0].loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'], weightStorage: 'as-stored' });
  try {
    assert.equal(model.info.weightStorage, '16-bit');
    const ids = [3, 1, 4, 1, 5, 9, 2, 6];
    const reference = model.run({ ids, logits: 'last' });
    model.dropCache();
    const run = model.run({ ids, logits: 'none' });
    assertBitIdentical(run.computeLogits('last'), reference.logits, "a 16-bit model's last row");
  } finally {
    model.dispose();
  }
});

test('computeLogits of a model without a language-model head is refused, naming why', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'bert', naming: 'bare', dtype: 'F32', seed: 34 });
  const model = await lenses[0].loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
  try {
    const run = model.run({ ids: [1, 2, 3] });
    assert.equal(run.logits, null);
    assert.throws(() => run.computeLogits(), { name: 'RangeError', message: /no language-model head/ });
  } finally {
    model.dispose();
  }
});

test('a run with headWeights is still plain data: structuredClone (and postMessage) copies it without the function', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'gpt2', dtype: 'F32', seed: 32 });
  const model = await lenses[0].loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
  try {
    const run = model.run({ ids: [1, 2, 3, 4] });
    const copy = structuredClone(run);
    assert.equal(copy.headWeights, undefined, 'the function is not copied');
    assert.equal(copy.computeLogits, undefined, 'nor computeLogits');
    assertBitIdentical(copy.attention, run.attention, 'the copied attention');
    const n = run.n;
    assertBitIdentical(run.headWeights(1, 0), run.attention.subarray((1 * run.heads) * n * n, (1 * run.heads + 1) * n * n), 'layer 1 head 0');
  } finally {
    model.dispose();
  }
});
