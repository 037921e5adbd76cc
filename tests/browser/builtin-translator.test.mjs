// The page's built-in translator (issue 23), in Debian's headless Chromium against the BUILT page:
// web/models/tiny-translator, offered beside tiny-english under "Built in", opens on a date, translates
// it and draws its cross-attention (target rows, source columns); the generated tokens and every kind
// of attention equal the library's in this Node process on the same folder (1e-6); a link selects it;
// (the one-file offline page translates too: offline.test.mjs).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { translate } from '../../web/elements/translate.js';
import { load } from '../../web/lib/node.js';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { loadModelFolder } from '../support/model-folder.mjs';
import { assertClose, assertRowsSumToOne, canvasInk, ensureBuilt, openBuiltinPage, openPage, openPageAroundTests, waitForResult } from './page-fixture.mjs';

const folder = join(repoRoot, 'web', 'models', 'tiny-translator');
const firstDate = 'the third of March, 2021'; // what the page offers when the translator opens

let model; // tiny-translator loaded by the library in Node

before(async () => {
  ensureBuilt();
  model = await loadModelFolder(await load(), folder);
});

after(() => model?.dispose());

// The library's translation of `text`, computed here without the page's helper: greedy decoding,
// then one run over the source and the decoder's inputs (the start id and every generated token).
function expected(text) {
  const generated = model.generate({ text, maxTokens: 32 });
  const run = model.run({ ids: generated.sourceIds, targetIds: [model.info.decoderStartId, ...generated.ids] });
  return { generated, run };
}

function lastRun(page) {
  return page.evaluate(() => {
    const last = window.attnlens.last;
    return { ...last, weights: Array.from(last.weights), model: null, modelType: last.model?.modelType };
  });
}

// Waits for the page's translation of `text`: its source ids are the library's.
const translated = (page, text) => waitForResult(page, `window.attnlens.last.generated && JSON.stringify(Array.from(window.attnlens.last.ids)) === ${
  JSON.stringify(JSON.stringify(Array.from(expected(text).run.ids)))}`);

async function translateOnPage(page, text) {
  await page.locator('#sentence').fill(text);
  await page.locator('#sentence').press('Enter');
  await translated(page, text);
}

// The page's cross-attention, generated tokens and translation equal the library's for `text`.
async function assertTranslation(page, text, where) {
  const { generated, run } = expected(text);
  const last = await lastRun(page);
  assert.equal(last.modelType, 'bart', `${where}: the translator is shown`);
  assert.equal(last.attentionKind, 'cross', `${where}: cross-attention`);
  assert.deepEqual(last.generated.ids, Array.from(generated.ids), `${where}: generated ids`);
  assert.deepEqual(last.tokens, run.targetTokens, `${where}: target tokens as rows`);
  assert.deepEqual(last.keyTokens, run.tokens, `${where}: source tokens as columns`);
  assert.equal(last.layers, model.info.decoderLayers);
  assertClose(last.weights, Array.from(run.crossAttention), 1e-6, `${where}: cross-attention`);
  assertRowsSumToOne(last.weights, model.info.decoderLayers * run.heads * run.m, run.n, `${where}: cross-attention`);
  assert.equal(await page.locator('#translation-text').textContent(), generated.text, `${where}: the translation`);
  return { generated, run };
}

