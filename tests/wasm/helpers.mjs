// Shared by the tests/wasm files: builds the WASM modules when they are
// missing, loads both variants through the public API, compares numbers.
// The SIMD variant under test is 'simd', or the level named by
// ATTNLENS_TEST_SIMD_LEVEL: relaxed-level.test.mjs runs every file again with
// 'relaxed' in a Node that validates relaxed SIMD.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const wasmFiles = ['relaxed', 'simd', 'scalar'].flatMap((variant) =>
  ['mjs', 'wasm'].map((ext) => new URL(`../../web/lib/wasm/attnlens-${variant}.${ext}`, import.meta.url)));

// Builds web/lib/wasm only when a module file is missing (others may be
// building at the same time: the lock serializes us).
export function ensureWasmBuilt() {
  if (wasmFiles.every((file) => existsSync(file))) return;
  execFileSync('flock', ['/tmp/attnlens-build.lock', 'node', 'web/scripts/build.mjs', 'wasm'],
    { cwd: repoRoot, stdio: 'inherit' });
}

ensureWasmBuilt();
const { load } = await import('../../web/lib/node.js');

/** The SIMD level these tests run: 'simd', or 'relaxed' under relaxed-level.test.mjs. */
export const simdLevelUnderTest = process.env.ATTNLENS_TEST_SIMD_LEVEL ?? 'simd';

/** Both modules through the public API: [SIMD lens (of simdLevelUnderTest), scalar lens]. */
export async function loadBoth() {
  const lenses = [await load({ simd: simdLevelUnderTest }), await load({ simd: false })];
  assert.equal(lenses[0].simd, true);
  assert.equal(lenses[0].simdLevel, simdLevelUnderTest);
  assert.equal(lenses[1].simd, false);
  assert.equal(lenses[1].simdLevel, 'scalar');
  return lenses;
}

export { load };

/**
 * Asserts |actual - expected| <= atol + rtol * |expected| elementwise, with a
 * message naming the first failing index. Infinities must match exactly.
 */
export function assertClose(actual, expected, { atol = 1e-5, rtol = 1e-4, label = 'value' } = {}) {
  assert.equal(actual.length, expected.length, `${label}: length ${actual.length} != ${expected.length}`);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i], e = expected[i];
    if (!Number.isFinite(e)) {
      assert.equal(a, e, `${label}[${i}]: got ${a}, expected ${e}`);
      continue;
    }
    assert.ok(Math.abs(a - e) <= atol + rtol * Math.abs(e), `${label}[${i}]: got ${a}, expected ${e}`);
  }
}

/** Byte-for-byte equality of two typed arrays (bit identity, NaN payloads included). */
export function assertBitIdentical(a, b, label = 'value') {
  assert.equal(a.constructor, b.constructor, `${label}: different array types`);
  const bytesA = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const bytesB = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  assert.ok(Buffer.compare(bytesA, bytesB) === 0, `${label}: not bit-identical`);
}

/** An array of a recognisable value (-7.5), so that any write into it shows. */
export const sentinel = (length) => new Float32Array(length).fill(-7.5);

/**
 * `call` must throw `kind` with a message matching `message`, leaving the
 * heap and the `untouched` arrays unchanged (bit for bit).
 */
export function assertRefused(lens, call, kind, message, untouched = []) {
  const heapBefore = lens.heapBytesInUse();
  const copies = untouched.map((array) => array.slice());
  assert.throws(call, (error) => {
    assert.ok(error instanceof kind, `expected a ${kind.name}, got ${error}`);
    assert.match(error.message, message);
    return true;
  });
  assert.equal(lens.heapBytesInUse(), heapBefore, 'heap changed by a refused call');
  untouched.forEach((array, i) => assertBitIdentical(array, copies[i], `array ${i} after a refused call`));
}

/** Row sums of a rows x cols matrix stored flat (any array-like). */
export function rowSums(matrix, rows, cols) {
  return Array.from({ length: rows }, (_, i) => {
    let sum = 0;
    for (let j = 0; j < cols; j++) sum += matrix[i * cols + j];
    return sum;
  });
}
