// The headScores view of attnlens/views/analysis in headless Chromium, fed
// with model.analyze of the shipped tiny-english computed in Node: one viridis
// cell per head and score with its exact value on hover and focus, the arrow
// keys and Enter, the table sorted by a header click, CSV, update(),
// destroy() and bad data.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { weightCss } from '../../web/views/colors.js';
import { loadTinyEnglish } from '../support/model-folder.mjs';
import { analysisViewsPage, openTestPage } from '../support/views-page.mjs';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const testPage = analysisViewsPage('headScores view');

let closePage, page, pageErrors, analysis;

before(async () => {
  const model = await loadTinyEnglish();
  const result = model.analyze({ text: 'the cat sat on the mat because the cat was tired' });
  analysis = { layers: result.layers, heads: result.heads, scores: Object.fromEntries(Object.entries(result.scores).map(([k, v]) => [k, Array.from(v)])) };
  model.dispose();
  ({ page, errors: pageErrors, close: closePage } = await openTestPage(repoRoot, '__head-scores-test.html', testPage));
});

after(async () => {
  await closePage?.();
});

test('a cell per head and score, coloured by its value; hover, focus, arrow keys and Enter read and select it', async () => {
  const seen = await page.evaluate((data) => {
    const box = document.getElementById('box');
    const events = [];
    const view = window.views.headScores.mount(box, data, { onSelect: (d) => events.push(['select', d]), onHover: (d) => events.push(['hover', d]) });
    const grids = [...box.querySelectorAll('table[data-score]')];
    const cell = (score, layer, head) => box.querySelector(`table[data-score="${score}"] tbody`).rows[layer].cells[head + 1];
    const readout = () => box.querySelector('.attnlens-readout').textContent;
    const cells = grids.flatMap((grid) => [...grid.tBodies[0].querySelectorAll('td')]);
    const size = cell('previousToken', 0, 1).getBoundingClientRect();
    const out = {
      cells: cells.length,
      captions: grids.map((grid) => grid.caption.textContent),
      background: getComputedStyle(cell('previousToken', 0, 1)).backgroundColor,
      title: cell('previousToken', 0, 1).title,
      size: [Math.round(size.width), Math.round(size.height)],
      tabStops: cells.filter((c) => c.tabIndex === 0).length,
    };
    cell('induction', 2, 3).dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    out.hovered = readout();
    cell('firstToken', 0, 0).focus();
    out.focused = readout();
    for (const key of ['ArrowRight', 'ArrowDown', 'ArrowDown']) document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
    const active = document.activeElement;
    out.moved = { row: active.parentElement.sectionRowIndex, col: active.cellIndex, tabIndex: active.tabIndex, readout: readout() };
    active.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    cell('currentToken', 1, 1).click();
    out.events = events.map(([type, d]) => [type, d.score, d.layer, d.head, d.value]);
    view.destroy();
    return out;
  }, analysis);
  assert.equal(seen.cells, 5 * 16);
  assert.deepEqual(seen.captions, ['previous token 4 × 4', 'first token 4 × 4', 'current token 4 × 4', 'duplicate token 4 × 4', 'induction 4 × 4']);
  const value = analysis.scores.previousToken[1];
  assert.equal(seen.background.replaceAll(' ', ''), weightCss(value));
  assert.equal(seen.title, String(Math.fround(value)));
  assert.ok(seen.size[0] <= 20 && seen.size[1] <= 20, `a small cell: ${seen.size}`);
  assert.equal(seen.tabStops, 5, 'one tab stop per score grid');
  assert.equal(seen.hovered, `induction, layer 3 head 4: ${analysis.scores.induction[11].toFixed(3)}`);
  assert.match(seen.focused, /^first token, layer 1 head 1: /);
  assert.deepEqual(seen.moved, { row: 2, col: 2, tabIndex: 0, readout: `first token, layer 3 head 2: ${analysis.scores.firstToken[9].toFixed(3)}` });
  assert.deepEqual(seen.events.filter(([type]) => type === 'select'), [
    ['select', 'firstToken', 2, 1, Math.fround(analysis.scores.firstToken[9])],  // Enter
    ['select', 'currentToken', 1, 1, Math.fround(analysis.scores.currentToken[5])],  // a click
  ]);
  assert.deepEqual(seen.events[0], ['hover', 'induction', 2, 3, Math.fround(analysis.scores.induction[11])]);
});

