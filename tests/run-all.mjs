// `npm test`: every test layer, in the order the layers build on each other.
//   1. native C++ (Catch2 via CTest), then again under AddressSanitizer + UBSan
//   2. the WebAssembly build (checked to contain f32x4 code), the page build
//   3. Node tests: the WASM module through the public API, the page in headless
//      Chromium, the npm tarball installed into throw-away apps
//   4. bounded fuzzing (libFuzzer over the C++ entry points and the safetensors
//      parser; a JS fuzzer over the tokenizers) and a one-iteration start of each benchmark
// Installs what is missing first (apt-get when root, npm ci). Ends with one line
// "attnlens: N passed, M failed"; exits non-zero when anything failed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildNative, buildPage, buildWasm } from '../web/scripts/build.mjs';
import { ensureNodeModules, ensureSystemPackages, repoRoot } from '../web/scripts/toolchain.mjs';

const tally = { passed: 0, failed: 0, failures: [] };
const startedAt = Date.now();

function banner(title) {
  console.log(`\n=== ${title} ${'='.repeat(Math.max(0, 70 - title.length))}`);
}

function record(name, passed, failed) {
  tally.passed += passed;
  tally.failed += failed;
  if (failed > 0) tally.failures.push(name);
}

// A step that is one pass/fail (a build, a fuzz run, a benchmark start).
function step(name, action) {
  banner(name);
  const began = Date.now();
  try {
    action();
    record(name, 1, 0);
    console.log(`--- ${name}: ok (${((Date.now() - began) / 1000).toFixed(1)} s)`);
    return true;
  } catch (error) {
    console.error(`--- ${name}: FAILED: ${error.message}`);
    record(name, 0, 1);
    return false;
  }
}

function spawn(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: repoRoot, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result;
}

// CTest in a build tree: counts come from its "N tests failed out of M" line.
function runCtest(name, buildDir, ctestArgs = []) {
  banner(name);
  const result = spawn('ctest', ['--test-dir', buildDir, '--output-on-failure', ...ctestArgs],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  const output = result.stdout.toString();
  process.stdout.write(output);
  const match = output.match(/(\d+) tests failed out of (\d+)/);
  if (!match) return record(name, 0, 1);
  const failed = Number(match[1]);
  record(name, Number(match[2]) - failed, failed + (result.status !== 0 && failed === 0 ? 1 : 0));
}

// node --test over directories: spec output for people, TAP to a file for the counts.
function runNodeTests(name, directories) {
  banner(name);
  const scratch = mkdtempSync(join(tmpdir(), 'attnlens-tap-'));
  const tapFile = join(scratch, 'results.tap');
  const result = spawn(process.execPath, [
    '--test', '--test-concurrency=1',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=tap', `--test-reporter-destination=${tapFile}`,
    ...directories,
  ]);
  const tap = readFileSync(tapFile, 'utf8');
  rmSync(scratch, { recursive: true, force: true });
  const count = (label) => Number(tap.match(new RegExp(`^# ${label} (\\d+)$`, 'm'))?.[1] ?? 0);
  const failed = count('fail') + count('cancelled');
  const passed = count('pass');
  record(name, passed, failed + (result.status !== 0 && failed === 0 ? 1 : 0));
  if (passed + failed === 0) record(`${name} (no tests ran)`, 0, 1);
}

function runScript(name, script, args = []) {
  return step(name, () => {
    const result = spawn(process.execPath, [script, ...args]);
    if (result.status !== 0) throw new Error(`${script} exited with ${result.status ?? result.signal}`);
  });
}

const prerequisites = step('install what is missing', () => {
  ensureSystemPackages(['native', 'wasm', 'browser', 'fuzz']);
  ensureNodeModules();
});

if (prerequisites) {
  if (step('native build', () => buildNative())) runCtest('native tests (Catch2)', join(repoRoot, 'build', 'native'));

  const asanDir = join(repoRoot, 'build', 'sanitize');
  const sanitizerBuild = step('native build with ASan + UBSan', () =>
    buildNative({ buildDir: asanDir, cmakeArgs: ['-DATTNLENS_SANITIZE=ON', '-DCMAKE_BUILD_TYPE=RelWithDebInfo'] }));
  if (sanitizerBuild) runCtest('native tests under ASan + UBSan', asanDir);

  // The thread pool and every test that runs the core on several threads
  // (their names say "thread"), under ThreadSanitizer.
  const tsanDir = join(repoRoot, 'build', 'tsan');
  const tsanBuild = step('native build with TSan', () => buildNative({ buildDir: tsanDir,
    cmakeArgs: ['-DATTNLENS_SANITIZE=thread', '-DCMAKE_BUILD_TYPE=RelWithDebInfo'], targets: ['attnlens_tests'] }));
  if (tsanBuild) runCtest('threaded native tests under TSan', tsanDir, ['-R', 'thread']);

  const wasmBuilt = step('WebAssembly build', () => buildWasm());
  const pageBuilt = wasmBuilt && step('page build', () => buildPage());
  if (wasmBuilt) {
    runNodeTests('build checks, library and WASM tests in Node', ['tests/build/', 'tests/lib/', 'tests/wasm/']);
    runNodeTests('npm package tests', ['tests/package/']);
  }
  if (pageBuilt) runNodeTests('page tests in headless Chromium', ['tests/browser/']);
  runScript('fuzzing (bounded libFuzzer run)', 'tests/fuzz/run.mjs');
  runScript('fuzzing the tokenizers (bounded, JS, GPT-2 against Hugging Face tokenizers)', 'tests/fuzz/fuzz-tokenizers.mjs', ['10']);
  if (wasmBuilt) {
    runScript('benchmark starts (one tiny iteration)', 'tests/bench/run.mjs', ['--quick']);
    runScript('threads benchmark starts (one tiny iteration)', 'tests/bench/threads.mjs', ['--quick']);
    runScript('browser benchmark starts (one tiny iteration)', 'tests/bench/run.mjs', ['--browser', '--quick']);
    runScript('typing benchmark starts (tiny model, a few keys)', 'tests/bench/run.mjs', ['--typing', '--quick']);
    runScript('phase breakdown starts (one tiny iteration)', 'tests/bench/phases.mjs', ['--quick', '--only', 'S1,S2,S3']);
    runScript('native vs WASM kernels start (builds 4 variants, tiny budget)', 'tests/bench/native-vs-wasm.mjs', ['--quick']);
    runScript('kernels in Chromium start (relaxed and SIMD builds, tiny budget)', 'tests/bench/products-browser.mjs', ['--quick']);
    runScript('views benchmark starts (64 tokens, one run)', 'tests/bench/views.mjs', ['--tokens', '64', '--runs', '1']);
    runScript('copy-out benchmark starts (tiny shapes)', 'tests/bench/copy-out.mjs', ['--quick']);
    runScript('16-bit weights benchmark starts (tiny model)', 'tests/bench/sixteen-bit.mjs', ['--quick']);
  }
}

const minutes = ((Date.now() - startedAt) / 60000).toFixed(1);
banner('summary');
if (tally.failures.length) console.log(`failed: ${tally.failures.join('; ')}`);
console.log(`took ${minutes} min`);
console.log(`attnlens: ${tally.passed} passed, ${tally.failed} failed`);
process.exit(tally.failed === 0 ? 0 : 1);
