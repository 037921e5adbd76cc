// node tests/bench/typing-ab.mjs --page DIR_A --page DIR_B [--rounds 7] [--counts 512,1024] [--json FILE]
//
// Section 3 of the typing benchmark (typing.mjs: the last key at the end of a
// long text, on an idle page) on two or more built pages (e.g. dist/page of
// two commits, built with `vite build --config web/page/vite.config.js
// --outDir DIR`), in one Chromium, one tab each with the GPT-2-small-shaped
// model loaded, taking the key in turn: on a shared machine whatever load
// comes falls on every page alike. For each text length and page: keydown ->
// drawn heatmap, the forward, the page's phase and its parts
// (web/page/part-timing.js; a page without them counts all as "rest"), and
// the time to the next frame; medians, with every sample in the JSON.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { isolationHeaders } from '../support/bench-page.mjs';
import { launchBrowser } from '../support/chromium.mjs';
import { serveStatic } from '../support/static-server.mjs';
import { GPT2_SMALL } from './gpt2-checkpoint.mjs';
import { PAGE_PARTS, idleKey, instrumentPage, longText, modelFolder, setText, summarize, summarizeParts } from './typing.mjs';

const fixed = (value) => (Number.isFinite(value) ? value.toFixed(1) : '-');

export async function openTab(browser, dir, files) {
  const server = await serveStatic(dir, { headers: isolationHeaders });
  const page = browser.page.url() === 'about:blank' ? browser.page : await browser.context.newPage();
  page.setDefaultTimeout(180_000);
  await page.goto(`${server.url}#engine=random`);
  await page.waitForFunction(() => window.attnlens?.last);
  await page.evaluate(instrumentPage);
  await page.getByLabel(/^A trained model/).check();
  await page.locator('#model-files').setInputFiles(files);
  await page.waitForFunction((dModel) => window.attnlens.last?.model?.dModel === dModel, GPT2_SMALL.dModel, { timeout: 300_000 });
  return { dir, server, page, field: page.getByRole('textbox', { name: /^Sentence/ }) };
}

export async function runTypingAb({ pages: dirs, rounds = 7, counts = [512, 1024], json = null, log = console.log }) {
  if (dirs.length < 2) throw new Error('typing-ab: give at least two --page directories to compare');
  const browser = await launchBrowser();
  const tabs = [];
  const result = { pages: dirs, rounds, counts, cpu: os.cpus()[0]?.model, loadAverage: { before: os.loadavg() }, long: {} };
  try {
    for (const dir of dirs) tabs.push(await openTab(browser, dir, modelFolder(GPT2_SMALL)));
    const loads = [];
    for (const count of counts) {
      const untyped = longText(count - 1);
      const typed = `${untyped}.`;
      const samples = tabs.map(() => []);
      for (const { page, field } of tabs) {
        await page.bringToFront();
        await setText(page, field, typed);
      }
      for (let round = 0; round < rounds; round += 1) {
        for (const [index, { page, field }] of tabs.entries()) {
          await page.bringToFront();
          const key = await idleKey(page, {
            rounds: 1, typed, untyped, undo: () => field.press('Backspace'),
            key: async () => { await field.press('Control+End'); await page.keyboard.type('.'); },
          });
          samples[index].push(...key.samples);
          loads.push(os.loadavg()[0]);
        }
      }
      result.long[`end${count}`] = tabs.map(({ dir }, index) => {
        const mine = samples[index];
        return {
          page: dir, samples: mine, latency: summarize(mine.map((s) => s.ms)), forward: summarize(mine.map((s) => s.forwardMs)),
          pagePhase: summarize(mine.map((s) => s.phases.page)), frame: summarize(mine.map((s) => s.phases.frame)), pageParts: summarizeParts(mine),
        };
      });
      log(`a key at the end of ${count} tokens, ${rounds} rounds, the pages in turn (medians, ms):`);
      for (const r of result.long[`end${count}`]) {
        const parts = Object.keys(PAGE_PARTS).map((name) => `${name} ${fixed(r.pageParts[name].median)}`).join(', ');
        log(`  ${r.page}: keydown -> drawn ${fixed(r.latency.median)} (forward ${fixed(r.forward.median)}), ` +
          `page ${fixed(r.pagePhase.median)} (${parts}), next frame ${fixed(r.frame.median)}`);
      }
    }
    result.loadAverage.during = { min: Math.min(...loads), max: Math.max(...loads) };
  } finally {
    await browser.close();
    for (const { server } of tabs) await server.close();
  }
  result.loadAverage.after = os.loadavg();
  log(`1-minute load average during the keys ${fixed(result.loadAverage.during?.min)}-${fixed(result.loadAverage.during?.max)} ` +
    `(${os.cpus().length} logical CPUs)`);
  if (json) writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values: args } = parseArgs({
    options: { page: { type: 'string', multiple: true }, rounds: { type: 'string' }, counts: { type: 'string' }, json: { type: 'string' } },
  });
  runTypingAb({
    pages: args.page ?? [], rounds: args.rounds ? Number(args.rounds) : undefined,
    counts: args.counts ? args.counts.split(',').map(Number) : undefined, json: args.json ?? null,
  }).catch((error) => {
    console.error(error.stack ?? error.message);
    process.exitCode = 1;
  });
}
