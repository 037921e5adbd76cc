// The three module levels: the relaxed-SIMD probe, which level load() picks
// and forces, lens.simdLevel, and the relaxed module itself in this Node
// (it runs only with --experimental-wasm-relaxed-simd, see relaxed-level.test.mjs).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { bestSimdLevel, makeLoader, relaxedSimdSupported, simdSupported } from '../../web/lib/api.js';
import { load } from './helpers.mjs';

const relaxedFlag = process.execArgv.includes('--experimental-wasm-relaxed-simd');
// V8 validates relaxed SIMD by default from 11.4 (Node 21); Node 20 has 11.3.
const [v8Major, v8Minor] = process.versions.v8.split('.').map(Number);
const relaxedByDefault = v8Major > 11 || (v8Major === 11 && v8Minor >= 4);
const relaxedHere = relaxedFlag || relaxedByDefault;

function fakeModule() {
  return { limits: () => ({ maxSentenceTokens: 1024, maxSentenceModelWidth: 1024 }), heapBytesInUse: () => 0 };
}

// A loader over fake modules in an engine whose WebAssembly.validate accepts
// only the probes `accepts` allows: what it instantiated, and load().
async function withEngine(accepts, body) {
  const realValidate = WebAssembly.validate;
  const requested = [];
  const loadFake = makeLoader(async (variant) => { requested.push(variant); return fakeModule(); });
  WebAssembly.validate = (bytes) => accepts(Buffer.from(bytes));
  try {
    await body(loadFake, requested);
  } finally {
    WebAssembly.validate = realValidate;
  }
}
const isRelaxedProbe = (bytes) => bytes.includes(Buffer.from([0xfd, 0x85, 0x02]));

test('this Node validates relaxed SIMD exactly when its V8 does (Node 20: behind the flag)', () => {
  assert.equal(relaxedSimdSupported(), relaxedHere);
  assert.equal(bestSimdLevel(), relaxedHere ? 'relaxed' : 'simd');
  const relaxedWasm = readFileSync(new URL('../../web/lib/wasm/attnlens-relaxed.wasm', import.meta.url));
  assert.equal(WebAssembly.validate(relaxedWasm), relaxedHere);
  const simdWasm = readFileSync(new URL('../../web/lib/wasm/attnlens-simd.wasm', import.meta.url));
  assert.equal(WebAssembly.validate(simdWasm), true);
});

test('the relaxed probe is a real module whose validity hinges on f32x4.relaxed_madd', () => {
  const seen = [];
  const realValidate = WebAssembly.validate;
  WebAssembly.validate = (bytes) => { seen.push(Uint8Array.from(bytes)); return realValidate(bytes); };
  try {
    relaxedSimdSupported();
  } finally {
    WebAssembly.validate = realValidate;
  }
  assert.equal(seen.length, 1);
  const probe = Buffer.from(seen[0]);
  const at = probe.indexOf(Buffer.from([0xfd, 0x85, 0x02]));
  assert.ok(at > 0, 'the probe holds the final relaxed_madd opcode');
  // v128.bitselect (also three v128 operands, plain simd128) plus a nop in its
  // place: then every SIMD engine accepts the module.
  const plain = Buffer.from(probe);
  plain.set([0xfd, 0x52, 0x01], at);
  assert.equal(WebAssembly.validate(plain), true);
  // The pre-standard opcode clang 14 emits (f32x4.fma, 0xfd 0xaf 0x01) is no longer valid anywhere.
  const preStandard = Buffer.from(probe);
  preStandard.set([0xfd, 0xaf, 0x01], at);
  assert.equal(WebAssembly.validate(preStandard), false);
});

test('load() picks relaxed, then simd, then scalar, by what the engine validates', async () => {
  await withEngine(() => true, async (loadFake, requested) => {
    assert.equal((await loadFake()).simdLevel, 'relaxed');
    assert.equal((await loadFake({ simd: true })).simdLevel, 'relaxed');
    assert.deepEqual(requested, ['relaxed']);
  });
  await withEngine((bytes) => !isRelaxedProbe(bytes), async (loadFake, requested) => {
    const lens = await loadFake();
    assert.equal(lens.simdLevel, 'simd');
    assert.equal(lens.simd, true);
    assert.equal(await loadFake({ simd: true }), lens);
    assert.deepEqual(requested, ['simd']);
  });
  await withEngine(() => false, async (loadFake, requested) => {
    const lens = await loadFake();
    assert.equal(lens.simdLevel, 'scalar');
    assert.equal(lens.simd, false);
    assert.deepEqual(requested, ['scalar']);
  });
});

test('load({ simd }) forces each level, one lens per level; a level the engine lacks rejects with an Error', async () => {
  await withEngine(() => true, async (loadFake, requested) => {
    const levels = await Promise.all(['relaxed', 'simd', 'scalar'].map((simd) => loadFake({ simd })));
    assert.deepEqual(levels.map((lens) => lens.simdLevel), ['relaxed', 'simd', 'scalar']);
    assert.deepEqual(levels.map((lens) => lens.simd), [true, true, false]);
    assert.equal(await loadFake({ simd: false }), levels[2]);
    assert.equal(await loadFake({ simd: 'simd' }), levels[1]);
    assert.deepEqual(requested, ['relaxed', 'simd', 'scalar']);
  });
  await withEngine((bytes) => !isRelaxedProbe(bytes), async (loadFake, requested) => {
    await assert.rejects(loadFake({ simd: 'relaxed' }), (error) => error.constructor === Error &&
      /\{ simd: "relaxed" \} was requested, but this engine lacks relaxed SIMD \(f32x4\.relaxed_madd\); omit the option to fall back to the simd module/.test(error.message));
    assert.equal((await loadFake({ simd: 'simd' })).simdLevel, 'simd');
    assert.deepEqual(requested, ['simd']);
  });
  await withEngine(() => false, async (loadFake, requested) => {
    for (const simd of ['relaxed', 'simd', true]) {
      await assert.rejects(loadFake({ simd }), (error) => error.constructor === Error &&
        /lacks WebAssembly SIMD \(simd128\); omit the option to fall back to the scalar module/.test(error.message));
    }
    assert.equal((await loadFake({ simd: 'scalar' })).simdLevel, 'scalar');
    assert.deepEqual(requested, ['scalar']);
  });
});

test('load() rejects unknown levels with a TypeError listing the accepted ones', async () => {
  for (const simd of ['fma', 'SIMD', 1, null]) {
    await assert.rejects(load({ simd }), (error) => error instanceof TypeError &&
      /attnlens\.load: simd must be 'relaxed', 'simd', 'scalar', a boolean or undefined, got /.test(error.message));
  }
});

test('the real modules report their level', async () => {
  assert.equal(simdSupported(), true);
  assert.equal((await load({ simd: 'simd' })).simdLevel, 'simd');
  assert.equal((await load({ simd: 'scalar' })).simdLevel, 'scalar');
  assert.equal((await load()).simdLevel, relaxedHere ? 'relaxed' : 'simd');
  if (relaxedHere) {
    const relaxed = await load({ simd: 'relaxed' });
    assert.equal(relaxed.simdLevel, 'relaxed');
    assert.equal(relaxed.simd, true);
  } else {
    await assert.rejects(load({ simd: 'relaxed' }), /lacks relaxed SIMD/);
  }
});
