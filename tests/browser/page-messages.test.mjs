// What the page says when something goes wrong, found by using the built page
// as its users do: each message says what happened where the user can see it,
// and points the right way to the details.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ensureBuilt, openPage } from './page-fixture.mjs';

let session;

before(async () => {
  ensureBuilt();
  session = await openPage();
});

after(() => session?.close());

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
