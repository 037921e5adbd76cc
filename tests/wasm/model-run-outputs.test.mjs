// model.run's output options: `logits` ('all', 'last', 'none' / false) and
// `into` (preallocated attention, hidden and logits arrays reused across
// calls). 'last' must give exactly the last row of 'all' (bit for bit) and
// say which rows it returned (logitsFrom); `into` must give the same bits as
// fresh arrays; options that do not fit are refused with the heap and the
// caller's arrays unchanged. On the trained sort-gpt2 checkpoint and on tiny
// random GPT-2, Llama and BERT checkpoints (BERT has no LM head).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertBitIdentical, assertRefused, loadBoth, repoRoot, sentinel } from './helpers.mjs';

const lenses = await loadBoth();

const sortFolder = `${repoRoot}../shared/models/sort-gpt2`;
const checkpoints = {
  'sort-gpt2': {
    config: readFileSync(`${sortFolder}/config.json`, 'utf8'),
    weights: readFileSync(`${sortFolder}/model.safetensors`),
  },
  ...Object.fromEntries([['gpt2', 'bare'], ['llama', 'gqa'], ['bert', 'bare']].map(([arch, naming]) => {
    const checkpoint = tinyCheckpoint({ arch, naming, dtype: 'F32', seed: 21 });
    return [`tiny ${arch}`, { config: checkpoint.config, weights: checkpoint.files['model.safetensors'] }];
  })),
  // A vocabulary that is not a multiple of the kernels' 16-column panels, a wider model.
  'wide gpt2': (() => {
    const checkpoint = tinyCheckpoint({ arch: 'gpt2', dtype: 'F32', seed: 22, n_embd: 64, n_head: 4, vocab_size: 203 });
    return { config: checkpoint.config, weights: checkpoint.files['model.safetensors'] };
  })(),
};

// A seeded id sequence below the vocabulary size.
function idsFor(vocabSize, n, seed) {
  let state = seed >>> 0;
  return Array.from({ length: n }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % vocabSize;
  });
}

