// The steps view of attnlens/views in headless Chromium, fed with
// Explanations the library computed in Node (explainMatrices on the worked
// example, explainSentence with cross-attention, a causal mask and a
// temperature, and model.explain of sort-gpt2): the numbers it shows, its
// wording, stepping, events, JSON export, destroy() and bad data.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { load } from '../../web/lib/node.js';
import { listenerCounter, openTestPage } from '../support/views-page.mjs';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const modelDir = join(repoRoot, '..', 'shared', 'models', 'sort-gpt2');
const f32 = (rows) => new Float32Array(rows.flat());
const workedExample = {
  x: f32([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]]), n: 3, dModel: 4,
  wq: f32([[0.1, 0.2, 0, 0], [0, 0.1, 0.3, 0], [0.1, 0, 0, 0.2], [0, 0, 0.2, 0.3]]),
  wk: f32([[0.2, 0, 0.1, 0], [0, 0.1, 0, 0.3], [0.1, 0, 0.2, 0], [0, 0.2, 0, 0.1]]),
  wv: f32([[0, 0.1, 0, 0.2], [0.2, 0, 0.2, 0], [0, 0.3, 0.1, 0], [0.1, 0, 0, 0.3]]),
};

// An Explanation as JSON-able data (typed arrays as { f32: [...] }); the page turns it back.
function portable(explanation) {
  return Object.fromEntries(Object.entries(explanation).map(([key, value]) => [key, value instanceof Float32Array
    ? { f32: Array.from(value, (v) => (v === -Infinity ? '-inf' : v)) } : value instanceof Int32Array ? Array.from(value) : value]));
}

const testPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>steps view</title></head>
<body style="margin:0;width:900px"><div id="box"></div>
${listenerCounter}
<script>
  window.revive = (data) => Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v && v.f32 ? new Float32Array(v.f32.map((x) => (x === '-inf' ? -Infinity : x))) : v]));
  window.rows = (selector) => [...document.querySelectorAll(selector + ' tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent));
</script>
<script type="module">
  import * as views from '/web/views/index.js';
  window.views = views;
  window.ready = true;
</script></body></html>`;

let closePage, page, pageErrors, lens, data;

before(async () => {
  lens = await load();
  const model = await lens.loadModel({
    config: readFileSync(join(modelDir, 'config.json'), 'utf8'),
    weights: readFileSync(join(modelDir, 'model.safetensors')),
    tokenizer: readFileSync(join(modelDir, 'tokenizer.json'), 'utf8'),
  });
  data = {
    worked: portable(lens.explainMatrices(workedExample)),
    sentence: portable(lens.explainSentence({ text: 'The cat sat on the mat.', context: 'A dog ran.', heads: 2, dModel: 16, temperature: 2, causal: true })),
    model: portable(model.explain({ text: '2 0 1 1 0 2', layer: 1, head: 2 })),
    modelInfo: { architecture: model.info.architecture, kvHeads: model.info.kvHeads },
  };
  model.dispose();
  ({ page, errors: pageErrors, close: closePage } = await openTestPage(repoRoot, '__steps-test.html', testPage));
});

after(async () => {
  await closePage?.();
});

test('the worked example: nine steps with the known numbers; buttons, keys and update() step; destroy() leaves nothing', async () => {
  const result = await page.evaluate((worked) => {
    const box = document.getElementById('box');
    const listenersBefore = window.listenerCount();
    const stepEvents = [];
    const view = window.views.steps.mount(box, window.revive(worked), { onStep: (d) => stepEvents.push(d.step) });
    const seen = { count: view.count, first: box.querySelector('h3').textContent, x1: window.rows('#box')[1] };
    const next = [...box.querySelectorAll('button')].find((b) => b.textContent === 'Next →');
    const previous = [...box.querySelectorAll('button')].find((b) => b.textContent === '← Previous');
    seen.previousDisabled = previous.disabled;
    next.click();
    seen.q0 = window.rows('#box').at(-3); // W_Q's 4 rows, then Q's 3: Q row 0
    for (let i = 0; i < 5; i += 1) box.querySelector('.attnlens-view').dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    seen.weightsTitle = box.querySelector('h3').textContent;
    seen.weights = window.rows('#box');
    seen.sentence = box.querySelector('.step-sentence').textContent;
    view.update(undefined, { step: 99 });
    seen.last = { step: view.step, title: box.querySelector('h3').textContent, output0: window.rows('#box')[0], nextDisabled: next.disabled };
    seen.stepEvents = stepEvents;
    seen.json = JSON.parse(JSON.stringify(view.toJSON()));
    view.destroy();
    view.destroy();
    let afterDestroy = null;
    try { view.update(undefined, { step: 0 }); } catch (error) { afterDestroy = error.message; }
    return { seen, left: box.childElementCount, listeners: window.listenerCount() - listenersBefore, style: document.querySelectorAll('style[data-attnlens]').length, afterDestroy };
  }, data.worked);
  const { seen } = result;
  assert.equal(seen.count, 9);
  assert.match(seen.first, /^Step 1 of 9: X: the input rows$/);
  assert.deepEqual(seen.x1, ['0.0000', '2.0000', '0.0000', '2.0000']);
  assert.equal(seen.previousDisabled, true);
  assert.deepEqual(seen.q0, ['0.2000', '0.2000', '0.0000', '0.2000']); // X[0] · W_Q by hand
  assert.match(seen.weightsTitle, /^Step 7 of 9: Weights = softmax\(scaled scores\)$/);
  assert.deepEqual(seen.weights[0], ['0.3136', '0.3501', '0.3363']);
  assert.match(seen.sentence, /add up to 1/);
  assert.equal(seen.last.step, 8, 'clamped to the last step');
  assert.match(seen.last.title, /^Step 9 of 9: Output = concat\(heads\) · W_O$/);
  assert.deepEqual(seen.last.output0, ['0.3109', '0.2600', '0.2723', '0.4409']);
  assert.equal(seen.last.nextDisabled, true);
  assert.deepEqual(seen.stepEvents, [1, 2, 3, 4, 5, 6], 'one step event per move by the reader, none for update()');
  assert.equal(seen.json.steps.length, 9);
  seen.json.steps[6].matrices[0].values[0].forEach((value, i) => assert.ok(Math.abs(value - [0.3135989, 0.3500636, 0.3363374][i]) <= 1e-6, `JSON weights[0][${i}] = ${value}`));
  assert.equal(result.left, 0);
  assert.equal(result.listeners, 0, 'listeners left after destroy()');
  assert.equal(result.style, 0, 'stylesheet left after the last view');
  assert.match(result.afterDestroy, /after destroy\(\)/);
  assert.deepEqual(pageErrors, []);
});

test('cross-attention, a causal mask and a temperature: X_context, the key tokens, T and the mask in the wording', async () => {
  const seen = await page.evaluate((sentence) => {
    const box = document.getElementById('box');
    const view = window.views.steps.mount(box, window.revive(sentence), { head: 1, controls: false });
    const at = (step) => {
      view.update(undefined, { step });
      const tables = [...box.querySelectorAll('table')];
      return {
        title: box.querySelector('h3').textContent, formula: box.querySelector('.formula').textContent,
        sentence: box.querySelector('.step-sentence').textContent,
        names: tables.map((t) => t.querySelector('.matrix-name').textContent),
        heads: tables.map((t) => [...t.querySelectorAll('thead th')].map((th) => th.textContent)),
        rows: window.rows('#box'),
      };
    };
    const result = { navHidden: box.querySelector('.attnlens-view > div').hidden, x: at(0), k: at(2), scaled: at(5), weights: at(6) };
    view.destroy();
    return result;
  }, data.sentence);
  assert.equal(seen.navHidden, true, 'controls: false hides the buttons');
  assert.deepEqual(seen.x.names, ['X', 'X_context']);
  assert.match(seen.k.title, /^Step 3 of 9: K = X_context · W_K, head 2$/);
  assert.equal(seen.k.formula, 'K = X_context · W_K (same columns)');
  assert.deepEqual(seen.k.heads[0], ['8', '9', '10', '11', '12', '13', '14', '15'], 'head 2 uses columns 8..15');
  assert.match(seen.scaled.formula, /scores \/ √d_k \/ T {2}\(√8 = 2\.8284, T = 2\)/);
  assert.match(seen.scaled.sentence, /temperature T flattens.*the mask sets the keys a query may not see to -∞/);
  assert.deepEqual(seen.weights.heads[0], ['A', 'dog', 'ran', '.'], 'the context\'s tokens are the keys');
  const reference = lens.explainSentence({ text: 'The cat sat on the mat.', context: 'A dog ran.', heads: 2, dModel: 16, temperature: 2, causal: true });
  const row0 = Array.from(reference.weights.subarray(7 * 4, 7 * 4 + 4), (v) => v.toFixed(4));
  assert.deepEqual(seen.weights.rows[0], row0, 'head 2, query 0');
  assert.ok(seen.scaled.rows.flat().includes('-∞'), 'masked keys shown as -∞');
});

test('model.explain: ten steps worded for GPT-2, the layer output last', async () => {
  const seen = await page.evaluate(([model, info]) => {
    const box = document.getElementById('box');
    const view = window.views.steps.mount(box, window.revive(model), info);
    const texts = [];
    for (let step = 0; step < view.count; step += 1) {
      view.update(undefined, { step });
      texts.push([box.querySelector('h3').textContent, box.querySelector('.formula').textContent]);
    }
    const json = view.toJSON();
    view.destroy();
    // The Explanation records its architecture and causality: without the options the wording is the same.
    const own = window.views.stepsOf(window.revive(model)).map((step) => [step.title, step.formula, step.sentence]);
    return { texts, own, head: json.steps[1].matrices[1].colLabels };
  }, [data.model, data.modelInfo]);
  assert.deepEqual(seen.own.map(([title, formula]) => [title, formula]), seen.texts.map(([title, formula]) => [title.replace(/^Step \d+ of \d+: /, ''), formula]));
  assert.match(seen.own[5][2], /the mask sets the keys a query may not see to -∞/, 'GPT-2 is causal: the record says so');
  assert.equal(seen.texts.length, 10);
  assert.deepEqual(seen.texts[0], ['Step 1 of 10: X: what layer 2 reads', 'X = LayerNorm(residual stream)']);
  assert.deepEqual(seen.texts[1], ['Step 2 of 10: Q = X · W_Q, head 3', 'Q = X · W_Q[:, 32..47] + b_Q']);
  assert.deepEqual(seen.texts[9], ['Step 10 of 10: Layer 2 output', 'h = stream + output;  layer output = h + MLP(norm(h))']);
  assert.equal(seen.head[0], '32', 'the explanation\'s own head (2) by default');
});

test('bad data and options throw an Error naming the problem, and mount nothing', async () => {
  const errors = await page.evaluate((worked) => {
    const box = document.getElementById('box');
    const good = () => window.revive(worked);
    const attempt = (data, options) => {
      try {
        window.views.steps.mount(box, data, options);
        return 'mounted';
      } catch (error) {
        return `${error.name}: ${error.message}`;
      }
    };
    const result = {
      none: attempt(null),
      attention: attempt({ tokens: ['a'], weights: new Float32Array([1]), heads: 1 }),
      short: attempt({ ...good(), q: new Float32Array(5) }),
      heads: attempt({ ...good(), heads: 0 }),
      head: attempt(good(), { head: 1 }),
      option: attempt(good(), { colour: 'red' }),
      element: (() => { try { window.views.steps.mount(null, good()); return 'mounted'; } catch (error) { return error.message; } })(),
      left: box.childElementCount,
    };
    return result;
  }, data.worked);
  assert.equal(errors.none, 'AttentionDataError: attnlens/views: steps: expected an Explanation (lens.explainSentence, lens.explainMatrices or model.explain)');
  assert.match(errors.attention, /^AttentionDataError: .*expected an Explanation/);
  assert.equal(errors.short, 'AttentionDataError: attnlens/views: steps: q must be a Float32Array of 12 values, got 5');
  assert.equal(errors.heads, 'AttentionDataError: attnlens/views: steps: heads must be a positive integer, got 0');
  assert.equal(errors.head, 'RangeError: attnlens/views: head must be an integer from 0 to 0, got 1');
  assert.equal(errors.option, 'TypeError: attnlens/views: unknown option "colour"');
  assert.match(errors.element, /steps\.mount needs a DOM element/);
  assert.equal(errors.left, 0);
});
