// Which WebAssembly module an engine can run: feature tests by
// WebAssembly.validate of tiny hand-assembled modules, and the level load()
// picks ('relaxed' > 'simd' > 'scalar') or is asked for.
import { describe } from './validation.js';

// The smallest module whose validation needs WebAssembly SIMD (simd128):
// one function of type () -> v128 whose body is i8x16.splat(i32.const 0).
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // type section: one type, () -> v128
  0x03, 0x02, 0x01, 0x00, // function section: one function of type 0
  0x0a, 0x08, 0x01, 0x06, 0x00, // code section: one body of 6 bytes, no locals
  0x41, 0x00, 0xfd, 0x0f, 0x0b, // i32.const 0; i8x16.splat; end
]);

// The smallest module whose validation needs relaxed SIMD: one function of
// type () -> v128 computing f32x4.relaxed_madd (final opcode 0xfd 0x85 0x02)
// of three zero vectors. Engines that know only simd128, or only the
// pre-standard relaxed opcodes, reject it.
const RELAXED_SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // type section: one type, () -> v128
  0x03, 0x02, 0x01, 0x00, // function section: one function of type 0
  0x0a, 0x13, 0x01, 0x11, 0x00, // code section: one body of 17 bytes, no locals
  0x41, 0x00, 0xfd, 0x0f, 0x41, 0x00, 0xfd, 0x0f, 0x41, 0x00, 0xfd, 0x0f, // 3 x (i32.const 0; i8x16.splat)
  0xfd, 0x85, 0x02, 0x0b, // f32x4.relaxed_madd; end
]);

function validates(probe) {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(probe);
  } catch {
    return false;
  }
}

/** True when this engine validates WebAssembly SIMD code. */
export function simdSupported() {
  return validates(SIMD_PROBE);
}

/** True when this engine validates relaxed-SIMD code (fused multiply-add). */
export function relaxedSimdSupported() {
  return validates(RELAXED_SIMD_PROBE);
}

/** The best module level this engine runs: 'relaxed', then 'simd', then 'scalar'. */
export function bestSimdLevel() {
  if (!simdSupported()) return 'scalar';
  return relaxedSimdSupported() ? 'relaxed' : 'simd';
}

export const SIMD_LEVELS = ['relaxed', 'simd', 'scalar'];
const LEVEL_NAMES = { relaxed: 'relaxed SIMD (f32x4.relaxed_madd)', simd: 'WebAssembly SIMD (simd128)' };

// The module level load() runs for its `simd` option, or an Error saying why
// the engine cannot run the one asked for.
export function chooseLevel(simd) {
  const best = bestSimdLevel();
  if (simd === undefined) return best;
  if (simd === false || simd === 'scalar') return 'scalar';
  const wanted = simd === true ? 'simd' : simd;
  if (SIMD_LEVELS.indexOf(best) > SIMD_LEVELS.indexOf(wanted)) {
    const missing = best === 'scalar' ? LEVEL_NAMES.simd : LEVEL_NAMES.relaxed;
    throw new Error(`attnlens.load: { simd: ${describe(simd)} } was requested, but this engine lacks ${missing}; ` +
      `omit the option to fall back to the ${best} module`);
  }
  // `true` asks for SIMD, not for a level: the best one there is.
  return simd === true ? best : wanted;
}

/** True for the names of the levels: 'relaxed', 'simd', 'scalar'. */
export function isSimdLevel(value) {
  return SIMD_LEVELS.includes(value);
}
