// The page's Analysis tab (issue 25), in Debian's headless Chromium against
// the BUILT page with its built-in tiny-english: every head's detector scores
// and the rollout equal model.analyze of the same folder in this Node process,
// rollout rows sum to 1, typing re-measures, induction on repeated random
// tokens equals model.inductionScores, the layer control picks the rollout's
// layer, the keyboard reaches and reads everything, the CSV export holds the
// scores, a share link restores the tab, and random projections say the
// analyses need a trained model.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { before, describe, test } from 'node:test';
import { assertClose, assertRowsSumToOne, openPageWithReferenceAroundTests, typeSentence, waitForResult } from './page-fixture.mjs';

const detectors = ['previousToken', 'firstToken', 'currentToken', 'duplicateToken', 'induction'];
const sentence = 'the cat sat on the mat because the cat was tired';

let reference; // tiny-english loaded by the library in Node
let session;
let page;
openPageWithReferenceAroundTests((opened) => ({ reference, session, page } = opened));

function assertQuiet() {
  assert.deepEqual(session.errors, [], 'console errors or uncaught exceptions in the page');
  assert.deepEqual(session.dialogs, [], 'the page opened a dialog');
}

// Waits until the tab shows the analysis of `text`, and returns it as plain data.
async function shownAnalysis(target, text) {
  const expected = reference.analyze({ text });
  await target.waitForFunction((tokens) => JSON.stringify(window.attnlens.analysis?.tokens) === tokens, JSON.stringify(expected.tokens), { timeout: 20_000 });
  const shown = await target.evaluate(() => {
    const { tokens, n, layers, heads, scores, rollout, induction } = window.attnlens.analysis;
    return {
      tokens, n, layers, heads, rollout: Array.from(rollout), induction: induction && Array.from(induction),
      scores: Object.fromEntries(Object.entries(scores).map(([name, values]) => [name, Array.from(values)])),
    };
  });
  return { shown, expected };
}

function assertSameAnalysis({ shown, expected }, where) {
  assert.equal(shown.n, expected.n, `${where}: tokens`);
  for (const name of detectors) assertClose(shown.scores[name], expected.scores[name], 1e-6, `${where}: ${name}`);
  assertClose(shown.rollout, expected.rollout, 1e-6, `${where}: rollout`);
  for (let layer = 0; layer < shown.layers; layer += 1) {
    const size = shown.n * shown.n;
    assertRowsSumToOne(shown.rollout.slice(layer * size, (layer + 1) * size), shown.n, shown.n, `${where}: rollout after layer ${layer + 1}`);
  }
}

// What the grids show: the rounded value of each cell, per score, in [layer * heads + head] order.
function gridValues(target) {
  return target.evaluate(() => Object.fromEntries([...document.querySelectorAll('#head-scores table[data-score]')]
    .map((table) => [table.dataset.score, [...table.tBodies[0].querySelectorAll('td')].map((td) => Number(td.textContent))])));
}

