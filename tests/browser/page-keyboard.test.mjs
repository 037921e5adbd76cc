// The page driven from the keyboard, found by using the built page as its users
// do: the skip link, and the charts' hover tooltip, which Escape dismisses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openPageAroundTests, waitForResult } from './page-fixture.mjs';

let session;
openPageAroundTests((opened) => { session = opened; });

test('the skip link moves the keyboard to the views and leaves the address (the page\'s settings) as it was', async () => {
  const { page } = session;
  await session.goto('#s=A+short+sentence.&model=tiny-english-2', { builtinModel: true });
  await waitForResult(page, 'window.attnlens.last.model !== null');
  await page.waitForFunction(() => location.hash.includes('model=tiny-english-2'));
  const address = page.url();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to the views');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.view), 'heatmap', 'the next Tab reaches the first view button');
  assert.equal(page.url(), address, 'the address still holds the sentence and the model');
  await page.reload();
  await waitForResult(page, 'window.attnlens.last.model !== null');
  assert.equal(await page.getByRole('textbox', { name: /^Sentence/ }).inputValue(), 'A short sentence.');
  assert.deepEqual(session.errors, []);
});

test('a tooltip shown by hovering a heatmap goes with Escape, wherever the keyboard focus is', async () => {
  const { page } = session;
  await session.goto();
  await page.getByRole('textbox', { name: /^Sentence/ }).focus(); // typing, then pointing at the chart
  const canvas = page.locator('#heatmap-canvas');
  const box = await canvas.boundingBox();
  const { x, y, cell, cols } = await canvas.evaluate((element) => element.layout);
  await page.mouse.move(box.x + x + cell * (cols - 0.5), box.y + y + cell * 0.5);
  const tooltip = page.locator('#tooltip');
  await tooltip.waitFor({ state: 'visible' });
  await page.keyboard.press('Escape');
  await tooltip.waitFor({ state: 'hidden', timeout: 2000 });
  assert.equal(await page.evaluate(() => document.activeElement.id), 'sentence', 'the focus stays where it was');
  assert.deepEqual(session.errors, []);
});

test('step by step: pressing Next to the last step keeps the focus in the panel, where the arrow keys step back', async () => {
  const { page } = session;
  await session.goto('#view=steps');
  const next = page.getByRole('button', { name: 'Next →' });
  await next.focus();
  const title = () => page.locator('#step h3').textContent();
  for (let press = 0; press < 20 && !(await next.isDisabled()); press += 1) await page.keyboard.press('Enter');
  const last = await title();
  assert.match(last, /^Step (\d+) of \1\b/, 'the last step');
  assert.ok(await page.evaluate(() => document.getElementById('panel-steps').contains(document.activeElement)),
    `the focus is on ${await page.evaluate(() => document.activeElement.tagName)}, out of the steps panel`);
  await page.keyboard.press('ArrowLeft');
  assert.notEqual(await title(), last, 'ArrowLeft went back a step');
  assert.deepEqual(session.errors, []);
});

test('a built-in model opened from the keyboard keeps the focus on its button (disabled while it loads)', async () => {
  const { page } = session;
  await session.goto('#model=tiny-english-2', { builtinModel: true });
  await waitForResult(page, 'window.attnlens.last.model !== null');
  const button = page.getByRole('button', { name: 'tiny-english', exact: true });
  await button.focus();
  await page.keyboard.press('Enter');
  await page.locator('#cancel-load').waitFor({ state: 'hidden' }); // the load is over
  await page.waitForFunction(() => /^tiny-english ·/.test(document.getElementById('status').textContent));
  assert.equal(await page.evaluate(() => document.activeElement.dataset.builtin), 'tiny-english',
    `the focus is on ${await page.evaluate(() => document.activeElement.tagName)}`);
  assert.deepEqual(session.errors, []);
});

test('the Analysis tab\'s "Use the trained model", pressed from the keyboard, leaves the focus on the Analysis tab, not the page', async () => {
  const { page } = session;
  await session.goto('#view=analysis');
  const use = page.getByRole('button', { name: 'Use the trained model' });
  await use.focus();
  await page.keyboard.press('Enter');
  await page.locator('#analysis-body').waitFor({ state: 'visible' });
  await waitForResult(page, 'window.attnlens.last.model !== null');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.view), 'analysis',
    `the focus is on ${await page.evaluate(() => document.activeElement.tagName)}`);
  assert.deepEqual(session.errors, []);
});
