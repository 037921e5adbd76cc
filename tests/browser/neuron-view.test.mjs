// The neuron view of attnlens/views/analysis (BertViz's) in headless Chromium,
// fed with model.explain of the shipped tiny-english computed in Node: its
// numbers equal a float64 computation in this test from the record's q and k
// (dot = Σ q_t k_t, times the scale, and the softmax of those equals the
// record's weights), the query buttons pick the query, hover and the keyboard
// read a key's row, token text stays text, and bad input changes nothing.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { loadTinyEnglish } from '../support/model-folder.mjs';
import { analysisViewsPage, openTestPage } from '../support/views-page.mjs';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

// The record as model.explain returns it: typed arrays (page.evaluate sends plain arrays).
const testPage = analysisViewsPage('neuron view', `
  window.asRecord = (plain) => Object.fromEntries(Object.entries(plain).map(([key, value]) =>
    [key, Array.isArray(value) && typeof value[0] === 'number' ? new Float32Array(value) : value]));`);

const layer = 1;
const head = 2;
let closePage, page, pageErrors, record, plain;

before(async () => {
  const model = await loadTinyEnglish();
  record = model.explain({ text: 'the old man saw the river', layer, head });
  model.dispose();
  plain = Object.fromEntries(['n', 'nContext', 'heads', 'headWidth', 'scale', 'temperature', 'causal', 'crossAttention', 'head', 'tokens', 'q', 'k', 'weights', 'scaledScores']
    .map((key) => [key, record[key] instanceof Float32Array ? Array.from(record[key]) : record[key]]));
  ({ page, errors: pageErrors, close: closePage } = await openTestPage(repoRoot, '__neuron-test.html', testPage));
});

after(async () => {
  await closePage?.();
});

// The independent reference: float64 dot products from the record's q and k, scaled, and their softmax.
function reference(query) {
  const { n, heads, headWidth, scale, q, k } = record;
  const width = heads * headWidth;
  const dots = Array.from({ length: n }, (_, key) => {
    let sum = 0;
    for (let t = 0; t < headWidth; t += 1) sum += q[query * width + head * headWidth + t] * k[key * width + head * headWidth + t];
    return sum;
  });
  const scaled = dots.map((dot) => dot * scale);
  const seen = scaled.map((value, key) => (record.causal && key > query ? -Infinity : value));
  const most = Math.max(...seen);
  const exps = seen.map((value) => Math.exp(value - most));
  const total = exps.reduce((a, b) => a + b, 0);
  return { dots, scaled, softmax: exps.map((value) => value / total) };
}

const readCsv = (csv) => csv.trim().split('\n').slice(1).map((line) => line.split(','));

test('its numbers are q · k from the record, scaled, and their softmax is the record\'s weights', async () => {
  assert.equal(record.causal, true, 'tiny-english is causal: later keys are masked');
  const seen = await page.evaluate((plain) => {
    const box = document.getElementById('box');
    const view = window.views.neuron.mount(box, window.asRecord(plain));
    const out = { query: view.query, csv: view.toCSV(), rows: box.querySelectorAll('tbody tr').length,
      strips: box.querySelector('tbody tr').querySelectorAll('.attnlens-strip > span').length,
      caption: box.querySelector('caption').textContent };
    box.querySelector('button[data-query="2"]').click();
    out.picked = { query: view.query, csv: view.toCSV(), pressed: [...box.querySelectorAll('button[data-query]')].map((b) => b.getAttribute('aria-pressed')) };
    view.destroy();
    return out;
  }, plain);
  const n = record.n;
  assert.equal(seen.query, n - 1, 'the last token by default');
  assert.equal(seen.rows, n);
  assert.equal(seen.strips, 2 * record.headWidth, 'k and q ∘ k, one square per component');
  assert.match(seen.caption, new RegExp(`head ${head + 1}, query`));
  for (const [query, csv] of [[n - 1, seen.csv], [2, seen.picked.csv]]) {
    const expected = reference(query);
    readCsv(csv).forEach(([key, , dot, scaled, softmax], index) => {
      assert.equal(Number(key), index);
      assert.ok(Math.abs(Number(dot) - expected.dots[index]) < 1e-4 * Math.max(1, Math.abs(expected.dots[index])), `query ${query} key ${index}: dot ${dot} vs ${expected.dots[index]}`);
      if (index > query) {
        assert.equal(scaled, '', `key ${index} is masked for query ${query}`);
      } else {
        assert.ok(Math.abs(Number(scaled) - expected.scaled[index]) < 1e-4 * Math.max(1, Math.abs(expected.scaled[index])), `query ${query} key ${index}: scaled`);
      }
      assert.ok(Math.abs(Number(softmax) - expected.softmax[index]) < 1e-5, `query ${query} key ${index}: softmax ${softmax} vs ${expected.softmax[index]}`);
      assert.ok(Math.abs(record.weights[(head * n + query) * n + index] - expected.softmax[index]) < 1e-5, 'the record agrees with the reference');
    });
  }
  assert.equal(seen.picked.query, 2);
  assert.deepEqual(seen.picked.pressed, Array.from({ length: n }, (_, i) => String(i === 2)));
  assert.deepEqual(pageErrors, []);
});