describe('the Analysis tab with tiny-english', () => {
  before(async () => {
    await session.goto('', { builtinModel: true });
    await waitForResult(page, 'window.attnlens.last.model !== null');
  });

  test('shows every head\'s scores and the rollout, equal to model.analyze in Node; rows sum to 1', async () => {
    await typeSentence(page, sentence);
    await page.getByRole('button', { name: 'Analysis', exact: true }).click();
    const analysis = await shownAnalysis(page, sentence);
    assertSameAnalysis(analysis, 'the tab');
    const { layers, heads } = reference.info;
    const grids = await gridValues(page);
    assert.deepEqual(Object.keys(grids), detectors, 'one grid per detector, in the library\'s order');
    for (const name of detectors) assertClose(grids[name], analysis.expected.scores[name], 0.0006, `the ${name} grid as printed`);
    // The known head: layer 1, head 2 (from 1) is tiny-english's previous-token head.
    const best = analysis.shown.scores.previousToken.indexOf(Math.max(...analysis.shown.scores.previousToken));
    assert.deepEqual([Math.floor(best / heads), best % heads], [0, 1]);
    assert.equal(grids.previousToken.length, layers * heads);
    // An explanation beside every score, in words.
    const explained = await page.locator('.score-help dt').allTextContents();
    assert.deepEqual(explained.slice(0, 5), ['previous token', 'first token', 'current token', 'duplicate token', 'induction']);
    assert.equal(await page.locator('#rollout canvas').count(), 1);
    assert.equal(await page.locator('#head').isDisabled(), true, 'the head control does not apply here');
    assertQuiet();
  });

  test('typing re-measures the new sentence', async () => {
    const text = 'a dog ran to a dog and a dog ran';
    await typeSentence(page, text);
    assertSameAnalysis(await shownAnalysis(page, text), 'after typing');
    await page.waitForFunction(() => /on 1\d tokens\.$/.test(document.getElementById('analysis-status').textContent));
    await typeSentence(page, sentence);
    await shownAnalysis(page, sentence);
  });

  test('the layer control chooses the rollout\'s layer; the rollout heatmap reads exact values by keyboard', async () => {
    const { shown } = await shownAnalysis(page, sentence);
    await page.locator('#layer').selectOption('3');
    const canvas = page.locator('#rollout canvas');
    await page.waitForFunction(() => /after layer 3 of 4/.test(document.querySelector('#rollout canvas').getAttribute('aria-label') ?? ''));
    await canvas.focus();
    await page.keyboard.press('ArrowDown');
    const readout = await page.locator('#readout').textContent();
    const match = readout.match(/weight ([\d.]+)/);
    assert.ok(match, readout);
    // The focused cell's value is one of layer 3's rollout (query 1 or 0, from 0): within print precision.
    const size = shown.n * shown.n;
    const layer3 = shown.rollout.slice(2 * size, 3 * size);
    assert.ok(layer3.some((value) => Math.abs(value - Number(match[1])) < 1e-4), `${match[1]} is a value of layer 3's rollout`);
    await page.locator('#layer').selectOption('1');
  });

  test('induction on repeated random tokens: a button, equal to model.inductionScores in Node', async () => {
    const button = page.getByRole('button', { name: 'Measure induction on repeated random tokens' });
    assert.match(await page.locator('#induction-help').textContent(), /random tokens twice over/);
    await button.click();
    await page.waitForFunction(() => window.attnlens.analysis?.induction !== null && document.querySelector('#head-scores table[data-score="inductionOnRepeats"]'));
    const induction = await page.evaluate(() => Array.from(window.attnlens.analysis.induction));
    assertClose(induction, reference.inductionScores({ length: 50, seed: 1 }), 1e-6, 'induction on repeats');
    // It stays while the sentence changes (it does not depend on it).
    await typeSentence(page, 'the old man');
    await shownAnalysis(page, 'the old man');
    assert.ok(await page.locator('#head-scores table[data-score="inductionOnRepeats"]').count() === 1);
    await typeSentence(page, sentence);
    await shownAnalysis(page, sentence);
  });

  test('the keyboard reaches the tab, the grids, the sort buttons, the induction button and the rollout', async () => {
    const wanted = ['analysis', 'measure-induction', 'score-cell', 'sort', 'rollout'];
    const reached = new Set();
    await page.locator('#sentence').focus();
    for (let press = 0; press < 120 && reached.size < wanted.length; press += 1) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const element = document.activeElement;
        const style = getComputedStyle(element);
        const id = element.dataset.view ?? (element.closest('#head-scores [data-score] tbody') ? 'score-cell'
          : element.dataset.sort ? 'sort' : element.closest('#rollout') ? 'rollout' : element.id);
        return { id, ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 };
      });
      if (!wanted.includes(focused.id) || reached.has(focused.id)) continue;
      assert.ok(focused.ring, `no visible focus ring on ${focused.id}`);
      reached.add(focused.id);
      if (focused.id === 'score-cell') {
        // A focused cell reads its value; the arrow keys move to the next head.
        await page.keyboard.press('ArrowRight');
        assert.match(await page.locator('#head-scores .attnlens-readout').textContent(), /^previous token, layer 1 head 2: 0\.\d{3}$/);
      }
    }
    assert.deepEqual(wanted.filter((id) => !reached.has(id)), [], 'controls Tab never reached');
    assertQuiet();
  });

  test('Export CSV writes the scores of every head; Export JSON the scores and the rollout', async () => {
    const expected = reference.analyze({ text: sentence });
    const downloadOf = async (name) => {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name }).click()]);
      return { name: download.suggestedFilename(), text: (await readFile(await download.path())).toString('utf8') };
    };
    const csv = await downloadOf('Export CSV');
    assert.equal(csv.name, 'attnlens-head-scores.csv');
    const [header, ...rows] = csv.text.trim().split('\n').map((line) => line.split(','));
    assert.deepEqual(header, ['layer', 'head', ...detectors, 'inductionOnRepeats']);
    assert.equal(rows.length, reference.info.layers * reference.info.heads);
    for (const [layer, head, ...values] of rows) {
      const index = Number(layer) * reference.info.heads + Number(head);
      detectors.forEach((name, column) => assert.ok(Math.abs(Number(values[column]) - expected.scores[name][index]) < 1e-6, `${name} of ${layer},${head}`));
    }
    const json = JSON.parse((await downloadOf('Export JSON')).text);
    assert.deepEqual(json.tokens, expected.tokens);
    assert.ok(Math.abs(json.scores.previousToken[0][1] - expected.scores.previousToken[1]) < 1e-6);
    assertClose(json.rollout.flat(2), expected.rollout, 1e-6, 'the JSON\'s rollout');
  });

  test('the logit lens: closed until opened (by keyboard), then its last layer is model.run\'s top prediction in Node', async () => {
    const section = page.locator('#logit-lens-section');
    assert.equal(await section.evaluate((details) => details.open), false, 'collapsed by default');
    assert.equal(await page.evaluate(() => window.attnlens.logitLens), undefined, 'not computed while closed');
    assert.match(await section.locator('.panel-help').textContent(), /would predict .* if the model stopped there/);
    await section.locator('summary').focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction((n) => window.attnlens.logitLens?.n === n && document.querySelectorAll('#logit-lens tbody td').length > 0,
      reference.analyze({ text: sentence }).n, { timeout: 20_000 });
    const { layers, n, ids } = await page.evaluate(() => ({ ...window.attnlens.logitLens, ids: Array.from(window.attnlens.logitLens.logitLens.ids) }));
    const topK = ids.length / (layers * n);
    const { logits } = reference.run({ text: sentence });
    const vocab = logits.length / n;
    const argmax = Array.from({ length: n }, (_, position) => {
      const row = logits.subarray(position * vocab, (position + 1) * vocab);
      return row.indexOf(Math.max(...row));
    });
    assert.deepEqual(Array.from({ length: n }, (_, position) => ids[((layers - 1) * n + position) * topK]), argmax, 'the last layer is the model\'s own prediction');
    const lastRow = await page.locator('#logit-lens tbody tr').last().locator('.attnlens-lens-token').allTextContents();
    assert.deepEqual(lastRow, argmax.map((id) => reference.decode([id]).replace(/ /g, '␣')));
    assert.equal(await page.locator('#logit-lens tbody tr').count(), reference.info.layers);
    // The keyboard reaches the grid; a focused cell reads its top five; the arrow keys move.
    for (let press = 0; press < 5 && !(await page.evaluate(() => document.activeElement.closest('#logit-lens td'))); press += 1) await page.keyboard.press('Tab');
    assert.ok(await page.evaluate(() => document.activeElement.closest('#logit-lens tbody td')), 'Tab reaches the lens grid');
    await page.keyboard.press('ArrowDown');
    const readout = await page.locator('#logit-lens .attnlens-readout').textContent();
    assert.match(readout, /^Layer 2, after the: /);
    assert.equal(readout.split(', ').length >= 5, true, readout);
    // Typing re-asks for the open lens.
    await typeSentence(page, 'the old man');
    await page.waitForFunction(() => window.attnlens.logitLens?.text === 'the old man', undefined, { timeout: 20_000 });
    // A text longer than the grid's 32 columns: the lens of its last 32 positions only (logitLens: { positions }).
    const long = Array.from({ length: 10 }, () => 'the old man sat').join(' ');
    const longN = reference.tokenize(long).ids.length;
    assert.ok(longN > 32 && longN <= reference.info.maxPositions, `${longN} tokens`);
    await typeSentence(page, long);
    await page.waitForFunction((text) => window.attnlens.logitLens?.text === text, long, { timeout: 20_000 });
    const shown = await page.evaluate(() => ({ n: window.attnlens.logitLens.n, positions: Array.from(window.attnlens.logitLens.logitLens.positions),
      ids: Array.from(window.attnlens.logitLens.logitLens.ids), columns: document.querySelectorAll('#logit-lens thead th').length }));
    assert.deepEqual(shown.positions, Array.from({ length: 32 }, (_, i) => longN - 32 + i));
    assert.equal(shown.columns, 32);
    const longLogits = reference.run({ text: long }).logits;
    const lastLayer = (reference.info.layers - 1) * 32 * 5;
    for (const [column, position] of shown.positions.entries()) {
      const row = longLogits.subarray(position * vocab, (position + 1) * vocab);
      assert.equal(shown.ids[lastLayer + column * 5], row.indexOf(Math.max(...row)), `position ${position}: the model's own prediction`);
    }
    assert.match(await page.locator('#logit-lens-status').textContent(), new RegExp(`the last 32 of ${longN} positions`));
    await typeSentence(page, sentence);
    await page.waitForFunction((text) => window.attnlens.logitLens?.text === text, sentence, { timeout: 20_000 });
    await section.locator('summary').click();
    assertQuiet();
  });

  test('on a 390 px phone the tab never scrolls sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.waitForTimeout(100);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `the page is ${width} px wide on a 390 px phone`);
      assert.equal(await page.locator('#head-scores table[data-score]').count() >= 5, true);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  test('the share link restores the Analysis tab and its layer in a fresh page', async () => {
    await page.locator('#layer').selectOption('2');
    await page.waitForFunction(() => /view=analysis/.test(document.getElementById('share-url').value) && /layer=2/.test(document.getElementById('share-url').value));
    const link = await page.locator('#share-url').inputValue();
    const fresh = await session.context.newPage();
    try {
      await fresh.goto(link);
      assertSameAnalysis(await shownAnalysis(fresh, sentence), 'the restored tab');
      assert.equal(await fresh.locator('#panel-analysis').isVisible(), true);
      assert.equal(await fresh.getByRole('button', { name: 'Analysis', exact: true }).getAttribute('aria-pressed'), 'true');
      assert.equal(await fresh.locator('#layer').inputValue(), '2');
      await fresh.waitForFunction(() => /after layer 2 of 4/.test(document.querySelector('#rollout canvas')?.getAttribute('aria-label') ?? ''));
    } finally {
      await fresh.close();
      await page.locator('#layer').selectOption('1');
    }
    assertQuiet();
  });
});

describe('with random projections', () => {
  test('the tab says analyses need a trained model, and one button opens tiny-english', async () => {
    await session.goto('#view=analysis');
    const message = page.locator('#analysis-needs-model');
    await message.waitFor();
    assert.match(await message.textContent(), /Analyses need a trained model/);
    assert.equal(await page.locator('#analysis-body').isHidden(), true);
    assert.equal(await page.evaluate(() => window.attnlens.analysis), undefined, 'nothing was measured');
    await page.getByRole('button', { name: 'Use the trained model' }).click();
    await waitForResult(page, 'window.attnlens.last.model !== null');
    const text = await page.locator('#sentence').inputValue();
    assertSameAnalysis(await shownAnalysis(page, text), 'after choosing the trained model');
    assert.equal(await message.isHidden(), true);
    assertQuiet();
  });
});
