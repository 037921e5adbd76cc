// The logitLens view of attnlens/views/analysis in headless Chromium, fed
// with model.analyze of the shipped tiny-english computed in Node: a real
// table cell per layer and position with its top token and a viridis
// background for its probability, the top-k list on hover and focus, the
// arrow keys and Enter, CSV, update(), destroy() and bad data.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { weightCss } from '../../web/views/colors.js';
import { loadTinyEnglish } from '../support/model-folder.mjs';
import { analysisViewsPage, openTestPage } from '../support/views-page.mjs';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const testPage = analysisViewsPage('logitLens view');

let closePage, page, pageErrors, data, vocabulary;

before(async () => {
  const model = await loadTinyEnglish();
  const result = model.analyze({ text: 'the cat sat on the mat', topK: 3, valueWeighted: false });
  data = { layers: result.layers, n: result.n, tokens: result.tokens, logitLens: { ids: Array.from(result.logitLens.ids), probs: Array.from(result.logitLens.probs) } };
  const maxId = Math.max(...data.logitLens.ids);
  vocabulary = Array.from({ length: maxId + 1 }, (_, id) => model.tokenText(id));
  model.dispose();
  ({ page, errors: pageErrors, close: closePage } = await openTestPage(repoRoot, '__logit-lens-test.html', testPage));
});

after(async () => {
  await closePage?.();
});

const at = (layer, position, rank = 0) => (layer * data.n + position) * 3 + rank;

test('a cell per layer and position: top token over its probability\'s colour; hover, focus, arrow keys and Enter', async () => {
  const seen = await page.evaluate(([data, vocabulary]) => {
    const box = document.getElementById('box');
    const events = [];
    const view = window.views.logitLens.mount(box, data, { vocabulary, onSelect: (d) => events.push(['select', d]), onHover: (d) => events.push(['hover', d]) });
    const body = box.querySelector('table tbody');
    const cell = (layer, position) => body.rows[layer].cells[position + 1];
    const readout = () => box.querySelector('.attnlens-readout').textContent;
    const cells = [...body.querySelectorAll('td')];
    const out = {
      cells: cells.length,
      rowHeaders: [...body.rows].map((tr) => tr.cells[0].textContent),
      colHeaders: [...box.querySelector('thead').rows[0].querySelectorAll('th')].map((th) => th.textContent),
      text: cell(3, 5).querySelector('.attnlens-lens-token').textContent,
      background: getComputedStyle(cell(3, 5)).backgroundColor,
      tabStops: cells.filter((c) => c.tabIndex === 0).length,
    };
    cell(1, 2).dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    out.hovered = readout();
    cell(0, 0).focus();
    for (const key of ['ArrowRight', 'ArrowDown', 'ArrowDown', 'End']) document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
    const active = document.activeElement;
    out.moved = { layer: active.parentElement.sectionRowIndex, position: active.cellIndex - 1, tabIndex: active.tabIndex, tabStops: cells.filter((c) => c.tabIndex === 0).length };
    active.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    out.events = events.map(([type, d]) => [type, d.layer, d.position, d.top.map(({ id }) => id)]);
    view.destroy();
    return out;
  }, [data, vocabulary]);
  assert.equal(seen.cells, data.layers * data.n);
  assert.deepEqual(seen.rowHeaders, Array.from({ length: data.layers }, (_, i) => `layer\u00a0${i + 1}`));
  assert.equal(seen.colHeaders.length, data.n);
  assert.equal(seen.text, vocabulary[data.logitLens.ids[at(3, 5)]].replaceAll(' ', '␣'));
  assert.equal(seen.background.replaceAll(' ', ''), weightCss(data.logitLens.probs[at(3, 5)]));
  assert.equal(seen.tabStops, 1, 'one tab stop in the grid');
  const expectedTop = [0, 1, 2].map((rank) => `${vocabulary[data.logitLens.ids[at(1, 2, rank)]].replaceAll(' ', '␣')} ${data.logitLens.probs[at(1, 2, rank)].toFixed(3)}`);
  assert.equal(seen.hovered, `Layer 2, after ${data.tokens[2].replaceAll(' ', '␣')}: ${expectedTop.join(', ')}`);
  assert.deepEqual(seen.moved, { layer: 2, position: data.n - 1, tabIndex: 0, tabStops: 1 });
  const ids = (layer, position) => [0, 1, 2].map((rank) => data.logitLens.ids[at(layer, position, rank)]);
  assert.deepEqual(seen.events[0], ['hover', 1, 2, ids(1, 2)]);
  assert.deepEqual(seen.events.filter(([type]) => type === 'select'), [['select', 2, data.n - 1, ids(2, data.n - 1)]]);
  assert.deepEqual(pageErrors, []);
});

test('CSV, update(), refused bad data and options change nothing, destroy() leaves nothing', async () => {
  const seen = await page.evaluate((data) => {
    const box = document.getElementById('box');
    const listenersBefore = window.listenerCount();
    const view = window.views.logitLens.mount(box, data);
    const out = { csv: view.toCSV().split('\n').slice(0, 2), label: box.querySelector('tbody td .attnlens-lens-token').textContent };
    view.update({ layers: 1, n: 2, logitLens: { ids: [4, 5], probs: [0.5, 0.25] } }, { tokenLabel: (id) => `t${id}` });
    const texts = () => [...box.querySelectorAll('tbody td')].map((td) => td.textContent);
    out.updated = texts();
    out.errors = [];
    for (const [d, o] of [[{ layers: 1, n: 2, logitLens: { ids: [1], probs: [0.1] } }, {}], [undefined, { colour: 1 }], [undefined, { tokenLabel: 3 }]]) {
      try { view.update(d, o); out.errors.push(null); } catch (error) { out.errors.push(error.message); }
    }
    out.afterErrors = texts();
    view.destroy();
    out.left = box.childElementCount;
    out.listeners = window.listenerCount() - listenersBefore;
    out.style = document.querySelectorAll('style[data-attnlens]').length;
    try { view.toCSV(); } catch (error) { out.afterDestroy = error.message; }
    try { window.views.logitLens.mount(box, { layers: 2, n: 2, logitLens: null }); } catch (error) { out.mountError = `${error.name}: ${error.message}`; }
    out.leftAfterRefusal = box.childElementCount;
    return out;
  }, data);
  assert.equal(seen.csv[0], 'layer,position,rank,id,token,prob');
  assert.deepEqual(seen.csv[1].split(',').slice(0, 4).map(Number), [0, 0, 0, data.logitLens.ids[0]]);
  assert.equal(seen.label, `#${data.logitLens.ids[0]}`, 'without labels, ids');
  assert.deepEqual(seen.updated, ['t4 0.50', 't5 0.25']);
  assert.match(seen.errors[0], /must hold layers × n × topK numbers \(layers × n = 2\), got 1/);
  assert.match(seen.errors[1], /unknown option "colour"/);
  assert.match(seen.errors[2], /tokenLabel must be a function/);
  assert.deepEqual(seen.afterErrors, ['t4 0.50', 't5 0.25'], 'a refused update changes nothing');
  assert.deepEqual([seen.left, seen.listeners, seen.style], [0, 0, 0]);
  assert.match(seen.afterDestroy, /logitLens\.toCSV\(\) after destroy\(\)/);
  assert.match(seen.mountError, /^AttentionDataError: attnlens\/views: logitLens: logitLens must be \{ ids, probs \}/);
  assert.equal(seen.leftAfterRefusal, 0);
  assert.deepEqual(pageErrors, []);
});
