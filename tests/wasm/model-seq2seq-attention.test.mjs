// An encoder-decoder's run asks only for what it draws (issue 24): model.run's
// attention { kinds, layers, heads, pool } returns those heads of those kinds,
// and the result's headWeights(kind, layer, head, { pool }) any other,
// recomputed from the queries and keys the session kept. Checked bit for bit
// against the arrays of the run that returns every weight (itself checked
// against the float64 forwards in model-seq2seq and model-t5), pooled ones
// against tests/support/pooled-reference.mjs; the logits are the same bits
// whatever is chosen; bad choices and calls are Errors naming the problem,
// leave the heap as it was, and what is kept is freed by the next run,
// generate and dropCache.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { seq2seqCheckpoint, seq2seqReference } from '../support/model-reference-seq2seq.mjs';
import { t5Checkpoint } from '../support/model-reference-t5.mjs';
import { pooledReference } from '../support/pooled-reference.mjs';
import { assertBitIdentical, assertRefused, loadBoth } from './helpers.mjs';
import { assertSeq2seqMatches, idsFor, loadCheckpoint } from './model-checks.mjs';

const lenses = await loadBoth();
const KINDS = ['encoder', 'decoder', 'cross'];
const ARRAYS = { encoder: 'attention', decoder: 'decoderAttention', cross: 'crossAttention' };

const checkpoints = [
  ['bart', () => seq2seqCheckpoint({ family: 'bart', seed: 5 })],
  ['marian', () => seq2seqCheckpoint({ family: 'marian', seed: 5 })],
  // Three encoder layers, two decoder layers: layers index each kind's own stack.
  ['t5 v1.1', () => t5Checkpoint({ version: '1.1', seed: 5, num_layers: 3 })],
];

