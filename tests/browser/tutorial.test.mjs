// The worked tutorial (dist/tutorial/, built from web/tutorial/) end to end,
// opened from file:// in headless Chromium with the network refused: every
// live element computes and draws, the worked example shows its known
// numbers, each kind of control recomputes (checked against the library in
// Node), cross-attention is m x n with m != n, tiny-translator's learned
// alignment beside it is the library's (its numbers in the prose too), tiny-english's heads are
// measured live (model.analyze and model.inductionScores in Node give the same
// scores, and the previous-token head the text names comes first), and nothing
// but file:, data: and blob: URLs is requested.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { load } from '../../web/lib/node.js';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { launchBrowser } from '../support/chromium.mjs';
import { assertClose, assertRowsSumToOne } from './page-fixture.mjs';
import { loadModelFolder } from '../support/model-folder.mjs';

const tutorialDir = join(repoRoot, 'dist', 'tutorial');
const tutorialUrl = pathToFileURL(join(tutorialDir, 'index.html')).href;
const elementSelector = 'attnlens-sentence, attnlens-matrices, attnlens-model, attnlens-head-scores';

// The sections of the tutorial and the live elements each must hold.
const expectedElements = {
  tokens: ['embeddings'],
  projections: ['worked-qkv'],
  scores: ['scores-steps'],
  scaling: ['scaling-heatmap'],
  softmax: ['worked-softmax'],
  values: ['worked-values'],
  heads: ['heads-grid', 'heads-output'],
  masks: ['causal-heatmap', 'padding-none', 'padding-masked'],
  cross: ['cross-heatmap', 'cross-learned'],
  temperature: ['temperature-view'],
  model: ['model-view'],
  measured: ['head-scores'],
  mislead: ['mislead-weights', 'mislead-values'],
};

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

