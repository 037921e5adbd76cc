// tiny-english-2, the successor of tiny-english (web/models/tiny-english-2, trained by
// web/models/train/ for issue 25): the folder fits the 4 MB budget, its tokenizer keeps the
// 2,000 most frequent words of its training text whole, attnlens' forward gives torch's logits
// (tests/fixtures/tiny-english-2-reference.json, written from train.py's torch forward), and
// the detectors' table of web/docs/tiny-english-2.md is what attnlens measures, with every head
// it names passing the named bar.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { test } from 'node:test';
import { detectorScores, modelFiles, parseDetectorTable } from '../../web/models/train/detector-table.mjs';
import { readSample } from '../../web/models/train/head-scores.mjs';
import { loadBoth, repoRoot } from './helpers.mjs';

const folder = `${repoRoot}web/models/tiny-english-2`;
const files = modelFiles(folder);
const heldout = readSample(readFileSync(`${folder}/heldout-sample.txt`, 'utf8'));
const topWords = readFileSync(`${folder}/top-words.txt`, 'utf8').trim().split('\n');
const reference = JSON.parse(readFileSync(`${repoRoot}tests/fixtures/tiny-english-2-reference.json`, 'utf8'));
const guide = readFileSync(`${repoRoot}web/docs/tiny-english-2.md`, 'utf8');
const lenses = await loadBoth();

async function withModel(lens, body) {
  const model = await lens.loadModel(files);
  try {
    return await body(model);
  } finally {
    model.dispose();
  }
}

test('tiny-english-2: an F16 GPT-2 within 4 MB whose 6000-token BPE keeps the top 2,000 words whole', async () => {
  const bytes = ['config.json', 'model.safetensors', 'tokenizer.json'].reduce((s, f) => s + statSync(`${folder}/${f}`).size, 0);
  assert.ok(bytes <= 4 * 1024 * 1024, `the model folder's files take ${bytes} bytes, more than 4 MB`);
  await withModel(lenses[0], (model) => {
    const { architecture, layers, heads, dModel, vocabSize, maxPositions, dtype, tiedLmHead, tokenizer, ignoredTensors } = model.info;
    assert.deepEqual({ architecture, layers, heads, dModel, vocabSize, maxPositions, dtype, tiedLmHead, tokenizer, ignoredTensors },
      { architecture: 'gpt2', layers: 4, heads: 4, dModel: 128, vocabSize: 6000, maxPositions: 256, dtype: 'F16',
        tiedLmHead: true, tokenizer: 'byte-level-bpe', ignoredTensors: [] });
    assert.equal(topWords.length, 2000);
    const split = topWords.filter((word) => model.tokenize(` ${word}`).ids.length !== 1);
    assert.deepEqual(split, [], 'words of the top 2,000 that are more than one token after a space');
    // The words tiny-english cut into pieces (issue 25).
    for (const word of [' river', ' old']) assert.equal(model.tokenize(word).ids.length, 1, word);
    for (const text of heldout) assert.equal(model.decode(model.tokenize(text).ids), text);
  });
});

for (const lens of lenses) {
  const label = lens.simd ? 'simd' : 'scalar';

  test(`tiny-english-2 (${label}): the forward gives torch's logits on held-out documents`, async () => {
    await withModel(lens, (model) => {
      const vocab = model.info.vocabSize;
      assert.ok(reference.length >= 3);
      for (const { text, ids, positions } of reference) {
        assert.deepEqual(Array.from(model.tokenize(text).ids), ids, `the ids of ${JSON.stringify(text)}`);
        const { logits } = model.run({ ids });
        positions.forEach(({ logsumexp, top }, i) => {
          const row = logits.subarray(i * vocab, (i + 1) * vocab);
          let max = -Infinity, sum = 0;
          for (const v of row) max = Math.max(max, v);
          for (const v of row) sum += Math.exp(v - max);
          assert.ok(Math.abs(max + Math.log(sum) - logsumexp) < 2e-3, `position ${i}: log normaliser ${max + Math.log(sum)} vs torch ${logsumexp}`);
          for (const [id, value] of top) {
            assert.ok(Math.abs(row[id] - value) < 2e-3, `position ${i}, token ${id}: logit ${row[id]} vs torch ${value}`);
          }
        });
      }
    });
  });

  test(`tiny-english-2 (${label}): the detectors' table of its guide is what attnlens measures`, async () => {
    await withModel(lens, (model) => {
      const scores = detectorScores(model, heldout);
      const table = parseDetectorTable(guide);
      assert.equal(table.length, 16, 'the guide has one row per head (4 layers x 4 heads)');
      for (const row of table) {
        const measured = scores[row.layer][row.head];
        for (const [key, value] of Object.entries(row)) {
          if (key === 'layer' || key === 'head' || key === 'role') continue;
          assert.ok(Math.abs(measured[key] - value) <= 0.01,
            `layer ${row.layer} head ${row.head} ${key}: the guide says ${value}, attnlens gives ${measured[key].toFixed(4)}`);
        }
        // A head the guide names passes that role's bar in this forward.
        const named = `the guide names layer ${row.layer} head ${row.head}`;
        if (row.role.includes('previous token')) {
          assert.ok(measured.previousToken >= 0.5, `${named} a previous-token head; it scores ${measured.previousToken.toFixed(3)}`);
        }
        if (row.role.includes('induction')) {
          assert.ok(measured.inductionRandom >= 0.3, `${named} an induction head; it scores ${measured.inductionRandom.toFixed(3)}`);
        }
      }
    });
  });
}
