// An encoder-decoder's views on the page (issue 23), in headless Chromium against the BUILT page, with
// a tiny random BART checkpoint written here and the library in this Node process as the reference:
//   - the three-grid model view (encoder, decoder, cross side by side) exports one file of the three,
//     each labelled: PNG and SVG side by side, CSV with a `kind` column, JSON by kind;
//   - while a translation is generated (slowed here: the worker's token messages reach the page 80 ms
//     apart), the heatmap gains cross-attention rows before the end, each the library's row, and the
//     page keeps drawing frames.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { seq2seqCheckpoint } from '../support/model-reference-seq2seq.mjs';
import { assertClose, openPageAroundTests, waitForResult } from './page-fixture.mjs';
import { openSeq2seqPage } from './seq2seq-page.mjs';

const checkpoint = seq2seqCheckpoint({ family: 'bart', seed: 7 });
const sourceIds = [3, 4, 5, 6, 7, 8];
const tokenDelayMs = 80;
// In the page, before its scripts: the model worker's messages reach the page in order, each token's
// message `window.tokenDelayMs` after the one before (0: at once), as a slow model would send them.
const slowWorker = () => {
  window.tokenDelayMs = 0;
  const NativeWorker = window.Worker;
  window.Worker = class extends NativeWorker {
    addEventListener(type, listener, options) {
      if (type !== 'message') return super.addEventListener(type, listener, options);
      let queue = Promise.resolve();
      return super.addEventListener(type, (event) => {
        const delay = event.data?.progress?.phase === 'token' ? window.tokenDelayMs : 0;
        queue = queue.then(() => (delay ? new Promise((resolve) => setTimeout(resolve, delay)) : null)).then(() => listener.call(this, event));
      }, options);
    }
  };
};

let reference, session, page;
openPageAroundTests((opened) => ({ reference, session, page } = opened), {
  open: () => openSeq2seqPage(checkpoint, sourceIds, { initScript: slowWorker }),
});

// One translation, asked for by Enter. The text is set without an input event: typing would also start
// one after a pause, which on a loaded machine can come before the Enter, and the first would then end
// (drawn, as the page draws an answer to older keys) while the second waits.
async function translate() {
  await page.locator('#sentence').evaluate((field, text) => { field.value = text; }, sourceIds.join(' '));
  await page.locator('#sentence').press('Enter');
  await waitForResult(page, `window.attnlens.last.generated && JSON.stringify(window.attnlens.last.ids) === ${JSON.stringify(JSON.stringify(sourceIds))}`);
}

test('while tokens arrive, the heatmap gains cross-attention rows, each the library\'s, and the page keeps drawing', async () => {
  const { run, generated } = reference;
  const k = generated.ids.length;
  assert.ok(k >= 3, `the checkpoint generates enough tokens to see rows arrive (${k})`);
  // Every animation frame, until the translation is done: the heatmap's rows, and the first partial picture of 2 rows.
  await page.evaluate(([delay, ids]) => {
    window.tokenDelayMs = delay;
    window.frames = [];
    window.partial = null;
    const watch = () => {
      const last = window.attnlens.last;
      // Only pictures of this translation (the page showed another record before).
      const rows = JSON.stringify(last?.ids) === ids ? document.getElementById('heatmap-canvas')?.layout?.rows ?? null : null;
      window.frames.push({ at: performance.now(), rows, generated: Boolean(last?.generated) });
      if (rows === 2 && !last.generated && !window.partial) {
        window.partial = { tokens: last.tokens, keyTokens: last.keyTokens, layers: last.layers, heads: last.heads, weights: Array.from(last.weights) };
      }
      if (!last?.generated || window.frames.length < 2) requestAnimationFrame(watch);
    };
    requestAnimationFrame(watch);
  }, [tokenDelayMs, JSON.stringify(sourceIds)]);
  await translate();
  const { frames, partial } = await page.evaluate(() => ({ frames: window.frames, partial: window.partial }));
  await page.evaluate(() => { window.tokenDelayMs = 0; });

  const before = frames.filter((frame) => !frame.generated && frame.rows !== null).map((frame) => frame.rows);
  const growing = [...new Set(before)];
  assert.ok(growing.length >= 3, `the heatmap showed several row counts before the end: ${growing} `
    + `(changes: ${JSON.stringify(frames.filter((f, i) => i === 0 || f.rows !== frames[i - 1].rows || f.generated !== frames[i - 1].generated))}, `
    + `${frames.length} frames, errors: ${session.errors})`);
  assert.ok(Math.max(...before) <= k, 'never more rows than generated tokens');
  assert.deepEqual(growing, [...growing].sort((a, b) => a - b), 'rows only grow');
  assert.equal(frames.at(-1).rows, run.m, 'the end: every decoder input a row');
  // The page drew frames all along: no gap between frames near the time of a whole translation.
  const gaps = frames.slice(1).map((frame, index) => frame.at - frames[index].at);
  assert.ok(Math.max(...gaps) < 400, `longest frame gap ${Math.max(...gaps).toFixed(0)} ms`);

  // The partial picture of 2 rows: the decoder's first two inputs by the source, the library's numbers.
  assert.ok(partial, 'a picture of 2 rows was on screen');
  assert.deepEqual(partial.tokens, run.targetTokens.slice(0, 2));
  assert.deepEqual(partial.keyTokens, run.tokens);
  assert.equal(partial.layers, reference.info.decoderLayers);
  const firstRows = [];
  for (let block = 0; block < reference.info.decoderLayers * run.heads; block += 1) {
    firstRows.push(...run.crossAttention.slice(block * run.m * run.n, (block * run.m + 2) * run.n));
  }
  assertClose(partial.weights, firstRows, 1e-5, 'the first two rows, as generated');
  assert.deepEqual(session.errors, [], 'no console errors');
});

