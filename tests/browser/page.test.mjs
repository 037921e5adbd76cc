// End-to-end tests of the attention page (issue 4) in Debian's headless
// Chromium, against the BUILT page (dist/page) served over HTTP.
// Reference numbers come from the attnlens library in Node (same WASM core,
// separate process) and from the worked example of issue 2.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { before, describe, test } from 'node:test';
import { load } from '../../web/lib/node.js';
import {
  assertClose, assertRowsSumToOne, canvasInk, lastResult, openPageAroundTests, typeSentence, waitForResult,
} from './page-fixture.mjs';

const workedExample = {
  weightsRow0: [0.3135989, 0.3500636, 0.3363374],
  outputRow0: [0.3109394, 0.2599746, 0.2722866, 0.4409267],
};

let session;
let page;
let lens;

// The page built first: the library's load() reads the WebAssembly modules that ensureBuilt() builds when missing.
openPageAroundTests(async (opened) => {
  session = opened;
  page = opened.page;
  await session.goto();
});
before(async () => {
  lens = await load();
});

// Every test ends here: nothing the page did may log an error or open a dialog.
function assertQuiet() {
  assert.deepEqual(session.errors, [], 'console errors or uncaught exceptions in the page');
  assert.deepEqual(session.dialogs, [], 'the page opened a dialog');
}

async function setControl(label, value) {
  const control = page.getByLabel(label, { exact: true });
  if (typeof value === 'boolean') await control.setChecked(value);
  else if (await control.evaluate((element) => element.tagName === 'SELECT')) await control.selectOption(String(value));
  else {
    await control.fill(String(value));
    await control.dispatchEvent('change');
  }
}

async function showView(name) {
  await page.getByRole('button', { name, exact: true }).click();
}

