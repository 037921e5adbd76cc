// The README's loadModel({ from }) example runs as written, in its own Node
// process, against the local test hub (HF_ENDPOINT) with the cache in a
// temporary folder (XDG_CACHE_HOME): it downloads sort-gpt2, lists it as
// cached, and removes it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { serveTestHub } from '../support/test-hub.mjs';

function readmeHubExample() {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.indexOf('### A model by name, a URL or a folder');
  assert.ok(section >= 0, 'README.md has the "A model by name" section');
  return readme.slice(section).match(/```js\n([\s\S]*?)```/)[1];
}

test('the README hub example downloads a model by name, lists it as cached and removes it', async () => {
  const folder = join(repoRoot, '..', 'shared', 'models', 'sort-gpt2');
  const files = Object.fromEntries(['config.json', 'model.safetensors', 'tokenizer.json']
    .map((name) => [name, new Uint8Array(readFileSync(join(folder, name)))]));
  const hub = await serveTestHub({ repos: { 'test/sort-gpt2': { revisions: { main: files } } } });
  const app = mkdtempSync(join(tmpdir(), 'attnlens-readme-hub-'));
  try {
    mkdirSync(join(app, 'node_modules'));
    symlinkSync(repoRoot, join(app, 'node_modules', 'attnlens'), 'dir');
    writeFileSync(join(app, 'example.mjs'), readmeHubExample());
    const cache = join(app, 'cache');
    // The hub runs in this process: the example must run beside it, not block it.
    const { stdout } = await promisify(execFile)(process.execPath, [join(app, 'example.mjs'), 'test/sort-gpt2'], {
      cwd: app, env: { ...process.env, HF_ENDPOINT: hub.url, XDG_CACHE_HOME: cache },
    });
    assert.match(stdout, /^model\.safetensors: 346792 bytes$/m);
    assert.match(stdout, /^gpt2 3 layers$/m);
    const total = Object.values(files).reduce((sum, file) => sum + file.length, 0);
    assert.match(stdout, new RegExp(`^cached: test/sort-gpt2 main ${total}$`, 'm'));
    // clearModelCache(from) removed it.
    assert.ok(existsSync(join(cache, 'attnlens', 'models')));
    assert.deepEqual(readdirSync(join(cache, 'attnlens', 'models')), []);
  } finally {
    rmSync(app, { recursive: true, force: true });
    await hub.close();
  }
});
