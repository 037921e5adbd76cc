// The page with a model whose layers hide keys outside a window: a tiny
// GPT-Neo (layer 1 global, layer 2 local with a window of 3) opened through
// the file input. The layer list says which layer is local and its window;
// the heatmap paints what the window hid in the hidden grey, and the table
// says "hidden" where the window hid a key ("hidden by the window").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { openPageAroundTests, typeSentence, waitForResult } from './page-fixture.mjs';

let session, page;
const checkpoint = tinyCheckpoint({ arch: 'gpt_neo', seed: 8 });

openPageAroundTests(async (opened) => {
  session = opened;
  page = opened.page;
  await session.goto();
});

// Pixels of the hidden grey (web/views/colors.js hiddenRgb) in a canvas.
const greyPixels = (selector) => page.evaluate((s) => {
  const canvas = document.querySelector(s);
  const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
  let grey = 0;
  for (let i = 0; i < data.length; i += 4) if (data[i] === 200 && data[i + 1] === 200 && data[i + 2] === 200) grey += 1;
  return grey;
}, selector);

test('a GPT-Neo model: the layer list names the local layer and its window; the window\'s hidden keys are drawn and read as hidden', async () => {
  await page.getByLabel(/^A trained model/).check();
  await page.locator('#model-files').setInputFiles([
    { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(checkpoint.files['config.json']) },
    { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from(checkpoint.files['model.safetensors']) },
  ]);
  // Loaded without a tokenizer, the model reads token ids.
  // Its first run (the prefilled text) fails without a tokenizer, so there is no result to wait for yet.
  await page.waitForFunction('/2 layers/.test(document.querySelector("#model-info").textContent)', null, { timeout: 20_000 });
  await typeSentence(page, '1 2 3 4 5 6 7');
  await waitForResult(page, 'window.attnlens.last?.layers === 2 && window.attnlens.last.tokens?.length === 7');
  assert.deepEqual(await page.locator('#layer option').allTextContents(), ['1 (global)', '2 (local, window 3)']);

  await page.locator('#layer').selectOption('1');
  await waitForResult(page, 'window.attnlens.last.layer === 0');
  const global = await greyPixels('#heatmap-canvas');
  await page.locator('#layer').selectOption('2');
  await waitForResult(page, 'window.attnlens.last.layer === 1');
  const local = await greyPixels('#heatmap-canvas');
  assert.ok(global > 1000, `the causal mask's cells are grey: ${global} pixels`);
  assert.ok(local > global * 1.2, `the window hides more on the local layer: ${local} grey pixels against ${global}`);

  await page.locator('#toggle-table').click();
  const row6 = await page.locator('#table-alternative tbody tr').nth(6).locator('td').evaluateAll((tds) => tds.map((td) => [td.textContent, td.title]));
  assert.deepEqual(row6.map(([text]) => text === 'hidden'), [true, true, true, true, false, false, false], 'query 7 sees keys 5-7');
  assert.equal(row6[0][1], 'hidden by the window');
  assert.deepEqual(session.errors, []);
});
