// The page's weights / value-weighted switch (issue 25), in headless Chromium
// against the BUILT page with its built-in tiny-english: switching it on makes
// every view draw model.analyze's valueWeighted of the same text computed
// here in Node (the heatmap's numbers, read by keyboard, too), rows still sum
// to 1, the titles and the legend say "value-weighted", the share link and the
// exports carry it, and switching it off brings back model.run's weights.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { before, describe, test } from 'node:test';
import { assertClose, assertRowsSumToOne, openPageWithReferenceAroundTests, typeSentence, waitForResult } from './page-fixture.mjs';

const sentence = 'the old man saw the river and the old boat';
// The page runs the engine Chromium picks (relaxed SIMD's fused multiply-add), Node the plain SIMD one:
// the same float32 arithmetic but for rounding.
const tolerance = 1e-5;

let reference; // tiny-english loaded by the library in Node
let session;
let page;
openPageWithReferenceAroundTests((opened) => ({ reference, session, page } = opened));

// Waits until the page draws `quantity` of the sentence, and returns what it draws.
async function drawn(quantity) {
  await waitForResult(page, `window.attnlens.last.quantity === '${quantity}' && window.attnlens.last.tokens.length === ${reference.run({ text: sentence }).n}`);
  return page.evaluate(() => {
    const { tokens, layers, heads, weights, quantity: shown } = window.attnlens.last;
    return { tokens, layers, heads, weights: Array.from(weights), quantity: shown };
  });
}

// The focused heatmap cell's readout: its row, column and the number printed.
async function readCell() {
  const text = await page.locator('#readout').textContent();
  const match = text.match(/\(#(\d+)\) → key .* \(#(\d+)\): weight ([\d.e-]+)/);
  assert.ok(match, text);
  return { row: Number(match[1]), col: Number(match[2]), value: Number(match[3]) };
}

describe('the value-weighted switch with tiny-english', () => {
  before(async () => {
    await session.goto('', { builtinModel: true });
    await waitForResult(page, 'window.attnlens.last.model !== null');
    await typeSentence(page, sentence);
  });

  test('on: every view draws model.analyze\'s valueWeighted (rows sum to 1), labelled; off: the weights again', async () => {
    const expected = reference.analyze({ text: sentence, logitLens: false });
    const raw = reference.run({ text: sentence }).attention;
    const before = await drawn('weights');
    assertClose(before.weights, raw, tolerance, 'the weights before switching');
    const control = page.getByRole('checkbox', { name: 'value-weighted' });
    assert.match(await page.locator('#weighting-help').textContent(), /Kobayashi et al\., 2020/);
    // By keyboard: focus and Space.
    await control.focus();
    await page.keyboard.press('Space');
    const after = await drawn('valueWeighted');
    assertClose(after.weights, expected.valueWeighted, tolerance, 'the value-weighted attention drawn');
    const { n } = expected;
    for (let block = 0; block < expected.layers * expected.heads; block += 1) {
      assertRowsSumToOne(after.weights.slice(block * n * n, (block + 1) * n * n), n, n, `head block ${block}`);
    }
    // It really changes the picture: some head's numbers move by more than rounding.
    assert.ok(after.weights.some((value, index) => Math.abs(value - raw[index]) > 0.05), 'value-weighted differs from the weights');

    // The heatmap's numbers, as the keyboard reads them: layer 1, head 1.
    const canvas = page.locator('#heatmap-canvas');
    assert.match(await canvas.getAttribute('aria-label'), /value-weighted/);
    await canvas.focus();
    for (const key of ['ArrowDown', 'ArrowDown', 'ArrowRight']) {
      await page.keyboard.press(key);
      const { row, col, value } = await readCell();
      assert.ok(Math.abs(value - expected.valueWeighted[row * n + col]) < tolerance, `cell ${row},${col}: ${value} vs ${expected.valueWeighted[row * n + col]}`);
    }

    // Every chart view says what it draws.
    for (const [view, selector] of [['Lines', '#lines-canvas'], ['Head average', '#average-canvas']]) {
      await page.getByRole('button', { name: view, exact: true }).click();
      await page.waitForFunction((s) => /value-weighted/.test(document.querySelector(s)?.getAttribute('aria-label') ?? ''), selector);
    }
    await page.getByRole('button', { name: 'All heads', exact: true }).click();
    await page.waitForFunction(() => /value-weighted 0/.test(document.querySelector('#multiples .attnlens-legend')?.getAttribute('aria-label') ?? ''));
    await page.getByRole('button', { name: 'Heatmap', exact: true }).click();

    // The share link restores it, and the exports name it.
    assert.match(await page.locator('#share-url').inputValue(), /[#&]vw=1(&|$)/);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    assert.equal(download.suggestedFilename(), 'attnlens-value-weighted-layer1.csv');
    const [header, first] = (await readFile(await download.path())).toString('utf8').split('\n');
    assert.equal(header, 'layer,head,query_index,query_token,key_index,key_token,value_weighted');
    assert.ok(Math.abs(Number(first.split(',').at(-1)) - expected.valueWeighted[0]) < tolerance, first);

    await control.press('Space');
    const back = await drawn('weights');
    assertClose(back.weights, raw, tolerance, 'the weights after switching back');
    assert.doesNotMatch(await canvas.getAttribute('aria-label'), /value-weighted/);
    assert.doesNotMatch(await page.locator('#share-url').inputValue(), /vw=/);
    assert.deepEqual(session.errors, [], 'console errors or uncaught exceptions in the page');
  });

  test('a link with vw=1 opens on the value-weighted attention', async () => {
    await session.goto(`#s=${encodeURIComponent(sentence)}&vw=1`, { builtinModel: true });
    const shown = await drawn('valueWeighted');
    assertClose(shown.weights, reference.analyze({ text: sentence, logitLens: false }).valueWeighted, tolerance, 'from the link');
    assert.equal(await page.getByRole('checkbox', { name: 'value-weighted' }).isChecked(), true);
  });
});
