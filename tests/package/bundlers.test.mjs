// Every bundler, tested (issue 21): one app (fixtures/bundler-app) that
// imports attnlens, attnlens/views and attnlens/elements, bundled by Vite,
// webpack 5, esbuild and Rollup from the installed tarball, and served
// unbundled from a CDN-style folder URL on another origin. Each is checked in
// headless Chromium for the worked example's numbers, a drawn view and a
// drawn element, on one thread and, cross-origin isolated, on two threads.
// Each test is a claim of the README's bundler table.
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { serveStatic } from '../support/static-server.mjs';
import { assertWorkedExample, computeInBrowser, installPackage, ISOLATED, openInBrowser, packageJson } from './installed-package.mjs';

let workDir, appDir;

before(() => {
  ({ workDir, appDir } = installPackage('attnlens-bundlers-'));
});

after(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

// Each bundler's production build of the app into `dist`, with its Node API
// and default options; each resolves to the warnings it printed.
const bundlers = {
  async vite(source, dist) {
    const { build, createLogger } = await import('vite');
    const warnings = [];
    const customLogger = { ...createLogger('warn'), warn: (message) => warnings.push(message), warnOnce: (message) => warnings.push(message) };
    await build({ root: source, configFile: false, customLogger, build: { outDir: dist, emptyOutDir: true } });
    return warnings;
  },
  async webpack(source, dist) {
    const { default: webpack } = await import('webpack');
    const compiler = webpack({
      mode: 'production', context: source, entry: './main.js', output: { path: dist, filename: 'main.js' },
      performance: { hints: false },
    });
    const stats = await new Promise((resolve, reject) => compiler.run((error, result) => (error ? reject(error) : resolve(result))));
    await new Promise((resolve) => compiler.close(resolve));
    assert.ok(!stats.hasErrors(), stats.toString('errors-only'));
    cpSync(join(source, 'index.html'), join(dist, 'index.html'));
    return stats.compilation.warnings.map((warning) => warning.message);
  },
  async esbuild(source, dist) {
    const { build } = await import('esbuild');
    const { warnings } = await build({
      entryPoints: [join(source, 'main.js')], bundle: true, format: 'esm', platform: 'browser',
      outfile: join(dist, 'main.js'), logLevel: 'silent', absWorkingDir: source,
    });
    cpSync(join(source, 'index.html'), join(dist, 'index.html'));
    return warnings.map((warning) => warning.text);
  },
  async rollup(source, dist) {
    const { rollup } = await import('rollup');
    const { nodeResolve } = await import('@rollup/plugin-node-resolve');
    const warnings = [];
    const bundle = await rollup({ input: join(source, 'main.js'), plugins: [nodeResolve()], onLog: (level, log) => warnings.push(`${level}: ${log.message}`) });
    await bundle.write({ dir: dist, format: 'es', entryFileNames: 'main.js' });
    await bundle.close();
    cpSync(join(source, 'index.html'), join(dist, 'index.html'));
    return warnings;
  },
};

// The README's one step: web/lib/wasm/ copied to attnlens/ beside the app,
// and configure({ wasmPath: 'attnlens/' }) (the app calls it for this query).
const STEP = 'index.html?wasmPath=attnlens/';

function copyModuleFiles(dist) {
  cpSync(join(appDir, 'node_modules/attnlens/web/lib/wasm'), join(dist, 'attnlens'), { recursive: true });
}

// What every run of the app shows, on one thread or two.
function assertApp(result, label, threads, isolated = threads === 2) {
  assertWorkedExample(result, label);
  assert.equal(result.simd, true, `${label}: SIMD`);
  assert.equal(result.isolated, isolated, `${label}: cross-origin isolated`);
  assert.equal(result.threads, threads, `${label}: threads`);
  assert.ok(result.viewInk > 500, `${label}: the heatmap drew ${result.viewInk} pixels`);
  assert.deepEqual(result.element.tokens, ['attention', 'is', 'all', 'you', 'need'], `${label}: the element's tokens`);
  assert.ok(result.element.canvases >= 1 && result.element.ink > 500, `${label}: the element drew ${JSON.stringify(result.element)}`);
}

// Chromium validates relaxed SIMD: the relaxed modules are the ones fetched.
function assertFetched(requested, label, paths) {
  for (const path of paths) assert.ok(requested.some((p) => path.test(p)), `${label}: ${path} not fetched: ${requested.join(', ')}`);
}

// Zero configuration: Vite and webpack emit the .wasm named by new URL(..., import.meta.url) as an asset.
const zeroConfig = { vite: /^\/assets\/attnlens-relaxed-[\w-]+\.wasm$/, webpack: /^\/[\w-]+\.wasm$/ };

for (const name of Object.keys(bundlers)) {
  describe(`the ${name} app`, () => {
    let dist;
    before(async () => {
      dist = join(appDir, `dist-${name}`);
      const warnings = await bundlers[name](join(appDir, 'bundler-app'), dist);
      assert.deepEqual(warnings, [], `${name} warned`);
      copyModuleFiles(dist);
    });

    if (zeroConfig[name]) {
      test('one thread with no configuration: computes, draws a view and an element', async () => {
        const { result, requested } = await computeInBrowser(dist, 'index.html');
        assertApp(result, name, 1);
        assertFetched(requested, name, [zeroConfig[name]]);
        assert.ok(!requested.some((path) => path.startsWith('/attnlens/')), `the copied files are not needed: ${requested}`);
      });

      // The threads files are looked for beside the package's modules, which
      // the bundle did not keep: the browser logs the failed requests, and
      // load() takes the single-thread module of the same level.
      test('cross-origin isolated without the step: one thread, the same numbers', async (t) => {
        const { result, error, errors } = await openInBrowser(dist, 'index.html', { headers: ISOLATED });
        t.diagnostic(`${name} logged: ${errors.join('; ')}`);
        assert.equal(error, undefined, `page error: ${error}`);
        assertApp(result, name, 1, true);
        for (const message of errors) assert.match(message, /attnlens-relaxed-threads|Failed to load resource|Not allowed to load local resource/, name);
      });
    } else {
      test('one thread with the one step (copy web/lib/wasm/, configure({ wasmPath })): computes, draws', async () => {
        const { result, requested } = await computeInBrowser(dist, STEP);
        assertApp(result, name, 1);
        assertFetched(requested, name, [/^\/attnlens\/attnlens-relaxed\.mjs$/, /^\/attnlens\/attnlens-relaxed\.wasm$/]);
      });

      test('without the step: load() rejects naming the missing file and the step', async () => {
        const { error } = await openInBrowser(dist, 'index.html');
        assert.match(error, /^Error: attnlens\.load: could not load attnlens-relaxed\.wasm beside the module that imports it \(or your bundle\) \(not found\)\. .*copy that folder to your site and call configure\(\{ wasmPath: '<its URL>\/' \}\)/);
      });
    }

    test('two threads on a cross-origin isolated page with the one step: the same numbers', async () => {
      const { result, requested } = await computeInBrowser(dist, STEP, { headers: ISOLATED });
      assertApp(result, name, 2);
      assertFetched(requested, name, [/^\/attnlens\/attnlens-relaxed-threads\.wasm$/, /^\/attnlens\/attnlens-relaxed-threads\.worker\.js$/]);
    });
  });
}

// The plain page: the app's source unbundled, on one origin; the package
// under /npm/attnlens@VERSION/ on another that sends CORS headers as a CDN
// does; an import map sends the bare specifiers there. No configuration.
describe('a plain <script type="module"> page importing from a CDN folder URL', () => {
  let cdn;
  before(async () => {
    const cdnRoot = join(workDir, 'cdn');
    const folder = `npm/attnlens@${packageJson.version}`;
    cpSync(join(appDir, 'node_modules/attnlens'), join(cdnRoot, folder), { recursive: true });
    cdn = await serveStatic(cdnRoot, { headers: { 'access-control-allow-origin': '*' } });
    const packageUrl = `${cdn.url}${folder}/`;
    const imports = {
      attnlens: `${packageUrl}web/lib/browser.js`,
      'attnlens/views': `${packageUrl}web/views/index.js`,
      'attnlens/elements': `${packageUrl}web/elements/index.js`,
    };
    const html = readFileSync(join(appDir, 'bundler-app', 'index.html'), 'utf8')
      .replace('<script type="module"', `<script type="importmap">${JSON.stringify({ imports })}</script>\n    $&`);
    writeFileSync(join(appDir, 'bundler-app', 'cdn.html'), html);
  });
  after(() => cdn?.close());

  const fromCdn = (urls) => urls.filter((url) => url.startsWith(cdn.url)).map((url) => url.slice(cdn.url.length));

  test('one thread with no configuration: computes, draws a view and an element', async () => {
    const { result, urls } = await computeInBrowser(appDir, 'bundler-app/cdn.html');
    assertApp(result, 'cdn', 1);
    assertFetched(fromCdn(urls), 'cdn', [/\/web\/lib\/wasm\/attnlens-relaxed\.wasm$/]);
  });

  test('two threads on a cross-origin isolated page, no configuration: the same numbers', async () => {
    const { result, urls } = await computeInBrowser(appDir, 'bundler-app/cdn.html', { headers: ISOLATED });
    assertApp(result, 'cdn', 2);
    assertFetched(fromCdn(urls), 'cdn', [/\/web\/lib\/wasm\/attnlens-relaxed-threads\.wasm$/, /\/web\/lib\/wasm\/attnlens-relaxed-threads\.worker\.js$/]);
  });
});
