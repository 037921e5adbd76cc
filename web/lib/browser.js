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

// The threads module (SIMD plus one pthread that takes half of the heads)
// needs SharedArrayBuffer, which browsers give only to cross-origin isolated
// pages (COOP: same-origin + COEP: require-corp).
function threadsUsable() {
  return globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
}

// Loaded from beside this file, unbundled: the path is kept out of a literal
// so bundlers neither rewrite it nor try to bundle the pthread worker (a
// classic worker that imports the module again). In a bundled app the file is
// absent, the import fails, and load() uses the SIMD module instead.
const threadsGlue = './wasm/attnlens-threads.mjs';

async function instantiateThreads() {
  const { default: createModule } = await import(/* @vite-ignore */ new URL(threadsGlue, import.meta.url).href);
  return createModule();
}

/**
 * Instantiates the WebAssembly module (relaxed SIMD, else SIMD, else scalar:
 * the best this engine validates, unless `simd` asks for one; the SIMD level
 * runs two threads on cross-origin isolated pages) and resolves to the
 * attnlens API. The relaxed level stays single-threaded: its fused
 * multiply-adds speed up every product, the model forward included, which
 * the threads module does not split (see web/docs/performance.md).
 */
export const load = makeLoader(async (variant) => {
  if (variant === 'simd' && threadsUsable()) {
    try {
      return await instantiateThreads();
    } catch {
      // Not deployed beside this file (e.g. bundled): the single-thread module computes the same numbers.
    }
  }
  const { default: createModule } = await factories[variant]();
  return createModule();
});