// Builds what is missing or older than its sources, under the build lock
// (other tests and helpers build too): the elements' one-file build, then the
// tutorial folder, which copies it.
function ensureTutorialBuilt() {
  const elementsFile = join(repoRoot, 'dist', 'attnlens-elements.js');
  const sources = (dirs) => Math.max(...dirs.map((dir) => newestMtime(join(repoRoot, 'web', dir))));
  const elementsStale = !existsSync(elementsFile) || statSync(elementsFile).mtimeMs < sources(['elements', 'lib', 'views']);
  const tutorialFile = join(tutorialDir, 'index.html');
  const tutorialStale = elementsStale || !existsSync(tutorialFile)
    || statSync(tutorialFile).mtimeMs < Math.max(sources(['tutorial', 'models']), statSync(elementsFile).mtimeMs);
  if (!tutorialStale) return;
  const code = `
    import { buildElements } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'web', 'scripts', 'build.mjs')).href)};
    import { buildTutorial } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'web', 'tutorial', 'build.mjs')).href)};
    if (${elementsStale}) buildElements();
    buildTutorial();`;
  const result = spawnSync('flock', ['/tmp/attnlens-build.lock', process.execPath, '--input-type=module', '-e', code],
    { cwd: repoRoot, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`building the tutorial failed (exit ${result.status ?? result.signal})`);
}

let session;
let lens;
const requests = [];
const refused = [];

// Every element has answered (a result or an error) for its current attributes.
function settled(page) {
  return page.waitForFunction((selector) => [...document.querySelectorAll(selector)]
    .every((element) => element.result !== null || element.error !== null), elementSelector, { timeout: 30_000 });
}

// Waits until `id`'s result differs from `before` (JSON of its weights), and returns the new weights.
async function nextWeights(page, id, before) {
  await page.waitForFunction(([elementId, old]) => {
    const element = document.getElementById(elementId);
    const weights = element.result?.weights ?? element.result?.attention;
    return weights && JSON.stringify(Array.from(weights)) !== old;
  }, [id, before], { timeout: 20_000 });
  return weightsOf(page, id);
}

// Waits until `id`'s weights equal `expected` (the library's, from Node) within 1e-6.
function waitForWeights(page, id, expected) {
  return page.waitForFunction(([elementId, reference]) => {
    const { result } = document.getElementById(elementId);
    const weights = result?.weights ?? result?.attention;
    return weights?.length === reference.length && reference.every((value, index) => Math.abs(weights[index] - value) <= 1e-6);
  }, [id, Array.from(expected)], { timeout: 20_000 });
}

function weightsOf(page, id) {
  return page.evaluate((elementId) => {
    const { result } = document.getElementById(elementId);
    return Array.from(result.weights ?? result.attention);
  }, id);
}

// The first row of the first table the steps view shows in `id`, as text.
function firstRow(page, id) {
  return page.locator(`#${id} table tbody tr`).first().locator('td').allTextContents();
}

before(async () => {
  ensureTutorialBuilt();
  lens = await load();
  session = await launchBrowser({ viewport: { width: 1100, height: 900 } });
  session.page.setDefaultTimeout(15_000);
  // The page must need nothing from the network: refuse it, and record every request.
  await session.context.route(/^(https?|wss?|ftp):/, (route) => {
    refused.push(route.request().url());
    return route.abort();
  });
  session.page.on('request', (request) => requests.push(request.url()));
  await session.page.goto(tutorialUrl);
  await session.page.waitForFunction((selector) => document.querySelectorAll(selector).length > 0, elementSelector);
  await settled(session.page);
});

after(async () => {
  await session?.close();
});

test('every section has a heading, an explanation, labelled controls and its live elements, all computed', async () => {
  const { page } = session;
  const sections = await page.evaluate((selector) => [...document.querySelectorAll('main > section')].map((section) => ({
    id: section.id,
    heading: section.querySelector('h2')?.textContent.trim() ?? '',
    prose: [...section.querySelectorAll(':scope > p')].map((p) => p.textContent).join(' ').length,
    controls: [...section.querySelectorAll('input, select, textarea')].map((control) => ({
      id: control.id, labelled: control.labels.length > 0 && control.labels[0].textContent.trim() !== '',
    })),
    elements: [...section.querySelectorAll(selector)].map((element) => ({
      id: element.id,
      error: element.error?.message ?? null,
      shownError: element.querySelector('.attnlens-error')?.textContent ?? null,
      drawn: element.querySelector('.attnlens-view') !== null,
    })),
  })), elementSelector);
  assert.deepEqual(sections.map((section) => section.id), Object.keys(expectedElements));
  for (const section of sections) {
    assert.ok(section.heading.length > 0, `${section.id}: heading`);
    assert.ok(section.prose > 200, `${section.id}: an explanation (${section.prose} characters)`);
    assert.ok(section.controls.length > 0, `${section.id}: at least one control`);
    for (const control of section.controls) assert.ok(control.labelled, `${section.id}: control #${control.id} has a label`);
    assert.deepEqual(section.elements.map((element) => element.id), expectedElements[section.id], `${section.id}: live elements`);
    for (const element of section.elements) {
      assert.equal(element.error, null, `#${element.id} computed`);
      assert.equal(element.shownError, null, `#${element.id} shows no error`);
      assert.ok(element.drawn, `#${element.id} drew a view`);
    }
  }
  assert.deepEqual(session.errors, []);
});

test('every canvas of the charts has ink in several colours', async () => {
  const inks = await session.page.evaluate((selector) => [...document.querySelectorAll(selector)].flatMap((element) => [...element.querySelectorAll('canvas')].map((canvas) => {
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const colours = new Set();
    let inked = 0;
    for (let index = 0; index < data.length; index += 4) {
      const [r, g, b] = [data[index], data[index + 1], data[index + 2]];
      if (data[index + 3] > 0 && (r < 250 || g < 250 || b < 250)) inked += 1;
      if (colours.size < 1000) colours.add((r << 16) | (g << 8) | b);
    }
    return { id: element.id, inked, colours: colours.size };
  })), elementSelector);
  const charted = new Set(inks.map((ink) => ink.id));
  for (const id of ['scaling-heatmap', 'heads-grid', 'causal-heatmap', 'cross-heatmap', 'cross-learned', 'temperature-view', 'model-view']) {
    assert.ok(charted.has(id), `#${id} draws a canvas`);
  }
  for (const ink of inks) {
    assert.ok(ink.inked > 500 && ink.colours > 10, `#${ink.id}: ${ink.inked} inked pixels, ${ink.colours} colours`);
  }
});

test('the worked example shows weights row 0 = 0.3136 0.3501 0.3363 and the output row 0', async () => {
  const { page } = session;
  // Its numbers are written once, in a shared script, and its three figures name it.
  const sharing = await page.evaluate(() => ({
    scripts: [...document.querySelectorAll('script[type="application/json"]')]
      .filter((script) => JSON.parse(script.textContent).X?.length === 3).map((script) => script.id),
    readers: [...document.querySelectorAll('attnlens-matrices[matrices="#worked-example"]')].map((element) => element.id),
    ownJson: document.querySelectorAll('.worked script').length,
  }));
  assert.deepEqual(sharing, { scripts: ['worked-example'], readers: ['worked-qkv', 'worked-softmax', 'worked-values'], ownJson: 0 });
  assert.deepEqual(await firstRow(page, 'worked-softmax'), ['0.3136', '0.3501', '0.3363']);
  assert.match(await page.locator('#worked-softmax caption').first().textContent(), /^weights 3 × 3/);
  assert.deepEqual(await firstRow(page, 'worked-values'), ['0.3109', '0.2600', '0.2723', '0.4409']);
  // Q = X W_Q, row 0 = [0.2, 0.2, 0, 0.2] as the text works it out (the second table; the first is W_Q).
  assert.deepEqual(await page.locator('#worked-qkv table').nth(1).locator('tbody tr').first().locator('td').allTextContents(),
    ['0.2000', '0.2000', '0.0000', '0.2000']);
});

test('the step selects show another step of the same computation', async () => {
  const { page } = session;
  await page.getByLabel('Matrix shown').first().selectOption('2'); // K = X W_K
  await page.waitForFunction(() => /K = X · W_K/.test(document.querySelector('#worked-qkv h3')?.textContent));
  // K row 0 = [0.3, 0, 0.3, 0], as the text works it out.
  assert.deepEqual(await page.locator('#worked-qkv table').nth(1).locator('tbody tr').first().locator('td').allTextContents(),
    ['0.3000', '0.0000', '0.3000', '0.0000']);
  await page.locator('#softmax-step').selectOption('5');
  await page.waitForFunction(() => /Scaled scores/.test(document.querySelector('#worked-softmax h3')?.textContent));
  assert.deepEqual(await firstRow(page, 'worked-softmax'), ['0.0300', '0.1400', '0.1000']);
  await page.locator('#softmax-step').selectOption('6');
  await page.waitForFunction(() => /Weights/.test(document.querySelector('#worked-softmax h3')?.textContent));
  assert.deepEqual(await firstRow(page, 'worked-softmax'), ['0.3136', '0.3501', '0.3363']);
});

test('editing the worked example\'s JSON recomputes its figures; a mistake is reported, then fixed', async () => {
  const { page } = session;
  await page.getByText('Edit the worked example\'s numbers').click();
  const editor = page.getByLabel('Matrices (JSON)');
  const original = await editor.inputValue();
  const matrices = JSON.parse(original);
  assert.deepEqual(matrices.X, [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]]);

  const before = JSON.stringify(await weightsOf(page, 'worked-softmax'));
  const edited = { ...matrices, X: [[2, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]] };
  await editor.fill(JSON.stringify(edited));
  const weights = await nextWeights(page, 'worked-softmax', before);
  const reference = lens.explainMatrices({
    x: new Float32Array(edited.X.flat()), n: 3, dModel: 4,
    wq: new Float32Array(edited.W_Q.flat()), wk: new Float32Array(edited.W_K.flat()), wv: new Float32Array(edited.W_V.flat()),
  });
  assertClose(weights, reference.weights, 1e-6, 'edited worked example');
  for (const id of ['worked-qkv', 'worked-values']) {
    await page.waitForFunction((elementId) => document.getElementById(elementId).result?.x[0] === 2, id);
  }
  assert.equal(await page.evaluate(() => JSON.parse(document.getElementById('worked-example').textContent).X[0][0]), 2, 'the editor wrote the shared script');

  await editor.fill(JSON.stringify({ ...matrices, X: [[1, 0, 1, 0], [0, 2, 0]] }));
  await page.locator('#worked-softmax .attnlens-error').waitFor();
  assert.match(await page.locator('#worked-softmax .attnlens-error').textContent(), /row 2/);
  await editor.fill(original);
  await page.locator('#worked-softmax .attnlens-error').waitFor({ state: 'detached' });
  await settled(page);
  assert.deepEqual(await firstRow(page, 'worked-softmax'), ['0.3136', '0.3501', '0.3363']);
});

