// After the Analysis tab's analysis of a causal model (model.analyze through the
// queries, keys and values the model kept, which replaces the page's run there),
// the worker answers the text's next-token predictions and other heads from what
// the analysis kept (its result's computeLogits and layerWeights): no second
// model run, which the worker's answers say (`forward`, shown as
// window.attnlens.last.predictedWithForward and fetchedWithForward), and the
// same predictions and weights as the text's own run. In Debian's headless
// Chromium against the BUILT page: with tiny-english (every head held, so the
// predictions of a text typed in the tab), and with a random GPT-2 over 150
// token ids (one head held, so another head is fetched after the tab).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { load } from '../../web/lib/node.js';
import { assertClose, openPageWithReferenceAroundTests, typeSentence, waitForResult } from './page-fixture.mjs';
import { randomGpt2 } from './random-checkpoint.mjs';

const sentence = 'the cat sat on the mat because the cat was tired';
// The page's module fuses multiplies and adds (relaxed SIMD) where Node's does not: the last bits differ.
const tolerance = 1e-5;

let reference; // tiny-english loaded by the library in Node
let session;
let page;
openPageWithReferenceAroundTests((opened) => ({ reference, session, page } = opened));

// What the page shows of the model's run: its weights and predictions, and whether those needed a forward in the worker.
const shownRun = (target) => target.evaluate(() => {
  const { tokens, weights, predictions, predictedWithForward, fetchedWithForward, attentionLayers, attentionHeads } = window.attnlens.last;
  return { tokens, weights: Array.from(weights), predictions, predictedWithForward, fetchedWithForward, attentionLayers, attentionHeads };
});

const showView = (target, view) => target.locator(`button[data-view="${view}"]`).click();

// The runs drawn that were asked for after the page's clock read `since` (its performance.now()): typing a
// sentence asks twice (the input, then Enter), and the second run may be drawn after a check sees the first,
// so "no run for X" counts only runs asked for once X began.
const now = (target) => target.evaluate(() => performance.now());
const runsAskedSince = (target, since) => target.evaluate((from) =>
  performance.getEntriesByName('attnlens:model-drawn').filter((mark) => mark.detail.requestedAt >= from).length, since);

// Waits until the Analysis tab shows the analysis of `count` tokens.
const analysisShown = (target, count) => target.waitForFunction((n) => window.attnlens.analysis?.n === n, count, { timeout: 20_000 });

describe('tiny-english: a text typed in the Analysis tab', () => {
  before(async () => {
    await session.goto('', { builtinModel: true });
    await waitForResult(page, 'window.attnlens.last.model !== null');
  });

  test('gets its predictions from what the analysis kept, no model run, and the heatmap shows the run\'s weights', async () => {
    const expected = reference.run({ text: sentence });
    const ready = `window.attnlens.last.tokens.length === ${expected.n} && window.attnlens.last.predictions !== null`;
    await typeSentence(page, sentence);
    await waitForResult(page, ready);
    const first = await shownRun(page);
    assert.equal(first.predictedWithForward, false, 'right after the run, from what it kept');
    assertClose(first.weights, expected.attention, tolerance, 'the run\'s weights');

    // Another text, then the tab: the analysis replaces what the model kept of that text's run.
    const other = 'the old man';
    const otherN = reference.tokenize(other).ids.length;
    await typeSentence(page, other);
    await waitForResult(page, `window.attnlens.last.predictions !== null && window.attnlens.last.tokens.length === ${otherN}`);
    await showView(page, 'analysis');
    await analysisShown(page, otherN);

    // The sentence again, in the tab: its run, its analysis (asked for as soon as the run is shown), then its
    // predictions, which the worker computes after the analysis, from the run the analysis left kept.
    await typeSentence(page, sentence);
    await analysisShown(page, expected.n);
    await waitForResult(page, ready);
    const inTab = await shownRun(page);
    assert.equal(inTab.predictedWithForward, false, 'the predictions came from what the analysis kept: no model run');
    assert.deepEqual(inTab.predictions, first.predictions, 'the same predictions as right after the sentence\'s run');

    const switchedAt = await now(page);
    await showView(page, 'heatmap');
    await page.waitForFunction(() => document.querySelector('button[data-view="heatmap"]').getAttribute('aria-pressed') === 'true');
    const back = await shownRun(page);
    assert.deepEqual(back.weights, first.weights, 'the heatmap shows the weights it showed before the tab');
    assert.equal(await runsAskedSince(page, switchedAt), 0, 'no run for the heatmap');
    assert.deepEqual([session.errors, session.dialogs], [[], []]);
  });
});

describe('a random GPT-2 over 150 token ids (one head held): a head fetched after the Analysis tab', () => {
  const dims = { vocab: 512, positions: 256, width: 32, layers: 4, heads: 4, seed: 5 };
  const { config, weights } = randomGpt2(dims);
  const ids = Array.from({ length: 150 }, (_, i) => (i * 37 + 11) % dims.vocab);
  let model;
  before(async () => {
    model = await (await load()).loadModel({ config, weights });
  });
  after(() => model?.dispose());

  test('comes from what the analysis kept: no model run, the library\'s weights', async () => {
    await session.goto();
    await page.locator('#model-files').setInputFiles([
      { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(config)) },
      { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: weights },
    ]);
    // Token ids, typed as numbers: a model without a tokenizer reads "11 48 85 ...".
    await typeSentence(page, ids.join(' '));
    await waitForResult(page, `window.attnlens.last.model?.vocabSize === ${dims.vocab} && window.attnlens.last.tokens.length === ${ids.length}`
      + ' && window.attnlens.last.predictions !== null');
    const first = await shownRun(page);
    assert.deepEqual([first.attentionLayers, first.attentionHeads], [[0], [0]], 'the run brought the heatmap\'s head only');

    // The tab analyses the same ids through the kept cache: the run's kept methods are refused after it.
    await showView(page, 'analysis');
    await analysisShown(page, ids.length);
    const switchedAt = await now(page);
    await showView(page, 'heatmap');
    await page.locator('#head').selectOption('3');
    await waitForResult(page, 'window.attnlens.last.attentionHeads[0] === 2');
    const fetched = await shownRun(page);
    assert.equal(fetched.fetchedWithForward, false, 'the head came from what the analysis kept: no model run');
    assert.equal(await runsAskedSince(page, switchedAt), 0, 'no run drawn');
    const expected = model.run({ ids, logits: 'none', attention: { layers: [0], heads: [2] } }).attention;
    assertClose(fetched.weights, expected, tolerance, 'layer 1 head 3');
    // The head the run brought, again: the same weights as then.
    await page.locator('#head').selectOption('1');
    await waitForResult(page, 'window.attnlens.last.attentionHeads[0] === 0');
    const again = await shownRun(page);
    assert.equal(again.fetchedWithForward, false);
    assert.deepEqual(again.weights, first.weights, 'layer 1 head 1 as the run showed it');
    assert.deepEqual([session.errors, session.dialogs], [[], []]);
  });
});