describe('the page', () => {
  let session;
  openPageAroundTests((opened) => { session = opened; }, { open: openBuiltinPage });

  test('offers tiny-translator beside tiny-english; by keyboard it opens on a date, translates it and draws cross-attention', async () => {
    const { page } = session;
    const builtins = page.getByRole('group', { name: /^Built in/ });
    assert.deepEqual(await builtins.getByRole('button').allTextContents(), ['tiny-english', 'tiny-english-2', 'tiny-translator']);
    assert.equal(await builtins.getByRole('button', { name: 'tiny-english', exact: true }).getAttribute('aria-pressed'), 'true');
    const button = builtins.getByRole('button', { name: 'tiny-translator' });
    await button.focus();
    await page.keyboard.press('Enter');
    await translated(page, firstDate);
    assert.equal(await page.locator('#model-name').textContent(), 'tiny-translator');
    assert.equal(await button.getAttribute('aria-pressed'), 'true');
    assert.equal(await page.locator('#sentence').inputValue(), firstDate);
    assert.equal(await page.locator('#sentence-label').textContent(), 'Source');
    // It opens on its alignment head (web/docs/tiny-translator.md): layer 2, head 2 as the page counts.
    assert.deepEqual([await page.locator('#layer').inputValue(), await page.locator('#head').inputValue()], ['2', '2']);
    assert.equal(await page.locator('#translator-note').isVisible(), true);
    assert.match(await page.locator('#model-info').textContent(), /^tiny-translator: BART, 2 encoder \+ 2 decoder layers × 4 heads, d_model 96, 599\.3 K parameters \(F16\), byte-level BPE tokenizer/);
    assert.equal(await page.locator('#builtin-note').isHidden(), true);
    const { generated, run } = await assertTranslation(page, firstDate, 'first date');
    assert.equal(generated.text, '2021-03-03', 'the model translates its example');
    assert.ok((await canvasInk(page, '#heatmap-canvas')).inked > 500, 'the heatmap is drawn');
    assert.match(await page.locator('#heatmap-canvas').getAttribute('aria-label'), new RegExp(`heatmap of ${run.m} query tokens by ${run.n} key tokens`));
    assert.deepEqual(session.errors, []);
  });

  test('a typed date: the page\'s translation and every kind of attention equal the library\'s', async () => {
    const { page } = session;
    const text = 'Tuesday, 14 Feb 1984';
    await translateOnPage(page, text);
    const { run } = await assertTranslation(page, text, 'typed date');
    await page.locator('#attention-kind').selectOption('encoder');
    await waitForResult(page, 'window.attnlens.last.attentionKind === "encoder"');
    assertClose((await lastRun(page)).weights, Array.from(run.attention), 1e-6, 'encoder self-attention');
    await page.locator('#attention-kind').selectOption('decoder');
    await waitForResult(page, 'window.attnlens.last.attentionKind === "decoder"');
    assertClose((await lastRun(page)).weights, Array.from(run.decoderAttention), 1e-6, 'decoder self-attention');
    await page.locator('#attention-kind').selectOption('cross');
    await waitForResult(page, 'window.attnlens.last.attentionKind === "cross"');
    // The page's translation is the library's shared helper's, which the test checked above against its own steps.
    const helper = translate(model, { text });
    assert.deepEqual(Array.from(helper.generated.ids), (await lastRun(page)).generated.ids);
  });

  test('the model\'s words are set as text, not HTML', async () => {
    const { page } = session;
    await translateOnPage(page, '<img src=x onerror="window.injected=1"> 3 May 2001');
    assert.equal(await page.evaluate(() => document.querySelectorAll('#translation img, #tokens img, #error img').length), 0);
    assert.equal(await page.evaluate(() => window.injected), undefined);
  });

  test('its link selects the built-in translator, with its date, layer, head and attention kind', async () => {
    const { page } = session;
    await translateOnPage(page, '2 June 1953');
    await page.locator('#layer').selectOption('1');
    await page.locator('#head').selectOption('3');
    await page.locator('#attention-kind').selectOption('encoder');
    await waitForResult(page, 'window.attnlens.last.attentionKind === "encoder"');
    const link = await page.locator('#share-url').inputValue();
    const params = new URLSearchParams(new URL(link).hash.slice(1));
    assert.equal(params.get('model'), 'tiny-translator');
    assert.equal(params.get('ak'), 'encoder');
    const fresh = await openPage({ url: link.split('#')[0] });
    try {
      await fresh.goto(new URL(link).hash, { builtinModel: true });
      await waitForResult(fresh.page, 'window.attnlens.last.generated && window.attnlens.last.attentionKind === "encoder"');
      assert.equal(await fresh.page.locator('#model-name').textContent(), 'tiny-translator');
      assert.equal(await fresh.page.locator('#sentence').inputValue(), '2 June 1953');
      assert.equal(await fresh.page.locator('#layer').inputValue(), '1');
      assert.equal(await fresh.page.locator('#head').inputValue(), '3');
      assertClose((await lastRun(fresh.page)).weights, Array.from(expected('2 June 1953').run.attention), 1e-6, 'linked encoder attention');
      assert.deepEqual(fresh.errors, []);
    } finally {
      await fresh.close();
    }
    // A link naming only the model opens it as its button does: on its own date and its alignment head (layer 2, head 2).
    const bare = await openPage({ url: link.split('#')[0] });
    try {
      await bare.goto('#model=tiny-translator', { builtinModel: true });
      await translated(bare.page, firstDate);
      assert.equal(await bare.page.locator('#sentence').inputValue(), firstDate);
      assert.deepEqual([await bare.page.locator('#layer').inputValue(), await bare.page.locator('#head').inputValue()], ['2', '2']);
      // A link naming the layer alone keeps the head the model opens on.
      await bare.goto('#model=tiny-translator&layer=1', { builtinModel: true });
      await translated(bare.page, firstDate);
      assert.deepEqual([await bare.page.locator('#layer').inputValue(), await bare.page.locator('#head').inputValue()], ['1', '2']);
      // The share link names the layer and head whenever they are not the ones it opens on, layer 1 head 1 included,
      // and leaves them out when they are.
      await bare.page.locator('#layer').selectOption('1');
      await bare.page.locator('#head').selectOption('1');
      await bare.page.waitForFunction(() => /[#&]head=1(&|$)/.test(document.getElementById('share-url').value));
      const firstHead = new URLSearchParams(new URL(await bare.page.locator('#share-url').inputValue()).hash.slice(1));
      assert.deepEqual([firstHead.get('layer'), firstHead.get('head')], ['1', '1']);
      await bare.goto(`#${firstHead}`, { builtinModel: true });
      await translated(bare.page, firstDate);
      assert.deepEqual([await bare.page.locator('#layer').inputValue(), await bare.page.locator('#head').inputValue()], ['1', '1']);
      await bare.page.locator('#layer').selectOption('2');
      await bare.page.locator('#head').selectOption('2');
      await bare.page.waitForFunction(() => !/[#&](layer|head)=/.test(document.getElementById('share-url').value));
      assert.deepEqual(bare.errors, []);
    } finally {
      await bare.close();
    }
  });

  test('tiny-english is one press away again, back on an English sentence', async () => {
    const { page } = session;
    await page.locator('#attention-kind').selectOption('cross');
    await translateOnPage(page, firstDate);
    await page.getByRole('button', { name: 'tiny-english', exact: true }).click();
    await waitForResult(page, 'window.attnlens.last.model?.modelType === "gpt2"');
    assert.equal(await page.locator('#translation').isHidden(), true);
    assert.notEqual(await page.locator('#sentence').inputValue(), firstDate);
    assert.equal(await page.locator('#builtin-note').isVisible(), true);
    assert.deepEqual(session.errors, []);
  });
});