test('typing a sentence recomputes its tokens and embeddings', async () => {
  const { page } = session;
  const text = 'a dog and a cat';
  await page.getByLabel('Sentence').first().fill(text);
  await page.waitForFunction((expected) => document.getElementById('embeddings').result?.tokens.join(' ') === expected, text);
  const reference = lens.explainSentence({ text, dModel: 8, heads: 1 });
  const x = await page.evaluate(() => Array.from(document.getElementById('embeddings').result.x));
  assertClose(x, reference.x, 1e-6, 'embeddings X');
  assert.equal(await page.locator('#embeddings table tbody tr').count(), 5);
});

test('the temperature slider, driven by the keyboard, changes the weights as the library does', async () => {
  const { page } = session;
  const text = 'the cat sat on the mat because it was warm';
  const before = await weightsOf(page, 'temperature-view');
  assertClose(before, lens.explainSentence({ text, dModel: 16, heads: 1 }).weights, 1e-6, 'T = 1');
  const slider = page.getByLabel('Temperature T');
  await slider.focus();
  for (let press = 0; press < 5; press += 1) await slider.press('ArrowLeft'); // 1 -> 0.5
  await page.waitForFunction(() => document.getElementById('temperature-view').getAttribute('temperature') === '0.5');
  await waitForWeights(page, 'temperature-view', lens.explainSentence({ text, dModel: 16, heads: 1, temperature: 0.5 }).weights);
  const sharper = await weightsOf(page, 'temperature-view');
  assertRowsSumToOne(sharper, 10, 10, 'T = 0.5');
  assert.equal(await page.locator('output[for="temperature-value"]').textContent(), '0.5');
  const largest = (weights) => Math.max(...weights);
  assert.ok(largest(sharper) > largest(before), 'a lower temperature sharpens the rows');

  // The table view shows the numbers themselves.
  await page.getByLabel('Shown as').first().selectOption('table');
  await page.locator('#temperature-view table').waitFor();
  const cell = Number(await page.locator('#temperature-view table tbody tr').first().locator('td').first().textContent());
  assert.ok(Math.abs(cell - sharper[0]) < 1e-4, `table cell ${cell} vs ${sharper[0]}`);
});

