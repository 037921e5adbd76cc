// Finds, and where it can installs, what the build and the tests need.
// Uses only Node's standard library: it runs before `npm ci` has.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readlinkSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

// What each part of the work needs, as (check, Debian package) pairs.
const requirements = {
  native: [
    ['command:cmake', 'cmake'],
    ['command:ninja', 'ninja-build'],
    ['command:g++', 'g++'],
    ['file:/usr/include/xsimd/xsimd.hpp', 'libxsimd-dev'],
    // nlohmann/json: the native tests and the fuzzer read safetensors headers with it.
    ['file:/usr/include/nlohmann/json.hpp', 'nlohmann-json3-dev'],
    ['file:/usr/include/catch2/catch.hpp', 'catch2'],
  ],
  wasm: [
    ['command:emcc', 'emscripten'],
    ['command:cmake', 'cmake'],
    ['command:ninja', 'ninja-build'],
    ['file:/usr/include/xsimd/xsimd.hpp', 'libxsimd-dev'],
    ['command:wasm-objdump', 'wabt'],
    // The relaxed-SIMD module: clang 16+ emits the final relaxed opcodes
    // (emscripten 3.1.6's clang 14 only the pre-standard ones); see emscriptenRelaxedEnv.
    ['command:clang-19', 'clang-19'],
    ['command:wasm-ld-19', 'lld-19'],
  ],
  // A font, so the page's text (token labels) renders and measures the same everywhere.
  browser: [['file:/usr/bin/chromium', 'chromium'], ['file:/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', 'fonts-dejavu-core']],
  fuzz: [
    ['command:clang++', 'clang'],
    ['file:/usr/include/nlohmann/json.hpp', 'nlohmann-json3-dev'],
    ['file:/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a', 'libclang-rt-14-dev'],
  ],
};

function commandExists(name) {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

function satisfied(check) {
  const [kind, what] = check.split(/:(.*)/s);
  return kind === 'command' ? commandExists(what) : existsSync(what);
}

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', cwd: repoRoot, ...options });
  if (result.error) throw new Error(`${command} could not start: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
  return result;
}

// Installs the missing Debian packages for the given parts, or stops with the
// exact command to run when this process cannot (not root, no apt-get).
export function ensureSystemPackages(parts) {
  const missing = new Set();
  for (const part of parts) for (const [check, pkg] of requirements[part]) if (!satisfied(check)) missing.add(pkg);
  if (missing.size === 0) return;
  const packages = [...missing].sort();
  const command = `apt-get update && apt-get install -y ${packages.join(' ')}`;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !commandExists('apt-get')) {
    throw new Error(`attnlens needs Debian packages that are missing: ${packages.join(', ')}.\n` +
      `Install them with:\n  sudo ${command}`);
  }
  console.log(`[attnlens] installing ${packages.join(' ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-q'], { env });
  run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...packages], { env });
}

// Installs the locked npm packages when node_modules is missing or older than
// package-lock.json. `npm install`, not `npm ci`: the lock lists optional
// per-platform packages (rollup's, esbuild's) for every OS, and `npm ci`
// refuses to run when a registry mirror lacks some of them, whereas
// `npm install` still installs exactly the locked versions for this platform.
export function ensureNodeModules() {
  const marker = join(repoRoot, 'node_modules', '.package-lock.json');
  const lock = join(repoRoot, 'package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  console.log('[attnlens] installing npm packages (npm install)');
  run('npm', ['install', '--no-audit', '--no-fund']);
}

// Debian's emscripten 3.1.6 needs acorn & co from Debian's node modules (-O1+).
export function emscriptenEnv() {
  const nodePath = ['/usr/share/nodejs', process.env.NODE_PATH].filter(Boolean).join(':');
  // `npm test` puts node_modules/.bin first on PATH, and there the npm package
  // binaryen's wasm-opt (132) would take the place of Debian's (108): Debian's
  // emcc finds binaryen's tools on PATH, and with the newer wasm-opt its glue
  // kept the full import names while the .wasm had them minified (a LinkError
  // at load). The relaxed build chooses its wasm-opt itself (emscriptenRelaxedEnv).
  const path = (process.env.PATH ?? '').split(':').filter((dir) => !dir.endsWith(`node_modules${sep}.bin`)).join(':');
  return { ...process.env, PATH: path, NODE_PATH: nodePath };
}

// The environment for emscripten 3.1.6 building the relaxed-SIMD module with
// LLVM 19 and a current wasm-opt. Debian's 3.1.6 runs clang 14, which emits
// pre-standard relaxed-SIMD opcodes no engine accepts, and binaryen 108,
// which cannot read the final ones (it stops on "invalid code after SIMD
// prefix: 261", f32x4.relaxed_madd). emcc finds its tools by name: LLVM's in
// EM_LLVM_ROOT, binaryen's on PATH. So `toolDir` gets links: clang, clang++,
// wasm-ld from LLVM 19; the archive and object tools stay emscripten's own
// LLVM 14 ones (they only index and copy objects); wasm-metadce from the npm
// package `binaryen`, and its wasm-opt through wasm-opt-for-emscripten-3.1.6.mjs
// (which translates one output format). EMCC_READ_METADATA=python reads the
// module's metadata in Python instead of binaryen 108's
// wasm-emscripten-finalize, which the build must then never need to run
// (CMakeLists.txt links this module with -sWASM_BIGINT for that).
export function emscriptenRelaxedEnv(toolDir) {
  const llvmDir = join(toolDir, 'llvm');
  const binaryenDir = join(toolDir, 'binaryen');
  const binaryenBin = join(repoRoot, 'node_modules', 'binaryen', 'bin');
  const links = [
    [llvmDir, 'clang', '/usr/bin/clang-19'],
    [llvmDir, 'clang++', '/usr/bin/clang++-19'],
    [llvmDir, 'wasm-ld', '/usr/bin/wasm-ld-19'],
    ...['llvm-ar', 'llvm-ranlib', 'llvm-nm', 'llvm-objcopy', 'llvm-strip', 'llvm-dwarfdump']
      .map((tool) => [llvmDir, tool, `/usr/bin/${tool}-14`]),
    [binaryenDir, 'wasm-opt', join(repoRoot, 'web', 'scripts', 'wasm-opt-for-emscripten-3.1.6.mjs')],
    [binaryenDir, 'wasm-metadce', join(binaryenBin, 'wasm-metadce')],
  ];
  for (const [dir, name, target] of links) {
    if (!existsSync(target)) throw new Error(`the relaxed-SIMD build needs ${target}, which is missing`);
    mkdirSync(dir, { recursive: true });
    const link = join(dir, name);
    let current = null;
    try { current = readlinkSync(link); } catch { /* no link yet */ }
    if (current === target) continue;
    if (current !== null) unlinkSync(link);
    symlinkSync(target, link);
  }
  const env = emscriptenEnv();
  return {
    ...env,
    PATH: `${binaryenDir}:${env.PATH}`,
    EM_LLVM_ROOT: llvmDir,
    // Empty: the links carry plain names (Debian's config appends "-14").
    EM_LLVM_ADD_VERSION: '',
    EM_CLANG_ADD_VERSION: '',
    EMCC_READ_METADATA: 'python',
  };
}
