// The npm package as users get it: `npm pack`, then the tarball installed
// into a throw-away app and used from Node, a Vite 7 build, and a plain
// static page in headless Chromium; plus its size and its TypeScript types.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { launchBrowser } from '../support/chromium.mjs';
import { serveStatic } from '../support/static-server.mjs';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const packageJson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
// gzip bytes a page downloads: the WebAssembly module and its Embind glue at
// most 100 KB with the model forward passes in it (issue 10; 60 KB for
// everything before models), plus the library's own JavaScript. A page
// fetches one module level (relaxed, simd or scalar, chosen by feature
// test), so the relaxed build (issue 12) adds to the tarball, not to a
// page's download: the budget holds for each level's module on its own
// (measured: relaxed 91,328 bytes, simd 92,634, scalar 85,607).
const WASM_BUDGET = 100 * 1024;
const SIZE_BUDGET = WASM_BUDGET + 12 * 1024;

// The tutorial's numbers (issue 2).
const WEIGHTS_ROW_0 = [0.3135989, 0.3500636, 0.3363374];
const OUTPUT_ROW_0 = [0.3109394, 0.2599746, 0.2722866, 0.4409267];

let workDir, appDir, tarballFiles;

// Runs a command; on failure the error message carries its output.
function run(command, args, options = {}) {
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

function assertWorkedExample(result, label) {
  assert.equal(result.version, packageJson.version, `${label}: version`);
  result.weightsRow0.forEach((value, i) => assert.ok(Math.abs(value - WEIGHTS_ROW_0[i]) <= 1e-6, `${label}: weights[0][${i}] = ${value}`));
  result.outputRow0.forEach((value, i) => assert.ok(Math.abs(value - OUTPUT_ROW_0[i]) <= 1e-6, `${label}: output[0][${i}] = ${value}`));
  assert.deepEqual(result.sentenceTokens, ['attention', 'is', 'all', 'you', 'need'], `${label}: tokens`);
  assert.match(result.badInput, /^RangeError: attnlens\.attention: v must be of length n\*dv = 1\*2 = 2, got length 3$/, `${label}: bad input`);
}

before(() => {
  ensureWasmBuilt();
  workDir = mkdtempSync(join(tmpdir(), 'attnlens-package-'));
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', workDir]));
  tarballFiles = packed.files.map((file) => file.path);
  appDir = join(workDir, 'app');
  mkdirSync(appDir);
  writeFileSync(join(appDir, 'package.json'), JSON.stringify({ name: 'attnlens-consumer', private: true, type: 'module' }));
  // Only the tarball is installed (attnlens has no dependencies); Vite and
  // TypeScript are run from the repository's node_modules.
  run('npm', ['install', '--no-audit', '--no-fund', '--offline', join(workDir, packed.filename)], { cwd: appDir });
  cpSync(fixtures, appDir, { recursive: true });
});

after(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

// Serves `root`, opens `path` in a fresh headless Chromium, and returns what
// the page computed and the paths it requested. The browser is closed before
// the server: Chromium's idle pre-connections would otherwise keep
// server.close() waiting for minutes.
async function computeInBrowser(root, path = '') {
  const server = await serveStatic(root);
  const browser = await launchBrowser();
  try {
    const requested = [];
    browser.page.on('request', (request) => requested.push(new URL(request.url()).pathname));
    await browser.page.goto(server.url + path);
    await browser.page.waitForFunction(() => window.attnlensResult || window.attnlensError, null, { timeout: 30_000 });
    const { result, error } = await browser.page.evaluate(() => ({ result: window.attnlensResult, error: window.attnlensError }));
    assert.equal(error, undefined, `page error: ${error}`);
    assert.deepEqual(browser.errors, []);
    return { result, requested };
  } finally {
    await browser.close();
    await server.close();
  }
}

test('the tarball holds the library, the views, types, WASM, package.json, README and LICENSE, nothing else', () => {
  const allowed = /^(package\.json|README\.md|LICENSE|web\/lib\/[^/]+\.(js|d\.ts)|web\/lib\/(model|model\/families|tokenizers)\/[^/]+\.js|web\/lib\/wasm\/attnlens-(relaxed|simd|scalar|threads|relaxed-threads)\.(mjs|wasm)|web\/lib\/wasm\/attnlens-(relaxed-)?threads\.worker\.js|web\/views\/[\w-]+\.(js|d\.ts)|web\/elements\/([\w-]+\.(js|d\.ts)|README\.md))$/;
  for (const file of tarballFiles) assert.match(file, allowed, `unexpected file in the tarball: ${file}`);
  for (const required of ['package.json', 'README.md', 'LICENSE', 'web/lib/index.d.ts', 'web/lib/node.js', 'web/lib/browser.js',
    'web/lib/api.js', 'web/lib/simd-level.js', 'web/lib/version.js', 'web/lib/validation.js', 'web/lib/heap.js',
    'web/lib/model/load-model.js', 'web/lib/model/model.js', 'web/lib/model/families/index.js', 'web/lib/tokenizers/index.js',
    'web/lib/wasm/attnlens-relaxed.mjs', 'web/lib/wasm/attnlens-relaxed.wasm',
    'web/lib/wasm/attnlens-simd.mjs', 'web/lib/wasm/attnlens-simd.wasm',
    'web/lib/wasm/attnlens-scalar.mjs', 'web/lib/wasm/attnlens-scalar.wasm',
    'web/lib/wasm/attnlens-threads.mjs', 'web/lib/wasm/attnlens-threads.wasm', 'web/lib/wasm/attnlens-threads.worker.js',
    'web/lib/wasm/attnlens-relaxed-threads.mjs', 'web/lib/wasm/attnlens-relaxed-threads.wasm',
    'web/lib/wasm/attnlens-relaxed-threads.worker.js',
    'web/views/index.js', 'web/views/index.d.ts', 'web/views/heatmap.js', 'web/views/lines.js', 'web/views/model-grid.js',
    'web/views/scene.js', 'web/views/colors.js', 'web/views/attention-data.js', 'web/views/steps.js',
    'web/elements/index.js', 'web/elements/index.d.ts', 'web/elements/README.md', 'web/elements/attention-element.js']) {
    assert.ok(tarballFiles.includes(required), `missing from the tarball: ${required}`);
  }
});

test('`attnlens/views` resolves through the exports map and needs neither WebAssembly nor dependencies', () => {
  const script = "const v = await import('attnlens/views'); " +
    "console.log(JSON.stringify({ names: Object.keys(v.views), mount: typeof v.heatmap.mount, lut: v.weightLut.length }));";
  const output = JSON.parse(run(process.execPath, ['--input-type=module', '-e', script], { cwd: appDir }));
  assert.deepEqual(output, { names: ['heatmap', 'allHeads', 'modelView', 'lines', 'headAverage', 'table', 'steps'], mount: 'function', lut: 256 });
  const imports = tarballFiles.filter((file) => file.startsWith('web/views/') && file.endsWith('.js'))
    .flatMap((file) => [...readFileSync(join(appDir, 'node_modules/attnlens', file), 'utf8').matchAll(/^(?:import|export) [^;]*? from '([^']+)'/gm)].map((m) => m[1]));
  assert.ok(imports.length >= 10, `found ${imports.length} imports`);
  for (const specifier of imports) assert.match(specifier, /^\.\/[\w-]+\.js$/, `web/views imports ${specifier}`);
});

test('Node 20: `import { load } from "attnlens"` with no flags, both modules', () => {
  const output = run(process.execPath, ['node-check.mjs'], { cwd: appDir });
  const [simd, scalar] = JSON.parse(output);
  assert.equal(simd.simd, true);
  assert.equal(scalar.simd, false);
  assertWorkedExample(simd, 'node simd');
  assertWorkedExample(scalar, 'node scalar');
});

test('a Vite 7 app imports it, builds, and computes in headless Chromium', async (t) => {
  const viteDir = join(appDir, 'vite-app');
  run(process.execPath, [join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], { cwd: viteDir });
  const assets = readFileSync(join(viteDir, 'dist/index.html'), 'utf8');
  assert.match(assets, /<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js">/);
  const { result, requested } = await computeInBrowser(join(viteDir, 'dist'));
  t.diagnostic(`vite app requested: ${requested.join(', ')}`);
  assert.equal(result.simd, true);
  assertWorkedExample(result, 'vite');
  // Chromium validates relaxed SIMD, so load() picks that module.
  assert.ok(requested.some((path) => /\/assets\/attnlens-relaxed-[\w-]+\.wasm$/.test(path)), 'the hashed relaxed-SIMD .wasm asset was fetched');
});

test('a Vite 7 app that imports attnlens/elements: the elements in its HTML compute and draw', async () => {
  const viteDir = join(appDir, 'elements-app');
  run(process.execPath, [join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], { cwd: viteDir });
  const { result, requested } = await computeInBrowser(join(viteDir, 'dist'));
  assert.deepEqual(result.sentenceTokens, ['attention', 'is', 'all', 'you', 'need']);
  assert.ok(result.canvases >= 1, 'the heatmap canvas');
  assert.match(result.stepTitle, /^Step 7 of 9: Weights = softmax/);
  assert.deepEqual(result.weightsRow0Text, ['0.3136', '0.3501', '0.3363']);
  result.weightsRow0.forEach((value, i) => assert.ok(Math.abs(value - WEIGHTS_ROW_0[i]) <= 1e-6, `weights[0][${i}] = ${value}`));
  assert.ok(requested.some((path) => /\/assets\/attnlens-[\w-]+\.wasm$/.test(path)), `a hashed .wasm asset was fetched: ${requested}`);
  // Every view of attnlens/views, bundled by Vite: drawn (canvas pixels, or the table's cells), then destroyed without a trace.
  assert.deepEqual(Object.keys(result.views), ['heatmap', 'allHeads', 'modelView', 'lines', 'headAverage', 'table', 'steps']);
  for (const [name, drawn] of Object.entries(result.views)) {
    assert.ok(drawn.ink > 500 || drawn.cells >= 25, `${name} drew nothing: ${JSON.stringify(drawn)}`);
    assert.equal(drawn.leftBehind, 0, `${name} left canvases or tables behind after destroy()`);
  }
});

test('an esbuild app with the README\'s one step (copy web/lib/wasm/, configure({ wasmPath })) computes in headless Chromium', async () => {
  const esbuildDir = join(appDir, 'esbuild-app');
  const dist = join(esbuildDir, 'dist');
  const { build } = await import('esbuild');
  await build({
    entryPoints: [join(esbuildDir, 'main.js')], bundle: true, format: 'esm', platform: 'browser',
    outfile: join(dist, 'main.js'), logLevel: 'error', absWorkingDir: esbuildDir,
  });
  // The Vite app's page: it loads ./main.js, which here is the esbuild bundle.
  cpSync(join(appDir, 'vite-app', 'index.html'), join(dist, 'index.html'));
  cpSync(join(appDir, 'node_modules/attnlens/web/lib/wasm'), join(dist, 'attnlens'), { recursive: true });
  const { result, requested } = await computeInBrowser(dist);
  assertWorkedExample(result, 'esbuild');
  assert.ok(requested.includes('/attnlens/attnlens-relaxed.wasm'), `the copied relaxed .wasm was fetched: ${requested}`);
  assert.ok(requested.includes('/attnlens/attnlens-relaxed.mjs'), `the copied glue was imported: ${requested}`);
});

test('a plain <script type="module"> page served as static files; SIMD and scalar; size budget', async (t) => {
  const scalar = await computeInBrowser(appDir, 'static-page.html?simd=false');
  assert.equal(scalar.result.simd, false);
  assertWorkedExample(scalar.result, 'static scalar');
  assert.ok(scalar.requested.some((path) => path.endsWith('/attnlens-scalar.wasm')));

  const simd = await computeInBrowser(appDir, 'static-page.html');
  assert.equal(simd.result.simd, true);
  assertWorkedExample(simd.result, 'static simd');

  // What the SIMD page downloaded from the package (not the fixture itself):
  // in Chromium, the relaxed-SIMD level and no other.
  const packageFiles = simd.requested.filter((path) => path.startsWith('/node_modules/attnlens/'));
  assert.ok(packageFiles.includes('/node_modules/attnlens/web/lib/wasm/attnlens-relaxed.wasm'));
  assert.ok(packageFiles.includes('/node_modules/attnlens/web/lib/wasm/attnlens-relaxed.mjs'));
  assert.ok(!packageFiles.some((path) => /attnlens-(scalar|simd)\./.test(path)), `other levels fetched: ${packageFiles}`);
  const sizes = packageFiles.map((path) => [path, gzipSync(readFileSync(join(appDir, path)), { level: 9 }).length]);
  const total = sizes.reduce((sum, [, size]) => sum + size, 0);
  const report = `gzip size of what a page downloads (SIMD): ${(total / 1024).toFixed(1)} KB = ${total} bytes ` +
    `(budget ${SIZE_BUDGET}): ${sizes.map(([path, size]) => `${path.split('/').pop()} ${size}`).join(', ')}`;
  t.diagnostic(report);
  console.log(report);
  assert.ok(total <= SIZE_BUDGET, report);
  const wasm = sizes.filter(([path]) => /attnlens-relaxed\.(wasm|mjs)$/.test(path)).reduce((sum, [, size]) => sum + size, 0);
  assert.ok(wasm <= WASM_BUDGET, `WebAssembly plus glue: ${wasm} bytes gzip, over the ${WASM_BUDGET} budget`);
  // The levels other engines fetch instead, each within the same budget.
  for (const level of ['simd', 'scalar']) {
    const bytes = ['wasm', 'mjs'].reduce((sum, ext) => sum + gzipSync(readFileSync(
      join(appDir, `node_modules/attnlens/web/lib/wasm/attnlens-${level}.${ext}`)), { level: 9 }).length, 0);
    t.diagnostic(`${level} module plus glue: ${bytes} bytes gzip`);
    assert.ok(bytes <= WASM_BUDGET, `${level} WebAssembly plus glue: ${bytes} bytes gzip, over the ${WASM_BUDGET} budget`);
  }
  // The model loader and the tokenizers are imported on first use only.
  assert.ok(!packageFiles.some((path) => /\/(model|tokenizers)\//.test(path)), `model code fetched: ${packageFiles}`);
});

test('TypeScript: the usage examples of attnlens, attnlens/views and attnlens/elements type-check with tsc --noEmit, and misuse is rejected', () => {
  writeFileSync(join(appDir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022', 'dom'], types: [] },
    files: ['usage-example.ts', 'views-usage.ts', 'elements-usage.ts'],
  }));
  const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
  // Throws with tsc's output on any error, including an unused
  // @ts-expect-error (TS2578): so each misuse line really is rejected.
  run(process.execPath, [tsc, '-p', appDir]);
  const directives = readFileSync(join(appDir, 'usage-example.ts'), 'utf8').match(/@ts-expect-error/g);
  assert.equal(directives.length, 10); // 9 misuses (2 of configure) + the mention in the header comment
  const viewDirectives = readFileSync(join(appDir, 'views-usage.ts'), 'utf8').match(/@ts-expect-error/g);
  assert.equal(viewDirectives.length, 7); // 6 misuses + the mention in the header comment
  const elementDirectives = readFileSync(join(appDir, 'elements-usage.ts'), 'utf8').match(/@ts-expect-error/g);
  assert.equal(elementDirectives.length, 5); // 4 misuses + the mention in the header comment
});