test('the causal checkbox zeroes the upper triangle, and unchecking brings it back', async () => {
  const { page } = session;
  const n = 10;
  const upper = (weights) => weights.filter((_, index) => index % n > Math.floor(index / n));
  const masked = await weightsOf(page, 'causal-heatmap');
  assert.ok(upper(masked).every((weight) => weight === 0), 'causal: upper triangle is 0');
  assertRowsSumToOne(masked, n, n, 'causal');
  const checkbox = page.getByLabel('Causal mask');
  assert.ok(await checkbox.isChecked());
  await checkbox.focus();
  await checkbox.press('Space');
  const open = await nextWeights(page, 'causal-heatmap', JSON.stringify(masked));
  assert.ok(upper(open).some((weight) => weight > 0.01), 'without the mask later tokens get weight');
  assertClose(open, lens.explainSentence({ text: 'the cat sat on the mat because it was warm', dModel: 16, heads: 1 }).weights, 1e-6, 'unmasked');
  await checkbox.press('Space');
  const again = await nextWeights(page, 'causal-heatmap', JSON.stringify(open));
  assert.deepEqual(again, masked);
});

test('the padding figures: the masked key gets no weight and the real rows equal the worked example', async () => {
  const { page } = session;
  const unmasked = await weightsOf(page, 'padding-none');
  const masked = await weightsOf(page, 'padding-masked');
  assert.equal(unmasked.length, 16);
  assert.ok(unmasked[3] > 0.1, 'without the mask the padding takes weight');
  assert.equal(masked.length, 16, '4 queries x 4 keys');
  for (let row = 0; row < 4; row += 1) assert.equal(masked[row * 4 + 3], 0, `row ${row}: the masked key gets exactly 0`);
  assertClose(masked.slice(0, 3), [0.3135989, 0.3500636, 0.3363374], 1e-6, 'row 0 with the padding masked');
});

test('cross-attention is m x n with m != n, and both sentences can be changed', async () => {
  const { page } = session;
  const shape = () => page.evaluate(() => {
    const element = document.getElementById('cross-heatmap');
    return { n: element.result.n, nContext: element.result.nContext, drawn: element.view.toJSON().shape };
  });
  assert.deepEqual(await shape(), { n: 3, nContext: 7, drawn: [3, 7] });
  await page.getByLabel('Keys and values (n tokens)').fill('the cat sleeps');
  await page.getByLabel('Keys and values (n tokens)').press('Enter');
  await page.waitForFunction(() => document.getElementById('cross-heatmap').result?.nContext === 3);
  await page.getByLabel('Queries (m tokens)').fill('a small black cat dreams');
  await page.getByLabel('Queries (m tokens)').press('Enter');
  const reference = lens.explainSentence({ text: 'a small black cat dreams', context: 'the cat sleeps', dModel: 16, heads: 1 });
  await waitForWeights(page, 'cross-heatmap', reference.weights);
  assert.deepEqual(await shape(), { n: 5, nContext: 3, drawn: [5, 3] });
});

