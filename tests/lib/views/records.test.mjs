// The one adapter from the library's records to the views' data (records.js),
// fed with what the library itself returns in Node: the data has the record's
// tokens and weights, is frozen, and skips the per-weight check that foreign
// data always gets.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { load } from '../../../web/lib/node.js';
import { AttentionDataError, attentionData, quantityTitle } from '../../../web/views/attention-data.js';
import { fromExplanation, fromRun, fromValueWeighted } from '../../../web/views/records.js';
import { loadModelFolder } from '../../support/model-folder.mjs';
import { seq2seqCheckpoint } from '../../support/model-reference-seq2seq.mjs';

const modelDir = join(fileURLToPath(new URL('../../../', import.meta.url)), '..', 'shared', 'models', 'sort-gpt2');
const lens = await load();

test('fromExplanation: the sentence\'s tokens, the context\'s as keys for cross-attention, the weights themselves', () => {
  const self = lens.explainSentence({ text: 'The cat sat.', heads: 2, dModel: 16 });
  const data = fromExplanation(self);
  assert.deepEqual(data.tokens, self.tokens);
  assert.equal(data.keyTokens, null);
  assert.equal(data.weights, self.weights, 'no copy');
  assert.equal(data.heads, 2);
  assert.ok(Object.isFrozen(data));
  const cross = lens.explainSentence({ text: 'The cat sat.', context: 'A dog ran away.', heads: 2, dModel: 16 });
  assert.deepEqual(fromExplanation(cross).keyTokens, cross.contextTokens);
  assert.equal(attentionData(fromExplanation(cross)).nKeys, cross.nContext);
});

test('fromExplanation on matrices labels the rows t0, t1, ... and the context\'s rows c0, c1, ...', () => {
  const x = new Float32Array([1, 0, 0, 1, 1, 1]);
  const eye = new Float32Array([1, 0, 0, 1]);
  const record = lens.explainMatrices({ x, n: 3, dModel: 2, wq: eye, wk: eye, wv: eye, context: new Float32Array([1, 0, 0, 1]), nContext: 2 });
  const data = fromExplanation(record);
  assert.deepEqual(data.tokens, ['t0', 't1', 't2']);
  assert.deepEqual(data.keyTokens, ['c0', 'c1']);
  assert.deepEqual(fromExplanation(record, { crossAttention: false }).keyTokens, null, 'an explicit option overrides the record');
});

test('the library\'s data skips the per-weight check; the same numbers as foreign data are checked in full', () => {
  const record = lens.explainSentence({ text: 'one two three', heads: 1, dModel: 8 });
  const data = fromExplanation(record);
  // A NaN written into the record after the fact is the caller's doing: the shape is still checked, the weights are trusted.
  const foreign = { tokens: [...data.tokens], weights: data.weights.slice(), heads: 1 };
  foreign.weights[0] = Number.NaN;
  assert.throws(() => attentionData(foreign), (error) => error instanceof AttentionDataError && /weights\[0\] .* is NaN/.test(error.message));
  assert.doesNotThrow(() => attentionData(data));
  assert.throws(() => attentionData({ ...data, heads: 2 }), /weights must have heads\*n\*nKeys = 2\*3\*3 = 18 values/, 'a copy is foreign: its shape and weights are checked');
  assert.throws(() => fromExplanation({ tokens: ['a'] }), /fromExplanation: expected an Explanation/);
});

