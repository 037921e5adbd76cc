// The page's "Ready models" list, with no network: the browser's requests to
// https://huggingface.co are answered by the local test hub
// (tests/support/test-hub.mjs), which serves sort-gpt2 under GPT-2's hub
// name. The list shows only the model_types the library reads; choosing an
// entry downloads with progress (and can be cancelled), shows the attention
// the library computes in Node, opens from Cache Storage the second time with
// no request at all, works from the keyboard, explains a 404, and names the
// models too large for the device before downloading them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FAMILIES } from '../../web/lib/model/families/index.js';
import { READY_MODELS } from '../../web/page/model/ready-models.js';
import { sortFiles, sortGpt2Attention } from '../support/sort-gpt2.mjs';
import { serveTestHub } from '../support/test-hub.mjs';
import { assertClose, ensureBuilt, openPage, typeSentence, waitForResult } from './page-fixture.mjs';

const digits = '2 0 1 1 0 2';
// The stand-ins: GPT-2's name serves sort-gpt2; BERT base's weights never
// arrive (to cancel); DistilGPT-2 is missing (404).
const served = 'openai-community/gpt2';
const held = 'google-bert/bert-base-uncased';
const missing = 'distilbert/distilgpt2';

let hub;
let reference; // the attention of `digits`, from the bytes, in Node
const weightGets = () => hub.requests.filter((request) => request.method === 'GET' && request.path.endsWith('.safetensors')).length;

before(async () => {
  ensureBuilt();
  hub = await serveTestHub({ repos: { [served]: { revisions: { main: sortFiles } }, [held]: { revisions: { main: sortFiles } } } });
  reference = await sortGpt2Attention(digits);
});

after(async () => {
  await hub?.close();
});

// A page whose requests to the hub go to the test hub (the CDN redirect is
// followed here), with the progress texts it showed recorded, and
// navigator.deviceMemory set when asked.
async function openReadyPage({ deviceMemory } = {}) {
  const session = await openPage();
  const heldRoutes = [];
  await session.context.route('https://huggingface.co/**', async (route) => {
    const request = route.request();
    const { pathname } = new URL(request.url());
    if (pathname.startsWith(`/${held}/`) && pathname.endsWith('.safetensors') && request.method() === 'GET') {
      heldRoutes.push(route); // answered never: the download waits until cancelled
      return;
    }
    await route.fulfill({ response: await route.fetch({ url: `${hub.url}${pathname}` }) });
  });
  await session.context.addInitScript((memory) => {
    if (memory !== null) Object.defineProperty(Navigator.prototype, 'deviceMemory', { get: () => memory, configurable: true });
    window.progressTexts = [];
    new MutationObserver(() => {
      const text = document.getElementById('model-progress-text')?.textContent;
      if (text && window.progressTexts.at(-1) !== text) window.progressTexts.push(text);
    }).observe(document, { subtree: true, childList: true, characterData: true });
  }, deviceMemory ?? null);
  return { ...session, heldRoutes };
}

async function showTrainedModels(session) {
  await session.goto();
  await session.page.getByLabel(/^A trained model/).check();
  await waitForResult(session.page, 'window.attnlens.last.model'); // the built-in model, first
}

async function showsSortGpt2(page) {
  await waitForResult(page, 'window.attnlens.last.model?.dModel === 48');
  await typeSentence(page, digits);
  await waitForResult(page, 'window.attnlens.last.model?.dModel === 48 && window.attnlens.last.tokens.length === 6');
  assertClose(await page.evaluate(() => Array.from(window.attnlens.last.weights)), reference, 1e-6, 'the ready model on the page');
  assert.equal(await page.locator('#model-name').textContent(), served);
}

test('the list: only the families the library reads, each with its size and what it shows', async () => {
  const session = await openReadyPage();
  try {
    await showTrainedModels(session);
    const entries = session.page.locator('#ready-list li');
    const shown = await entries.evaluateAll((items) => items.map((item) => ({
      name: item.querySelector('button').textContent,
      text: item.textContent,
      describedVisible: item.querySelector(`#${item.querySelector('button').getAttribute('aria-describedby')}`).offsetHeight > 0,
    })));
    const supported = READY_MODELS.filter((model) => Object.keys(FAMILIES).includes(model.modelType));
    assert.deepEqual(shown.map((entry) => entry.name), supported.map((model) => model.name));
    assert.ok(supported.length >= 7 && supported.length <= READY_MODELS.length);
    for (const model of READY_MODELS.filter((entry) => !supported.includes(entry))) {
      assert.equal(await session.page.getByRole('button', { name: new RegExp(`^${model.name} `) }).count(), 0, `${model.modelType} is not read yet`);
    }
    for (const [index, model] of supported.entries()) {
      assert.ok(shown[index].describedVisible, `${model.name}: its description is visible`);
      assert.ok(shown[index].text.includes(model.shows), shown[index].text);
      assert.match(shown[index].text, new RegExp(`${model.name} ${Math.round(model.bytes / 1e6)} MB|${(model.bytes / 1e9).toFixed(1)} GB`));
    }
    assert.deepEqual(session.errors, []);
  } finally {
    await session.close();
  }
});

