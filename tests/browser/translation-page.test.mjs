// An encoder-decoder on the page (issue 23), in Debian's headless Chromium, against the BUILT page:
// a tiny random BART checkpoint written here, opened through the file input. The page translates
// the source (model.generate in the worker, each token shown as it comes) and draws cross-attention
// (target tokens as rows, source tokens as columns), decoder and encoder self-attention; every number
// equals the library's generate and run on the same ids in this Node process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from '../../web/lib/node.js';
import { seq2seqCheckpoint } from '../support/model-reference-seq2seq.mjs';
import { tinyMarianFolder } from '../support/marian-folder.mjs';
import { t5Checkpoint } from '../support/model-reference-t5.mjs';
import { serveTestHub } from '../support/test-hub.mjs';
import { assertClose, assertRowsSumToOne, canvasInk, openPage, openPageAroundTests, waitForResult } from './page-fixture.mjs';
import { lastShown, openSeq2seqPage } from './seq2seq-page.mjs';

const checkpoint = seq2seqCheckpoint({ family: 'bart', seed: 7 });
const sourceIds = [3, 4, 5, 6, 7, 8];

let reference; // the library in Node: generate, then run over the source and the generated tokens
let session;
let page;
openPageAroundTests((opened) => ({ reference, session, page } = opened), { open: () => openSeq2seqPage(checkpoint, sourceIds) });

const lastOf = () => lastShown(page);

async function translate(text) {
  await page.locator('#sentence').fill(text);
  await page.locator('#sentence').press('Enter');
  await waitForResult(page, `window.attnlens.last.generated && JSON.stringify(window.attnlens.last.ids) === ${JSON.stringify(JSON.stringify(sourceIds))}`);
}

test('an encoder-decoder turns the sentence into a source box with Translate, and shows each generated token', async () => {
  assert.equal(await page.locator('#sentence-label').textContent(), 'Source');
  // The worker posts each token as generate chooses it: record the text after every change.
  await page.evaluate(() => {
    window.seenTranslations = [];
    new MutationObserver(() => window.seenTranslations.push(document.getElementById('translation-text').textContent))
      .observe(document.getElementById('translation-text'), { childList: true, characterData: true, subtree: true });
  });
  await translate(sourceIds.join(' '));
  const tokens = reference.generated.tokens;
  assert.equal(await page.locator('#translation-text').textContent(), tokens.join(' '));
  const seen = await page.evaluate(() => window.seenTranslations);
  // Every prefix of the generated tokens was on screen on the way (one token at a time).
  for (let k = 1; k <= tokens.length; k += 1) assert.ok(seen.includes(tokens.slice(0, k).join(' ')), `after token ${k}: ${JSON.stringify(seen)}`);
  assert.match(await page.locator('#translation-status').textContent(), new RegExp(`^translated · ${tokens.length} tokens? · [0-9.]+ ms$`));
  assert.match(await page.locator('#status').textContent(), new RegExp(`${sourceIds.length} source tokens → ${tokens.length} generated`));
  // Translate (a real button, reached by keyboard) translates again.
  await page.locator('#translate').focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('translation-status').textContent.startsWith('translated'));
});

test('cross-attention by default: target tokens as rows, source tokens as columns, the library\'s numbers', async () => {
  const { run, generated } = reference;
  const last = await lastOf();
  assert.equal(last.attentionKind, 'cross');
  assert.deepEqual(last.generated.ids, Array.from(generated.ids));
  assert.deepEqual(last.tokens, run.targetTokens);
  assert.deepEqual(last.keyTokens, run.tokens);
  assert.equal(last.layers, reference.info.decoderLayers);
  assertClose(last.weights, Array.from(run.crossAttention), 1e-6, 'cross-attention');
  assertRowsSumToOne(last.weights, reference.info.decoderLayers * run.heads * run.m, run.n, 'cross-attention');
  // generate's own cross-attention (the step that chose each token) is the same rows, less the last.
  const k = generated.ids.length;
  const firstRows = [];
  for (let block = 0; block < reference.info.decoderLayers * run.heads; block += 1) {
    firstRows.push(...last.weights.slice(block * run.m * run.n, (block * run.m + k) * run.n));
  }
  assertClose(firstRows, Array.from(generated.crossAttention), 1e-5, 'generate\'s cross-attention');
  assert.ok((await canvasInk(page, '#heatmap-canvas')).inked > 500, 'the heatmap is drawn');
  assert.equal(await page.locator('#attention-kind-control').isVisible(), true);
});

