// What the package tests share: the npm tarball packed and installed into a
// throw-away app (with the fixtures beside it), the page runner for headless
// Chromium, and the check of the worked example's numbers.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser } from '../support/chromium.mjs';
import { serveStatic } from '../support/static-server.mjs';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
export const packageJson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));

// The headers that make a page cross-origin isolated (SharedArrayBuffer, so the threads modules).
export const ISOLATED = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };

// The tutorial's numbers (issue 2).
export const WEIGHTS_ROW_0 = [0.3135989, 0.3500636, 0.3363374];
const OUTPUT_ROW_0 = [0.3109394, 0.2599746, 0.2722866, 0.4409267];

// Runs a command; on failure the error message carries its output.
export function run(command, args, options = {}) {
  try {
    return execFileSync(command, args, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
  } catch (error) {
    error.message += `\n${error.stdout ?? ''}${error.stderr ?? ''}`;
    throw error;
  }
}

function ensureWasmBuilt() {
  const missing = ['relaxed', 'simd', 'scalar'].flatMap((v) => [`attnlens-${v}.mjs`, `attnlens-${v}.wasm`])
    .some((file) => !existsSync(join(repoRoot, 'web/lib/wasm', file)));
  if (missing) run('flock', ['/tmp/attnlens-build.lock', 'node', 'web/scripts/build.mjs', 'wasm'], { stdio: 'inherit' });
}

// Packs the package and installs only the tarball (attnlens has no
// dependencies; bundlers and TypeScript run from the repository's
// node_modules) into workDir/app, with the fixtures copied beside it.
export function installPackage(prefix) {
  ensureWasmBuilt();
  const workDir = mkdtempSync(join(tmpdir(), prefix));
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', workDir]));
  const appDir = join(workDir, 'app');
  mkdirSync(appDir);
  writeFileSync(join(appDir, 'package.json'), JSON.stringify({ name: 'attnlens-consumer', private: true, type: 'module' }));
  run('npm', ['install', '--no-audit', '--no-fund', '--offline', join(workDir, packed.filename)], { cwd: appDir });
  cpSync(fixtures, appDir, { recursive: true });
  return { workDir, appDir, tarballFiles: packed.files.map((file) => file.path) };
}

export function assertWorkedExample(result, label) {
  assert.equal(result.version, packageJson.version, `${label}: version`);
  result.weightsRow0.forEach((value, i) => assert.ok(Math.abs(value - WEIGHTS_ROW_0[i]) <= 1e-6, `${label}: weights[0][${i}] = ${value}`));
  result.outputRow0.forEach((value, i) => assert.ok(Math.abs(value - OUTPUT_ROW_0[i]) <= 1e-6, `${label}: output[0][${i}] = ${value}`));
  assert.deepEqual(result.sentenceTokens, ['attention', 'is', 'all', 'you', 'need'], `${label}: tokens`);
  assert.match(result.badInput, /^RangeError: attnlens\.attention: v must be of length n\*dv = 1\*2 = 2, got length 3$/, `${label}: bad input`);
}

// Serves `root` (with `headers`), opens `path` in a fresh headless Chromium,
// and returns what the page computed (or its error), the console errors, and
// the URLs it requested (`requested`: their paths). The browser is closed
// before the server: Chromium's idle pre-connections would otherwise keep
// server.close() waiting for minutes.
export async function openInBrowser(root, path = '', { headers } = {}) {
  const server = await serveStatic(root, { headers });
  const browser = await launchBrowser();
  try {
    const urls = [];
    browser.page.on('request', (request) => urls.push(request.url()));
    await browser.page.goto(server.url + path);
    await browser.page.waitForFunction(() => window.attnlensResult || window.attnlensError, null, { timeout: 30_000 })
      .catch((error) => { throw new Error(`${error.message}; page errors: ${browser.errors.join('; ')}`); });
    const { result, error } = await browser.page.evaluate(() => ({ result: window.attnlensResult, error: window.attnlensError }));
    return { result, error, errors: browser.errors, urls, requested: urls.map((url) => new URL(url).pathname) };
  } finally {
    await browser.close();
    await server.close();
  }
}

// openInBrowser, for a page that must compute without any error.
export async function computeInBrowser(root, path = '', options = {}) {
  const opened = await openInBrowser(root, path, options);
  assert.equal(opened.error, undefined, `page error: ${opened.error}`);
  assert.deepEqual(opened.errors, []);
  return opened;
}
