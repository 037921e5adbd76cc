// attnlens for browsers and bundlers (Vite, webpack, esbuild): the package's
// "default" export. The module files are fetched relative to this file; the
// literal import paths let bundlers find them and emit the .wasm as an asset.
import { makeLoader } from './api.js';

export { simdSupported } from './api.js';
export { version } from './version.js';

const factories = {
  simd: () => import('./wasm/attnlens-simd.mjs'),
  scalar: () => import('./wasm/attnlens-scalar.mjs'),
};

/**
 * Instantiates the WebAssembly module (SIMD when the engine supports it,
 * otherwise the scalar build) and resolves to the attnlens API.
 */
export const load = makeLoader(async (variant) => {
  const { default: createModule } = await factories[variant]();
  return createModule();
});
