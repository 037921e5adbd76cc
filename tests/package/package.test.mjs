// The npm package as users get it: `npm pack`, then the tarball installed
// into a throw-away app and used from Node, a Vite 7 app with the elements,
// and a plain static page in headless Chromium; plus its size and its
// TypeScript types. The apps of every bundler are in bundlers.test.mjs.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { assertWorkedExample, computeInBrowser, installPackage, repoRoot, run, WEIGHTS_ROW_0 } from './installed-package.mjs';

// gzip bytes a page downloads: the WebAssembly module and its Embind glue at
// most 100 KB with the model forward passes in it (issue 10; 60 KB for
// everything before models), plus the library's own JavaScript. A page
// fetches one module level (relaxed, simd or scalar, chosen by feature
// test), so the relaxed build (issue 12) adds to the tarball, not to a
// page's download: the budget holds for each level's module on its own
// (measured 26 Nov with fourteen model families, the analyses and the glue minified:
// relaxed 98,963 bytes, simd 101,427, scalar 93,443). Raised from 100 KB in
// session 10 for three encoder-decoder families with cached decoding (+3.1 KB
// after cutting T5's 3.9 KB of double-log tables), the incremental forward
// (+3.7 KB), the lens's -O3 block pass (+1.4 KB) and masked-LM heads: simd
// 112,852 bytes, relaxed 110,238, scalar 104,958. Raised by 1 KB (the
// least whole KB) for model.explain and model.analyze of encoder-decoders
// (issues 23 and 25: each kind's sublayer traced, observers of the encoder,
// the decoder's self- and cross-attention): simd 115,276 bytes (+1,473),
// relaxed 112,564 (+1,457), scalar 107,243; a page's whole download 127,975.
// Raised to 116 KB in session 11 when those merged with the staged multi-head
// call (the helper thread projects Q while JavaScript copies the rest in:
// S4 on two threads 10.05 ms against 10.82, measured in one page), the
// cached run's memory estimate and kept rows computed as weights alone:
// simd 117,430 bytes, relaxed 114,226, scalar 109,298; a page's whole download 130,080.
// Raised to 117 KB (a page's whole download to 130 KB) in session 12 for what a page asks
// of a kept run instead of a second forward: pooled heads for the model view,
// value-weighted heads, the logits after the heatmap (computeLogits), and S4's
// NaN/Infinity check moved into the packing: simd 119,092 bytes, relaxed 116,487, the
// library's JavaScript 16,117; a page's whole download 132,604. No room was found: the
// code that runs once per load is already compiled for size (CMakeLists.txt).
// Raised to 119 KB (a page's whole download to 132 KB) for encoder-decoder runs that return only the
// kinds, layers and heads asked for and keep their session for headWeights (issue 24: each kind's
// chosen heads pooled, every layer's queries kept, any head recomputed): simd 121,444 bytes (+2,352),
// relaxed 118,403 (+1,916); a page's whole download 134,520.
// Raised to 120 KB (a page's whole download to 133 KB) in session 13 for the key-value cache that keeps
// K^T and V in the kernels' panel layout (issue 24: a one-position run packs its new position only, 1.3-1.6x
// faster at the end of 512 and 1024 tokens) and a layer's heads in one call (layerWeights); the figures
// are in the assertion messages below.
const WASM_BUDGET = 120 * 1024;
const SIZE_BUDGET = WASM_BUDGET + 13 * 1024;

let workDir, appDir, tarballFiles;

before(() => {
  ({ workDir, appDir, tarballFiles } = installPackage('attnlens-package-'));
});

after(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

test('the tarball holds the library, the views, types, WASM, package.json, README and LICENSE, nothing else', () => {
  const allowed = /^(package\.json|README\.md|LICENSE|web\/lib\/[^/]+\.(js|d\.ts)|web\/lib\/(model|model\/(families|hub|pytorch)|tokenizers)\/[^/]+\.js|web\/lib\/wasm\/attnlens-(relaxed|simd|scalar|threads|relaxed-threads)\.(mjs|wasm)|web\/lib\/wasm\/attnlens-(relaxed-)?threads\.worker\.js|web\/views\/[\w-]+\.(js|d\.ts)|web\/elements\/([\w-]+\.(js|d\.ts)|README\.md))$/;
  for (const file of tarballFiles) assert.match(file, allowed, `unexpected file in the tarball: ${file}`);
  for (const required of ['package.json', 'README.md', 'LICENSE', 'web/lib/index.d.ts', 'web/lib/node.js', 'web/lib/browser.js',
    'web/lib/api.js', 'web/lib/simd-level.js', 'web/lib/version.js', 'web/lib/validation.js', 'web/lib/heap.js',
    'web/lib/model/load-model.js', 'web/lib/model/model.js', 'web/lib/model/hub/load-from.js', 'web/lib/model/pytorch/read-bin.js', 'web/lib/model/families/index.js', 'web/lib/tokenizers/index.js',
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

test('every relative import of the tarball\'s modules names a file in the tarball', () => {
  // A folder missing from package.json's "files" breaks only the code paths that import it (a bundler, a model type).
  const modules = tarballFiles.filter((file) => /\.(m?js)$/.test(file) && !file.startsWith('web/lib/wasm/'));
  let checked = 0;
  for (const file of modules) {
    const source = readFileSync(join(appDir, 'node_modules/attnlens', file), 'utf8');
    const specifiers = [...source.matchAll(/(?:^(?:import|export)\b[^;]*?\bfrom\s*|\bimport\(\s*)'(\.{1,2}\/[^']+)'/gm)].map((m) => m[1]);
    for (const specifier of specifiers) {
      const target = posix.normalize(posix.join(posix.dirname(file), specifier));
      assert.ok(tarballFiles.includes(target), `${file} imports ${specifier}, which is not in the tarball`);
      checked++;
    }
  }
  assert.ok(checked >= 100, `found only ${checked} relative imports`);
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
  assert.equal(directives.length, 15); // 14 misuses (2 of configure, 2 of loadModel({ from }), 1 of headWeights' kind, 1 of computeLogits' positions, 1 of an analysis's kept methods unchecked) + the mention in the header comment
  const viewDirectives = readFileSync(join(appDir, 'views-usage.ts'), 'utf8').match(/@ts-expect-error/g);
  assert.equal(viewDirectives.length, 12); // 11 misuses + the mention in the header comment
  const elementDirectives = readFileSync(join(appDir, 'elements-usage.ts'), 'utf8').match(/@ts-expect-error/g);
  assert.equal(elementDirectives.length, 5); // 4 misuses + the mention in the header comment
});