test('keyboard: one tab stop among the keys, arrows, Home and End move, focus reads the row, Enter selects', async () => {
  const seen = await page.evaluate((plain) => {
    const box = document.getElementById('box');
    const events = [];
    const view = window.views.neuron.mount(box, window.asRecord(plain), { query: 3, onSelect: (d) => events.push(['select', d.key]), onHover: (d) => events.push(['hover', d.key]) });
    const keys = () => [...box.querySelectorAll('tbody th[scope=row]')];
    const out = { tabStops: keys().filter((th) => th.tabIndex === 0).length };
    keys()[0].focus();
    out.first = box.querySelector('.attnlens-readout').textContent;
    const press = (key) => document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
    press('ArrowDown'); press('ArrowDown');
    out.afterDown = keys().indexOf(document.activeElement);
    press('End');
    out.afterEnd = keys().indexOf(document.activeElement);
    press('Home'); press('ArrowDown');
    out.afterHome = keys().indexOf(document.activeElement);
    out.highlighted = [...box.querySelectorAll('tbody tr.attnlens-highlight')].map((tr) => tr.sectionRowIndex);
    out.readout = box.querySelector('.attnlens-readout').textContent;
    press('Enter');
    out.tabStopsAfter = keys().filter((th) => th.tabIndex === 0).length;
    out.events = events.filter(([type]) => type === 'select');
    view.destroy();
    return out;
  }, plain);
  const expected = reference(3);
  assert.equal(seen.tabStops, 1);
  assert.deepEqual([seen.afterDown, seen.afterEnd, seen.afterHome], [2, record.n - 1, 1]);
  assert.deepEqual(seen.highlighted, [1]);
  assert.match(seen.first, new RegExp(`^key .* \\(#0\\): q · k = ${expected.dots[0].toFixed(4).replace('-', '\\-')}, × `));
  assert.match(seen.readout, new RegExp(`\\(#1\\): .* softmax ${expected.softmax[1].toFixed(4)}$`));
  assert.equal(seen.tabStopsAfter, 1);
  assert.deepEqual(seen.events, [['select', 1]]);
  assert.deepEqual(pageErrors, []);
});

test('token text is text; refused records and options change nothing; destroy() leaves nothing', async () => {
  const hostile = '<img src=x onerror="window.pwned=1">';
  const seen = await page.evaluate(([plain, hostile]) => {
    const box = document.getElementById('box');
    const listenersBefore = window.listenerCount();
    const tokens = plain.tokens.map((token, i) => (i === 1 ? hostile : token));
    const view = window.views.neuron.mount(box, window.asRecord({ ...plain, tokens }));
    const out = { button: box.querySelector('button[data-query="1"]').textContent, key: box.querySelectorAll('tbody th')[1].textContent, images: box.querySelectorAll('img').length };
    const csvBefore = view.toCSV();
    out.errors = [];
    for (const [record, options] of [[undefined, { head: 99 }], [undefined, { query: -1 }], [{ ...window.asRecord(plain), q: new Float32Array(3) }, {}], [undefined, { colour: 1 }]]) {
      try { view.update(record, options); out.errors.push(null); } catch (error) { out.errors.push(`${error.name}: ${error.message}`); }
    }
    out.unchanged = view.toCSV() === csvBefore;
    view.destroy();
    out.left = box.childElementCount;
    out.listeners = window.listenerCount() - listenersBefore;
    out.pwned = window.pwned ?? null;
    return out;
  }, [plain, hostile]);
  assert.equal(seen.button, hostile.replaceAll(' ', '␣'));
  assert.equal(seen.key, hostile.replaceAll(' ', '␣'));
  assert.equal(seen.images, 0);
  assert.equal(seen.pwned, null);
  assert.match(seen.errors[0], /^RangeError: .*head must be an integer from 0 to 3, got 99/);
  assert.match(seen.errors[1], /^RangeError: .*query must be an integer from 0 to \d+, got -1/);
  assert.match(seen.errors[2], /^AttentionDataError: .*neuron: q must be a Float32Array of \d+ values, got 3/);
  assert.match(seen.errors[3], /unknown option "colour"/);
  assert.equal(seen.unchanged, true);
  assert.deepEqual([seen.left, seen.listeners], [0, 0]);
  assert.deepEqual(pageErrors, []);
});
