// The logitLens view's data (logit-lens.js): model.analyze's lens read per
// cell with the model's own token texts, the last layer equal to model.run's
// top prediction, CSV, and bad shapes refused with a message naming them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadTinyEnglish } from '../../support/model-folder.mjs';
import { AttentionDataError } from '../../../web/views/attention-data.js';
import { lensCell, lensCsv, logitLensData } from '../../../web/views/logit-lens.js';

test('logitLensData takes model.analyze\'s result; the last layer\'s top token is model.run\'s argmax', async () => {
  const model = await loadTinyEnglish();
  try {
    const text = 'the cat sat on the mat';
    const analysis = model.analyze({ text, topK: 3, valueWeighted: false });
    const data = logitLensData(analysis, { tokenLabel: (id) => model.tokenText(id) });
    assert.deepEqual([data.layers, data.n, data.topK], [analysis.layers, analysis.n, 3]);
    const run = model.run({ text });
    const logits = run.logits;
    const vocab = logits.length / analysis.n;
    for (let position = 0; position < analysis.n; position += 1) {
      const row = logits.subarray(position * vocab, (position + 1) * vocab);
      const argmax = row.indexOf(Math.max(...row));
      const [top] = lensCell(data, data.layers - 1, position);
      assert.equal(top.id, argmax, `position ${position}`);
      assert.equal(top.token, model.tokenText(argmax));
    }
    const cell = lensCell(data, 1, 2);
    assert.deepEqual(cell.map(({ id }) => id), Array.from(analysis.logitLens.ids.subarray((1 * data.n + 2) * 3, (1 * data.n + 2) * 3 + 3)));
    assert.ok(cell[0].prob >= cell[1].prob && cell[1].prob >= cell[2].prob);
    const csv = lensCsv(data).trim().split('\n');
    assert.equal(csv[0], 'layer,position,rank,id,token,prob');
    assert.equal(csv.length, 1 + data.layers * data.n * 3);
  } finally {
    model.dispose();
  }
});

test('a lens of chosen positions (logitLens: { positions }) reads as the full lens\'s columns of those positions', async () => {
  const model = await loadTinyEnglish();
  try {
    const text = 'the cat sat on the mat';
    const full = logitLensData(model.analyze({ text, topK: 2, valueWeighted: false }));
    const some = logitLensData(model.analyze({ text, topK: 2, valueWeighted: false, logitLens: { positions: [4, 1] } }));
    assert.deepEqual([some.n, some.topK, some.positions], [full.n, 2, [4, 1]]);
    for (let layer = 0; layer < full.layers; layer += 1) {
      assert.deepEqual(lensCell(some, layer, 0), lensCell(full, layer, 4));
      assert.deepEqual(lensCell(some, layer, 1), lensCell(full, layer, 1));
    }
    const csv = lensCsv(some).trim().split('\n');
    assert.equal(csv.length, 1 + full.layers * 2 * 2);
    assert.ok(csv[1].startsWith('0,4,0,') && csv[3].startsWith('0,1,0,'), csv.slice(1, 4).join(' | '));
  } finally {
    model.dispose();
  }
});

test('labels come from tokenLabel, else vocabulary, else #id; CSV quotes tokens with commas or spaces', () => {
  const base = { layers: 1, n: 1, logitLens: { ids: [2, 0], probs: [0.75, 0.25] } };
  assert.deepEqual(lensCell(logitLensData(base), 0, 0).map(({ token }) => token), ['#2', '#0']);
  assert.deepEqual(lensCell(logitLensData(base, { vocabulary: ['a', 'b', ' c,'] }), 0, 0).map(({ token }) => token), [' c,', 'a']);
  assert.equal(lensCell(logitLensData(base, { vocabulary: ['x'], tokenLabel: (id) => `t${id}` }), 0, 0)[0].token, 't2');
  assert.equal(lensCsv(logitLensData(base, { vocabulary: ['a', 'b', ' c,'] })), 'layer,position,rank,id,token,prob\n0,0,0,2," c,",0.75\n0,0,1,0,a,0.25\n');
});

test('logitLensData refuses bad data with a message naming the problem', () => {
  const ok = { ids: [1, 2], probs: [0.5, 0.5] };
  const bad = [
    [null, /expected \{ layers, n, logitLens/],
    [{ layers: 0, n: 1, logitLens: ok }, /layers must be a positive integer, got 0/],
    [{ layers: 1, n: 1.5, logitLens: ok }, /n must be a positive integer, got 1.5/],
    [{ layers: 1, n: 1, logitLens: null }, /logitLens must be \{ ids, probs \}/],
    [{ layers: 1, n: 1, logitLens: { ids: [], probs: [] } }, /logitLens\.ids must be an array of token ids/],
    [{ layers: 2, n: 2, logitLens: { ids: [1, 2, 3], probs: [0, 0, 0] } }, /must hold layers × n × topK numbers \(layers × n = 4\), got 3/],
    [{ layers: 1, n: 1, logitLens: { ids: [1, 2], probs: [0.5] } }, /logitLens\.probs must hold as many numbers as logitLens\.ids \(2\), got 1/],
    [{ layers: 1, n: 1, logitLens: { ids: [1, -2], probs: [0.5, 0.5] } }, /logitLens\.ids\[1\] must be a token id/],
    [{ layers: 1, n: 1, logitLens: { ids: [1, 2], probs: [0.5, NaN] } }, /logitLens\.probs\[1\] must be a probability in \[0, 1\], got NaN/],
    [{ layers: 1, n: 1, logitLens: { ids: [1, 2], probs: [1.5, 0] } }, /logitLens\.probs\[0\] must be a probability in \[0, 1\], got 1\.5/],
    [{ layers: 1, n: 1, logitLens: ok, tokens: ['a', 'b'] }, /tokens must hold n = 1 labels, got 2/],
    [{ layers: 1, n: 2, logitLens: { ...ok, positions: [2] } }, /logitLens\.positions\[0\] must be a position from 0 to 1, got 2/],
    [{ layers: 1, n: 2, logitLens: { ...ok, positions: [] } }, /logitLens\.positions must be an array of positions, got 0/],
    [{ layers: 1, n: 3, logitLens: { ids: [1, 2, 3], probs: [0, 0, 0], positions: [0, 1] } }, /must hold layers × positions × topK numbers \(layers × positions = 2\), got 3/],
  ];
  for (const [data, message] of bad) assert.throws(() => logitLensData(data), (error) => error instanceof AttentionDataError && message.test(error.message), String(message));
  assert.throws(() => logitLensData({ layers: 1, n: 1, logitLens: ok }, { tokenLabel: 'x' }), /tokenLabel must be a function/);
  assert.throws(() => logitLensData({ layers: 1, n: 1, logitLens: ok }, { vocabulary: 'ab' }), /vocabulary must be an array/);
});