describe('sentence in, weights out', () => {
  test('the prefilled sentence is computed on load and its rows sum to 1', async () => {
    const first = await page.evaluate(() => document.querySelector('textarea, input').id);
    assert.equal(first, 'sentence', 'the sentence field is the first text field');
    const prefilled = await page.locator('#sentence').inputValue();
    assert.ok(prefilled.length > 10, 'the sentence field has a sentence in it');
    const last = await lastResult(page);
    const reference = lens.explainSentence({ text: prefilled });
    assert.deepEqual(last.tokens, reference.tokens);
    assert.equal(last.heads, 4);
    assertRowsSumToOne(last.weights.slice(0, last.tokens.length ** 2), last.tokens.length, last.tokens.length, 'head 1');
    assertQuiet();
  });

  test('typing a sentence shows its tokens, count and WASM time; weights equal the library\'s', async () => {
    const text = 'Attention is all you need.';
    await typeSentence(page, text, { tokens: ['Attention', 'is', 'all', 'you', 'need', '.'] });
    const status = await page.locator('#status').textContent();
    assert.match(status, /\b6 tokens\b/);
    assert.match(status, /computed in \d+\.\d+ ms \(WASM/);
    const last = await lastResult(page);
    const reference = lens.explainSentence({ text });
    assert.equal(last.heads, reference.heads);
    assertClose(last.weights, reference.weights, 1e-6, 'weights vs the Node library');
    for (let head = 0; head < last.heads; head += 1) {
      assertRowsSumToOne(last.weights.slice(head * 36, (head + 1) * 36), 6, 6, `head ${head + 1}`);
    }
    assertQuiet();
  });

  test('recomputes while typing (debounced), without Enter', async () => {
    await page.locator('#sentence').pressSequentially(' Really', { delay: 20 });
    await waitForResult(page, 'window.attnlens.last.tokens.at(-1) === "Really"');
    assert.equal((await lastResult(page)).tokens.length, 7);
    assertQuiet();
  });

  test('every control changes the computation exactly as the library does', async () => {
    const text = 'The cat sat on the mat because it was warm.';
    await typeSentence(page, text, { tokens: lens.explainSentence({ text }).tokens });
    await setControl('d_model', 32);
    await setControl('heads', 2);
    await setControl('seed', 7);
    await setControl('temperature', 0.5);
    await setControl('causal mask', true);
    await waitForResult(page, 'window.attnlens.last.heads === 2');
    const settings = { text, dModel: 32, heads: 2, seed: 7, temperature: 0.5, causal: true };
    await page.waitForFunction(() => /d_model 32/.test(document.getElementById('status').textContent));
    const last = await lastResult(page);
    const reference = lens.explainSentence(settings);
    assertClose(last.weights, reference.weights, 1e-6, 'weights with d_model 32, 2 heads, seed 7, T 0.5, causal');
    const n = reference.n;
    for (let row = 0; row < n; row += 1) {
      for (let col = row + 1; col < n; col += 1) assert.equal(last.weights[row * n + col], 0, `causal: (${row}, ${col})`);
    }
    // A different seed must change the numbers (the control is really wired).
    const otherSeed = lens.explainSentence({ ...settings, seed: 8 });
    assert.ok(last.weights.some((value, index) => Math.abs(value - otherSeed.weights[index]) > 1e-4));

    await setControl('identity projections (pure similarity)', true);
    await page.waitForFunction(() => window.attnlens.last && document.getElementById('identity').checked);
    await waitForResult(page, 'true');
    const identity = lens.explainSentence({ ...settings, identity: true });
    await page.waitForFunction((expected) => Math.abs(window.attnlens.last.weights[1] - expected) < 1e-6, identity.weights[1]);
    assertClose((await lastResult(page)).weights, identity.weights, 1e-6, 'identity projections');
    assertQuiet();
  });

  test('a second sentence turns on cross-attention (queries from A, keys from B)', async () => {
    const text = 'Where is the cat?';
    const context = 'The cat is on the mat.';
    await page.locator('#context').fill(context);
    await typeSentence(page, text, { tokens: ['Where', 'is', 'the', 'cat', '?'] });
    await waitForResult(page, 'window.attnlens.last.keyTokens.length === 7');
    const last = await lastResult(page);
    assert.deepEqual(last.keyTokens, ['The', 'cat', 'is', 'on', 'the', 'mat', '.']);
    const reference = lens.explainSentence({ text, context, dModel: 32, heads: 2, seed: 7, temperature: 0.5, causal: true, identity: true });
    assertClose(last.weights, reference.weights, 1e-6, 'cross-attention weights');
    assertRowsSumToOne(last.weights.slice(0, 35), 5, 7, 'cross-attention head 1');
    assert.match(await page.locator('#status').textContent(), /5 query tokens × 7 context tokens/);
    await page.locator('#context').fill('');
    await page.locator('#context').press('Enter');
    await waitForResult(page, 'window.attnlens.last.keyTokens.length === 5');
    assertQuiet();
  });

  test('the share link restores the sentence and every setting in a fresh page', async () => {
    const link = await page.locator('#share-url').inputValue();
    const expected = await lastResult(page);
    const fresh = await session.context.newPage();
    const errors = [];
    fresh.on('pageerror', (error) => errors.push(error.message));
    await fresh.goto(link);
    await waitForResult(fresh);
    assert.equal(await fresh.locator('#sentence').inputValue(), 'Where is the cat?');
    assert.equal(await fresh.locator('#d-model').inputValue(), '32');
    assert.equal(await fresh.locator('#heads').inputValue(), '2');
    assert.equal(await fresh.locator('#seed').inputValue(), '7');
    assert.equal(await fresh.locator('#temperature').inputValue(), '0.5');
    assert.equal(await fresh.locator('#causal').isChecked(), true);
    assert.equal(await fresh.locator('#identity').isChecked(), true);
    assert.deepEqual(await lastResult(fresh), expected);
    await fresh.close();
    assert.deepEqual(errors, []);
    assertQuiet();
  });
});

describe('views', () => {
  before(async () => {
    await session.goto('#s=The+quick+brown+fox+jumps+over+the+lazy+dog.');
  });

  test('heatmap: canvas drawn; hover and arrow keys show the exact weight', async () => {
    await showView('Heatmap');
    const ink = await canvasInk(page, '#heatmap-canvas');
    assert.ok(ink.inked > ink.pixels * 0.2 && ink.colours > 20, `heatmap looks blank: ${JSON.stringify(ink)}`);
    const last = await lastResult(page);
    const canvas = page.locator('#heatmap-canvas');
    await canvas.focus();
    await page.keyboard.press('ArrowDown'); // the first key press selects cell (0, 0)
    for (const key of ['ArrowDown', 'ArrowRight', 'ArrowRight']) await page.keyboard.press(key);
    const readout = await page.locator('#readout').textContent();
    assert.ok(readout.includes(`query “quick” (#1) → key “brown” (#2): weight ${last.weights[1 * 10 + 2].toPrecision(7)}`), readout);
    // Hover: the cell under the pointer, read from the layout the page used.
    const layout = await canvas.evaluate((element) => element.layout);
    const box = await canvas.boundingBox();
    await page.mouse.move(box.x + layout.x + layout.cell * 4.5, box.y + layout.y + layout.cell * 3.5);
    assert.ok((await page.locator('#readout').textContent()).includes(`(#3) → key “jumps” (#4): weight ${last.weights[3 * 10 + 4].toPrecision(7)}`));
    assert.equal(await page.locator('#tooltip').isVisible(), true);
    assertQuiet();
  });

  test('all heads: one non-blank canvas per head; clicking one enlarges it', async () => {
    await showView('All heads');
    const buttons = page.locator('#multiples button');
    assert.equal(await buttons.count(), 4);
    for (let head = 0; head < 4; head += 1) {
      const ink = await canvasInk(page, `#multiples button:nth-child(${head + 1}) canvas`);
      assert.ok(ink.inked > ink.pixels * 0.3 && ink.colours > 10, `head ${head + 1} looks blank`);
    }
    await page.getByRole('button', { name: 'Head 3: open in the heatmap' }).click(); // attnlens/views' allHeads label
    assert.equal(await page.getByRole('button', { name: 'Heatmap', exact: true }).getAttribute('aria-pressed'), 'true');
    assert.equal(await page.locator('#head').inputValue(), '3');
    assertQuiet();
  });

  test('lines: drawn with opacity = weight; hovering a token isolates its lines', async () => {
    await showView('Lines');
    const before = await canvasInk(page, '#lines-canvas');
    assert.ok(before.inked > 1000 && before.colours > 20, `line view looks blank: ${JSON.stringify(before)}`);
    const canvas = page.locator('#lines-canvas');
    const layout = await canvas.evaluate((element) => element.layout);
    const box = await canvas.boundingBox();
    await page.mouse.move(box.x + layout.leftX - 10, box.y + layout.top + layout.rowH * 5.5);
    const readout = await page.locator('#readout').textContent();
    assert.match(readout, /^query “over” \(#5\) looks most at/);
    const isolated = await canvasInk(page, '#lines-canvas');
    assert.ok(isolated.inked < before.inked, 'isolating one token should draw fewer lines');
    await canvas.focus();
    await page.keyboard.press('ArrowRight');
    assert.match(await page.locator('#readout').textContent(), /^key “/);
    assertQuiet();
  });

  test('head average: drawn, and the table alternative lists its weights (rows sum to 1)', async () => {
    await showView('Head average');
    const ink = await canvasInk(page, '#average-canvas');
    assert.ok(ink.inked > ink.pixels * 0.2 && ink.colours > 20, 'average heatmap looks blank');
    await page.getByRole('button', { name: 'Show as table' }).click();
    const table = page.locator('#table-alternative table');
    assert.equal(await table.locator('tbody tr').count(), 10);
    const firstRow = await table.locator('tbody tr').first().locator('td').allTextContents();
    assert.equal(firstRow.length, 10);
    const sum = firstRow.reduce((total, cell) => total + Number(cell), 0);
    assert.ok(Math.abs(sum - 1) < 10 * 0.5e-4 + 1e-6, `average row sums to ${sum}`);
    const last = await lastResult(page);
    const mean = Array.from({ length: 10 }, (_, col) => (last.weights[col] + last.weights[100 + col] + last.weights[200 + col] + last.weights[300 + col]) / 4);
    assertClose(firstRow.map(Number), mean, 0.5e-4 + 1e-7, 'table row 0 vs the mean of the heads');
    await page.getByRole('button', { name: 'Hide table' }).click();
    assertQuiet();
  });
});

describe('step-by-step mode', () => {
  async function stepTable(name) {
    const table = page.locator('#step table').filter({ has: page.locator('.matrix-name', { hasText: new RegExp(`^${name}$`) }) });
    return { caption: await table.locator('caption').textContent(), rows: await table.locator('tbody tr').evaluateAll((rows) => rows.map((row) => Array.from(row.querySelectorAll('td'), (cell) => cell.textContent))) };
  }

  test('the worked example shows the known numbers, one step at a time', async () => {
    await showView('Step by step');
    // Settings left over from earlier exploring must not change the example's numbers.
    await page.getByLabel('causal mask').check();
    await page.getByLabel('temperature').fill('2');
    await page.getByLabel('temperature').dispatchEvent('change');
    await page.getByRole('button', { name: /Load the worked example \(3 tokens/ }).click();
    await waitForResult(page, 'window.attnlens.last.tokens.length === 3');
    assert.equal(await page.getByLabel('causal mask').isChecked(), false);
    assert.equal(await page.getByLabel('temperature').inputValue(), '1');
    const last = await lastResult(page);
    assertClose(last.weights.slice(0, 3), workedExample.weightsRow0, 1e-6, 'weights row 0');

    assert.match(await page.locator('#step h3').textContent(), /^Step 1 of 9: X/);
    const x = await stepTable('X');
    assert.match(x.caption, /X 3 × 4/);
    assert.deepEqual(x.rows[1], ['0.0000', '2.0000', '0.0000', '2.0000']);
    assert.equal(await page.getByRole('button', { name: '← Previous' }).isDisabled(), true);

    await page.getByRole('button', { name: 'Next →' }).click();
    const q = await stepTable('Q');
    assert.match(q.caption, /Q 3 × 4/);
    assert.deepEqual(q.rows[0], ['0.2000', '0.2000', '0.0000', '0.2000']); // X[0] · W_Q by hand

    // Keyboard: arrow keys move while the step panel has focus.
    await page.locator('#step').focus();
    for (let step = 3; step <= 7; step += 1) await page.keyboard.press('ArrowRight');
    assert.match(await page.locator('#step h3').textContent(), /^Step 7 of 9: Weights = softmax/);
    const weights = await stepTable('weights');
    assert.match(weights.caption, /weights 3 × 3/);
    assert.deepEqual(weights.rows[0], workedExample.weightsRow0.map((value) => value.toFixed(4)));
    assert.match(await page.locator('#step .step-sentence').textContent(), /add up to 1/);

    await page.keyboard.press('ArrowRight');
    const headOutput = await stepTable('head 1 output');
    assert.deepEqual(headOutput.rows[0], workedExample.outputRow0.map((value) => value.toFixed(4)));
    await page.keyboard.press('ArrowRight');
    const output = await stepTable('output');
    assert.match(output.caption, /output 3 × 4/);
    assert.deepEqual(output.rows[0], ['0.3109', '0.2600', '0.2723', '0.4409']);
    assert.equal(await page.getByRole('button', { name: 'Next →' }).isDisabled(), true);
    await page.keyboard.press('ArrowLeft');
    assert.match(await page.locator('#step h3').textContent(), /^Step 8 of 9/);
    assertQuiet();
  });

  test('the custom matrices editor shows errors inline and computes valid CSV', async () => {
    const editor = page.getByLabel('Matrices (JSON or CSV)');
    await editor.fill('X\n1, 2\n3\nW_Q\n1,0\n0,1\nW_K\n1,0\n0,1\nW_V\n1,0\n0,1');
    await page.getByRole('button', { name: 'Compute these matrices' }).click();
    assert.equal(await page.locator('#matrix-error').textContent(), 'X: row 2 has 1 numbers, expected 2 numbers like row 1');
    await editor.fill('X\n1, 2\n3, abc');
    await page.getByRole('button', { name: 'Compute these matrices' }).click();
    assert.equal(await page.locator('#matrix-error').textContent(), 'line 3: "abc" is not a number');

    // Identity projections on orthogonal rows: weights are softmax of X X^T / sqrt(2), by hand.
    await editor.fill('X\n1, 0\n0, 1\nW_Q\n1,0\n0,1\nW_K\n1,0\n0,1\nW_V\n1,0\n0,1');
    await page.getByRole('button', { name: 'Compute these matrices' }).click();
    await waitForResult(page, 'window.attnlens.last.tokens.length === 2 && window.attnlens.last.weights.length === 4');
    assert.equal(await page.locator('#matrix-error').isHidden(), true);
    const high = Math.exp(1 / Math.SQRT2) / (Math.exp(1 / Math.SQRT2) + 1);
    assertClose((await lastResult(page)).weights, [high, 1 - high, 1 - high, high], 1e-6, 'hand-computed 2 x 2 weights');
    await page.getByRole('button', { name: 'Back to the sentence' }).click();
    await waitForResult(page, 'window.attnlens.last.tokens.length === 10');
    assertQuiet();
  });
});

describe('exports', () => {
  async function downloadOf(buttonName) {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: buttonName }).click()]);
    return { name: download.suggestedFilename(), bytes: await readFile(await download.path()) };
  }

  test('CSV and JSON hold the tokens and exactly the weights', async () => {
    await showView('Heatmap');
    const last = await lastResult(page);
    const n = last.tokens.length;

    const csv = await downloadOf('Export CSV');
    assert.equal(csv.name, 'attnlens-weights.csv');
    const lines = csv.bytes.toString('utf8').trim().split('\n');
    assert.equal(lines[0], 'head,query_index,query_token,key_index,key_token,weight');
    assert.equal(lines.length - 1, last.heads * n * n);
    lines.slice(1).forEach((line, index) => {
      const [head, query, queryToken, key, keyToken, weight] = line.split(',');
      assert.equal(Number(head) * n * n + Number(query) * n + Number(key), index);
      assert.equal(queryToken, last.tokens[Number(query)]);
      assert.equal(keyToken, last.tokens[Number(key)]);
      assert.equal(Math.fround(Number(weight)), last.weights[index]);
    });

    const json = JSON.parse((await downloadOf('Export JSON')).bytes.toString('utf8'));
    assert.deepEqual(json.queryTokens, last.tokens);
    assert.deepEqual(json.shape, [last.heads, n, n]);
    assert.deepEqual(json.weights.flat(2), last.weights);
    assert.equal(json.settings.text, 'The quick brown fox jumps over the lazy dog.');
    assertQuiet();
  });

  test('PNG and SVG of the current view are valid images', async () => {
    const png = await downloadOf('Export PNG');
    assert.match(png.name, /^attnlens-heatmap-head\d\.png$/);
    assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const width = png.bytes.readUInt32BE(16);
    const height = png.bytes.readUInt32BE(20);
    assert.ok(width > 300 && height > 300, `PNG is ${width} x ${height}`);

    const svg = (await downloadOf('Export SVG')).bytes.toString('utf8');
    const parsed = await page.evaluate((text) => {
      const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
      return {
        error: doc.querySelector('parsererror')?.textContent ?? null,
        root: doc.documentElement.localName,
        texts: Array.from(doc.querySelectorAll('text'), (node) => node.textContent),
        cells: doc.querySelectorAll('rect').length,
      };
    }, svg);
    assert.equal(parsed.error, null);
    assert.equal(parsed.root, 'svg');
    assert.ok(parsed.texts.includes('quick') && parsed.texts.includes('lazy'), 'token labels in the SVG');
    assert.ok(parsed.cells >= 100, 'one rect per cell of the 10 x 10 heatmap');
    assertQuiet();
  });
});

