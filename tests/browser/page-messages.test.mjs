// What the page says when something goes wrong, found by using the built page
// as its users do: each message says what happened where the user can see it,
// and points the right way to the details.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { openPageAroundTests, waitForResult } from './page-fixture.mjs';

let session;
openPageAroundTests((opened) => { session = opened; });

test('a model whose first run fails says so, and its status points the right way to the error', async () => {
  const { page } = session;
  // tiny-english-2 opens on a text longer than its 256 positions: it loads, and its first run fails.
  const long = 'the old man walked down to the river '.repeat(40);
  await page.goto('about:blank');
  await page.goto(`${session.url}#model=tiny-english-2&s=${encodeURIComponent(long)}`);
  const error = page.locator('#error');
  await error.waitFor({ state: 'visible' });
  assert.match(await error.textContent(), /more than the model's 256 positions/);
  const status = page.locator('#status');
  await page.waitForFunction(() => /could not run this text/.test(document.querySelector('#status').textContent));
  const pointsTo = /\(see (above|below)\)/.exec(await status.textContent())?.[1];
  const statusBox = await status.boundingBox();
  const errorBox = await error.boundingBox();
  const actually = errorBox.y >= statusBox.y + statusBox.height ? 'below' : 'above';
  assert.equal(pointsTo, actually, `the status says "see ${pointsTo}", the error is ${actually} it`);
  assert.deepEqual(session.errors, []);
});

// Opens the page on its built-in model (the model panel open), has `choose` load a model from the hub in a window of
// `viewport`'s size while every request to the hub gets `answer`, and resolves to the error the page shows: its text,
// and its box in the window once the load is over.
async function failedDownload({ viewport, choose, answer = (route) => route.abort() }) {
  const { page } = session;
  await page.setViewportSize(viewport);
  await page.context().route(/^https:\/\/huggingface\.co\//, answer);
  try {
    await session.goto('', { builtinModel: true });
    await waitForResult(page, 'window.attnlens.last.model !== null');
    await choose(page);
    const error = page.locator('#error');
    await error.waitFor({ state: 'visible' });
    await page.locator('#cancel-load').waitFor({ state: 'hidden' }); // the load is over
    return { text: await error.textContent(), box: await error.boundingBox() };
  } finally {
    await page.context().unrouteAll();
    await page.setViewportSize({ width: 1280, height: 900 });
  }
}

const chooseReadyGpt2 = (page) => page.locator('#ready-list button').first().click();

// The model panel is long: "Ready models" and the URL box sit far below the error line under the text.
for (const [where, viewport, choose] of [
  ['a ready model, chosen at the foot of the list', { width: 1280, height: 900 },
    (page) => page.locator('#ready-list button').last().click()],
  ['a URL, on a phone', { width: 375, height: 667 }, async (page) => {
    // On a phone the loaded model's panel is folded away behind its button (styles.css).
    await page.getByRole('button', { name: 'Open another model' }).click();
    await page.getByLabel('Hugging Face folder URL').fill('https://huggingface.co/openai-community/gpt2/resolve/main/');
    await page.getByRole('button', { name: 'Load from URL' }).click();
  }],
]) {
  test(`a download that fails (${where}) says why in the window`, async () => {
    const { text, box } = await failedDownload({ viewport, choose });
    assert.match(text, /could not be loaded.*the request failed before any answer came back/s);
    assert.ok(box.y >= -1 && box.y + box.height <= viewport.height + 1, // sub-pixel rounding
      `the error is at y ${Math.round(box.y)}..${Math.round(box.y + box.height)} of a ${viewport.height} px window`);
    assert.deepEqual(session.errors, []);
  });
}

// The library's own advice for these failures speaks to programs ("load them as { config, weights, tokenizer }").
for (const [why, answer, expected] of [
  ['no answer (offline, or a server without CORS)', (route) => route.abort(), /the request failed before any answer came back/],
  ['a gated model (HTTP 401)', (route) => route.fulfill({ status: 401, headers: { 'access-control-allow-origin': '*' }, body: '' }),
    /needs a login \(HTTP 401\)/],
]) {
  test(`a download that fails for ${why} says what to do on this page: open the downloaded files`, async () => {
    const { text } = await failedDownload({ viewport: { width: 1280, height: 900 }, choose: chooseReadyGpt2, answer });
    assert.match(text, expected);
    assert.match(text, /download (the|its) files,? and open them here with “Open a model…”/);
    assert.doesNotMatch(text, /\{ config, weights, tokenizer \}|\(Node\)/, 'advice for programs, not for the page');
    assert.deepEqual(session.errors, []);
  });
}

test('CSV matrices with "heads" on a line of its own, like a matrix name, say how to write heads', async () => {
  const { page } = session;
  await session.goto();
  await page.getByLabel('Matrices (JSON or CSV)').fill('X\n1,2\nW_Q\n1,0\n0,1\nW_K\n1,0\n0,1\nW_V\n1,0\n0,1\nheads\n2');
  await page.getByRole('button', { name: 'Compute these matrices' }).click();
  const error = page.locator('#matrix-error');
  await error.waitFor({ state: 'visible' });
  assert.equal(await error.textContent(), 'line 12: heads is one number, not a matrix: write it on one line, "heads: 2"');
  assert.deepEqual(session.errors, []);
});

test('the Analysis tab with random projections: an export button says why it has nothing to export', async () => {
  const { page } = session;
  await session.goto();
  await page.locator('button[data-view=analysis]').click();
  await page.locator('#analysis-needs-model').waitFor({ state: 'visible' });
  const downloads = [];
  const onDownload = (download) => downloads.push(download.suggestedFilename());
  page.on('download', onDownload);
  try {
    for (const name of ['Export PNG', 'Export SVG', 'Export CSV', 'Export JSON']) {
      await page.evaluate(() => { document.getElementById('readout').textContent = ''; });
      await page.getByRole('button', { name, exact: true }).click();
      await page.waitForFunction(() => document.getElementById('readout').textContent !== '', null, { timeout: 3000 })
        .catch(() => {});
      assert.match(await page.locator('#readout').textContent(), /Nothing to export.*trained model/, `${name} says nothing`);
    }
  } finally {
    page.off('download', onDownload);
  }
  assert.deepEqual(downloads, []);
  assert.deepEqual(session.errors, []);
});

test('a seed or temperature out of range says so and keeps the picture, rather than computing another one silently', async () => {
  const { page } = session;
  await session.goto('#seed=7&t=0.5');
  const before = await page.evaluate(() => Array.from(window.attnlens.last.weights));
  const error = page.locator('#error');
  for (const [label, value, message, kept] of [
    ['seed', '-5', 'seed must be a whole number from 0 to 4294967295, got -5: it stays 7.', '7'],
    ['seed', '', 'seed must be a whole number from 0 to 4294967295: it stays 7.', '7'],
    ['temperature', '0', 'temperature must be a number above 0, at most 100, got 0: it stays 0.5.', '0.5'],
    ['temperature', '1000', 'temperature must be a number above 0, at most 100, got 1000: it stays 0.5.', '0.5'],
  ]) {
    const field = page.getByLabel(label, { exact: true });
    await field.fill(value);
    await field.dispatchEvent('change');
    await error.waitFor({ state: 'visible' });
    assert.equal(await error.textContent(), message);
    assert.equal(await field.inputValue(), kept, `${label} ${value}: the field shows the value the picture has`);
    assert.deepEqual(await page.evaluate(() => Array.from(window.attnlens.last.weights)), before, `${label} ${value}: the same picture`);
    assert.match(await page.locator('#share-url').inputValue(), /[#&]seed=7&.*t=0\.5/);
    await page.getByRole('textbox', { name: /^Sentence/ }).press('Enter'); // and the next computation, the same
    await error.waitFor({ state: 'hidden' });
    assert.deepEqual(await page.evaluate(() => Array.from(window.attnlens.last.weights)), before, `${label} ${value}: Enter`);
  }
  assert.deepEqual(session.errors, []);
});

for (const [engine, hash] of [['random projections', '#engine=random'], ['tiny-english-2', '#model=tiny-english-2']]) {
  test(`an emptied sentence box (${engine}) asks for a sentence, in the page's words, and keeps the picture`, async () => {
    const { page } = session;
    await session.goto(hash, { builtinModel: true });
    await waitForResult(page, hash.includes('model=') ? 'window.attnlens.last.model !== null' : 'true');
    const before = await page.evaluate(() => window.attnlens.last.tokens);
    const field = page.getByRole('textbox', { name: /^Sentence/ });
    await field.fill('');
    const error = page.locator('#error');
    await error.waitFor({ state: 'visible' });
    assert.equal(await error.textContent(), 'The sentence is empty: type a few words to see where each head looks.');
    assert.deepEqual(await page.evaluate(() => window.attnlens.last.tokens), before, 'the last picture stays');
    await field.fill('Two words');
    await error.waitFor({ state: 'hidden' });
    assert.deepEqual(session.errors, []);
  });
}

test('a link with an empty sentence opens ready, asking for a sentence, not "Loading…"', async () => {
  const { page } = session;
  await page.goto('about:blank');
  await page.goto(`${session.url}#s=&engine=random`);
  const error = page.locator('#error');
  await error.waitFor({ state: 'visible' });
  assert.equal(await error.textContent(), 'The sentence is empty: type a few words to see where each head looks.');
  assert.equal(await page.locator('#status').textContent(), 'Ready: nothing computed yet.');
  await page.getByRole('textbox', { name: /^Sentence/ }).fill('Two words');
  await waitForResult(page);
  assert.match(await page.locator('#status').textContent(), /^2 tokens/);
  assert.deepEqual(session.errors, []);
});

// What a person reads of the library's errors is the sentence, never the JavaScript type it was thrown as.
const typeName = /(^|[.:] )(Range|Type|Syntax)?Error: /;

test('the library\'s errors read as sentences, without their JavaScript type: the sentence demo, a run, a download', async () => {
  const { page } = session;
  await session.goto('#engine=random');
  const error = page.locator('#error');
  await page.getByRole('textbox', { name: /^Sentence/ }).fill('word '.repeat(1100));
  await error.waitFor({ state: 'visible' });
  const sentenceError = await error.textContent();
  assert.match(sentenceError, /^attnlens\.explainSentence: text must have at most maxTokens = 1024 tokens, got 1100 tokens/);
  assert.doesNotMatch(sentenceError, typeName);

  // A trained model's run (tiny-english-2 has 256 positions).
  await page.goto('about:blank');
  await page.goto(`${session.url}#model=tiny-english-2&s=${encodeURIComponent('the river '.repeat(200))}`);
  await error.waitFor({ state: 'visible' });
  const runError = await error.textContent();
  assert.match(runError, /more than the model's 256 positions/);
  assert.doesNotMatch(runError, typeName);

  const { text: downloadError } = await failedDownload({ viewport: { width: 1280, height: 900 }, choose: chooseReadyGpt2,
    answer: (route) => route.fulfill({ status: 404, headers: { 'access-control-allow-origin': '*' }, body: '' }) });
  assert.match(downloadError, /^The model could not be loaded\. attnlens\.loadModel: https:\/\/huggingface\.co\/\S+\/config\.json was not found \(HTTP 404\)/);
  assert.doesNotMatch(downloadError, typeName);
  assert.deepEqual(session.errors, []);
});

// The page reads the kind of a failed download from the library's error.reason (README, "Downloads"), not
// from its words, and says in its own words what to do here.
for (const [why, answer, says] of [
  ['a gated model (HTTP 403)', (route) => route.fulfill({ status: 403, headers: { 'access-control-allow-origin': '*' }, body: '' }),
    'needs a login \\(HTTP 403\\): gated and private models cannot be downloaded without one\\. Accept the model\'s terms on the hub, '
    + 'download its files, and'],
  ['no answer', (route) => route.abort(),
    'the request failed before any answer came back\\. Either this computer is offline or cannot reach the server, or the server '
    + 'does not let other web pages read its files \\(CORS\\)\\. Check the address and the connection; for a server without CORS, '
    + 'download the files and'],
]) {
  test(`the advice for a failed download (${why}) is the page's, whole: one sentence of what happened, then what to do here`, async () => {
    const { text } = await failedDownload({ viewport: { width: 1280, height: 900 }, choose: chooseReadyGpt2, answer });
    assert.match(text, new RegExp(`^The model could not be loaded\\. (Could not download )?https://huggingface\\.co/\\S+/config\\.json:? ${says} `
      + 'open them here with “Open a model…” \\(or drop them on this page\\)\\.$'));
    assert.deepEqual(session.errors, []);
  });
}

test('a model whose first run fails still offers its layers and heads, from its config; the head chosen then is the one drawn', async () => {
  const { page } = session;
  const config = JSON.parse(readFileSync(new URL('../../web/models/tiny-english-2/config.json', import.meta.url), 'utf8'));
  const numbers = (count) => Array.from({ length: count }, (_, index) => String(index + 1));
  await page.goto('about:blank');
  await page.goto(`${session.url}#model=tiny-english-2&s=${encodeURIComponent('the river '.repeat(200))}`);
  await page.waitForFunction(() => /could not run this text/.test(document.querySelector('#status').textContent));
  const head = page.getByLabel('head', { exact: true });
  const layer = page.getByLabel('layer', { exact: true });
  assert.deepEqual(await head.locator('option').allTextContents(), numbers(config.n_head));
  assert.deepEqual(await layer.locator('option').allTextContents(), numbers(config.n_layer));
  assert.equal(await layer.isVisible(), true);
  await head.selectOption('3');
  await layer.selectOption('2');
  await page.getByRole('textbox', { name: /^Sentence/ }).fill('The old man walked down to the river.');
  await waitForResult(page, 'window.attnlens.last?.model !== null && window.attnlens.last.tokens.length > 3');
  await page.locator('#error').waitFor({ state: 'hidden' });
  assert.equal(await head.inputValue(), '3');
  assert.equal(await layer.inputValue(), '2');
  assert.equal(await page.evaluate(() => window.attnlens.last.layer), 1);
  assert.match(await page.locator('#heatmap-canvas').getAttribute('aria-label'), /layer 2.*head 3|head 3.*layer 2/i);
  assert.deepEqual(session.errors, []);
});

test('a model worker that crashes mid-run says so in a sentence, not the browser\'s "Uncaught RangeError: ..."', async () => {
  const { page } = session;
  await page.goto('about:blank');  // a fresh page: not the state the test before left
  await session.goto('#model=tiny-english-2', { builtinModel: true });
  await page.waitForFunction(() => window.attnlens?.last?.model);
  let worker;
  for (const candidate of page.workers()) if (await candidate.evaluate(() => self.name) === 'attnlens model') worker = candidate;
  assert.ok(worker, 'the model worker');
  // The next run's answer never leaves the worker: an uncaught error is thrown instead, as a worker out of memory would.
  await worker.evaluate(() => {
    const post = self.postMessage.bind(self);
    self.postMessage = (message, transfer) => {
      if (message?.ok === undefined) return post(message, transfer);
      setTimeout(() => { throw new RangeError('a crash for this test'); });
    };
  });
  await page.getByRole('textbox', { name: /^Sentence/ }).fill('the cat sat on the mat');
  const error = page.locator('#error');
  await page.waitForFunction(() => /worker stopped/.test(document.querySelector('#error')?.textContent ?? ''));
  const text = await error.textContent();
  assert.match(text, /The model worker stopped: a crash for this test\. Open the model again\./);
  assert.doesNotMatch(text, /Uncaught|RangeError/);
  // The text is drawn with random projections meanwhile (drawing clears errors: this one stays), and the model
  // choice asks for a model again.
  await page.waitForFunction(() => window.attnlens?.last && window.attnlens.last.model === null);
  assert.equal(await error.isVisible(), true);
  assert.match(await error.textContent(), /The model worker stopped/);
  assert.equal(await page.locator('#model-name').textContent(), 'open a model…');
});
