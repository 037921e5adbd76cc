// A long translation on the page keeps only what it draws (issue 24), in headless Chromium against
// the BUILT page, with a tiny random Marian checkpoint of 512 positions written here and the library
// in this Node process as the reference. Its three kinds of attention pass 1 MiB, so the run that ends
// the translation brings the heatmap's one head of the kind shown (model.run's attention { kinds,
// layers, heads }); another kind or head comes from that run's headWeights (no forward), and the
// model view brings every kind. Every number drawn is the library's run over the same ids.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seq2seqCheckpoint } from '../support/model-reference-seq2seq.mjs';
import { idsFor } from '../wasm/model-checks.mjs';
import { assertClose, canvasInk, waitForResult } from './page-fixture.mjs';
import { lastShown, seq2seqPageForTests } from './seq2seq-page.mjs';

const checkpoint = seq2seqCheckpoint({ family: 'marian', seed: 7, max_position_embeddings: 512 });
// 300 source tokens (ids 3 and up: no special token): 2 heads x (2 x 300^2 + 2 x (m^2 + 300 m)) floats pass 2^18.
const sourceIds = idsFor(37, 300, 5).map((id) => id + 3);

const opened = seq2seqPageForTests(checkpoint, sourceIds);
const lastOf = () => lastShown(opened.page);

// One head of one kind of the reference run: [layer][head][rows][keys].
function headOf(kind, layer, head) {
  const { run } = opened.reference;
  const [array, rows, keys] = { encoder: [run.attention, run.n, run.n], decoder: [run.decoderAttention, run.m, run.m],
    cross: [run.crossAttention, run.m, run.n] }[kind];
  const index = layer * run.heads + head;
  return Array.from(array.subarray(index * rows * keys, (index + 1) * rows * keys));
}

test('the translation brings the heatmap\'s one head of the kind shown; another kind and head come without a forward', async () => {
  const { page } = opened;
  await page.locator('#sentence').evaluate((field, text) => { field.value = text; }, sourceIds.join(' '));
  await page.locator('#sentence').press('Enter');
  await waitForResult(page, `window.attnlens.last.generated && window.attnlens.last.ids.length === ${sourceIds.length}`);
  let last = await lastOf();
  assert.deepEqual(last.generated.ids, Array.from(opened.reference.generated.ids));
  assert.equal(last.attentionKind, 'cross');
  assert.deepEqual([last.attentionKinds, last.attentionHeads, last.attentionLayers.cross], [['cross'], [0], [0]]);
  assert.deepEqual([last.attentionLayers.encoder, last.attentionLayers.decoder], [[], []]);
  assert.equal(last.layers, opened.reference.info.decoderLayers);
  assertClose(last.weights, headOf('cross', 0, 0), 1e-5, 'cross-attention, layer 1, head 1');
  assert.ok((await canvasInk(page, '#heatmap-canvas')).inked > 500, 'the heatmap is drawn');

  // The encoder's head: fetched from the run the worker kept (headWeights), not a forward.
  await page.locator('#attention-kind').selectOption('encoder');
  await waitForResult(page, 'window.attnlens.last.attentionKind === "encoder" && (window.attnlens.last.attentionKinds || []).includes("encoder")');
  last = await lastOf();
  assert.deepEqual([last.attentionKinds, last.attentionHeads, last.fetchedWithForward], [['encoder'], [0], false]);
  assertClose(last.weights, headOf('encoder', 0, 0), 1e-5, 'encoder self-attention, layer 1, head 1');

  // The second head of the second layer.
  await page.locator('#head').selectOption('2');
  await page.locator('#layer').selectOption('2');
  await waitForResult(page, 'window.attnlens.last.layer === 1 && (window.attnlens.last.attentionHeads || []).includes(1) && window.attnlens.last.attentionLayers.encoder[0] === 1');
  last = await lastOf();
  assertClose(last.weights, headOf('encoder', 1, 1), 1e-5, 'encoder self-attention, layer 2, head 2');
  assert.equal(last.fetchedWithForward, false);
});

test('the model view brings every kind\'s every head, and draws the three grids', async () => {
  const { page } = opened;
  await page.locator('button[data-view="model"]').click();
  await waitForResult(page, '(window.attnlens.last.attentionKinds || []).length === 3');
  const sections = page.locator('#model-grid .model-kinds > section');
  await sections.nth(2).waitFor();
  for (let index = 0; index < 3; index += 1) {
    assert.ok((await canvasInk(page, `#model-grid .model-kinds > section >> nth=${index} >> canvas >> nth=0`)).inked > 200, `grid ${index} has ink`);
  }
  // Back to the heatmap of cross-attention: the run now holds it (in full, or pooled and fetched again).
  await page.locator('#attention-kind').selectOption('cross');
  await page.locator('button[data-view="heatmap"]').click();
  await waitForResult(page, 'window.attnlens.last.attentionKind === "cross" && window.attnlens.last.layer === 1');
  await page.waitForFunction(() => (window.attnlens.last.attentionPool ?? 1) === 1);
  const last = await lastOf();
  const { heads, m, n } = opened.reference.run, size = m * n;
  // Every layer's heads (the run holds every kind in full), or the one head fetched: the shown head is the library's.
  const shown = last.weights.length === size ? last.weights : last.weights.slice((heads + 1) * size, (heads + 2) * size);
  assertClose(shown, headOf('cross', 1, 1), 1e-5, 'cross-attention, layer 2, head 2');
  assert.deepEqual(opened.session.errors, [], 'no console errors');
});
