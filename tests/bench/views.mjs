// node tests/bench/views.mjs [--tokens 512] [--runs 9]
//
// How fast attnlens/views draws in headless Chromium (issue 11: a 512-token view
// draws in under 50 ms and stays responsive on hover). Each view is mounted on
// fresh seeded softmax weights (no cached image), then updated with other weights,
// then hovered; the canvas is read back after each step so the drawing is done
// when the clock stops. Prints the median and the range of each, per view. The
// lines view's cost depends on the weights (it draws the visible lines), so it
// runs on spread rows (its worst case) and on peaked rows (like trained heads).
// It is 5,000 px tall at 512 tokens and draws only the rows on screen, so it is
// mounted in a box 720 px high that scrolls (as in a page): mounted at the top,
// scrolled to the middle (a jump: the band there is drawn afresh), updated there
// (the lines crossing the middle are the most), scrolled on by 120 px (the band
// moves and only the new rows are painted), and hovered over its query labels
// (each move isolates another token: a redraw). A scroll is timed from the start
// of the frame that draws it (waiting for that frame is not counted).
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { launchBrowser } from '../support/chromium.mjs';
import { serveStatic } from '../support/static-server.mjs';

const { values: args } = parseArgs({ options: { tokens: { type: 'string' }, runs: { type: 'string' } } });
const n = Number(args.tokens ?? 512);
const runs = Number(args.runs ?? 9);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const budgetMs = 50;

const page = `<!doctype html><meta charset="utf-8"><title>attnlens/views benchmark</title>
<body style="margin:0;font-family:sans-serif"><div id="box" style="width:1000px"></div>
<script type="module">
  import * as views from '/web/views/index.js';
  // Seeded softmax rows, [head][query][key]: logits uniform in [0, sharpness).
  // Sharpness 4 spreads each row over most keys (the lines view's worst case);
  // 16 puts most of a row on a few keys, closer to what trained heads do.
  function makeData(n, heads, seed, sharpness) {
    let state = seed >>> 0 || 1;
    const random = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32);
    const weights = new Float32Array(heads * n * n);
    for (let start = 0; start < weights.length; start += n) {
      let sum = 0;
      for (let key = 0; key < n; key += 1) sum += (weights[start + key] = Math.exp(sharpness * random()));
      for (let key = 0; key < n; key += 1) weights[start + key] /= sum;
    }
    return { tokens: Array.from({ length: n }, (_, i) => 'tok' + i), weights, heads };
  }
  const flush = (box) => { for (const canvas of box.querySelectorAll('canvas')) canvas.getContext('2d').getImageData(0, 0, 1, 1); };
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  // The view draws in the animation frame after a scroll, after this callback (registered first).
  async function timeScroll(box, top) {
    let start = 0;
    const drawn = new Promise((resolve) => requestAnimationFrame(() => { start = performance.now(); setTimeout(resolve, 0); }));
    box.scrollTop = top;
    await drawn;
    flush(box);
    return performance.now() - start;
  }
  // Where the pointer goes: the lines view's query labels (rows on screen), the other views' middle
  // (the heatmap's canvas is also a band of its scene, bandTop, but its middle is a cell there).
  function pointAt(view, canvas, i) {
    const rect = canvas.getBoundingClientRect();
    const layout = view.layout;
    if (layout?.bandTop === undefined || layout.rowH === undefined) return { clientX: rect.left + rect.width * 0.5 + i * 3, clientY: rect.top + rect.height * 0.5 + i * 3 };
    const row = Math.floor((layout.bandTop + rect.height / 2 - layout.top) / layout.rowH) + i;
    return { clientX: rect.left + layout.leftX - 10, clientY: rect.top + layout.top + (row + 0.5) * layout.rowH - layout.bandTop };
  }
  // The library's own results come through fromRun / fromExplanation, whose weights the views do not check again:
  // a run as model.run returns it, with the brand the library puts on what it checked.
  const asRecord = ({ tokens, weights, heads }) => views.fromRun(Object.defineProperty({ tokens, layers: 1, heads, attention: weights },
    Symbol.for('attnlens.checked'), { value: true }));
  window.measure = async (name, n, heads, runs, sharpness, boxHeight, record) => {
    const dataOf = (seed) => (record ? asRecord : (data) => data)(makeData(n, heads, seed, sharpness));
    const box = document.getElementById('box');
    box.style.height = boxHeight ? boxHeight + 'px' : '';
    box.style.overflow = boxHeight ? 'auto' : '';
    const times = { mount: [], jump: [], update: [], scroll: [], hover: [] };
    for (let run = 0; run < runs + 1; run += 1) {
      const data = dataOf(11 + run);
      let start = performance.now();
      const view = views[name].mount(box, data);
      flush(box);
      const mount = performance.now() - start;
      await frame();
      const middle = Math.round((box.scrollHeight - box.clientHeight) / 2);
      const jump = boxHeight ? await timeScroll(box, middle) : null;
      const next = dataOf(101 + run);
      start = performance.now();
      view.update(next);
      flush(box);
      const update = performance.now() - start;
      const scroll = boxHeight ? await timeScroll(box, middle + 120) : null;
      const canvas = box.querySelector('canvas');
      start = performance.now();
      for (let i = 0; i < 10; i += 1) {
        canvas.dispatchEvent(new MouseEvent('mousemove', { ...pointAt(view, canvas, i), bubbles: true }));
      }
      flush(box);
      const hover = (performance.now() - start) / 10;
      if (boxHeight && !/looks most at/.test(view.element.querySelector('.attnlens-readout').textContent)) {
        throw new Error('the hover did not reach a query label');
      }
      view.destroy();
      box.scrollTop = 0;
      await frame();
      if (run === 0) continue; // the first run compiles and warms caches
      times.mount.push(mount);
      if (boxHeight) {
        times.jump.push(jump);
        times.scroll.push(scroll);
      }
      times.update.push(update);
      times.hover.push(hover);
    }
    return times;
  };
  window.ready = true;
</script>`;

