// The tiny English GPT-2 shipped in web/models/tiny-english (trained by web/models/train/),
// checked with attnlens' own forward only: it loads, its tokenizer round-trips held-out
// text, it predicts held-out text far better than chance, it has a previous-token head,
// and the head table of web/docs/tiny-model.md is what the forward measures.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { test } from 'node:test';
import { headScores, parseScoresTable, readSample } from '../../web/models/train/head-scores.mjs';
import { loadBoth, repoRoot } from './helpers.mjs';

const folder = `${repoRoot}web/models/tiny-english`;
const files = {
  config: readFileSync(`${folder}/config.json`, 'utf8'),
  weights: readFileSync(`${folder}/model.safetensors`),
  tokenizer: readFileSync(`${folder}/tokenizer.json`, 'utf8'),
};
const heldout = readSample(readFileSync(`${folder}/heldout-sample.txt`, 'utf8'));
const guide = readFileSync(`${repoRoot}web/docs/tiny-model.md`, 'utf8');
const lenses = await loadBoth();

/** Mean next-token cross-entropy (nats) over every held-out document, from run().logits. */
function heldoutLoss(model) {
  const vocab = model.info.vocabSize;
  let total = 0, count = 0;
  for (const text of heldout) {
    const { ids, logits, n } = model.run({ text });
    for (let i = 0; i + 1 < n; i++) {
      const row = logits.subarray(i * vocab, (i + 1) * vocab);
      let max = -Infinity;
      for (const v of row) max = Math.max(max, v);
      let sum = 0;
      for (const v of row) sum += Math.exp(v - max);
      total += max + Math.log(sum) - row[ids[i + 1]];
      count++;
    }
  }
  return total / count;
}

test('tiny-english: the committed folder is a small F16 GPT-2 with its own 1024-token BPE', async () => {
  const bytes = ['config.json', 'model.safetensors', 'tokenizer.json'].reduce((s, f) => s + statSync(`${folder}/${f}`).size, 0);
  assert.ok(bytes <= 4 * 1024 * 1024, `the model folder's files take ${bytes} bytes, more than 4 MB`);
  const model = await lenses[0].loadModel(files);
  try {
    const { architecture, layers, heads, dModel, vocabSize, maxPositions, dtype, tiedLmHead, tokenizer, ignoredTensors } = model.info;
    assert.deepEqual({ architecture, layers, heads, dModel, vocabSize, maxPositions, dtype, tiedLmHead, tokenizer, ignoredTensors },
      { architecture: 'gpt2', layers: 4, heads: 4, dModel: 128, vocabSize: 1024, maxPositions: 128, dtype: 'F16',
        tiedLmHead: true, tokenizer: 'byte-level-bpe', ignoredTensors: [] });
    assert.deepEqual(Array.from(model.tokenize('<|endoftext|>').ids), [1023]);
  } finally {
    model.dispose();
  }
});

test('tiny-english: the tokenizer round-trips held-out text and odd strings', async () => {
  const model = await lenses[0].loadModel(files);
  try {
    assert.ok(heldout.length >= 20, `the held-out sample has ${heldout.length} documents`);
    const odd = ['  leading and trailing spaces  ', 'tabs\tand\nnew lines\n\n', 'café naïve — “quotes” 日本語 🙂',
      "it's we'll they'd 1234567 3.14159", 'end<|endoftext|>start'];
    for (const text of [...heldout, ...odd]) {
      const { ids } = model.tokenize(text);
      assert.equal(model.decode(ids), text, `decode(encode(${JSON.stringify(text)}))`);
    }
    // Whole words are single tokens: the vocabulary learnt English.
    assert.equal(model.tokenize(' the').ids.length, 1);
  } finally {
    model.dispose();
  }
});

for (const lens of lenses) {
  const label = lens.simd ? 'simd' : 'scalar';

  test(`tiny-english (${label}): held-out loss is far below ln(vocabulary size)`, async () => {
    const model = await lens.loadModel(files);
    try {
      const loss = heldoutLoss(model), uniform = Math.log(model.info.vocabSize);
      assert.ok(loss < uniform - 3, `held-out loss ${loss.toFixed(3)} nats/token is not far below ln V = ${uniform.toFixed(3)}`);
    } finally {
      model.dispose();
    }
  });

  test(`tiny-english (${label}): the head table of web/docs/tiny-model.md is what the forward measures`, async () => {
    const model = await lens.loadModel(files);
    try {
      const scores = headScores(model, heldout);
      const table = parseScoresTable(guide);
      assert.equal(table.length, 16, 'the guide has one row per head (4 layers x 4 heads)');
      for (const row of table) {
        const measured = scores[row.layer][row.head];
        for (const key of ['previous', 'first', 'induction']) {
          assert.ok(Math.abs(measured[key] - row[key]) <= 0.01,
            `layer ${row.layer} head ${row.head} ${key}: the guide says ${row[key]}, the forward gives ${measured[key].toFixed(4)}`);
        }
      }
      const best = Math.max(...scores.flat().map((s) => s.previous));
      assert.ok(best > 0.5, `no previous-token head: the best head's mean attention to token i-1 is ${best.toFixed(3)}`);
    } finally {
      model.dispose();
    }
  });
}
