// A views test page in headless Chromium: the repository served as static
// files, `html` served at one made-up address, every other request refused
// (the network is the test server and nothing else). The page's own module
// sets window.ready once it has imported what it tests.
import { launchBrowser } from './chromium.mjs';
import { serveStatic } from './static-server.mjs';

/** Opens `html` as `name`, served beside the files of `root`; returns { page, errors (the page's console errors), close() }. */
export async function openTestPage(root, name, html) {
  const server = await serveStatic(root);
  const pageUrl = `${server.url}${name}`;
  const browser = await launchBrowser();
  const { page } = browser;
  page.setDefaultTimeout(10_000);
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url === pageUrl) return route.fulfill({ contentType: 'text/html; charset=utf-8', body: html });
    return url.startsWith(server.url) ? route.continue() : route.abort();
  });
  await page.goto(pageUrl);
  await page.waitForFunction(() => window.ready);
  return {
    page,
    errors: browser.errors,
    async close() {
      await browser.close();
      await server.close();
    },
  };
}

/**
 * A <script> for a test page: counts the event listeners added and not yet
 * removed (window.listenerCount()), so a test can check destroy() removes all.
 */
export const listenerCounter = `<script>
  const live = new Map();
  const add = EventTarget.prototype.addEventListener, remove = EventTarget.prototype.removeEventListener;
  EventTarget.prototype.addEventListener = function (type, fn, o) { live.set(this, (live.get(this) ?? 0) + 1); return add.call(this, type, fn, o); };
  EventTarget.prototype.removeEventListener = function (type, fn, o) { live.set(this, live.get(this) - 1); return remove.call(this, type, fn, o); };
  window.listenerCount = () => [...live.values()].reduce((a, b) => a + b, 0);
</script>`;

/**
 * A test page of attnlens/views/analysis: window.views is that module, a 900 px wide #box to mount
 * in, and listenerCounter. `moduleCode` runs in the page's module before it sets window.ready.
 */
export function analysisViewsPage(title, moduleCode = '') {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>
<body style="margin:0;width:900px"><div id="box"></div>
${listenerCounter}
<script type="module">
  import * as views from '/web/views/analysis.js';
  window.views = views;${moduleCode}
  window.ready = true;
</script></body></html>`;
}
