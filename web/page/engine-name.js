// How the page names the WebAssembly module that computes (lens.simdLevel,
// lens.threads): relaxed SIMD has fused multiply-adds, SIMD is 128-bit lanes,
// scalar is the fallback; two threads only on cross-origin isolated pages
// (npm start), one in the offline file.
const names = { relaxed: 'WASM relaxed SIMD', simd: 'WASM SIMD', scalar: 'WASM (scalar)' };

export function engineName(simdLevel, threads = 1) {
  return `${names[simdLevel] ?? 'WASM'}, ${threads === 1 ? '1 thread' : `${threads} threads`}`;
}
