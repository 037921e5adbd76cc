// load(): version, module choice (SIMD feature test and fallback), caching,
// and its own argument checks.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { load, repoRoot } from './helpers.mjs';
import { join } from 'node:path';
import * as nodeEntry from '../../web/lib/node.js';
import { makeLoader, simdSupported } from '../../web/lib/api.js';

const packageJson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));

test('version equals package.json and is exposed on the lens and the module', async () => {
  const lens = await load();
  assert.equal(lens.version, packageJson.version);
  assert.equal(nodeEntry.version, packageJson.version);
});

test('Node runs the single-thread module', async () => {
  assert.equal((await load()).threads, 1);
  assert.equal((await load({ simd: false })).threads, 1);
});

test('Node 20 supports WebAssembly SIMD, so load() picks the SIMD module', async () => {
  assert.equal(simdSupported(), true);
  assert.equal((await load()).simd, true);
});

test('load() shares one lens per module variant', async () => {
  assert.equal(await load(), await load({ simd: true }));
  const scalar = await load({ simd: false });
  assert.equal(scalar, await load({ simd: false }));
  assert.notEqual(scalar, await load());
  assert.ok(Object.isFrozen(scalar));
});

test('without SIMD support the scalar module is chosen, and { simd: true } rejects with an Error saying why', async () => {
  const realValidate = WebAssembly.validate;
  const requested = [];
  const fakeModule = { limits: () => ({ maxSentenceTokens: 1024, maxSentenceModelWidth: 1024 }), heapBytesInUse: () => 0 };
  const loadWithout = makeLoader(async (variant) => { requested.push(variant); return fakeModule; });
  WebAssembly.validate = () => false; // an engine without simd128
  try {
    assert.equal(simdSupported(), false);
    const lens = await loadWithout();
    assert.equal(lens.simd, false);
    assert.deepEqual(requested, ['scalar']);
    await assert.rejects(loadWithout({ simd: true }), (error) => error.constructor === Error && /lacks WebAssembly SIMD \(simd128\)/.test(error.message));
    assert.deepEqual(requested, ['scalar']);
  } finally {
    WebAssembly.validate = realValidate;
  }
});

test('the SIMD probe is a real module: validation depends on the engine accepting v128', () => {
  const seen = [];
  const realValidate = WebAssembly.validate;
  WebAssembly.validate = (bytes) => { seen.push(bytes); return realValidate(bytes); };
  try {
    assert.equal(simdSupported(), true);
  } finally {
    WebAssembly.validate = realValidate;
  }
  const probe = seen[0];
  assert.ok(probe instanceof Uint8Array);
  assert.ok(WebAssembly.validate(probe));
  // Its only function returns a v128 (type 0x7b) built by i8x16.splat (0xfd 0x0f).
  assert.ok(Buffer.from(probe).includes(Buffer.from([0x60, 0x00, 0x01, 0x7b])));
  assert.ok(Buffer.from(probe).includes(Buffer.from([0xfd, 0x0f])));
  // Replacing the SIMD instruction with a scalar one of the wrong type breaks it,
  // so the probe's validity really hinges on simd128.
  const broken = Uint8Array.from(probe);
  broken.set([0x01, 0x01], broken.indexOf(0xfd)); // nop nop: leaves an i32 where a v128 is due
  assert.equal(WebAssembly.validate(broken), false);
});

test('a failed instantiation is not cached: the next load() tries again', async () => {
  let attempts = 0;
  const flaky = makeLoader(async () => {
    attempts++;
    if (attempts === 1) throw new Error('network down');
    return { limits: () => ({ maxSentenceTokens: 1024, maxSentenceModelWidth: 1024 }), heapBytesInUse: () => 0 };
  });
  await assert.rejects(flaky(), /network down/);
  assert.equal((await flaky()).maxTokens, 1024);
  assert.equal(attempts, 2);
});

test('load() rejects bad options with TypeErrors naming them', async () => {
  await assert.rejects(load(5), (error) => error instanceof TypeError && /attnlens\.load: expected an options object, got 5/.test(error.message));
  await assert.rejects(load(null), (error) => error instanceof TypeError && /got null/.test(error.message));
  await assert.rejects(load({ simd: 'yes' }), (error) => error instanceof TypeError && /simd must be 'relaxed', 'simd', 'scalar', a boolean or undefined, got "yes"/.test(error.message));
  await assert.rejects(load({ wasm: './x.wasm' }), (error) => error instanceof TypeError && /unknown option "wasm"; expected simd/.test(error.message));
  assert.equal((await load()).simd, true);
});