for (const lens of lenses) {
  for (const [name, checkpointOf] of checkpoints) {
    describe(`${lens.simdLevel} module, tiny ${name}: an encoder-decoder's chosen attention and headWeights`, async () => {
      const checkpoint = checkpointOf();
      const model = await loadCheckpoint(lens, checkpoint);
      after(() => model.dispose());
      const { layers, decoderLayers, heads } = model.info;
      const n = 11, m = 7;
      const ids = idsFor(40, n, 4), targetIds = idsFor(40, m, 9);
      const stack = (kind) => (kind === 'encoder' ? layers : decoderLayers);
      const sides = (kind) => ({ encoder: [n, n], decoder: [m, m], cross: [m, n] })[kind];
      // Head (layer, head) of `kind` in a run that returns every weight.
      const headOf = (all, kind, layer, head) => {
        const [rows, keys] = sides(kind);
        const index = layer * heads + head;
        return all[ARRAYS[kind]].subarray(index * rows * keys, (index + 1) * rows * keys);
      };

      test('headWeights of a run that returns none gives every head of every kind: the bits of the run that returns all', () => {
        const all = model.run({ ids, targetIds });
        assert.deepEqual([all.attentionKinds, all.attentionHeads, all.attentionPool], [KINDS, [0, 1], 1]);
        assert.deepEqual(all.attentionLayers, Object.fromEntries(KINDS.map((kind) => [kind, [...Array(stack(kind)).keys()]])));
        const none = model.run({ ids, targetIds, attention: 'none' });
        assert.deepEqual([none.attentionKinds, none.attention.length, none.decoderAttention.length, none.crossAttention.length], [[], 0, 0, 0]);
        assertBitIdentical(none.logits, all.logits, 'logits whatever the choice');
        // Every head rebuilt from headWeights is the float64 forward's too, where the family has a reference here.
        const rebuilt = { logits: none.logits };
        for (const kind of KINDS) {
          const [rows, keys] = sides(kind);
          rebuilt[ARRAYS[kind]] = new Float32Array(stack(kind) * heads * rows * keys);
          for (let layer = 0; layer < stack(kind); layer++) {
            for (let head = 0; head < heads; head++) {
              const weights = none.headWeights(kind, layer, head);
              assertBitIdentical(weights, headOf(all, kind, layer, head), `${kind} layer ${layer} head ${head}`);
              rebuilt[ARRAYS[kind]].set(weights, (layer * heads + head) * rows * keys);
              for (const f of [2, 3, Math.max(n, m)]) {
                assertBitIdentical(none.headWeights(kind, layer, head, { pool: f }),
                  pooledReference(headOf(all, kind, layer, head), 0, rows, keys, f), `${kind} layer ${layer} head ${head} pooled by ${f}`);
              }
            }
          }
        }
        if (name !== 't5 v1.1') assertSeq2seqMatches(rebuilt, seq2seqReference(name, checkpoint.config, checkpoint.tensors, ids, targetIds), 'headWeights');
      });

      test('chosen kinds, layers and heads, pooled, are those heads of every head pooled; the others are empty', () => {
        const all = model.run({ ids, targetIds });
        const f = 3;
        const chosen = model.run({ ids, targetIds, attention: { kinds: ['cross', 'encoder'], layers: [1], heads: [1, 0], pool: f } });
        assert.deepEqual(chosen.attentionKinds, ['encoder', 'cross']);
        assert.deepEqual(chosen.attentionLayers, { encoder: [1], decoder: [], cross: [1] });
        assert.deepEqual([chosen.attentionHeads, chosen.attentionPool, chosen.decoderAttention.length], [[0, 1], f, 0]);
        assertBitIdentical(chosen.logits, all.logits, 'logits');
        for (const kind of ['encoder', 'cross']) {
          const [rows, keys] = sides(kind);
          const size = Math.ceil(rows / f) * Math.ceil(keys / f);
          assert.equal(chosen[ARRAYS[kind]].length, 2 * size);
          [0, 1].forEach((head, k) => {
            assertBitIdentical(chosen[ARRAYS[kind]].subarray(k * size, (k + 1) * size),
              pooledReference(headOf(all, kind, 1, head), 0, rows, keys, f), `${kind} head ${head}`);
          });
        }
        // One kind's every layer and head, in full: that kind's array of the run that returns all.
        const decoderOnly = model.run({ ids, targetIds, attention: { kinds: ['decoder'] } });
        assertBitIdentical(decoderOnly.decoderAttention, all.decoderAttention, 'the decoder kind alone');
        assert.deepEqual([decoderOnly.attention.length, decoderOnly.crossAttention.length], [0, 0]);
        // The encoder's deeper layers when it is the one kind chosen.
        const deepest = model.run({ ids, targetIds, attention: { kinds: ['encoder'], layers: [layers - 1], heads: [1] } });
        assertBitIdentical(deepest.attention, headOf(all, 'encoder', layers - 1, 1), 'the encoder\'s last layer');
      });

      test('bad choices and bad headWeights calls are Errors naming the problem, leaving the heap as it was', () => {
        const run = model.run({ ids, targetIds, attention: 'none' });
        const refusedRuns = [
          [{ kinds: ['self'] }, RangeError, /attention\.kinds must be an array of 'encoder', 'decoder' and 'cross', got/],
          [{ kinds: 'cross' }, TypeError, /attention\.kinds must be an array/],
          [{ kinds: ['cross', 'cross'] }, RangeError, /attention\.kinds lists a kind twice/],
          [{ layers: [decoderLayers] }, RangeError,
            new RegExp(`attention\\.layers must hold integers from 0 to ${decoderLayers - 1} \\(the layers of encoder, decoder, cross\\)`)],
          [{ heads: [heads] }, RangeError, /attention\.heads must hold integers from 0 to 1, got 2/],
          [{ pool: 0 }, RangeError, /attention\.pool must be an integer from 1 to 11 \(the number of source or target tokens, whichever is more\), got 0/],
          [{ pool: '2' }, TypeError, /attention\.pool must be an integer from 1 to 11/],
          [{ valueWeighted: true }, TypeError, /attention\.valueWeighted is not offered by an encoder-decoder's run; model\.analyze/],
          [{ stride: 2 }, TypeError, /unknown attention option "stride"; expected kinds, layers, heads, pool/],
          ['some', RangeError, /attention must be 'all', 'none' or \{ kinds\?, layers\?, heads\?, pool\? \}, got "some"/],
        ];
        for (const [attention, Kind, message] of refusedRuns) {
          assertRefused(lens, () => model.run({ ids, targetIds, attention }), Kind, message);
        }
        const refusedHeads = [
          [() => run.headWeights('self', 0, 0), RangeError, /headWeights: kind must be 'encoder', 'decoder' or 'cross'/],
          [() => run.headWeights('decoder', decoderLayers, 0), RangeError,
            new RegExp(`layer must be an integer from 0 to ${decoderLayers - 1} \\(the decoder's layers\\), got ${decoderLayers}`)],
          [() => run.headWeights('encoder', layers, 0), RangeError, new RegExp(`from 0 to ${layers - 1} \\(the encoder's layers\\)`)],
          [() => run.headWeights('cross', 0, 2), RangeError, /head must be an integer from 0 to 1, got 2/],
          [() => run.headWeights('cross', 0, 0, { pool: 12 }), RangeError, /pool must be an integer from 1 to 11/],
          [() => run.headWeights('cross', 0, 0, { valueWeighted: true }), TypeError, /unknown option "valueWeighted"; expected pool/],
        ];
        for (const [call, Kind, message] of refusedHeads) assertRefused(lens, call, Kind, message);
        // The refusals left the run's session as it was.
        assertBitIdentical(run.headWeights('cross', 1, 1), model.run({ ids, targetIds }).crossAttention.subarray(3 * m * n), 'after the refusals');
      });

      test('what a run keeps is freed by the next run, by generate and by dropCache; its headWeights then throw', () => {
        model.dropCache();
        const before = lens.heapBytesInUse();
        const first = model.run({ ids, targetIds, attention: 'none' });
        // The session's buffers (cacheBytes) and the session object with its allocations' headers: a few hundred bytes.
        const overhead = lens.heapBytesInUse() - before - first.cacheBytes;
        assert.ok(first.cacheBytes > 0 && overhead >= 0 && overhead < 1024, `kept ${first.cacheBytes} bytes, and ${overhead} more`);
        first.headWeights('cross', 0, 0, { pool: 2 });
        assert.equal(lens.heapBytesInUse(), before + first.cacheBytes + overhead, 'a head leaves nothing behind');
        const second = model.run({ ids: ids.slice(0, 5), targetIds, attention: 'none' });
        assert.ok(second.cacheBytes < first.cacheBytes);
        assert.equal(lens.heapBytesInUse(), before + second.cacheBytes + overhead, 'the next run replaces it');
        const gone = /this run's queries and keys are gone \(the model ran again, or dropCache was called\); headWeights is valid until the model's next run/;
        assert.throws(() => first.headWeights('encoder', 0, 0), { name: 'Error', message: gone });
        model.generate({ ids, maxTokens: 2 });
        assert.equal(lens.heapBytesInUse(), before, 'generate frees it, and what it allocates');
        assert.throws(() => second.headWeights('decoder', 0, 0), { name: 'Error', message: gone });
        const third = model.run({ ids, targetIds, attention: 'none' });
        model.dropCache();
        assert.equal(lens.heapBytesInUse(), before, 'dropCache frees it');
        assert.throws(() => third.headWeights('cross', 0, 0), { name: 'Error', message: gone });
        // A call from inside generate's onToken may not drop generate's own session.
        assert.throws(() => model.generate({ ids, maxTokens: 2, onToken: () => model.dropCache() }),
          /model\.dropCache: this model is generating; call it again after generate returns/);
        assert.equal(lens.heapBytesInUse(), before);
      });
    });
  }
}
