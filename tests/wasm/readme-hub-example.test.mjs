// The README's loadModel({ from }) example runs as written, in its own Node
// process, against the local test hub (HF_ENDPOINT) with the cache in a
// temporary folder (XDG_CACHE_HOME): it downloads sort-gpt2, lists it as
// cached, and removes it.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../../web/scripts/toolchain.mjs';
import { runReadmeExample } from '../support/readme-example.mjs';
import { serveTestHub } from '../support/test-hub.mjs';

test('the README hub example downloads a model by name, lists it as cached and removes it', async () => {
  const folder = join(repoRoot, '..', 'shared', 'models', 'sort-gpt2');
  const files = Object.fromEntries(['config.json', 'model.safetensors', 'tokenizer.json']
    .map((name) => [name, new Uint8Array(readFileSync(join(folder, name)))]));
  const hub = await serveTestHub({ repos: { 'test/sort-gpt2': { revisions: { main: files } } } });
  const cache = mkdtempSync(join(tmpdir(), 'attnlens-readme-hub-cache-'));
  try {
    // The hub runs in this process: the example runs beside it (runReadmeExample does not block).
    const stdout = await runReadmeExample('### A model by name, a URL or a folder', ['test/sort-gpt2'], {
      env: { HF_ENDPOINT: hub.url, XDG_CACHE_HOME: cache },
    });
    assert.match(stdout, /^model\.safetensors: 346792 bytes$/m);
    assert.match(stdout, /^gpt2 3 layers$/m);
    const total = Object.values(files).reduce((sum, file) => sum + file.length, 0);
    assert.match(stdout, new RegExp(`^cached: test/sort-gpt2 main ${total}$`, 'm'));
    // clearModelCache(from) removed it.
    assert.ok(existsSync(join(cache, 'attnlens', 'models')));
    assert.deepEqual(readdirSync(join(cache, 'attnlens', 'models')), []);
  } finally {
    rmSync(cache, { recursive: true, force: true });
    await hub.close();
  }
});
