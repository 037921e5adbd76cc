// attnlens for Node (>= 20): the package's "node" export. Emscripten 3.1.6's
// web loader would fetch() the .wasm, which Node cannot do for file URLs, so
// the bytes are read here and handed over as `wasmBinary`.
import { readFile } from 'node:fs/promises';
import { makeLoader } from './api.js';

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

/**
 * Instantiates the WebAssembly module (relaxed SIMD, else SIMD, else scalar:
 * the best this engine validates, unless `simd` asks for one) and resolves to
 * the attnlens API.
 */
export const load = makeLoader(async (variant) => {
  const { glue, wasm } = variants[variant];
  const [{ default: createModule }, wasmBinary] = await Promise.all([glue(), readFile(wasm)]);
  return createModule({ wasmBinary });
});