const server = await serveStatic(repoRoot);
const browser = await launchBrowser({ viewport: { width: 1100, height: 1100 } });
try {
  const url = `${server.url}__views-bench.html`;
  await browser.page.route(url, (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body: page }));
  await browser.page.goto(url);
  await browser.page.waitForFunction(() => window.ready);
  const version = await browser.page.evaluate(() => navigator.userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? navigator.userAgent);
  console.log(`attnlens/views in headless ${version}: ${n} tokens, ${runs} runs each (after one warm-up), medians [min-max]`);
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const show = (list, digits = 1) => `${median(list).toFixed(digits)} ms [${Math.min(...list).toFixed(digits)}-${Math.max(...list).toFixed(digits)}]`;
  // [view, heads, sharpness, height of the scrolling box it is mounted in (none: the page's width, its own height),
  //  whether the data comes from the library (fromRun: its weights are not checked again)]
  const cases = [['heatmap', 1, 4], ['heatmap', 1, 4, 0, true], ['headAverage', 4, 4], ['lines', 1, 4, 720], ['lines', 1, 16, 720], ['allHeads', 4, 4]];
  for (const [name, heads, sharpness, boxHeight = 0, record = false] of cases) {
    const times = await browser.page.evaluate((args) => window.measure(...args), [name, n, heads, runs, sharpness, boxHeight, record]);
    const worst = Math.max(median(times.mount), median(times.update));
    const verdict = worst < budgetMs ? `under ${budgetMs} ms` : `OVER ${budgetMs} ms`;
    const spread = `${sharpness === 4 ? 'spread rows' : 'peaked rows'}${record ? ', library data' : ''}`;
    const where = boxHeight ? `, ${boxHeight}-px box` : '';
    const scrolled = boxHeight ? `, scroll to the middle ${show(times.jump)}, update there` : ', update';
    const scrollOn = boxHeight ? `, scroll 120 px on ${show(times.scroll)}` : '';
    console.log(`  ${name.padEnd(11)} (${heads} head${heads > 1 ? 's' : ''}, ${spread}${where}): mount ${show(times.mount)}${scrolled} `
      + `${show(times.update)} (${verdict})${scrollOn}, hover ${show(times.hover, 2)} per move`);
  }
  if (browser.errors.length) throw new Error(`errors in the page: ${browser.errors.join('; ')}`);
} finally {
  await browser.close();
  await server.close();
}
