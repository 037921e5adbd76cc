// Builds attnlens. Usage: node web/scripts/build.mjs [wasm|native|page|all]...
//   wasm    the Embind modules (SIMD + scalar fallback) into web/lib/wasm/
//   native  the C++ core, Catch2 tests and native benchmark into build/native/
//   page    the static page into dist/page/ and the one-file offline page into dist/
//   all     wasm + page (what `npm run build` and `npm start` need)
// Each step is incremental (CMake/Ninja, Vite), so re-running is cheap.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { emscriptenEnv, ensureNodeModules, ensureSystemPackages, repoRoot, run } from './toolchain.mjs';

// `targets`: ninja targets to build (default: everything not excluded from
// `all`); a build directory is configured once, on first use.
export function buildWasm({ buildDir = join(repoRoot, 'build', 'wasm'), targets = [] } = {}) {
  ensureSystemPackages(['wasm']);
  const env = emscriptenEnv();
  if (!existsSync(join(buildDir, 'build.ninja'))) {
    run('emcmake', ['cmake', '-S', '.', '-B', buildDir, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=Release'], { env });
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
}

const steps = { wasm: () => buildWasm(), native: () => buildNative(), page: buildPage, all: () => { buildWasm(); buildPage(); } };

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
