// attnlens for browsers and bundlers (Vite, webpack, esbuild): the package's
// "default" export. The module files are fetched relative to this file; the
// literal import paths let bundlers find them and emit the .wasm as an asset.
import { makeLoader } from './api.js';
import { makeConfiguration } from './configure.js';

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

// The threads modules load as configured ones do (wasm-files.js), from the
// wasm/ folder beside this file by default: a URL no bundler rewrites, nor
// bundles its pthread worker. A bundled app copies the files and calls
// configure() (README: bundlers); without them load() runs one thread.
const threadsNames = { relaxed: 'attnlens-relaxed-threads', simd: 'attnlens-threads' };
const thisFile = import.meta.url; // not in new URL(..., import.meta.url): webpack would bundle that

// A relative wasmPath is relative to the page, as a relative URL in its HTML would be.
const { configure, wasmBase, track } = makeConfiguration((folder) =>
  new URL(folder, globalThis.document?.baseURI ?? globalThis.location?.href));

/** Tells load() (and the elements) at which folder URL the module files (web/lib/wasm/) are served. */
export { configure };

// loadModel({ from })'s downloads and cache, imported on first use (types: index.d.ts).
const hub = () => import('./model/hub/browser.js');

/**
 * Instantiates the WebAssembly module (relaxed SIMD, else SIMD, else scalar:
 * the best this engine validates, unless `simd` asks for one) and resolves to
 * the attnlens API. On cross-origin isolated pages the relaxed and SIMD
 * levels run two threads (see web/docs/performance.md); results are the
 * same bits as one thread of the same level.
 */
export const load = makeLoader((variant) => track(instantiate(variant)), hub);

export const clearModelCache = async (...args) => (await hub()).clearModelCache(...args);
export const cachedModels = async (...args) => (await hub()).cachedModels(...args);

async function instantiate(variant) {
  const base = wasmBase();
  const threads = threadsNames[variant] !== undefined && threadsUsable();
  if (base !== undefined || threads) {
    const { instantiateFrom } = await import('./wasm-files.js');
    const name = threads ? threadsNames[variant] : `attnlens-${variant}`;
    if (base !== undefined) return instantiateFrom(base, name);
    try {
      return await instantiateFrom(new URL('./wasm/', thisFile), name);
    } catch {
      // Not deployed beside this file (e.g. bundled): the single-thread module computes the same numbers.
    }
  }
  const { default: createModule } = await factories[variant]();
  return createModule().catch(async (error) => {
    // Emscripten's fetch failure names no URL: the glue looked beside itself (or the bundle).
    if (!String(error?.message).includes('fetching of the wasm failed')) throw error;
    const { filesError } = await import('./wasm-files.js');
    throw filesError(`attnlens-${variant}.wasm beside the module that imports it (or your bundle)`, 'not found');
  });
}