test('the table lists every head; a header click sorts by that score, again flips it; CSV, update(), bad data, destroy()', async () => {
  const seen = await page.evaluate((data) => {
    const box = document.getElementById('box');
    const listenersBefore = window.listenerCount();
    const view = window.views.headScores.mount(box, data);
    const list = () => box.querySelector('table:not([data-score])');
    const column = (index) => [...list().tBodies[0].rows].map((tr) => tr.cells[index].textContent.replaceAll('\u00a0', ' '));
    const out = { rows: column(0).length, firstRows: column(0).slice(0, 5) };
    list().querySelector('button[data-sort="previousToken"]').click();
    out.sorted = { values: column(1), aria: list().querySelector('[data-sort="previousToken"]').parentElement.getAttribute('aria-sort'),
      top: column(0)[0], caption: list().caption.textContent, focused: document.activeElement.dataset.sort };
    list().querySelector('button[data-sort="previousToken"]').click();
    out.flipped = { values: column(1), aria: list().querySelector('th[aria-sort="ascending"] button')?.dataset.sort };
    out.csv = view.toCSV().split('\n').slice(0, 2);
    view.update({ layers: 1, heads: 2, scores: { induction: [0.25, 0.75] } }, { sortBy: null });
    out.updated = { cells: box.querySelectorAll('table[data-score] tbody td').length, rows: column(1) };
    out.errors = [];
    for (const [d, o] of [[{ layers: 1, heads: 2, scores: { induction: [0.1] } }, {}], [undefined, { sortBy: 'nope' }], [undefined, { colour: 1 }]]) {
      try { view.update(d, o); out.errors.push(null); } catch (error) { out.errors.push(error.message); }
    }
    out.afterErrors = column(1);
    view.destroy();
    out.left = box.childElementCount;
    out.listeners = window.listenerCount() - listenersBefore;
    out.style = document.querySelectorAll('style[data-attnlens]').length;
    try { view.toCSV(); } catch (error) { out.afterDestroy = error.message; }
    return out;
  }, analysis);
  assert.equal(seen.rows, 16);
  assert.deepEqual(seen.firstRows, ['layer 1 head 1', 'layer 1 head 2', 'layer 1 head 3', 'layer 1 head 4', 'layer 2 head 1']);
  const descending = [...analysis.scores.previousToken].sort((a, b) => b - a).map((v) => v.toFixed(3));
  assert.deepEqual(seen.sorted.values, descending);
  assert.equal(seen.sorted.aria, 'descending');
  assert.equal(seen.sorted.top, 'layer 1 head 2', 'layer 0 head 1 (shown from 1) leads on previous token');
  assert.match(seen.sorted.caption, /by previous token, largest first/);
  assert.equal(seen.sorted.focused, 'previousToken');
  assert.deepEqual(seen.flipped.values, [...descending].reverse());
  assert.equal(seen.flipped.aria, 'previousToken');
  assert.equal(seen.csv[0], 'layer,head,previousToken,firstToken,currentToken,duplicateToken,induction');
  assert.equal(Number(seen.csv[1].split(',')[2]), Math.min(...analysis.scores.previousToken));
  assert.deepEqual(seen.updated, { cells: 2, rows: ['0.250', '0.750'] });
  assert.match(seen.errors[0], /scores\.induction must hold layers × heads = 2 numbers, got 1/);
  assert.match(seen.errors[1], /sortBy must be null or one of induction, got nope/);
  assert.match(seen.errors[2], /unknown option "colour"/);
  assert.deepEqual(seen.afterErrors, ['0.250', '0.750'], 'a refused update changes nothing');
  assert.deepEqual([seen.left, seen.listeners, seen.style], [0, 0, 0]);
  assert.deepEqual(pageErrors, []);
  assert.match(seen.afterDestroy, /headScores\.toCSV\(\) after destroy\(\)/);
});
