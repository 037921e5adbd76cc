// The relaxed-SIMD module's products really are fused multiply-adds in the
// final encoding (f32x4.relaxed_madd, 0xfd 0x85 0x02), which engines accept,
// and not the pre-standard f32x4.fma clang 14 emits; the plain SIMD module,
// its fallback, has none.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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

test('the plain SIMD module has no relaxed-SIMD instructions', () => {
  assert.equal(count(disassemble('attnlens-simd.wasm'), /\brelaxed_/g), 0);
});