// The translator's learned alignment, measured in Node on the library's run: for one head, the mean weight
// the rows writing the month's digits put on the month's word (source positions given), and the mean weight
// the k-th year digit written puts on the k-th year digit read. Row i chose generated token i.
function alignment(run, generatedTokens, { layer, head, month, year }) {
  const { m, n, heads } = run;
  const at = (row, col) => run.crossAttention[((layer * heads + head) * m + row) * n + col];
  const digitRows = [[], [], []];
  let field = 0;
  generatedTokens.forEach((token, row) => {
    if (token === '-') field += 1;
    else if (/^\d$/.test(token)) digitRows[field].push(row);
  });
  const monthShare = digitRows[1].reduce((sum, row) => sum + month.reduce((total, col) => total + at(row, col), 0), 0) / digitRows[1].length;
  const yearCopy = digitRows[0].reduce((sum, row, k) => sum + at(row, year[k]), 0) / 4;
  return { monthShare, yearCopy, even: month.length / n };
}

test('cross-attention learned: tiny-translator\'s alignment head, beside the random one, is the library\'s, and so are the numbers the text states', async () => {
  const { page } = session;
  const model = await loadModelFolder(lens, join(repoRoot, 'web', 'models', 'tiny-translator'));
  try {
    // The library, step by step: greedy decoding, then one run over the decoder's inputs.
    const translation = (text) => {
      const generated = model.generate({ text, maxTokens: 32 });
      return { generated, run: model.run({ ids: generated.sourceIds, targetIds: [model.info.decoderStartId, ...generated.ids] }) };
    };
    const shown = () => page.evaluate(() => {
      const { result } = document.getElementById('cross-learned');
      return {
        text: result.generated.text, tokens: result.tokens, targetTokens: result.targetTokens,
        crossAttention: Array.from(result.crossAttention), shape: document.getElementById('cross-learned').view.toJSON().shape,
        label: document.querySelector('#cross-learned canvas').getAttribute('aria-label'),
        outputs: ['align-output', 'align-head', 'align-month', 'align-month-word', 'align-even', 'align-year']
          .map((id) => document.getElementById(id).textContent),
      };
    });

    let { generated, run } = translation('the third of March, 2021');
    assert.equal(generated.text, '2021-03-03');
    // Source: <s> the ␣third ␣of ␣march , ␣2 0 2 1 </s>: the month's word at 4, the year's digits at 6..9.
    assert.deepEqual(run.tokens, ['<s>', 'the', ' third', ' of', ' march', ',', ' 2', '0', '2', '1', '</s>']);
    let expected = alignment(run, generated.tokens, { layer: 1, head: 1, month: [4], year: [6, 7, 8, 9] });
    // What the text claims of layer 2, head 2: nearly all of the month rows' weight on the month's word, far
    // above an even spread, and most of each year digit's on the digit it copies.
    assert.ok(expected.monthShare > 0.9 && expected.monthShare > 5 * expected.even, JSON.stringify(expected));
    assert.ok(expected.yearCopy > 0.5 && expected.yearCopy > 2 * 0.25, JSON.stringify(expected));
    let page1 = await shown();
    assert.deepEqual([page1.tokens, page1.targetTokens], [run.tokens, run.targetTokens]);
    // The page may run the relaxed-SIMD engine (fused multiply-add): the same float32 numbers but for rounding.
    assertClose(page1.crossAttention, run.crossAttention, 1e-5, 'the translator element');
    assertRowsSumToOne(page1.crossAttention, model.info.decoderLayers * run.heads * run.m, run.n, 'the translator element');
    assert.deepEqual(page1.shape, [run.m, run.n], 'target rows by source columns');
    assert.match(page1.label, /^Layer 2 of 2 · head 2 of 4: heatmap of 13 query tokens by 11 key tokens/);
    assert.deepEqual(page1.outputs, ['2021-03-03', 'layer 2, head 2', expected.monthShare.toFixed(2), 'march',
      expected.even.toFixed(2), expected.yearCopy.toFixed(2)]);

    // Another date and another head, chosen with the keyboard: the figure and the numbers follow.
    const text = 'Dec. 12th, 1999';
    ({ generated, run } = translation(text));
    assert.deepEqual(run.tokens, ['<s>', 'dec', '.', ' 1', '2', 'th', ',', ' 1', '9', '9', '9', '</s>']);
    const date = page.getByLabel('A date, as people write it');
    await date.fill(text);
    await date.press('Enter');
    const head = page.getByLabel('Cross-attention head');
    await head.focus();
    await page.keyboard.press('ArrowUp'); // head 1 (from 0: 0)
    await page.waitForFunction((expectedText) => document.getElementById('align-output').textContent === expectedText
      && document.getElementById('align-head').textContent === 'layer 2, head 1', generated.text);
    expected = alignment(run, generated.tokens, { layer: 1, head: 0, month: [1, 2], year: [7, 8, 9, 10] });
    page1 = await shown();
    assertClose(page1.crossAttention, run.crossAttention, 1e-5, 'the translator element, second date');
    assert.deepEqual(page1.outputs, [generated.text, 'layer 2, head 1', expected.monthShare.toFixed(2), 'dec .',
      expected.even.toFixed(2), expected.yearCopy.toFixed(2)]);
    await head.selectOption('1');
  } finally {
    model.dispose();
  }
});

