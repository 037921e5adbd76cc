// node tests/bench/typing-enter.mjs [--page DIR] [--count 512] [--rounds 8]
//
// Issue 24: does drawing the keystroke itself slow the page's forward? A key
// typed at the end of a long text changes the field, which the page then
// lays out, paints and composites while the model worker's forward runs on
// both cores of a 2-core machine; ab-browser.mjs's T workloads have nothing
// running beside them. Here one built page (default dist/page), the
// GPT-2-small-shaped model loaded as typing.mjs loads it, times the same
// one-position forward two ways, taking turns, each after an idle pause:
//   typed  the last character typed again (typing.mjs section 3);
//   enter  Enter in the field, which holds the same text: the page runs it
//          again (controls.js), the model reuses its n - 1 kept positions as
//          for the key, and the field does not change.
// Prints the forward (model.run's elapsedMs in the worker) and the worker's
// time besides it, medians and minima.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { launchBrowser } from '../support/chromium.mjs';
import { GPT2_SMALL } from './gpt2-checkpoint.mjs';
import { openTab } from './typing-ab.mjs';
import { longText, modelFolder, reset, setText, summarize, waitForDrawn } from './typing.mjs';

const { values: args } = parseArgs({
  options: {
    page: { type: 'string', default: join(repoRoot, 'dist', 'page') },
    count: { type: 'string', default: '512' }, rounds: { type: 'string', default: '8' },
  },
});
const count = Number(args.count);
const rounds = Number(args.rounds);
const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });
const fixed = (value) => (Number.isFinite(value) ? value.toFixed(1) : '-');

// The drawn run of `text` (the mark's detail, web/page/compute.js markDrawn).
const drawnRun = (page, text) => page.evaluate((wanted) => performance.getEntriesByName('attnlens:model-drawn')
  .find((entry) => entry.detail.text === wanted).detail, text);

const browser = await launchBrowser();
let tab = null;
try {
  tab = await openTab(browser, args.page, modelFolder(GPT2_SMALL));
  const { page, field } = tab;
  const untyped = longText(count - 1);
  const typed = `${untyped}.`;
  await setText(page, field, typed);
  const ways = {
    typed: async () => {
      await reset(page);
      await field.press('Backspace');
      await waitForDrawn(page, untyped, 180_000);
      await sleep(800);
      await reset(page);
      await field.press('Control+End');
      await page.keyboard.type('.');
    },
    enter: async () => {
      await sleep(800);
      await reset(page);
      await field.press('Enter');
    },
  };
  const samples = { typed: [], enter: [] };
  const loads = [];
  for (let round = 0; round < rounds; round += 1) {
    for (const way of round % 2 ? ['enter', 'typed'] : ['typed', 'enter']) {
      await ways[way]();
      await waitForDrawn(page, typed, 180_000);
      const run = await drawnRun(page, typed);
      if (run.reusedPositions !== count - 1) throw new Error(`${way}: the run reused ${run.reusedPositions} of ${run.n} positions, not ${count - 1}`);
      samples[way].push(run);
      loads.push(loadavg()[0]);
      await sleep(200);
    }
  }
  console.log(`${args.page}: the one-position forward at the end of ${count} tokens, ${rounds} rounds each, taking turns; ` +
    `1-minute load ${fixed(Math.min(...loads))}-${fixed(Math.max(...loads))}`);
  for (const [way, runs] of Object.entries(samples)) {
    const forward = summarize(runs.map((run) => run.forwardMs));
    const besides = summarize(runs.map((run) => run.runMs - run.forwardMs));
    console.log(`  ${way.padEnd(6)} forward median ${fixed(forward.median)} min ${fixed(forward.min)} ms; model.run besides it median ${fixed(besides.median)} ms`);
  }
} finally {
  await browser.close();
  await tab?.server.close();
}