// A download started by a click on the button named `name`: { name, bytes }.
async function download(name) {
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name }).click()]);
  return { name: file.suggestedFilename(), bytes: readFileSync(await file.path()) };
}

test('the three-grid model view exports one file of the three kinds, each labelled: SVG, PNG, CSV and JSON', async () => {
  const { run } = reference;
  const titles = ['Encoder self-attention', 'Decoder self-attention', 'Cross-attention (target × source)'];
  await page.locator('button[data-view="model"]').click();
  await page.locator('#model-grid .model-kinds > section >> nth=2').waitFor();

  const svg = await download('Export SVG');
  assert.equal(svg.name, 'attnlens-model.svg');
  const parts = await page.evaluate((text) => {
    const root = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
    const nested = [...root.children].filter((child) => child.localName === 'svg');
    return {
      width: Number(root.getAttribute('width')), height: Number(root.getAttribute('height')),
      parts: nested.map((part) => ({ x: Number(part.getAttribute('x')), width: Number(part.getAttribute('width')),
        texts: [...part.querySelectorAll('text')].map((t) => t.textContent) })),
    };
  }, svg.bytes.toString('utf8'));
  assert.equal(parts.parts.length, 3);
  parts.parts.forEach((part, index) => {
    assert.ok(part.texts.includes(titles[index]), `grid ${index} is labelled ${titles[index]}`);
    if (index > 0) assert.ok(part.x >= parts.parts[index - 1].x + parts.parts[index - 1].width, 'side by side, not overlapping');
  });
  assert.equal(parts.width, parts.parts[2].x + parts.parts[2].width);

  const png = await download('Export PNG');
  assert.equal(png.name, 'attnlens-model.png');
  assert.equal(png.bytes.subarray(1, 4).toString('latin1'), 'PNG');
  // IHDR: width and height, at twice the SVG's size (the views' PNGs are drawn at pixel ratio 2).
  assert.deepEqual([png.bytes.readUInt32BE(16), png.bytes.readUInt32BE(20)], [2 * parts.width, 2 * parts.height]);

  const csv = (await download('Export CSV')).bytes.toString('utf8').trim().split('\n');
  assert.equal(csv[0], 'kind,layer,head,query_index,query_token,key_index,key_token,weight');
  const expected = { encoder: run.attention, decoder: run.decoderAttention, cross: run.crossAttention };
  const columns = { encoder: run.n, decoder: run.m, cross: run.n };
  const seen = { encoder: [], decoder: [], cross: [] };
  for (const line of csv.slice(1)) {
    const fields = line.split(',');
    const [kind, layer, head, query, key] = [fields[0], ...[1, 2, 3, 5].map((i) => Number(fields[i]))];
    const rows = kind === 'encoder' ? run.n : run.m;
    seen[kind].push([((layer * run.heads + head) * rows + query) * columns[kind] + key, Number(fields.at(-1))]);
  }
  for (const [kind, values] of Object.entries(expected)) {
    assert.equal(seen[kind].length, values.length, `${kind}: one CSV row per weight of every layer`);
    assertClose(seen[kind].map(([, value]) => value), seen[kind].map(([index]) => values[index]), 1e-6, `${kind} CSV`);
  }

  const json = JSON.parse((await download('Export JSON')).bytes.toString('utf8'));
  assert.deepEqual(json.ids, sourceIds);
  assert.deepEqual(json.targetIds, Array.from(run.targetIds));
  assert.deepEqual(json.kinds.map((part) => [part.kind, part.title]), [['encoder', titles[0]], ['decoder', titles[1]], ['cross', titles[2]]]);
  for (const part of json.kinds) {
    assertClose(part.weights.flat(3), Array.from(expected[part.kind]), 1e-6, `${part.kind} JSON`);
  }
  assert.deepEqual(json.kinds[2].shape, [reference.info.decoderLayers, run.heads, run.m, run.n]);
  assert.deepEqual(json.kinds[2].queryTokens, run.targetTokens);
  assert.deepEqual(json.kinds[2].keyTokens, run.tokens);
  assert.deepEqual(session.errors, [], 'no console errors');
});