test('GPT-2: downloaded with progress, the library\'s attention, then opened from the cache with the keyboard and no request', async () => {
  const session = await openReadyPage();
  try {
    const { page } = session;
    await showTrainedModels(session);
    const before = weightGets();
    await page.getByRole('button', { name: 'GPT-2 (548 MB download)' }).click();
    await showsSortGpt2(page);
    assert.equal(weightGets() - before, 2, 'downloaded once, through the hub and its redirect');
    const progress = await page.evaluate(() => window.progressTexts);
    assert.ok(progress.some((text) => /^Downloading model\.safetensors: .* of 347 kB$/.test(text)), progress.join(' | '));
    assert.equal(await page.getByLabel('Hugging Face folder URL').inputValue(), `https://huggingface.co/${served}/resolve/main/`);

    // Next visit: the entry says it is saved; Tab reaches it from Load from URL, Enter opens it from Cache Storage.
    await showTrainedModels(session);
    const requests = hub.requests.length;
    const entry = page.getByRole('button', { name: 'GPT-2 (saved in this browser, opens without a download)' });
    await entry.waitFor();
    assert.match(await page.locator('#ready-list li').first().textContent(), /548 MB, saved: no download/);
    await page.getByRole('button', { name: 'Load from URL' }).focus();
    for (let presses = 0; presses < 5 && !(await entry.evaluate((element) => element === document.activeElement)); presses += 1) {
      await page.keyboard.press('Tab');
    }
    assert.ok(await entry.evaluate((element) => element === document.activeElement), 'Tab reaches the first ready model');
    await page.keyboard.press('Enter');
    await showsSortGpt2(page);
    assert.equal(hub.requests.length, requests, 'a saved model asks the hub for nothing');
    const reread = await page.evaluate(() => window.progressTexts);
    assert.ok(reread.some((text) => text.startsWith('Reading the saved copy of model.safetensors')), reread.join(' | '));
    assert.deepEqual(session.errors, []);
  } finally {
    await session.close();
  }
});

test('a missing model gets the library\'s 404 explanation, a download can be cancelled, and the model on screen stays', async () => {
  const session = await openReadyPage();
  try {
    const { page } = session;
    await showTrainedModels(session);
    const error = page.locator('#error');
    await page.getByRole('button', { name: /^DistilGPT-2 / }).click();
    await error.waitFor();
    assert.match(await error.textContent(), new RegExp(`^The model could not be loaded\\. attnlens\\.loadModel: .*${missing}/resolve/main/config\\.json was not found \\(HTTP 404\\)\\. Check the model's name`));
    assert.equal(await page.locator('#model-name').textContent(), 'tiny-english', 'the built-in model is still open');

    await page.getByRole('button', { name: /^BERT base / }).click();
    for (let waited = 0; session.heldRoutes.length === 0; waited += 50) {
      assert.ok(waited < 10_000, 'the weights were asked for');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(await page.locator('#model-progress').isVisible(), true, 'the download shows its progress');
    assert.equal(await page.getByRole('button', { name: /^GPT-2 / }).isDisabled(), true, 'one load at a time');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForFunction(() => document.getElementById('error').textContent === 'Loading was cancelled.');
    assert.equal(await page.getByRole('button', { name: /^GPT-2 / }).isDisabled(), false);
    await typeSentence(page, 'The cat sat.');
    await waitForResult(page, 'window.attnlens.last.model && window.attnlens.last.tokens.join("") === "The cat sat."');
    assert.equal(await page.locator('#model-name').textContent(), 'tiny-english');
    assert.deepEqual(session.errors.filter((text) => !/Failed to load resource/.test(text)), []);
  } finally {
    await Promise.all(session.heldRoutes.map((route) => route.abort().catch(() => {})));
    await session.close();
  }
});

test('a device with little memory: the models that would not fit say so before any download', async () => {
  const deviceMemory = 2; // GB, as navigator.deviceMemory reports it: a tab gets about half
  const session = await openReadyPage({ deviceMemory });
  try {
    const { page } = session;
    await showTrainedModels(session);
    const requests = hub.requests.length;
    // Peak while loading: the downloaded file plus its float32 copy in WebAssembly memory.
    const peak = ({ bytes, dtype }) => bytes + (dtype === 'F32' ? bytes : 2 * bytes);
    const supported = READY_MODELS.filter((model) => Object.hasOwn(FAMILIES, model.modelType));
    const tooLarge = supported.filter((model) => peak(model) > deviceMemory * 2 ** 30 / 2).map((model) => model.name);
    assert.ok(tooLarge.includes('GPT-2') && tooLarge.includes('Qwen2.5-0.5B') && !tooLarge.includes('DistilGPT-2'), tooLarge.join(', '));
    for (const model of supported) {
      const item = page.locator('#ready-list li').filter({ has: page.getByRole('button', { name: new RegExp(`^${model.name} `) }) });
      const disabled = await item.getByRole('button').isDisabled();
      assert.equal(disabled, tooLarge.includes(model.name), model.name);
      const text = await item.textContent();
      if (disabled) assert.match(text, new RegExp(`Not offered here: too large for this device: loading needs about .* of memory, and this device reports ${deviceMemory} GB`));
      else assert.doesNotMatch(text, /too large/);
    }
    assert.equal(hub.requests.length, requests, 'nothing was downloaded to find out');
    assert.deepEqual(session.errors, []);
  } finally {
    await session.close();
  }
});
