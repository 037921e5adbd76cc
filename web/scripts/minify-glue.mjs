// Minifies an Embind glue file in place (CMake runs it after each link).
// Emscripten 3.1.6 strips the glue's whitespace but keeps its long local
// names; closure, which would rename them, needs Java. esbuild renames
// locals only (string keys such as Module["instantiateWasm"], the exports
// and `new URL("….wasm", import.meta.url)`, which bundlers look for, stay as
// they are): about 14 KB of gzip becomes 10.5 KB, a quarter of every page's
// first download of the module files.
import { readFileSync, writeFileSync } from 'node:fs';
import { transformSync } from 'esbuild';

for (const file of process.argv.slice(2)) {
  const { code } = transformSync(readFileSync(file, 'utf8'), { minify: true, format: 'esm', target: 'es2020', legalComments: 'none' });
  writeFileSync(file, code);
}