describe('safety and accessibility', () => {
  test('the XSS sentence is shown as text and runs nothing', async () => {
    const attack = '<img src=x onerror=alert(1)>';
    await page.evaluate(() => { window.xssRan = false; });
    await typeSentence(page, `${attack} and <script>window.xssRan = true</script>`);
    await waitForResult(page, 'window.attnlens.last.tokens[0] === "<"');
    const last = await lastResult(page);
    assert.deepEqual(last.tokens.slice(0, 12), ['<', 'img', 'src', '=', 'x', 'onerror', '=', 'alert', '(', '1', ')', '>']);
    await page.getByRole('button', { name: 'Show as table' }).click();
    const headers = await page.locator('#table-alternative tbody th').allTextContents();
    assert.deepEqual(headers.slice(0, 3), ['<', 'img', 'src']);
    await page.getByRole('button', { name: 'Hide table' }).click();
    // The matrix editor echoes unknown names in its error message: as text.
    await page.getByLabel('Matrices (JSON or CSV)').fill(`{"${attack.replaceAll('"', '')}": 1}`);
    await page.getByRole('button', { name: 'Compute these matrices' }).click();
    assert.match(await page.locator('#matrix-error').textContent(), /unknown name "<img src=x onerror=alert\(1\)>"/);
    // A link carrying the attack restores it as text too.
    await session.goto(`#s=${encodeURIComponent(attack)}`);
    assert.equal(await page.locator('#sentence').inputValue(), attack);
    await page.waitForTimeout(200); // give a broken image's onerror the chance to fire
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(await page.locator('script:not([type="module"])').count(), 0);
    assert.equal(await page.evaluate(() => window.xssRan ?? false), false);
    assertQuiet();
  });

  test('Tab reaches every control, each with a visible focus ring', async () => {
    await session.goto();
    const controls = await page.evaluate(() => {
      const candidates = document.querySelectorAll('a[href], button, input, select, textarea, [tabindex="0"]');
      // A radio group is one Tab stop (its checked radio); the arrow keys move inside it.
      const otherRadioChecked = (element) => element.type === 'radio' && !element.checked
        && document.querySelector(`input[type="radio"][name="${element.name}"]:checked`) !== null;
      return Array.from(candidates).filter((element) => element.getClientRects().length > 0 && !element.disabled
        && !otherRadioChecked(element)).map((element, index) => {
        element.dataset.tabOrder = String(index);
        return element.id || element.dataset.view || element.textContent.trim();
      });
    });
    assert.ok(controls.length >= 25, `found only ${controls.length} controls`);
    const reached = new Set();
    await page.locator('body').focus();
    for (let press = 0; press < controls.length * 2 && reached.size < controls.length; press += 1) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const element = document.activeElement;
        const style = getComputedStyle(element);
        return { order: element.dataset.tabOrder, ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 };
      });
      if (focused.order === undefined) continue;
      assert.ok(focused.ring, `no visible focus ring on ${controls[focused.order]}`);
      reached.add(Number(focused.order));
    }
    const missed = controls.filter((_, index) => !reached.has(index));
    assert.deepEqual(missed, [], 'controls Tab never reached');
    assertQuiet();
  });

  test('every form control has a label', async () => {
    const unlabelled = await page.evaluate(() => Array.from(document.querySelectorAll('input, select, textarea'))
      .filter((element) => element.labels.length === 0 && !element.getAttribute('aria-label'))
      .map((element) => element.id));
    assert.deepEqual(unlabelled, []);
  });

  test('a 512-token input stays usable: computed, drawn on canvas, hover still answers', async () => {
    const words = Array.from({ length: 512 }, (_, index) => `w${index % 97}`);
    await typeSentence(page, words.join(' '), { tokens: words });
    const last = await lastResult(page);
    assert.equal(last.weights.length, 4 * 512 * 512);
    assertRowsSumToOne(last.weights.slice(0, 512 * 512), 512, 512, '512 tokens, head 1');
    const ink = await canvasInk(page, '#heatmap-canvas');
    assert.ok(ink.inked > ink.pixels * 0.3, 'the 512 x 512 heatmap is drawn');
    const timings = await page.evaluate(() => window.attnlens.timings);
    console.log(`# 512 tokens: WASM ${timings.wasmMs.toFixed(1)} ms, drawing ${timings.drawMs.toFixed(1)} ms`);
    for (const view of ['All heads', 'Lines', 'Head average', 'Step by step', 'Heatmap']) await showView(view);
    const canvas = page.locator('#heatmap-canvas');
    const layout = await canvas.evaluate((element) => element.layout);
    await canvas.scrollIntoViewIfNeeded();
    const box = await canvas.boundingBox();
    await page.mouse.move(box.x + layout.x + layout.cell * 7.5, box.y + layout.y + layout.cell * 2.5);
    assert.match(await page.locator('#readout').textContent(), /\(#2\) → key “w7” \(#7\)/);
    assertQuiet();
  });
});
