// Builds attnlens. Usage: node web/scripts/build.mjs [wasm|native|page|elements|all]...
//   wasm    the Embind modules (relaxed SIMD, SIMD, threads, scalar fallback) into web/lib/wasm/
//   native  the C++ core, Catch2 tests and native benchmark into build/native/
//   page    the static page into dist/page/, the one-file offline page and dist/attnlens-elements.js
//   elements dist/attnlens-elements.js only
//   all     wasm + page (what `npm run build` and `npm start` need)
// Each step is incremental (CMake/Ninja, Vite), so re-running is cheap.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  emscriptenEnv, emscriptenRelaxedEnv, ensureNodeModules, ensureSystemPackages, repoRoot, run,
} from './toolchain.mjs';
import { buildTutorial } from '../tutorial/build.mjs';

// `targets`: ninja targets to build (default: everything not excluded from
// `all`); a build directory is configured once, on first use. `relaxed`: also
// build the relaxed-SIMD module (the default when building everything).
export function buildWasm({ buildDir = join(repoRoot, 'build', 'wasm'), targets = [], relaxed = targets.length === 0 } = {}) {
  ensureSystemPackages(['wasm']);
  ensureNodeModules(); // esbuild minifies the glue (web/scripts/minify-glue.mjs)
  const env = emscriptenEnv();
  if (!existsSync(join(buildDir, 'build.ninja'))) {
    run('emcmake', ['cmake', '-S', '.', '-B', buildDir, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=Release'], { env });
  }
  run('ninja', ['-C', buildDir, ...targets], { env });
  if (relaxed) buildRelaxedWasm();
  return buildDir;
}

// The relaxed-SIMD modules (one thread, and two), in a build directory of its own: its compiler is
// LLVM 19, not emscripten's clang 14 (see emscriptenRelaxedEnv).
// `targets`: only these (e.g. the relaxed kernel benchmark), not the modules.
export function buildRelaxedWasm({ buildDir = join(repoRoot, 'build', 'wasm-relaxed'), targets = [] } = {}) {
  ensureSystemPackages(['wasm']);
  ensureNodeModules(); // the npm package binaryen (wasm-opt)
  const env = emscriptenRelaxedEnv(join(buildDir, 'tools'));
  // Configured again when the list of modules changed (a tree configured
  // before relaxed-threads existed).
  const variants = 'relaxed;relaxed-threads';
  const cache = join(buildDir, 'CMakeCache.txt');
  if (!existsSync(join(buildDir, 'build.ninja')) || !readFileSync(cache, 'utf8').includes(`ATTNLENS_WASM_VARIANTS:STRING=${variants}\n`)) {
    run('emcmake', ['cmake', '-S', '.', '-B', buildDir, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=Release',
      `-DATTNLENS_WASM_VARIANTS=${variants}`], { env });
  }
  run('ninja', ['-C', buildDir, ...targets], { env });
  return buildDir;
}

export function buildNative({ buildDir = join(repoRoot, 'build', 'native'), cmakeArgs = [], targets = [] } = {}) {
  ensureSystemPackages(['native']);
  if (!existsSync(join(buildDir, 'build.ninja'))) {
    run('cmake', ['-S', '.', '-B', buildDir, '-G', 'Ninja', ...cmakeArgs]);
  }
  run('ninja', ['-C', buildDir, ...targets]);
  return buildDir;
}

export function buildPage() {
  ensureNodeModules();
  run(join(repoRoot, 'node_modules', '.bin', 'vite'), ['build', '--config', 'web/page/vite.config.js']);
  buildElements();
  buildTutorial(); // dist/tutorial/: needs dist/attnlens-elements.js
}

// dist/attnlens-elements.js: the custom elements as one classic script, WASM inlined (for file:// tutorials).
export function buildElements() {
  ensureNodeModules();
  run(join(repoRoot, 'node_modules', '.bin', 'vite'), ['build', '--config', 'web/elements/vite.config.js']);
}

const steps = { wasm: () => buildWasm(), native: () => buildNative(), page: buildPage, elements: buildElements, all: () => { buildWasm(); buildPage(); } };

if (import.meta.url === `file://${process.argv[1]}`) {
  const wanted = process.argv.slice(2);
  for (const name of wanted.length ? wanted : ['all']) {
    if (!steps[name]) {
      console.error(`unknown build step "${name}"; choose from: ${Object.keys(steps).join(', ')}`);
      process.exit(2);
    }
    try {
      steps[name]();
    } catch (error) {
      console.error(`[attnlens] build failed: ${error.message}`);
      process.exit(1);
    }
  }
}
