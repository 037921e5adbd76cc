// The one-file offline page (dist/attnlens-offline.html): opened from
// file:// with no server, it must compute the same numbers as the library
// and request nothing but itself and inline data; its built-in translator
// translates with the network blocked.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { load } from '../../web/lib/node.js';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { loadModelFolder } from '../support/model-folder.mjs';
import {
  assertClose, assertRowsSumToOne, lastResult, offlineFile, openOfflinePage, openPageAroundTests, typeSentence, waitForResult,
} from './page-fixture.mjs';

let session;
const requests = [];

openPageAroundTests(async (opened) => {
  session = opened;
  session.page.on('request', (request) => requests.push(request.url()));
  await session.goto();
}, { url: pathToFileURL(offlineFile).href });

test('the offline file is one self-contained HTML file with the WASM inlined', () => {
  const html = readFileSync(offlineFile, 'utf8');
  assert.doesNotMatch(html, /<script[^>]+\bsrc=/i, 'no external scripts');
  assert.doesNotMatch(html, /<link[^>]+rel="stylesheet"[^>]+href=/i, 'no external stylesheets');
  assert.doesNotMatch(html, /\b(src|href)="(https?:)?\/\//i, 'no network URLs');
  // The three WASM builds (relaxed SIMD, SIMD and the scalar fallback) travel inside the file, twice:
  // once for the page and once inside the model worker (a Blob at run time, which cannot share the
  // page's copy).
  assert.equal(html.match(/data:application\/wasm;base64,AGFzbQ/g)?.length, 6);
  // Each built-in model's files travel inside it once (the page hands them to the worker): most of its size.
  for (const name of ['tiny-english', 'tiny-english-2', 'tiny-translator']) {
    for (const file of ['model.safetensors', 'tokenizer.json', 'config.json']) {
      const inline = `data:application/${file.endsWith('.json') ? 'json' : 'octet-stream'};base64,${
        readFileSync(join(repoRoot, 'web', 'models', name, file)).toString('base64')}"`;
      assert.equal(html.split(inline).length - 1, 1, `${name}/${file} is inlined once`);
    }
  }
});

test('from file:// it computes the same weights as the library, requesting only itself and inline data', async () => {
  const { page } = session;
  const text = 'Offline pages still compute attention.';
  const lens = await load();
  const reference = lens.explainSentence({ text });
  await typeSentence(page, text, { tokens: reference.tokens });
  assertClose((await lastResult(page)).weights, reference.weights, 1e-6, 'offline page weights');
  // Playwright does not report data: URLs, so the file itself must be the only request.
  assert.deepEqual(requests.filter((url) => !/^(data|blob):/.test(url)), [pathToFileURL(offlineFile).href]);
  assert.deepEqual(session.errors, []);
});

test('from file:// the worked example steps show the known weights', async () => {
  const { page } = session;
  await page.getByRole('button', { name: 'Step by step', exact: true }).click();
  await page.getByRole('button', { name: /Load the worked example \(3 tokens/ }).click();
  await waitForResult(page, 'window.attnlens.last.tokens.length === 3');
  for (let step = 1; step < 7; step += 1) await page.getByRole('button', { name: 'Next →' }).click();
  const row = await page.locator('#step table tbody tr').first().locator('td').allTextContents();
  assert.deepEqual(row, ['0.3136', '0.3501', '0.3363']);
  assert.deepEqual(session.errors, []);
  assert.deepEqual(session.dialogs, []);
});

test('from file:// with the network blocked the built-in translator translates a date, with the library\'s tokens and cross-attention', async () => {
  const lens = await load();
  const model = await loadModelFolder(lens, join(repoRoot, 'web', 'models', 'tiny-translator'));
  const offline = await openOfflinePage();
  try {
    for (const [index, text] of ['the third of March, 2021', 'DECEMBER 12TH, 1999'].entries()) {
      const generated = model.generate({ text, maxTokens: 32 });
      const run = model.run({ ids: generated.sourceIds, targetIds: [model.info.decoderStartId, ...generated.ids] });
      if (index === 0) {
        await offline.goto('#model=tiny-translator', { builtinModel: true }); // opens on its own date
      } else {
        await offline.page.locator('#sentence').fill(text);
        await offline.page.locator('#sentence').press('Enter');
      }
      await waitForResult(offline.page, `window.attnlens.last.generated && JSON.stringify(Array.from(window.attnlens.last.ids)) === ${
        JSON.stringify(JSON.stringify(Array.from(run.ids)))}`);
      const last = await offline.page.evaluate(() => {
        const { generated: pageGenerated, tokens, keyTokens, weights } = window.attnlens.last;
        return { generated: pageGenerated, tokens, keyTokens, weights: Array.from(weights) };
      });
      assert.deepEqual(last.generated.ids, Array.from(generated.ids), `${text}: generated ids`);
      assert.deepEqual([last.tokens, last.keyTokens], [run.targetTokens, run.tokens], `${text}: target rows, source columns`);
      assertClose(last.weights, Array.from(run.crossAttention), 1e-6, `${text}: cross-attention`);
      assertRowsSumToOne(last.weights, model.info.decoderLayers * run.heads * run.m, run.n, `${text}: cross-attention`);
      assert.equal(await offline.page.locator('#translation-text').textContent(), generated.text);
      if (index === 0) assert.equal(generated.text, '2021-03-03');
    }
    assert.deepEqual(offline.blocked, []);
    assert.deepEqual(offline.requests(), [pathToFileURL(offlineFile).href]);
    assert.deepEqual(offline.errors, []);
  } finally {
    await offline.close();
    model.dispose();
  }
});
