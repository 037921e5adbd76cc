// The relaxed-SIMD module's products really are fused multiply-adds in the
// final encoding (f32x4.relaxed_madd, 0xfd 0x85 0x02), which engines accept,
// and not the pre-standard f32x4.fma clang 14 emits; the plain SIMD module,
// its fallback, has none.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../web/scripts/toolchain.mjs';

const wasmDir = join(repoRoot, 'web', 'lib', 'wasm');

function disassemble(name) {
  const file = join(wasmDir, name);
  assert.ok(existsSync(file), `${file} is missing: run npm run build`);
  return execFileSync('wasm-objdump', ['-d', file], { maxBuffer: 256 * 1024 * 1024 }).toString();
}

const count = (text, pattern) => (text.match(pattern) ?? []).length;

test('the relaxed module multiplies with f32x4.relaxed_madd in its final encoding', () => {
  const code = disassemble('attnlens-relaxed.wasm');
  // Every (rows, vectors) register tile of the packed-panel product has its own loop.
  assert.ok(count(code, /\bfd 85 02\s+\|\s+f32x4\.relaxed_madd\b/g) >= 16, 'expected many f32x4.relaxed_madd (fd 85 02)');
  assert.equal(count(code, /\bfd af 01\b/g), 0, 'no pre-standard f32x4.fma opcode');
  assert.ok(count(code, /v128\.load/g) > 20, 'expected vector loads');
});

test('the relaxed threads module has the fused products, shared memory and its pthread worker', () => {
  const code = disassemble('attnlens-relaxed-threads.wasm');
  assert.ok(count(code, /\bfd 85 02\s+\|\s+f32x4\.relaxed_madd\b/g) >= 16, 'expected many f32x4.relaxed_madd (fd 85 02)');
  assert.ok(count(code, /\bmemory\.atomic\.wait32\b|\bi32\.atomic\./g) > 0, 'expected atomics (a threads build)');
  assert.ok(existsSync(join(wasmDir, 'attnlens-relaxed-threads.worker.js')), 'the pthread worker script is built');
  // The worker registers embind's types through this export (CMakeLists.txt names it for LLVM 19).
  const glue = readFileSync(join(wasmDir, 'attnlens-relaxed-threads.mjs'), 'utf8');
  // Module["…"] = …, written Module.… = … once the glue is minified (web/scripts/minify-glue.mjs).
  assert.match(glue, /(\["___embind_register_native_and_builtin_types"\]|\.___embind_register_native_and_builtin_types)=/);
});

test('the plain SIMD module has no relaxed-SIMD instructions', () => {
  assert.equal(count(disassemble('attnlens-simd.wasm'), /\brelaxed_/g), 0);
});
