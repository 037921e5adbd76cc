// The neuron view on the page (under Step by step), in headless Chromium
// against the BUILT page with its built-in tiny-english: for the head chosen
// in *head* and a query token picked by clicking it, a key's row reads q · k
// and the softmax weight of model.explain of the same layer computed here in
// Node, by keyboard.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openPageWithReferenceAroundTests, typeSentence, waitForResult } from './page-fixture.mjs';

const sentence = 'the old man saw the river';

let reference; // tiny-english loaded by the library in Node
let session;
let page;
openPageWithReferenceAroundTests((opened) => ({ reference, session, page } = opened));

test('Step by step shows the neuron view of the chosen head; a clicked query token and a focused key read model.explain\'s numbers', async () => {
  await session.goto('', { builtinModel: true });
  await waitForResult(page, 'window.attnlens.last.model !== null');
  await typeSentence(page, sentence);
  await page.getByRole('button', { name: 'Step by step', exact: true }).click();
  await page.locator('#head').selectOption('3');
  await page.waitForFunction(() => /head 3, query/.test(document.querySelector('#neuron caption')?.textContent ?? ''));
  const record = reference.explain({ text: sentence, layer: 0, head: 2 });
  const { n, heads, headWidth, scale, q, k, weights } = record;
  await page.locator('#neuron button[data-query="3"]').click();
  await page.waitForFunction(() => /query .* \(#3\)/.test(document.querySelector('#neuron caption').textContent));
  await page.locator('#neuron tbody th[scope=row]').first().focus();
  await page.keyboard.press('ArrowDown');
  const readout = await page.locator('#neuron .attnlens-readout').textContent();
  const width = heads * headWidth;
  let dot = 0;
  for (let t = 0; t < headWidth; t += 1) dot += q[3 * width + 2 * headWidth + t] * k[1 * width + 2 * headWidth + t];
  const match = readout.match(/\(#1\): q · k = (-?[\d.]+), × ([\d.]+) = (-?[\d.]+), softmax ([\d.]+)$/);
  assert.ok(match, readout);
  assert.ok(Math.abs(Number(match[1]) - dot) < 1e-3, `${match[1]} vs ${dot}`);
  assert.ok(Math.abs(Number(match[2]) - scale) < 1e-4);
  assert.ok(Math.abs(Number(match[3]) - dot * scale) < 1e-3);
  assert.ok(Math.abs(Number(match[4]) - weights[(2 * n + 3) * n + 1]) < 1e-4, `${match[4]} vs ${weights[(2 * n + 3) * n + 1]}`);
  assert.deepEqual(session.errors, []);
});
