// configure({ wasmPath }) in Node: its argument errors, a load from a folder
// holding copies of the module files (the numbers are those of a separate
// Node process loading them from the package), a missing folder's error naming
// the file, and the refusal to move the files once a module is loaded.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { configure, load } from '../../web/lib/node.js';
import { repoRoot } from '../../web/scripts/toolchain.mjs';

const sentence = { text: 'The cat sat on the mat.', heads: 4 };
const folder = mkdtempSync(join(tmpdir(), 'attnlens-wasmpath-'));
const empty = mkdtempSync(join(tmpdir(), 'attnlens-wasmpath-empty-'));
for (const file of ['attnlens-simd.mjs', 'attnlens-simd.wasm']) {
  copyFileSync(join(repoRoot, 'web', 'lib', 'wasm', file), join(folder, file));
}
after(() => {
  rmSync(folder, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
});

test('configure: bad arguments are TypeErrors naming them', () => {
  assert.throws(() => configure(), { name: 'TypeError', message: /configure: expected an options object, got undefined/ });
  assert.throws(() => configure(null), { name: 'TypeError', message: /got null/ });
  assert.throws(() => configure(['x']), { name: 'TypeError', message: /got Array\(1\)/ });
  assert.throws(() => configure({ wasmpath: '/x/' }), { name: 'TypeError', message: /unknown option "wasmpath"; expected wasmPath/ });
  assert.throws(() => configure({ wasmPath: 42 }), { name: 'TypeError', message: /wasmPath must be a non-empty string \(a folder\), got 42/ });
  assert.throws(() => configure({ wasmPath: '' }), { name: 'TypeError', message: /wasmPath must be a non-empty string/ });
  assert.throws(() => configure({ wasmPath: 'https://cdn.example/attnlens/' }),
    { name: 'TypeError', message: /in Node wasmPath is a folder path or a file: URL, got https:\/\/cdn\.example\/attnlens\// });
});

test('a folder without the files: load() names the file that failed and the fix', async () => {
  configure({ wasmPath: empty });
  const missing = pathToFileURL(join(empty, 'attnlens-simd.mjs')).href;
  await assert.rejects(load({ simd: 'simd' }), (error) => {
    assert.ok(error.message.startsWith(`attnlens.load: could not load ${missing} (`), error.message);
    assert.match(error.message, /copy that folder to your site and call configure\(\{ wasmPath/);
    return true;
  });
});

test('a folder with the files (a file: URL, no trailing slash): the numbers of the package-loaded module', async () => {
  // A failed load changed nothing, so the folder can still be set.
  configure({ wasmPath: pathToFileURL(folder).href });
  const lens = await load({ simd: 'simd' });
  const output = Array.from(lens.explainSentence(sentence).output);
  const reference = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', `
    import { load } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'web', 'lib', 'node.js')).href)};
    const lens = await load({ simd: 'simd' });
    console.log(JSON.stringify(Array.from(lens.explainSentence(${JSON.stringify(sentence)}).output)));
  `], { encoding: 'utf8' }));
  assert.equal(output.length, 7 * 64); // seven tokens, dModel 64
  assert.deepEqual(output, reference);
});

test('after a load, configure may repeat the setting but not change it', () => {
  configure({ wasmPath: `${pathToFileURL(folder).href}/` });
  configure({ wasmPath: folder });
  assert.throws(() => configure({ wasmPath: empty }), { name: 'Error', message: /called after load\(\) started.*before the first load\(\)/ });
  assert.throws(() => configure({}), { name: 'Error', message: /called after load\(\) started/ });
});
