// The headScores view's data (head-scores.js): the checks name what is wrong,
// rows come in layer order or sorted by one score (stable on ties), and the
// CSV holds every head's every score. Fed with model.analyze's own result.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadTinyEnglish } from '../../support/model-folder.mjs';
import { AttentionDataError } from '../../../web/views/attention-data.js';
import { headScoresData, scoreLabel, scoreRows, scoresCsv } from '../../../web/views/head-scores.js';

test('headScoresData takes model.analyze\'s result as it is; scoreRows sorts by any score', async () => {
  const model = await loadTinyEnglish();
  try {
    const analysis = model.analyze({ text: 'the cat sat on the mat because the cat was tired' });
    const data = headScoresData(analysis);
    assert.deepEqual(data.names, ['previousToken', 'firstToken', 'currentToken', 'duplicateToken', 'induction']);
    const inOrder = scoreRows(data);
    assert.deepEqual(inOrder.slice(0, 5).map(({ layer, head }) => [layer, head]), [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0]]);
    assert.equal(inOrder[6].values.induction, analysis.scores.induction[6]);
    const sorted = scoreRows(data, { sortBy: 'previousToken' });
    const expected = Array.from(analysis.scores.previousToken).sort((a, b) => b - a);
    assert.deepEqual(sorted.map((row) => row.values.previousToken), expected);
    assert.deepEqual(scoreRows(data, { sortBy: 'previousToken', descending: false }).map((row) => row.values.previousToken),
      [...expected].reverse());
    const csv = scoresCsv(data, inOrder).trim().split('\n');
    assert.equal(csv[0], 'layer,head,previousToken,firstToken,currentToken,duplicateToken,induction');
    assert.equal(csv.length, 1 + 16);
    assert.deepEqual(csv[2].split(',').map(Number), [0, 1, ...data.names.map((name) => analysis.scores[name][1])]);
  } finally {
    model.dispose();
  }
});

test('scoreRows keeps layer order among equal scores; labels read as words', () => {
  const data = headScoresData({ layers: 2, heads: 2, scores: { induction: [0.5, 0.9, 0.5, 0.1] } });
  assert.deepEqual(scoreRows(data, { sortBy: 'induction' }).map(({ layer, head }) => [layer, head]), [[0, 1], [0, 0], [1, 0], [1, 1]]);
  assert.throws(() => scoreRows(data, { sortBy: 'previousToken' }), /sortBy must be null or one of induction, got previousToken/);
  assert.equal(scoreLabel('duplicateToken'), 'duplicate token');
  assert.equal(scoreLabel('induction'), 'induction');
});

test('headScoresData refuses bad data with a message naming the problem', () => {
  const bad = [
    [null, /expected \{ layers, heads, scores \}/],
    [{ layers: 0, heads: 2, scores: { a: [] } }, /layers must be a positive integer, got 0/],
    [{ layers: 1, heads: 1.5, scores: { a: [1] } }, /heads must be a positive integer, got 1.5/],
    [{ layers: 1, heads: 2, scores: null }, /scores must hold at least one named array/],
    [{ layers: 1, heads: 2, scores: {} }, /scores must hold at least one named array/],
    [{ layers: 1, heads: 2, scores: { a: 'ab' } }, /scores\.a must hold layers × heads = 2 numbers, got 2/],
    [{ layers: 1, heads: 2, scores: { a: [1, 2, 3] } }, /scores\.a must hold layers × heads = 2 numbers, got 3/],
    [{ layers: 1, heads: 2, scores: { a: new Float32Array([0, NaN]) } }, /scores\.a\[1\] must be a finite number, got NaN/],
  ];
  for (const [data, message] of bad) {
    assert.throws(() => headScoresData(data), (error) => error instanceof AttentionDataError && message.test(error.message));
  }
});
