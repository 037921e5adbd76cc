// The relaxed-SIMD module through every other tests/wasm file. Node 20
// validates relaxed SIMD only behind --experimental-wasm-relaxed-simd, so the
// files run again in a Node child with that flag and
// ATTNLENS_TEST_SIMD_LEVEL=relaxed: helpers.mjs then hands them the relaxed
// module where they used the SIMD one, against the same scalar module and
// float64 references, and load() without options picks it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import './helpers.mjs'; // builds the modules first, under the build lock

const here = fileURLToPath(new URL('.', import.meta.url));
const self = basename(fileURLToPath(import.meta.url));

// NODE_TEST_CONTEXT (set by the runner running this file) would make the
// child skip its files as a recursive `node --test`.
function childEnv() {
  const env = { ...process.env, ATTNLENS_TEST_SIMD_LEVEL: 'relaxed' };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

test('every tests/wasm file passes on the relaxed-SIMD module (node --experimental-wasm-relaxed-simd)', (t) => {
  const files = readdirSync(here).filter((name) => name.endsWith('.test.mjs') && name !== self).sort();
  assert.ok(files.length > 10, `expected the tests/wasm files, found ${files.join(', ')}`);
  const result = spawnSync(process.execPath, [
    '--experimental-wasm-relaxed-simd', '--test', '--test-concurrency=1', '--test-reporter=tap',
    ...files.map((name) => join(here, name)),
  ], { env: childEnv(), encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(result.error, undefined);
  const count = (label) => Number(result.stdout.match(new RegExp(`^# ${label} (\\d+)$`, 'm'))?.[1] ?? NaN);
  const failures = result.stdout.split('\n').filter((line) => /^\s*not ok /.test(line));
  assert.equal(count('fail'), 0, `failed under relaxed SIMD:\n${failures.join('\n')}\n${result.stderr.slice(-4000)}`);
  assert.equal(count('cancelled'), 0, result.stderr.slice(-4000));
  t.diagnostic(`relaxed SIMD: ${count('pass')} tests passed in ${files.length} files`);
  assert.ok(count('pass') > 100, `expected the whole suite to run, got ${count('pass')} passing tests`);
  assert.equal(result.status, 0, result.stderr.slice(-4000));
});
