// attnlens for Node (>= 20): the package's "node" export. Emscripten 3.1.6's
// web loader would fetch() the .wasm, which Node cannot do for file URLs, so
// the bytes are read here and handed over as `wasmBinary`.
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeLoader } from './api.js';
import { makeConfiguration } from './configure.js';
import { filesError } from './wasm-files.js';

export { bestSimdLevel, relaxedSimdSupported, simdSupported } from './api.js';
export { version } from './version.js';

const variants = {
  // Node 20 validates relaxed SIMD only with --experimental-wasm-relaxed-simd.
  relaxed: {
    glue: () => import('./wasm/attnlens-relaxed.mjs'),
    wasm: new URL('./wasm/attnlens-relaxed.wasm', import.meta.url),
  },
  simd: {
    glue: () => import('./wasm/attnlens-simd.mjs'),
    wasm: new URL('./wasm/attnlens-simd.wasm', import.meta.url),
  },
  scalar: {
    glue: () => import('./wasm/attnlens-scalar.mjs'),
    wasm: new URL('./wasm/attnlens-scalar.wasm', import.meta.url),
  },
};

// loadModel({ from })'s downloads and cache, imported on first use (types: index.d.ts).
const hub = () => import('./model/hub/node.js');

/**
 * Instantiates the WebAssembly module (relaxed SIMD, else SIMD, else scalar:
 * the best this engine validates, unless `simd` asks for one) and resolves to
 * the attnlens API.
 */
export const load = makeLoader((variant) => track(instantiate(variant)), hub);

export const clearModelCache = async (...args) => (await hub()).clearModelCache(...args);
export const cachedModels = async (...args) => (await hub()).cachedModels(...args);

// In Node the files are read from the installed package; a wasmPath is for
// apps bundled for Node (esbuild --platform=node), whose bundle no longer
// sits beside them: a folder path (relative to the working directory) or a
// file: URL. Node cannot import glue over http(s), so URLs are refused.
const { configure, wasmBase, track } = makeConfiguration((folder) => {
  if (folder.startsWith('file:')) return new URL(folder);
  if (/^[a-z][a-z0-9+.-]+:/i.test(folder)) {
    throw new TypeError(`attnlens.configure: in Node wasmPath is a folder path or a file: URL, got ${folder}`);
  }
  return pathToFileURL(`${resolve(folder)}/`);
});

/** Tells load() in which folder the package's module files (web/lib/wasm/) are. Call it before the first load(). */
export { configure };

async function instantiate(variant) {
  const base = wasmBase();
  if (base === undefined) {
    const { glue, wasm } = variants[variant];
    const [{ default: createModule }, wasmBinary] = await Promise.all([glue(), readFile(wasm)]);
    return createModule({ wasmBinary });
  }
  const glueUrl = new URL(`attnlens-${variant}.mjs`, base);
  const wasmUrl = new URL(`attnlens-${variant}.wasm`, base);
  const [{ default: createModule }, wasmBinary] = await Promise.all([
    import(glueUrl.href).catch((error) => { throw filesError(glueUrl.href, error.code ?? error.message); }),
    readFile(wasmUrl).catch((error) => { throw filesError(wasmUrl.href, error.code ?? error.message); }),
  ]);
  return createModule({ wasmBinary });
}
