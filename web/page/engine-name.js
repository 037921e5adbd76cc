// How the page names the WebAssembly module that computes (lens.simdLevel):
// relaxed SIMD has fused multiply-adds, SIMD is 128-bit lanes, scalar is the fallback.
const names = { relaxed: 'WASM relaxed SIMD', simd: 'WASM SIMD', scalar: 'WASM (scalar)' };

export function engineName(simdLevel) {
  return names[simdLevel] ?? 'WASM';
}