test('the heads select changes the number of heads in both figures', async () => {
  const { page } = session;
  await page.getByLabel('Heads (h)').selectOption('8');
  await page.waitForFunction(() => ['heads-grid', 'heads-output'].every((id) => document.getElementById(id).result?.heads === 8));
  assert.equal(await page.locator('#heads-grid canvas').count() >= 8, true);
  assert.match(await page.locator('#heads-output .formula').textContent(), /head 8\]/);
});

test('the scaling choice: unscaled scores give nearly one-hot rows', async () => {
  const { page } = session;
  const scaled = await weightsOf(page, 'scaling-heatmap');
  await page.getByLabel('Scores divided by').selectOption('0.125');
  const unscaled = await nextWeights(page, 'scaling-heatmap', JSON.stringify(scaled));
  const meanRowMax = (weights) => {
    let sum = 0;
    for (let row = 0; row < 10; row += 1) sum += Math.max(...weights.slice(row * 10, row * 10 + 10));
    return sum / 10;
  };
  assert.ok(meanRowMax(unscaled) > 0.8 && meanRowMax(scaled) < 0.5, `row maxima ${meanRowMax(scaled)} -> ${meanRowMax(unscaled)}`);
});

test('the real model: 4 layers x 4 heads; the layer and head selects show another head', async () => {
  const { page } = session;
  const info = await page.evaluate(() => {
    const element = document.getElementById('model-view');
    return { layers: element.result.layers, heads: element.result.heads, n: element.result.n, shown: element.view.toJSON() };
  });
  assert.equal(info.layers, 4);
  assert.equal(info.heads, 4);
  assert.deepEqual([info.shown.layer, info.shown.head], [0, 0]);
  const first = JSON.stringify(info.shown.weights);
  await page.getByLabel('Layer', { exact: true }).selectOption({ value: '2' });
  await page.getByLabel('Head', { exact: true }).selectOption({ value: '3' });
  await page.waitForFunction(() => {
    const json = document.getElementById('model-view').view?.toJSON();
    return json?.layer === 2 && json?.head === 3;
  });
  const shown = await page.evaluate(() => document.getElementById('model-view').view.toJSON());
  assert.notEqual(JSON.stringify(shown.weights), first);
  // Causal: no weight above the diagonal, rows sum to 1.
  const flat = shown.weights.flat();
  assertRowsSumToOne(flat, info.n, info.n, 'model layer 3 head 4');
  assert.ok(flat.every((weight, index) => index % info.n <= Math.floor(index / info.n) || weight === 0));
  await page.getByLabel('Shown as').last().selectOption('modelView');
  await page.waitForFunction(() => document.getElementById('model-view').view?.toJSON().view === 'modelView');
  assert.ok(await page.locator('#model-view canvas').count() >= 16);
});

