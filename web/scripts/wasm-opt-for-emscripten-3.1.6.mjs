#!/usr/bin/env node
// `wasm-opt` as emscripten 3.1.6 expects it, for the relaxed-SIMD build
// (toolchain.mjs: emscriptenRelaxedEnv puts this file on PATH as wasm-opt).
// It runs the npm package binaryen's current wasm-opt, which reads the final
// relaxed-SIMD opcodes that Debian's binaryen 108 rejects, with the same
// arguments. One output changed between the two: the renaming that
// --minify-imports[-and-exports[-and-modules]] prints, which emcc 3.1.6 parses
// as "old => new" lines and current binaryen prints as JSON
// ({"imports": [[module, name, new]...], "exports": [[name, new]...]}).
// Without this translation the glue and the module disagree on every name.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const wasmOpt = fileURLToPath(new URL('../../node_modules/binaryen/bin/wasm-opt', import.meta.url));
const args = process.argv.slice(2);
const result = spawnSync(process.execPath, [wasmOpt, ...args],
  { stdio: ['inherit', 'pipe', 'inherit'], maxBuffer: 1 << 30 });
if (result.error) {
  console.error(`wasm-opt (npm binaryen) could not start: ${result.error.message}`);
  process.exit(1);
}
let output = result.stdout.toString();
if (args.some((arg) => arg.startsWith('--minify-imports')) && output.trimStart().startsWith('{')) {
  const { imports = [], exports = [] } = JSON.parse(output);
  output = [
    ...imports.map((entry) => `${entry[entry.length - 2]} => ${entry[entry.length - 1]}`),
    ...exports.map(([name, renamed]) => `${name} => ${renamed}`),
  ].map((line) => `${line}\n`).join('');
}
process.stdout.write(output);
process.exit(result.status ?? 1);
