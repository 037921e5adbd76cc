// attnlens for browsers and bundlers (Vite, webpack, esbuild): the package's
// "default" export. The module files are fetched relative to this file; the
// literal import paths let bundlers find them and emit the .wasm as an asset.
import { makeLoader } from './api.js';
import { filesError, makeConfiguration } from './configure.js';

export { bestSimdLevel, relaxedSimdSupported, simdSupported } from './api.js';
export { version } from './version.js';

const factories = {
  relaxed: () => import('./wasm/attnlens-relaxed.mjs'),
  simd: () => import('./wasm/attnlens-simd.mjs'),
  scalar: () => import('./wasm/attnlens-scalar.mjs'),
};

// The threads modules (relaxed SIMD or SIMD, plus one pthread that takes
// half of every stage: projections, heads, MLPs) need SharedArrayBuffer,
// which browsers give only to cross-origin isolated pages (COOP:
// same-origin + COEP: require-corp).
function threadsUsable() {
  return globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
}

// Loaded from beside this file, unbundled: the paths are kept out of a
// literal so bundlers neither rewrite them nor try to bundle the pthread
// worker (a classic worker that imports the module again). In a bundled app
// the files are absent unless the app copies web/lib/wasm/ beside the
// bundle (the page does); then the import fails, and load() uses the
// single-thread module of the same level instead.
const threadsGlue = {
  relaxed: './wasm/attnlens-relaxed-threads.mjs',
  simd: './wasm/attnlens-threads.mjs',
};

async function instantiateThreads(variant) {
  const { default: createModule } = await import(/* @vite-ignore */ new URL(threadsGlue[variant], import.meta.url).href);
  return createModule();
}

// A relative wasmPath is relative to the page, as a relative URL in its HTML would be.
const { configure, wasmBase, track } = makeConfiguration((folder) =>
  new URL(folder, globalThis.document?.baseURI ?? globalThis.location?.href));

/**
 * Tells load() (and so the elements, which call it) where the package's
 * module files (web/lib/wasm/) are served: `wasmPath` is a folder URL,
 * absolute or relative to the page. Call it before the first load().
 */
export { configure };

const glueNames = {
  relaxed: 'attnlens-relaxed',
  simd: 'attnlens-simd',
  scalar: 'attnlens-scalar',
  'relaxed-threads': 'attnlens-relaxed-threads',
  'simd-threads': 'attnlens-threads',
};

// The glue and its .wasm (and pthread worker) from the configured folder.
// The .wasm is fetched here rather than by the glue, whose failure says
// neither the URL nor the status; the compiled module goes to the glue
// through instantiateWasm (and from there to the pthread workers).
async function instantiateFrom(base, name) {
  const glueUrl = new URL(`${name}.mjs`, base).href;
  const wasmUrl = new URL(`${name}.wasm`, base).href;
  const [createModule, wasmModule] = await Promise.all([
    import(/* @vite-ignore */ glueUrl).then((glue) => glue.default, (error) => { throw filesError(glueUrl, error.message); }),
    compileFrom(wasmUrl),
  ]);
  return createModule({
    locateFile: (path) => new URL(path, base).href,
    instantiateWasm(imports, receiveInstance) {
      WebAssembly.instantiate(wasmModule, imports).then((instance) => receiveInstance(instance, wasmModule));
      return {};
    },
  });
}

async function compileFrom(url) {
  let response;
  try {
    response = await fetch(url, { credentials: 'same-origin' });
  } catch (error) {
    throw filesError(url, `network error: ${error.message}`);
  }
  if (!response.ok) throw filesError(url, `HTTP ${response.status}`);
  try {
    return await WebAssembly.compile(await response.arrayBuffer());
  } catch (error) {
    throw filesError(url, `not a WebAssembly module: ${error.message}`);
  }
}

/**
 * Instantiates the WebAssembly module (relaxed SIMD, else SIMD, else scalar:
 * the best this engine validates, unless `simd` asks for one) and resolves to
 * the attnlens API. On cross-origin isolated pages the relaxed and SIMD
 * levels run two threads (see web/docs/performance.md); results are the
 * same bits as one thread of the same level.
 */
export const load = makeLoader((variant) => track(instantiate(variant)));

async function instantiate(variant) {
  const base = wasmBase();
  const threads = threadsGlue[variant] !== undefined && threadsUsable();
  if (base !== undefined) return instantiateFrom(base, glueNames[threads ? `${variant}-threads` : variant]);
  if (threads) {
    try {
      return await instantiateThreads(variant);
    } catch {
      // Not deployed beside this file (e.g. bundled): the single-thread module computes the same numbers.
    }
  }
  const { default: createModule } = await factories[variant]();
  return createModule().catch((error) => {
    // Emscripten's fetch failure names no URL: the glue looked for the .wasm beside itself (or the bundle).
    if (!String(error?.message).includes('fetching of the wasm failed')) throw error;
    throw filesError(`attnlens-${variant}.wasm beside the module that imports it (or beside your bundle)`,
      'not found');
  });
}