for (const lens of lenses) {
  for (const [name, files] of Object.entries(checkpoints)) {
    describe(`${lens.simdLevel} module, ${name}: model.run outputs`, async () => {
      const model = await lens.loadModel(files);
      after(() => model.dispose());
      const { vocabSize, layers, heads, dModel } = model.info;
      const hasLmHead = name !== 'tiny bert';
      // 8 tokens: with 'all', the last row shares a register tile of the LM
      // head's product with the rows before it; with 'last' it is alone.
      const n = Math.min(model.info.maxPositions, 8);

      test("logits: 'last' is the last row of 'all', bit for bit; 'none' and false return none", () => {
        for (const [seed, count] of [[1, n], [2, n - 1], [3, 1]]) {
          const ids = idsFor(vocabSize, count, seed);
          const all = model.run({ ids });
          const explicitAll = model.run({ ids, logits: 'all' });
          const last = model.run({ ids, logits: 'last' });
          const none = model.run({ ids, logits: 'none' });
          const off = model.run({ ids, logits: false });
          assertBitIdentical(explicitAll.logits ?? new Float32Array(0), all.logits ?? new Float32Array(0), 'explicit all');
          for (const run of [last, none, off]) {
            assertBitIdentical(run.attention, all.attention, 'attention');
            assertBitIdentical(run.hidden, all.hidden, 'hidden');
          }
          assert.equal(none.logits, null);
          assert.equal(off.logits, null);
          assert.equal(none.logitsFrom, null);
          if (!hasLmHead) {
            assert.equal(all.logits, null);
            assert.equal(last.logits, null);
            assert.equal(all.logitsFrom, null);
            assert.equal(last.logitsFrom, null);
            continue;
          }
          assert.equal(all.logitsFrom, 0);
          assert.equal(all.logits.length, ids.length * vocabSize);
          assert.equal(last.logitsFrom, ids.length - 1);
          assert.equal(last.logits.length, vocabSize);
          assertBitIdentical(last.logits, all.logits.subarray((ids.length - 1) * vocabSize), `last row (seed ${seed})`);
        }
      });

      test('into fills the given arrays with the bits of fresh ones, call after call', () => {
        const into = {
          attention: sentinel(layers * heads * n * n),
          hidden: sentinel(n * dModel),
          ...(hasLmHead ? { logits: sentinel(vocabSize) } : {}),
        };
        let previous = null;
        for (const seed of [4, 5, 6]) {
          const ids = idsFor(vocabSize, n, seed);
          const fresh = model.run({ ids, logits: 'last' });
          const filled = model.run({ ids, logits: 'last', into });
          assert.equal(filled.attention, into.attention);
          assert.equal(filled.hidden, into.hidden);
          assertBitIdentical(filled.attention, fresh.attention, 'attention');
          assertBitIdentical(filled.hidden, fresh.hidden, 'hidden');
          if (hasLmHead) {
            assert.equal(filled.logits, into.logits);
            assertBitIdentical(filled.logits, fresh.logits, 'logits');
          }
          if (previous) assert.notDeepEqual(Array.from(filled.hidden), previous, 'hidden was not overwritten');
          previous = Array.from(filled.hidden);
        }
        if (hasLmHead) {
          // All rows into one array, and some outputs fresh.
          const ids = idsFor(vocabSize, n, 7);
          const logits = sentinel(n * vocabSize);
          const filled = model.run({ ids, into: { logits } });
          assert.equal(filled.logits, logits);
          assertBitIdentical(logits, model.run({ ids }).logits, 'all logits');
        }
      });

      test('logits and into that do not fit are refused; the heap and the arrays are unchanged', () => {
        const ids = idsFor(vocabSize, n, 8);
        const attention = sentinel(layers * heads * n * n), hidden = sentinel(n * dModel);
        const untouched = [attention, hidden];
        const refuse = (options, kind, message) => assertRefused(lens, () => model.run({ ids, ...options }), kind, message,
          untouched);
        refuse({ logits: 'first' }, RangeError, /^model\.run: logits must be 'all', 'last', 'none' or false, got "first"$/);
        refuse({ logits: true }, TypeError, /logits must be 'all', 'last', 'none' or false, got true/);
        refuse({ logits: 1 }, TypeError, /got 1$/);
        const attentionLength = layers * heads * n * n;
        refuse({ into: { attention: sentinel(attentionLength + 1), hidden } }, RangeError,
          new RegExp(`^model\\.run: into\\.attention must be of length layers\\*heads\\*n\\*n = ${layers}\\*${heads}\\*${n}\\*${n} = ` +
            `${attentionLength}, got length ${attentionLength + 1}$`));
        refuse({ into: { attention, hidden: Array.from(hidden) } }, TypeError,
          new RegExp(`into\\.hidden must be a Float32Array of length n\\*dModel = ${n}\\*${dModel} = ${n * dModel}, got Array`));
        refuse({ into: { attention, hidden: attention.subarray(0, n * dModel) } }, RangeError,
          /into\.attention and into\.hidden share memory/);
        refuse({ into: { attention, hidden, output: hidden } }, TypeError,
          /unknown key "output" in into; expected attention, hidden, logits/);
        refuse({ into: { logits: sentinel(vocabSize) }, logits: 'none' }, TypeError,
          hasLmHead ? /into\.logits was given, but this call returns no logits: logits is "none"/
            : /into\.logits was given, but this call returns no logits: the model has no LM head/);
        if (hasLmHead) {
          refuse({ into: { logits: sentinel(n * vocabSize) }, logits: 'last' }, RangeError,
            new RegExp(`into\\.logits must be of length 1\\*vocabSize = 1\\*${vocabSize} = ${vocabSize}, got length ${n * vocabSize}`));
          refuse({ into: { logits: sentinel(vocabSize) } }, RangeError,
            new RegExp(`into\\.logits must be of length n\\*vocabSize = ${n}\\*${vocabSize} = ${n * vocabSize}, got length ${vocabSize}`));
        }
        // A refused input (an id outside the vocabulary) leaves the arrays alone too.
        refuse({ ids: [...ids.slice(1), vocabSize], into: { attention, hidden } }, RangeError, /outside|vocabulary/);
        // And the model runs on, into the same arrays.
        const filled = model.run({ ids, into: { attention, hidden } });
        assertBitIdentical(filled.hidden, model.run({ ids }).hidden, 'hidden after the refusals');
      });
    });
  }
}
