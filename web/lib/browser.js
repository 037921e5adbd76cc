// attnlens for browsers and bundlers (Vite, webpack, esbuild): the package's
// "default" export. The module files are fetched relative to this file; the
// literal import paths let bundlers find them and emit the .wasm as an asset.
import { makeLoader } from './api.js';

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

/**
 * Instantiates the WebAssembly module (relaxed SIMD, else SIMD, else scalar:
 * the best this engine validates, unless `simd` asks for one) and resolves to
 * the attnlens API. On cross-origin isolated pages the relaxed and SIMD
 * levels run two threads (see web/docs/performance.md); results are the
 * same bits as one thread of the same level.
 */
export const load = makeLoader(async (variant) => {
  if (threadsGlue[variant] && threadsUsable()) {
    try {
      return await instantiateThreads(variant);
    } catch {
      // Not deployed beside this file (e.g. bundled): the single-thread module computes the same numbers.
    }
  }
  const { default: createModule } = await factories[variant]();
  return createModule();
});
