// Launches Debian's /usr/bin/chromium, headless, through playwright-core.
// Flags: no sandbox (root in CI), and no background networking, which would
// otherwise keep knocking on the closed network (see ../shared/TOOLCHAIN.md).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const chromiumPath = process.env.ATTNLENS_CHROMIUM ?? '/usr/bin/chromium';

const flags = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-dev-shm-usage',
];

// Returns { context, page, close() }. Console errors and page errors are
// collected in `errors` so tests can assert that none happened.
export async function launchBrowser({ extraArgs = [], viewport = { width: 1280, height: 900 } } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'attnlens-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: [...flags, ...extraArgs],
    viewport,
    acceptDownloads: true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => { if (message.type() === 'error') errors.push(`console: ${message.text()}`); });
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
