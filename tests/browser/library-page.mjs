// A throw-away site for tests that drive the library itself in Chromium: the
// library (web/lib) and the benchmark helpers (tests/bench) linked in beside
// one index.html, whose script leaves its findings in window.result.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { launchBrowser } from '../support/chromium.mjs';
import { serveStatic } from '../support/static-server.mjs';

/**
 * Writes the site, with `files` ({ 'name': string or bytes }) beside index.html;
 * returns { run(headers) -> window.result, remove() }.
 */
export function libraryPage(name, pageSource, files = {}) {
  const site = mkdtempSync(join(tmpdir(), `attnlens-${name}-`));
  symlinkSync(join(repoRoot, 'web', 'lib'), join(site, 'lib'), 'dir');
  symlinkSync(join(repoRoot, 'tests', 'bench'), join(site, 'bench'), 'dir');
  writeFileSync(join(site, 'index.html'), pageSource);
  for (const [file, contents] of Object.entries(files)) writeFileSync(join(site, file), contents);
  return {
    // Serves the site (with these response headers), opens it, and returns what its script
    // found; fails on a caught error in the script or any console error in the page.
    async run(headers = {}) {
      const server = await serveStatic(site, { headers });
      const browser = await launchBrowser();
      try {
        await browser.page.goto(server.url);
        await browser.page.waitForFunction(() => window.result, null, { timeout: 60_000 });
        const result = await browser.page.evaluate(() => window.result);
        assert.equal(result.error, undefined, result.error);
        assert.deepEqual(browser.errors, []);
        return result;
      } finally {
        await browser.close();
        await server.close();
      }
    },
    remove() {
      rmSync(site, { recursive: true, force: true });
    },
  };
}
