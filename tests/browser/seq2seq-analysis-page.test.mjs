// An encoder-decoder's step by step, value-weighted attention and Analysis tab on the page (issues
// 23 and 25), in Debian's headless Chromium against the BUILT page: a tiny random BART checkpoint
// written here, opened through the file input and translated. Step by step on a cross-attention
// head says Q comes from the decoder and K, V from the encoder and shows model.explain's numbers;
// the value-weighted switch draws each kind's model.analyze value-weighted attention; the Analysis
// tab shows the encoder's or the decoder's detectors and rollout, and the decoder's logit lens. Every number equals the library's
// on the same ids in this Node process.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { load } from '../../web/lib/node.js';
import { seq2seqCheckpoint } from '../support/model-reference-seq2seq.mjs';
import { assertClose, assertRowsSumToOne, openPageAroundTests, openPageWithSeq2seq, waitForResult } from './page-fixture.mjs';

const checkpoint = seq2seqCheckpoint({ family: 'bart', seed: 7 });
const sourceIds = [3, 4, 5, 3, 4, 8];

let library; // the library in Node on the page's ids: explain, analyze
let session;
let page;

// The page built first: the library's load() reads the WebAssembly modules that ensureBuilt() builds when missing.
openPageAroundTests(async (opened) => {
  ({ session, page } = opened);
  await page.locator('#sentence').fill(sourceIds.join(' '));
  await page.locator('#sentence').press('Enter');
  await waitForResult(page, `window.attnlens.last.generated && JSON.stringify(window.attnlens.last.ids) === ${JSON.stringify(JSON.stringify(sourceIds))}`);
}, { open: () => openPageWithSeq2seq(checkpoint) });
before(async () => {
  const lens = await load();
  const model = await lens.loadModel({ config: checkpoint.files['config.json'], weights: checkpoint.files['model.safetensors'] });
  const generated = model.generate({ ids: sourceIds, maxTokens: Math.min(32, model.info.maxPositions - 1) });
  const targetIds = [model.info.decoderStartId, ...generated.ids];
  library = {
    targetIds,
    explain: (kind, layer) => model.explain({ ids: sourceIds, targetIds, kind, layer }),
    analysis: model.analyze({ ids: sourceIds, targetIds }),
    dispose: () => model.dispose(),
  };
});
after(() => library?.dispose());

const stepTable = (name) => page.locator('#step table').filter({ has: page.locator('.matrix-name', { hasText: new RegExp(`^${name}$`) }) })
  .locator('tbody tr').evaluateAll((rows) => rows.map((row) => Array.from(row.querySelectorAll('td'), (cell) => Number(cell.textContent))));