test('tiny-english\'s heads, measured live: the scores equal model.analyze in Node, and the previous-token head comes first', async () => {
  const { page } = session;
  const folder = join(repoRoot, 'web', 'models', 'tiny-english');
  const model = await loadModelFolder(lens, folder);
  try {
    const shownScores = () => page.evaluate(() => {
      const { result } = document.getElementById('head-scores');
      return { tokens: result.tokens, scores: Object.fromEntries(Object.entries(result.scores).map(([name, values]) => [name, Array.from(values)])) };
    });
    const firstRowHeader = () => page.locator('#head-scores .attnlens-scroll tbody th').first().textContent();
    const assertScores = (shown, expected, where) => {
      assert.deepEqual(shown.tokens, expected.tokens, `${where}: tokens`);
      for (const [name, values] of Object.entries(expected.scores)) assertClose(shown.scores[name], values, 1e-6, `${where}: ${name}`);
    };
    const text = 'The old man walked slowly to the river and looked at the water.';
    assertScores(await shownScores(), model.analyze({ text }), 'as the page opens');
    // The text says: sorted by previous token, layer 1 head 2 comes first.
    assert.equal((await firstRowHeader()).replaceAll('\u00a0', ' '), 'layer 1 head 2');

    const typed = 'the cat sat on the mat and the cat sat on the mat';
    await page.getByLabel('Sentence').last().fill(typed);
    await page.getByLabel('Sentence').last().press('Enter');
    await page.waitForFunction((expected) => document.getElementById('head-scores').result?.tokens.join('') === expected, model.analyze({ text: typed }).tokens.join(''));
    assertScores(await shownScores(), model.analyze({ text: typed }), 'a typed sentence that repeats itself');
    assert.equal((await firstRowHeader()).replaceAll('\u00a0', ' '), 'layer 1 head 2', 'on any sentence');

    await page.getByLabel('Table sorted by').selectOption('firstToken');
    await page.waitForFunction(() => document.querySelector('#head-scores th[aria-sort="descending"]')?.textContent.includes('first'));
    await page.getByLabel('Induction on repeated random tokens').selectOption('50');
    await page.waitForFunction(() => document.getElementById('head-scores').result?.induction !== null);
    const induction = await page.evaluate(() => Array.from(document.getElementById('head-scores').result.induction));
    assertClose(induction, model.inductionScores({ length: 50, seed: 1 }), 1e-6, 'induction on repeated random tokens');
    assert.equal(await page.locator('#head-scores table[data-score="inductionOnRepeats"]').count(), 1);
  } finally {
    model.dispose();
  }
});

// The mean share of column 0 (the first token) over rows 1 .. n-1 of head (layer, head) of [layer][head][query][key].
function firstTokenShare(values, { n, heads }, layer, head) {
  const start = (layer * heads + head) * n * n;
  let sum = 0;
  for (let row = 1; row < n; row += 1) sum += values[start + row * n];
  return sum / (n - 1);
}

