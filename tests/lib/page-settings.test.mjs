// The page's share links (web/page/settings.js) for a model that opens on its own head, as the
// built-in tiny-translator does: a link leaves out the layer and head only when they are the ones
// the model opens on, and the page can tell a link that names them from one that does not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaults, hashNames, settingsFromHash, settingsToHash } from '../../web/page/settings.js';

const opening = { layer: 1, head: 1 }; // tiny-translator's alignment head (layer 2, head 2 as the page counts)
const linkParams = (settings, openingHead) => new URLSearchParams(settingsToHash(settings, openingHead).slice(1));

test('a link names the layer and head unless they are the ones the model opens on', () => {
  const on = (layer, head) => ({ ...defaults, model: 'tiny-translator', layer, head });
  const first = linkParams(on(0, 0), opening);
  assert.deepEqual([first.get('layer'), first.get('head')], ['1', '1'], 'layer 1 head 1 is not where it opens: named');
  const own = linkParams(on(1, 1), opening);
  assert.deepEqual([own.has('layer'), own.has('head')], [false, false], 'its own head: left out');
  const mixed = linkParams(on(1, 3), opening);
  assert.deepEqual([mixed.has('layer'), mixed.get('head')], [false, '4']);
  // Without an opening head (any other model) layer 1 head 1 are the defaults, left out as before.
  const plain = linkParams({ ...defaults, model: 'tiny-english' });
  assert.deepEqual([plain.has('layer'), plain.has('head'), plain.has('model')], [false, false, false]);
});

test('hashNames tells a link that names the layer or head from one that leaves them to the defaults', () => {
  for (const [hash, layer, head] of [['#model=tiny-translator', false, false], ['#model=tiny-translator&layer=1', true, false],
    ['#head=2&model=tiny-translator', false, true], ['', false, false]]) {
    assert.deepEqual([hashNames(hash, 'layer'), hashNames(hash, 'head')], [layer, head], hash);
  }
  // A link written with the opening head reads back as what it showed once the model opens there.
  const shown = { ...defaults, model: 'tiny-translator', layer: 0, head: 2 };
  const hash = settingsToHash(shown, opening);
  const read = settingsFromHash(hash);
  const restored = { ...opening, ...(hashNames(hash, 'layer') ? { layer: read.layer } : {}), ...(hashNames(hash, 'head') ? { head: read.head } : {}) };
  assert.deepEqual(restored, { layer: 0, head: 2 });
});
