// The SIMD module really contains wasm SIMD arithmetic, and the fallback
// module really contains none (so it runs on engines without simd128).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../web/scripts/toolchain.mjs';

const wasmDir = join(repoRoot, 'web', 'lib', 'wasm');

function disassemble(file) {
  return execFileSync('wasm-objdump', ['-d', file], { maxBuffer: 256 * 1024 * 1024 }).toString();
}

function count(text, pattern) {
  return (text.match(pattern) ?? []).length;
}

test('the SIMD module computes with f32x4 multiply-adds', () => {
  const file = join(wasmDir, 'attnlens-simd.wasm');
  assert.ok(existsSync(file), `${file} is missing: run npm run build`);
  const code = disassemble(file);
  assert.ok(count(code, /f32x4\.mul/g) > 20, 'expected many f32x4.mul instructions');
  assert.ok(count(code, /f32x4\.add/g) > 20, 'expected many f32x4.add instructions');
  assert.ok(count(code, /v128\.load/g) > 20, 'expected vector loads');
});

test('the scalar fallback module has no SIMD instructions', () => {
  const file = join(wasmDir, 'attnlens-scalar.wasm');
  assert.ok(existsSync(file), `${file} is missing: run npm run build`);
  const code = disassemble(file);
  assert.equal(count(code, /\b(?:f32x4|i32x4|v128)\./g), 0);
});

test('the threads module computes with f32x4 and synchronizes with atomics', () => {
  const file = join(wasmDir, 'attnlens-threads.wasm');
  assert.ok(existsSync(file), `${file} is missing: run npm run build`);
  const code = disassemble(file);
  assert.ok(count(code, /f32x4\.mul/g) > 20, 'expected many f32x4.mul instructions');
  assert.ok(count(code, /\batomic\./g) > 0, 'expected atomic instructions (pthreads)');
  assert.ok(existsSync(join(wasmDir, 'attnlens-threads.worker.js')), 'the pthread worker script is built');
});