test('step by step on a cross-attention head: Q from the decoder, K and V from the encoder, model.explain\'s numbers', async () => {
  assert.deepEqual((await page.evaluate(() => window.attnlens.last.targetIds)), library.targetIds, 'the page translated as the library does');
  await page.locator('#layer').selectOption('2');
  await page.locator('button[data-view="steps"]').click();
  await page.waitForFunction(() => /^Step 1 of 10: X: what layer 2 of the decoder reads/.test(document.querySelector('#step h3')?.textContent ?? ''));
  const expected = library.explain('cross', 1);
  assert.match(await page.locator('#step .step-sentence').textContent(), /X_context: the encoder's output, one row per source token/);
  const next = page.getByRole('button', { name: 'Next →' });
  await next.click();
  assert.match(await page.locator('#step .step-sentence').textContent(), /^Queries \(from the decoder\)/);
  await next.click();
  assert.match(await page.locator('#step h3').textContent(), /K = X_context · W_K/);
  assert.match(await page.locator('#step .step-sentence').textContent(), /^Keys \(from the encoder's output\)/);
  await next.click();
  assert.match(await page.locator('#step .step-sentence').textContent(), /^Values \(from the encoder's output\)/);
  // Head 1's weights: target tokens as rows, source tokens as columns, model.explain's to the 4 decimals shown.
  for (let step = 4; step < 7; step += 1) await next.click();
  assert.match(await page.locator('#step h3').textContent(), /^Step 7 of 10: Weights = softmax/);
  const { m, n } = { m: library.targetIds.length, n: sourceIds.length };
  // The table shows its first 16 rows (maxRows) of the m target rows, every source column.
  const weights = await stepTable('weights');
  const rows = Math.min(m, 16);
  assert.deepEqual([weights.length, weights[0].length], [rows, n]);
  assertClose(weights.flat(), Array.from(expected.weights.subarray(0, rows * n)), 6e-5, 'cross-attention weights, head 1');
  for (const row of weights) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < n * 6e-5, 'a shown row (4 decimals) sums to 1');
  await next.click();
  await next.click();
  await next.click();
  assert.match(await page.locator('#step .step-sentence').textContent(), /the self-attention's, and the MLP's/);
  assert.deepEqual(session.errors, [], 'no console errors');
});

test('the value-weighted switch draws each kind\'s model.analyze value-weighted attention', async () => {
  await page.locator('button[data-view="heatmap"]').click();
  await page.locator('#value-weighted').check();
  await waitForResult(page, 'window.attnlens.last.quantity === "valueWeighted" && window.attnlens.last.attentionKind === "cross"');
  const { analysis } = library;
  const shown = async () => page.evaluate(() => Array.from(window.attnlens.last.weights));
  assertClose(await shown(), Array.from(analysis.crossValueWeighted), 1e-6, 'cross-attention, value-weighted');
  const kind = page.locator('#attention-kind');
  await kind.selectOption('decoder');
  await waitForResult(page, 'window.attnlens.last.attentionKind === "decoder"');
  assertClose(await shown(), Array.from(analysis.decoderValueWeighted), 1e-6, 'decoder self-attention, value-weighted');
  await kind.selectOption('encoder');
  await waitForResult(page, 'window.attnlens.last.attentionKind === "encoder"');
  assertClose(await shown(), Array.from(analysis.valueWeighted), 1e-6, 'encoder self-attention, value-weighted');
  await page.locator('#value-weighted').uncheck();
  await waitForResult(page, 'window.attnlens.last.quantity === "weights"');
});

test('the Analysis tab shows the encoder\'s or the decoder\'s detectors and rollout, equal to model.analyze', async () => {
  const { analysis } = library;
  await page.locator('#attention-kind').selectOption('encoder');
  await page.getByRole('button', { name: 'Analysis', exact: true }).click();
  const shown = (kind) => page.waitForFunction((wanted) => window.attnlens.analysis?.kind === wanted, kind, { timeout: 20_000 })
    .then(() => page.evaluate(() => {
      const { tokens, n, layers, scores, rollout } = window.attnlens.analysis;
      return { tokens, n, layers, rollout: Array.from(rollout), scores: Object.fromEntries(Object.entries(scores).map(([name, values]) => [name, Array.from(values)])) };
    }));
  const encoder = await shown('encoder');
  assert.deepEqual([encoder.n, encoder.layers], [analysis.n, analysis.layers]);
  for (const [name, values] of Object.entries(analysis.scores)) assertClose(encoder.scores[name], Array.from(values), 1e-6, `encoder ${name}`);
  assertClose(encoder.rollout, Array.from(analysis.rollout), 1e-6, 'encoder rollout');
  assert.ok(encoder.scores.duplicateToken.some((score) => score > 0), 'the source repeats tokens');
  assert.match(await page.locator('#analysis-status').textContent(), /^2 encoder layers × 2 heads/);

  await page.locator('#attention-kind').selectOption('decoder');
  const decoder = await shown('decoder');
  assert.deepEqual([decoder.n, decoder.layers], [analysis.m, analysis.decoderLayers]);
  assert.deepEqual(decoder.tokens, analysis.targetTokens);
  for (const [name, values] of Object.entries(analysis.decoderScores)) assertClose(decoder.scores[name], Array.from(values), 1e-6, `decoder ${name}`);
  assertClose(decoder.rollout, Array.from(analysis.decoderRollout), 1e-6, 'decoder rollout');
  assertRowsSumToOne(decoder.rollout, analysis.decoderLayers * analysis.m, analysis.m, 'decoder rollout');

  // The logit lens is the decoder's, over the target's positions (fewer than the section's 32 columns).
  await page.locator('#logit-lens-section summary').click();
  await page.waitForFunction(() => window.attnlens.logitLens?.logitLens, null, { timeout: 20_000 });
  const lens = await page.evaluate(() => {
    const { tokens, layers, logitLens } = window.attnlens.logitLens;
    return { tokens, layers, ids: Array.from(logitLens.ids), probs: Array.from(logitLens.probs) };
  });
  assert.deepEqual([lens.tokens, lens.layers], [analysis.targetTokens, analysis.decoderLayers]);
  assert.deepEqual(lens.ids, Array.from(analysis.logitLens.ids), 'the decoder\'s logit lens');
  assertClose(lens.probs, Array.from(analysis.logitLens.probs), 1e-6, 'logit lens probabilities');
  assert.deepEqual(session.errors, [], 'no console errors');
});
