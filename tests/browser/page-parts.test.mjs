// The page's store and its two sources on the page's thread, in Node: the
// store announces each change once, in order, with the keys that changed
// (also a change made by a listener); each source's compute(settings) gives
// the library's own record, as the custom elements compute it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { load } from '../../web/lib/node.js';
import { defaults } from '../../web/page/settings.js';
import { matricesSource, sentenceSource } from '../../web/page/sources.js';
import { createStore } from '../../web/page/store.js';

describe('createStore', () => {
  test('listeners get the new state and the keys that changed; unchanged values announce nothing', () => {
    const store = createStore({ a: 1, b: 2 });
    const seen = [];
    const unsubscribe = store.subscribe((state, changed) => seen.push([{ ...state }, [...changed]]));
    store.set({ a: 1 });
    store.set({ a: 3, b: 2 });
    store.setSettings({ head: 1 });
    unsubscribe();
    store.set({ a: 4 });
    assert.deepEqual(seen, [[{ a: 3, b: 2 }, ['a']], [{ a: 3, b: 2, settings: { head: 1 } }, ['settings']]]);
    assert.equal(store.state.a, 4);
  });

  test('a change made while listeners run is announced after the round, to every listener, in order', () => {
    const store = createStore({ view: 'model', shown: null });
    const first = [];
    const second = [];
    store.subscribe((state, changed) => {
      first.push(`${[...changed]}=${state.view}`);
      if (changed.has('shown') && state.view === 'model') store.set({ view: 'heatmap' }); // as the model controller does
    });
    store.subscribe((state, changed) => second.push(`${[...changed]}=${state.view}`));
    store.set({ shown: 1 });
    assert.deepEqual(first, ['shown=model', 'view=heatmap']);
    assert.deepEqual(second, ['shown=model', 'view=heatmap'], 'the second listener saw the first state before the next');
  });
});

describe('the sources on the page\'s thread', async () => {
  const lens = await load();

  test('sentenceSource: lens.explainSentence of the settings; an empty context is self-attention', () => {
    const settings = { ...defaults, text: 'The cat sat.', context: '  ', heads: 2, dModel: 16, temperature: 2, causal: true };
    const record = sentenceSource(lens).compute(settings);
    const reference = lens.explainSentence({ text: 'The cat sat.', heads: 2, dModel: 16, seed: 1, temperature: 2, causal: true });
    assert.deepEqual(record.tokens, reference.tokens);
    assert.deepEqual(Array.from(record.weights), Array.from(reference.weights));
    assert.equal(record.crossAttention, false);
    assert.equal(record.temperature, 2);
    assert.equal(sentenceSource(lens).compute({ ...settings, context: 'A dog.' }).crossAttention, true);
  });

  test('matricesSource: the typed matrices, the page\'s mask and temperature, the JSON\'s row labels', () => {
    const text = JSON.stringify({ X: [[1, 0], [0, 1]], W_Q: [[1, 0], [0, 1]], W_K: [[1, 0], [0, 1]], W_V: [[1, 0], [0, 1]], tokens: ['a', 'b'] });
    const record = matricesSource(lens).compute({ matrixText: text, causal: false, temperature: 1 });
    const high = Math.exp(1 / Math.SQRT2) / (Math.exp(1 / Math.SQRT2) + 1); // softmax of X X^T / sqrt(2), by hand
    assert.ok(Array.from(record.weights).every((w, i) => Math.abs(w - [high, 1 - high, 1 - high, high][i]) < 1e-6));
    assert.deepEqual(record.tokens, ['a', 'b']);
    const masked = matricesSource(lens).compute({ matrixText: 'X\n1 0\n0 1\nW_Q\n1 0\n0 1\nW_K\n1 0\n0 1\nW_V\n1 0\n0 1', causal: true, temperature: 1 });
    assert.equal(masked.causal, true);
    assert.equal(masked.tokens, null);
    assert.equal(masked.weights[1], 0, 'the first query cannot see the second key');
  });
});