test('raw weights mislead: the head the text shows is, measured here, the one whose weights most overstate the first token', async () => {
  const { page } = session;
  const folder = join(repoRoot, 'web', 'models', 'tiny-english');
  const model = await loadModelFolder(lens, folder);
  try {
    const text = 'The old man walked slowly to the river and looked at the water.';
    const run = model.run({ text });
    const analysis = model.analyze({ text, logitLens: false });
    // The claim: of the 16 heads, layer 4 head 2 (3, 1 from 0) has the largest ratio of raw weight to
    // value-weighted share on the first token, and the weights give it clearly more (over 1.4 times).
    const ratios = [];
    for (let layer = 0; layer < run.layers; layer += 1) {
      for (let head = 0; head < run.heads; head += 1) {
        ratios.push(firstTokenShare(run.attention, run, layer, head) / firstTokenShare(analysis.valueWeighted, analysis, layer, head));
      }
    }
    const best = ratios.indexOf(Math.max(...ratios));
    assert.deepEqual([Math.floor(best / run.heads), best % run.heads], [3, 1], `ratios ${ratios.map((r) => r.toFixed(2))}`);
    const raw = firstTokenShare(run.attention, run, 3, 1);
    const share = firstTokenShare(analysis.valueWeighted, analysis, 3, 1);
    assert.ok(raw / share > 1.4, `raw ${raw} vs value-weighted ${share}`);

    // The page computed the same numbers live and prints them.
    await page.waitForFunction(() => document.getElementById('mislead-values').result?.valueWeighted && document.getElementById('mislead-weights').result?.attention);
    const shown = await page.evaluate(() => ({
      valueWeighted: Array.from(document.getElementById('mislead-values').result.valueWeighted),
      attention: Array.from(document.getElementById('mislead-weights').result.attention),
      outputs: ['sink-raw', 'sink-values', 'sink-ratio', 'sink-token'].map((id) => document.getElementById(id).textContent),
      label: document.querySelector('#mislead-values canvas').getAttribute('aria-label'),
      rawLabel: document.querySelector('#mislead-weights canvas').getAttribute('aria-label'),
    }));
    // The page may run the relaxed-SIMD engine (fused multiply-add): the same float32 numbers but for rounding.
    assertClose(shown.attention, run.attention, 1e-5, 'the weights element');
    assertClose(shown.valueWeighted, analysis.valueWeighted, 1e-5, 'the value-weighted element');
    const { n } = analysis;
    const head = (3 * analysis.heads + 1) * n * n;
    assertRowsSumToOne(shown.valueWeighted.slice(head, head + n * n), n, n, 'layer 4 head 2, value-weighted');
    assert.deepEqual(shown.outputs, [raw.toFixed(2), share.toFixed(2), (raw / share).toFixed(1), run.tokens[0]]);
    assert.match(shown.label, /^Layer 4 of 4 · head 2 of 4 · value-weighted: heatmap/);
    assert.doesNotMatch(shown.rawLabel, /value-weighted/);

    // Another head: both elements and the numbers follow the controls.
    await page.getByLabel('Head shown').selectOption('0');
    await page.waitForFunction(() => /head 1 of 4 · value-weighted/.test(document.querySelector('#mislead-values canvas')?.getAttribute('aria-label') ?? ''));
    const ratio = firstTokenShare(run.attention, run, 3, 0) / firstTokenShare(analysis.valueWeighted, analysis, 3, 0);
    await page.waitForFunction((expected) => document.getElementById('sink-ratio').textContent === expected, ratio.toFixed(1));
    await page.getByLabel('Head shown').selectOption('1');
  } finally {
    model.dispose();
  }
});

test('dark mode: the page and its figures switch to dark colours', async () => {
  const { page } = session;
  await page.emulateMedia({ colorScheme: 'dark' });
  const colours = await page.evaluate(() => ({
    body: getComputedStyle(document.body).backgroundColor,
    text: getComputedStyle(document.body).color,
    card: getComputedStyle(document.getElementById('worked-softmax')).backgroundColor,
  }));
  const brightness = (css) => css.match(/\d+/g).slice(0, 3).reduce((sum, value) => sum + Number(value), 0) / 3;
  assert.ok(brightness(colours.body) < 60 && brightness(colours.text) > 180, JSON.stringify(colours));
  assert.ok(brightness(colours.card) < 60, JSON.stringify(colours));
  await page.emulateMedia({ colorScheme: 'light' });
});

test('on a phone (375 px) nothing sticks out sideways: the long choices of the selects wrap under their labels', async () => {
  const { page } = session;
  await page.setViewportSize({ width: 375, height: 667 });
  try {
    await page.waitForFunction(() => window.innerWidth === 375);
    // A control inside a box that scrolls sideways (a wide figure) is reachable; one past the page's edge is not.
    const wider = await page.evaluate(() => [...document.querySelectorAll('main select, main input, main button')]
      .filter((control) => control.getBoundingClientRect().right > document.documentElement.clientWidth)
      .filter((control) => {
        for (let box = control.parentElement; box && box !== document.body; box = box.parentElement) {
          if (/auto|scroll|hidden|clip/.test(getComputedStyle(box).overflowX)) return false;
        }
        return true;
      })
      .map((control) => `${control.id || control.tagName}: right edge at ${Math.round(control.getBoundingClientRect().right)} px`));
    assert.deepEqual(wider, [], 'controls past the right edge of a 375 px window');
    const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(pageWidth <= 375, `the page is ${pageWidth} px wide in a 375 px window`);
  } finally {
    await page.setViewportSize({ width: 1100, height: 900 });
  }
});

test('nothing but file:, data: and blob: URLs was requested, and no error was logged', () => {
  assert.deepEqual(refused, []);
  const outside = requests.filter((url) => !/^(file|data|blob):/.test(url));
  assert.deepEqual(outside, []);
  assert.ok(requests.some((url) => url.endsWith('/attnlens-elements.js')));
  assert.ok(requests.some((url) => url.endsWith('/attnlens-tiny-english.js')));
  assert.ok(requests.some((url) => url.endsWith('/attnlens-tiny-translator.js')));
  assert.deepEqual(session.errors, []);
});