test('fromRun of an encoder-decoder: cross-attention with target rows and source keys, decoder and encoder self-attention', async () => {
  const checkpoint = seq2seqCheckpoint({ family: 'bart', seed: 5 });
  const model = await lens.loadModel({ config: checkpoint.files['config.json'], weights: checkpoint.files['model.safetensors'] });
  try {
    const run = model.run({ ids: [3, 4, 5, 6, 7], targetIds: [2, 9, 10] });
    const cross = attentionData(fromRun(run, { kind: 'cross' }));
    assert.deepEqual([cross.n, cross.nKeys, cross.layers], [run.m, run.n, run.decoderLayers]);
    assert.deepEqual(cross.queryTokens, run.targetTokens);
    assert.deepEqual(cross.keyTokens, run.tokens);
    assert.equal(cross.weights, run.crossAttention, 'no copy');
    // One layer: a view of that layer's heads × m × n block.
    const size = run.heads * run.m * run.n;
    assert.deepEqual(Array.from(fromRun(run, { kind: 'cross', layer: 1 }).weights), Array.from(run.crossAttention.subarray(size, 2 * size)));
    const decoder = attentionData(fromRun(run, { kind: 'decoder' }));
    assert.deepEqual([decoder.n, decoder.nKeys], [run.m, run.m]);
    assert.equal(decoder.weights, run.decoderAttention);
    assert.equal(attentionData(fromRun(run)).weights, run.attention, 'the encoder\'s by default');
    assert.throws(() => fromRun(run, { kind: 'both' }), /kind must be 'encoder', 'decoder' or 'cross', got "both"/);
    // Every kind pooled (model.run's attention { pool }): each kind's data says so, its layers' blocks views of the run's.
    const pooled = model.run({ ids: [3, 4, 5, 6, 7], targetIds: [2, 9, 10], attention: { pool: 2 } });
    const blocks = pooled.heads * 2 * 3; // ceil(3 / 2) target rows x ceil(5 / 2) source keys
    assert.deepEqual([fromRun(pooled, { kind: 'cross' }).pool, fromRun(pooled, { kind: 'decoder' }).pool, fromRun(pooled).pool], [2, 2, 2]);
    assert.equal(fromRun(pooled, { kind: 'cross', layer: 1 }).weights.length, blocks);
    assert.deepEqual(Array.from(fromRun(pooled, { kind: 'cross', layer: 1 }).weights), Array.from(pooled.crossAttention.subarray(blocks)));
    assert.deepEqual([attentionData(fromRun(pooled, { kind: 'cross' })).rows, attentionData(fromRun(pooled, { kind: 'cross' })).cols], [2, 3]);
  } finally {
    model.dispose();
  }
  const decoderOnly = await loadModelFolder(lens, modelDir);
  try {
    assert.throws(() => fromRun(decoderOnly.run({ text: '2 0' }), { kind: 'cross' }), /fromRun: expected an encoder-decoder's run .* crossAttention/);
  } finally {
    decoderOnly.dispose();
  }
});

test('fromRun: every layer, or one layer as a view of the run\'s attention', async () => {
  const model = await loadModelFolder(lens, modelDir);
  try {
    const run = model.run({ text: '2 0 1 1 0 2' });
    const all = attentionData(fromRun(run));
    assert.equal(all.layers, run.layers);
    assert.equal(all.hasLayers, true);
    const size = run.heads * run.n * run.n;
    const second = fromRun(run, { layer: 1 });
    assert.equal(second.layers, undefined);
    assert.deepEqual(Array.from(second.weights), Array.from(run.attention.subarray(size, 2 * size)));
    assert.throws(() => fromRun(run, { layer: run.layers }), new RegExp(`layer must be an integer from 0 to ${run.layers - 1}, got ${run.layers}`));
  } finally {
    model.dispose();
  }
});

test('only results the library branded are trusted: a record rebuilt by hand, or copied as a worker copies it, is checked in full', async () => {
  const record = lens.explainSentence({ text: 'one two three', heads: 1, dModel: 8 });
  assert.equal(record[Symbol.for('attnlens.checked')], true, 'the library brands what it checked');
  assert.equal(Object.prototype.propertyIsEnumerable.call(record, Symbol.for('attnlens.checked')), false);
  // Object spread copies only enumerable own properties: the brand is not one of them.
  const rebuilt = { ...record, weights: record.weights.slice() };
  rebuilt.weights[0] = Number.NaN;
  assert.throws(() => attentionData(fromExplanation(rebuilt)), (error) => error instanceof AttentionDataError && /weights\[0\] .* is NaN/.test(error.message));
  const copied = structuredClone(record); // what postMessage gives the other side
  copied.weights[1] = Number.POSITIVE_INFINITY;
  assert.throws(() => attentionData(fromExplanation(copied)), /weights\[1\] .* is Infinity/);
  // The library's own result is trusted: the same write goes unnoticed by the views (the library checked it when it made it).
  record.weights[0] = Number.NaN;
  assert.doesNotThrow(() => attentionData(fromExplanation(record)));
});

test('fromValueWeighted: model.analyze\'s value-weighted attention, labelled as such, every layer or one', async () => {
  const model = await loadModelFolder(lens, modelDir);
  try {
    const analysis = model.analyze({ text: '2 0 1 1 0 2', logitLens: false });
    const all = attentionData(fromValueWeighted(analysis));
    assert.equal(all.weights, analysis.valueWeighted, 'no copy');
    assert.equal(all.valueWeighted, true);
    assert.equal(all.layers, analysis.layers);
    assert.equal(attentionData(fromRun(model.run({ text: '2 0 1 1 0 2' }))).valueWeighted, false, 'a run is raw weights');
    // A run's own value-weighted attention (attention { valueWeighted: true }) is labelled as analyze's is.
    const weightedRun = attentionData(fromRun(model.run({ text: '2 0 1 1 0 2', attention: { valueWeighted: true } })));
    assert.equal(weightedRun.valueWeighted, true, 'a run of value-weighted attention says so');
    assert.ok(weightedRun.weights.every((value, i) => Math.abs(value - analysis.valueWeighted[i]) < 1e-6), 'the same numbers as analyze');
    const size = analysis.heads * analysis.n * analysis.n;
    const last = fromValueWeighted(analysis, { layer: analysis.layers - 1 });
    assert.deepEqual(Array.from(last.weights), Array.from(analysis.valueWeighted.subarray((analysis.layers - 1) * size)));
    assert.equal(last.quantity, 'valueWeighted');
    assert.throws(() => fromValueWeighted(analysis, { layer: -1 }), /fromValueWeighted: layer must be an integer from 0/);
    const without = model.analyze({ text: '2 0 1', valueWeighted: false, logitLens: false });
    assert.throws(() => fromValueWeighted(without), /fromValueWeighted: expected model.analyze's result with its valueWeighted/);
    // What the views write on it: the title and the legend say what is drawn.
    assert.equal(quantityTitle(all, 'Layer 1 of 2 · head 1 of 2'), 'Layer 1 of 2 · head 1 of 2 · value-weighted');
    assert.equal(quantityTitle(all, undefined), 'Value-weighted attention');
    assert.equal(quantityTitle(attentionData(fromRun(model.run({ text: '2 0' }))), 'Head 1'), 'Head 1');
    assert.throws(() => attentionData({ ...fromValueWeighted(analysis), quantity: 'norms' }), /quantity must be one of 'weights', 'valueWeighted', got 'norms'/);
  } finally {
    model.dispose();
  }
});