test('the attention choice draws decoder and encoder self-attention, in every view, and goes into the link', async () => {
  const { run } = reference;
  const kind = page.locator('#attention-kind');
  await kind.focus();
  await kind.selectOption('decoder');
  await waitForResult(page, 'window.attnlens.last.attentionKind === "decoder"');
  let last = await lastOf();
  assert.deepEqual(last.tokens, run.targetTokens);
  assert.deepEqual(last.keyTokens, run.targetTokens);
  assertClose(last.weights, Array.from(run.decoderAttention), 1e-6, 'decoder self-attention');
  assert.match(await page.locator('#share-url').inputValue(), /[#&]ak=decoder(&|$)/);

  await kind.selectOption('encoder');
  await waitForResult(page, 'window.attnlens.last.attentionKind === "encoder"');
  last = await lastOf();
  assert.deepEqual(last.tokens, run.tokens);
  assertClose(last.weights, Array.from(run.attention), 1e-6, 'encoder self-attention');

  await kind.selectOption('cross');
  await waitForResult(page, 'window.attnlens.last.attentionKind === "cross"');
  for (const view of ['lines', 'average']) {
    await page.locator(`button[data-view="${view}"]`).click();
    assert.ok((await canvasInk(page, `#${view}-canvas`)).inked > 200, `${view} draws cross-attention`);
  }
  // The model view: the three kinds side by side (BertViz's encoder-decoder model view), each every layer × head.
  await page.locator('button[data-view="model"]').click();
  const sections = page.locator('#model-grid .model-kinds > section');
  assert.deepEqual(await sections.evaluateAll((parts) => parts.map((part) => part.getAttribute('aria-label'))),
    ['Encoder self-attention', 'Decoder self-attention', 'Cross-attention (target × source)']);
  for (let index = 0; index < 3; index += 1) {
    assert.ok((await canvasInk(page, `#model-grid .model-kinds > section >> nth=${index} >> canvas >> nth=0`)).inked > 200, `grid ${index} has ink`);
  }
  // Choosing a head of the encoder's grid (keyboard: Enter) opens that head's heatmap of encoder self-attention.
  const encoderHead = sections.nth(0).locator('button').last();
  await encoderHead.focus();
  await page.keyboard.press('Enter');
  await waitForResult(page, 'window.attnlens.last.attentionKind === "encoder"');
  assert.equal(await page.locator('button[data-view="heatmap"]').getAttribute('aria-pressed'), 'true');
  assert.deepEqual((await lastOf()).tokens, run.tokens);
  await kind.selectOption('cross');
  await waitForResult(page, 'window.attnlens.last.attentionKind === "cross"');
  await page.locator('button[data-view="heatmap"]').click();
  assert.deepEqual(session.errors, [], 'no console errors');
});

test('text that is not token ids is refused with an error shown as text, not HTML', async () => {
  await page.locator('#sentence').fill('<img src=x onerror="window.injected=1">');
  await page.locator('#sentence').press('Enter');
  await page.waitForFunction(() => /token ids/.test(document.getElementById('error').textContent));
  assert.equal(await page.evaluate(() => document.querySelectorAll('#error img, #translation img').length), 0);
  assert.equal(await page.evaluate(() => window.injected), undefined);
});

// Opens the ready model whose button matches `button` on a page whose hub requests go to the test `hub`.
async function openReadyModel(readySession, hub, button) {
  await readySession.context.route('https://huggingface.co/**', async (route) => {
    const { pathname } = new URL(route.request().url());
    await route.fulfill({ response: await route.fetch({ url: `${hub.url}${pathname}` }) });
  });
  const readyPage = readySession.page;
  await readySession.goto();
  await readyPage.getByLabel(/^A trained model/).check();
  await waitForResult(readyPage, 'window.attnlens.last.model');
  await readyPage.getByRole('button', { name: button }).click();
  await readyPage.locator('#translation').waitFor({ state: 'visible' });
  return readyPage;
}

test('T5-small from the ready models (a tiny random T5 served under its name by the test hub) translates, with the library\'s cross-attention', async () => {
  const t5 = t5Checkpoint({ seed: 4 });
  const hub = await serveTestHub({ repos: { 'google-t5/t5-small': { revisions: { main: t5.files } } } });
  const t5Session = await openPage();
  try {
    const lens = await load();
    const model = await lens.loadModel({ config: t5.files['config.json'], weights: t5.files['model.safetensors'] });
    let expected;
    try {
      const generated = model.generate({ ids: sourceIds, maxTokens: Math.min(32, model.info.maxPositions - 1) });
      expected = { generated, run: model.run({ ids: sourceIds, targetIds: [model.info.decoderStartId, ...generated.ids] }) };
    } finally {
      model.dispose();
    }
    const t5Page = await openReadyModel(t5Session, hub, /^T5-small \(242 MB download\)/);
    await t5Page.locator('#sentence').fill(sourceIds.join(' '));
    await t5Page.locator('#sentence').press('Enter');
    // This text's translation, not the one of the page's own sentence that ran when the model loaded.
    await waitForResult(t5Page, `window.attnlens.last.generated && window.attnlens.last.model.modelType === 't5' && ` +
      `JSON.stringify(Array.from(window.attnlens.last.ids)) === ${JSON.stringify(JSON.stringify(Array.from(expected.run.ids)))}`);
    const last = await t5Page.evaluate(() => ({ ...window.attnlens.last, weights: Array.from(window.attnlens.last.weights), model: null }));
    assert.deepEqual(last.generated.ids, Array.from(expected.generated.ids));
    assert.deepEqual(last.tokens, expected.run.targetTokens);
    assert.deepEqual(last.keyTokens, expected.run.tokens);
    assertClose(last.weights, Array.from(expected.run.crossAttention), 1e-6, 'T5 cross-attention');
    assert.equal(await t5Page.locator('#translation-text').textContent(), expected.generated.tokens.join(' '));
  } finally {
    await t5Session.close();
    await hub.close();
  }
});

test('opus-mt-en-de from the ready models (a tiny random Marian folder served under its name): source.spm, target.spm and vocab.json fetched, text translated to text', async () => {
  const marian = tinyMarianFolder({ seed: 12 });
  const hub = await serveTestHub({ repos: { 'Helsinki-NLP/opus-mt-en-de': { revisions: { main: marian.files } } } });
  const marianSession = await openPage();
  const text = 'Tom asked his teacher for advice.';
  try {
    const lens = await load();
    const model = await lens.loadModel({
      config: marian.files['config.json'], weights: marian.files['model.safetensors'], tokenizerConfig: marian.files['tokenizer_config.json'],
      tokenizer: { sourceSpm: marian.files['source.spm'], targetSpm: marian.files['target.spm'], vocabJson: marian.files['vocab.json'] },
    });
    let expected;
    try {
      const generated = model.generate({ text, maxTokens: Math.min(32, model.info.maxPositions - 1) });
      expected = { generated, run: model.run({ text, targetIds: [model.info.decoderStartId, ...generated.ids] }) };
    } finally {
      model.dispose();
    }
    const marianPage = await openReadyModel(marianSession, hub, /^opus-mt-en-de \(298 MB download\)/);
    const asked = hub.requests.filter((request) => request.method === 'GET').map((request) => request.path.split('/').at(-1));
    for (const name of ['source.spm', 'target.spm', 'vocab.json']) assert.ok(asked.includes(name), `${name} was fetched`);
    await marianPage.locator('#sentence').fill(text);
    await marianPage.locator('#sentence').press('Enter');
    // This text's translation, not the one of the page's own sentence that ran when the model loaded.
    await waitForResult(marianPage, `window.attnlens.last.generated && window.attnlens.last.model.modelType === 'marian' && ` +
      `JSON.stringify(Array.from(window.attnlens.last.ids)) === ${JSON.stringify(JSON.stringify(Array.from(expected.run.ids)))}`);
    const last = await marianPage.evaluate(() => ({ ...window.attnlens.last, weights: Array.from(window.attnlens.last.weights), model: null }));
    assert.deepEqual(last.generated.ids, Array.from(expected.generated.ids));
    assert.deepEqual(last.keyTokens, expected.run.tokens);
    assertClose(last.weights, Array.from(expected.run.crossAttention), 1e-6, 'Marian cross-attention');
    assert.equal(await marianPage.locator('#translation-text').textContent(), expected.generated.text);
    assert.deepEqual(marianSession.errors, []);
  } finally {
    await marianSession.close();
    await hub.close();
  }
});
