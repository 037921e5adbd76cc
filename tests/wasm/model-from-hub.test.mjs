// lens.loadModel({ from }) against a local stand-in for the hub
// (tests/support/test-hub.mjs: the hub's paths, a CDN redirect for the
// weights, a gated repo, 404s, a dropped connection): by name, hub URL,
// folder URL and local folder, sharded, by revision; its progress, abort,
// errors, and the cache (a folder per test). Every model is checked against
// the same files loaded as bytes, and the heap is back where it started
// after every failure.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cachedModels, clearModelCache } from '../../web/lib/node.js';
import { serveTestHub } from '../support/test-hub.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { load, repoRoot, simdLevelUnderTest } from './helpers.mjs';

const sortFolder = `${repoRoot}../shared/models/sort-gpt2`;
const sortFiles = Object.fromEntries(['config.json', 'model.safetensors', 'tokenizer.json']
  .map((name) => [name, new Uint8Array(readFileSync(join(sortFolder, name)))]));
const sharded = tinyCheckpoint({ arch: 'gpt2', shards: true, seed: 3 });
const shardFiles = Object.fromEntries(['config.json', 'model.safetensors.index.json', 'model-00001-of-00002.safetensors',
  'model-00002-of-00002.safetensors'].map((name) => [name, sharded.files[name]]));
const other = tinyCheckpoint({ arch: 'gpt2', seed: 4 });
// A BERT folder with only vocab.txt for its tokenizer (50 entries: the config's vocab_size).
const bert = tinyCheckpoint({ arch: 'bert', seed: 5 });
const bertVocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...Array.from({ length: 45 }, (_, i) => `w${i}`)].join('\n');
const digits = '2 0 1 1 0 2';

const lens = await load({ simd: simdLevelUnderTest });
let hub;
const scratch = mkdtempSync(join(tmpdir(), 'attnlens-hub-'));
let caches = 0;
const freshCache = () => join(scratch, `cache-${caches++}`);
const weightRequests = () => hub.requests.filter((request) => request.path.endsWith('.safetensors'));

before(async () => {
  hub = await serveTestHub({
    repos: {
      'test/sort-gpt2': { revisions: { main: sortFiles, v2: { ...sortFiles, 'tokenizer_config.json': '{}' } } },
      'test/sharded': { revisions: { main: shardFiles } },
      'test/other': { revisions: { main: { 'config.json': other.files['config.json'], 'model.safetensors': other.files['model.safetensors'] } } },
      'test/bert-vocab-txt': { revisions: { main: { 'config.json': bert.files['config.json'], 'model.safetensors': bert.files['model.safetensors'], 'vocab.txt': bertVocab } } },
      'test/bad-tokenizer-config': { revisions: { main: { ...sortFiles, 'tokenizer_config.json': 'not json' } } },
      'test/gated': { status: 401 },
      'test/forbidden': { status: 403 },
      'test/server-error': { status: 500 },
      'test/dropped': { revisions: { main: sortFiles }, dropAfter: 1000 },
      'test/no-weights': { revisions: { main: { 'config.json': sortFiles['config.json'] } } },
    },
  });
});

after(async () => {
  await hub?.close();
  rmSync(scratch, { recursive: true, force: true });
});

// The reference: the same files passed as bytes.
async function attentionOf(files, input = { text: digits }) {
  const model = await lens.loadModel(files);
  try {
    return model.run(input).attention;
  } finally {
    model.dispose();
  }
}
const sortReference = await attentionOf({
  config: new TextDecoder().decode(sortFiles['config.json']), weights: sortFiles['model.safetensors'],
  tokenizer: new TextDecoder().decode(sortFiles['tokenizer.json']),
});
const shardReference = await attentionOf({
  config: sharded.files['config.json'], weights: sharded.shards,
}, { ids: [1, 5, 2, 7] });

async function loadAndRun(options, input = { text: digits }) {
  const model = await lens.loadModel(options);
  try {
    return { info: model.info, attention: model.run(input).attention };
  } finally {
    model.dispose();
  }
}

// A failed load rejects as `expected` says and leaves the heap as it was.
async function failsCleanly(options, expected) {
  const heap = lens.heapBytesInUse();
  await assert.rejects(lens.loadModel(options), expected);
  assert.equal(lens.heapBytesInUse(), heap, 'the failed load left memory allocated');
}

describe('finding a model', () => {
  test('by hub name (endpoint, with the weights redirected): the same attention as the files as bytes', async () => {
    const { attention, info } = await loadAndRun({ from: 'test/sort-gpt2', endpoint: hub.url, cache: false });
    assert.deepEqual(attention, sortReference);
    assert.equal(info.architecture, 'gpt2');
    assert.ok(hub.requests.some((request) => request.server === 'cdn' && request.path.endsWith('model.safetensors')),
      'the weights came through the redirect');
  });

  test('by hub name with HF_ENDPOINT set, as transformers reads it', async () => {
    process.env.HF_ENDPOINT = hub.url;
    try {
      assert.deepEqual((await loadAndRun({ from: 'test/sort-gpt2', cache: false })).attention, sortReference);
    } finally {
      delete process.env.HF_ENDPOINT;
    }
  });

  test('by hub URL: repository page, tree, blob and resolve forms', async () => {
    for (const form of ['test/sort-gpt2', 'test/sort-gpt2/tree/main', 'test/sort-gpt2/blob/main/config.json',
      'test/sort-gpt2/resolve/main/', 'test/sort-gpt2/resolve/main/config.json?download=true']) {
      const { attention } = await loadAndRun({ from: `${hub.url}/${form}`, endpoint: hub.url, cache: false });
      assert.deepEqual(attention, sortReference, form);
    }
  });

  test('by any folder URL (a server that is not the hub) and its file URL', async () => {
    for (const from of [`${hub.url}/test/sort-gpt2/resolve/main/`, `${hub.url}/test/sort-gpt2/resolve/main/config.json`]) {
      assert.deepEqual((await loadAndRun({ from, cache: false })).attention, sortReference, from);
    }
  });

  test('a local folder by path and by file: URL, read in place and never cached', async () => {
    const cache = freshCache();
    for (const from of [sortFolder, pathToFileURL(sortFolder).href]) {
      assert.deepEqual((await loadAndRun({ from, cache })).attention, sortReference, from);
    }
    assert.equal(existsSync(cache), false, 'a local folder is not copied into the cache');
  });

  test('a sharded checkpoint: the index names the shards, each is downloaded', async () => {
    const events = [];
    const { attention } = await loadAndRun({
      from: 'test/sharded', endpoint: hub.url, cache: false, onProgress: (event) => events.push(event),
    }, { ids: [1, 5, 2, 7] });
    assert.deepEqual(attention, shardReference);
    const downloads = events.filter((event) => event.phase === 'download');
    assert.deepEqual([...new Set(downloads.map((event) => event.file))],
      ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
    assert.ok(downloads.every((event) => event.count === 2));
  });

  test('a revision: resolve/<revision>/, and tokenizer_config.json fetched when present', async () => {
    const before = hub.requests.length;
    await loadAndRun({ from: 'test/sort-gpt2', revision: 'v2', endpoint: hub.url, cache: false });
    const paths = hub.requests.slice(before).map((request) => request.path);
    assert.ok(paths.every((path) => path.startsWith('/test/sort-gpt2/resolve/v2/')), paths.join(' '));
    assert.ok(paths.includes('/test/sort-gpt2/resolve/v2/tokenizer_config.json'));
    await failsCleanly({ from: 'test/sort-gpt2', revision: 'v9', endpoint: hub.url, cache: false },
      /resolve\/v9\/config\.json was not found \(HTTP 404\)/);
  });
});

test('the tokenizer in transformers\' order: no tokenizer.json, no vocab.json, so vocab.txt', async () => {
  const before = hub.requests.length;
  const { info } = await loadAndRun({ from: 'test/bert-vocab-txt', endpoint: hub.url, cache: false }, { text: 'w3 w7 w1' });
  assert.equal(info.tokenizer, 'wordpiece');
  const asked = hub.requests.slice(before).filter((request) => request.method === 'GET').map((request) => request.path.split('/').at(-1));
  assert.deepEqual(asked.slice(0, 5), ['config.json', 'tokenizer.json', 'vocab.json', 'vocab.txt', 'tokenizer_config.json']);
});

test('tokenizer_config.json reaches the tokenizer (a broken one is reported as such)', async () => {
  await failsCleanly({ from: 'test/bad-tokenizer-config', endpoint: hub.url, cache: false },
    /attnlens\.loadModel: tokenizer: tokenizerConfig is not valid JSON/);
});

test('progress: per file and in total, sizes known before the first byte, then the weights phase', async () => {
  const events = [];
  await loadAndRun({ from: 'test/sort-gpt2', endpoint: hub.url, cache: false, onProgress: (event) => events.push(event) });
  const downloads = events.filter((event) => event.phase === 'download');
  const size = sortFiles['model.safetensors'].length;
  assert.ok(downloads.length > 0);
  assert.ok(downloads.every((event) => event.file === 'model.safetensors' && event.index === 0 && event.count === 1 &&
    event.total === size && event.totalBytes === size && event.cached === false));
  downloads.slice(1).forEach((event, i) => assert.ok(event.loaded >= downloads[i].loaded, 'bytes only grow'));
  assert.equal(downloads.at(-1).loaded, size);
  assert.equal(downloads.at(-1).loadedBytes, size);
  const phases = events.map((event) => event.phase);
  assert.ok(phases.lastIndexOf('download') < phases.indexOf('weights'), 'downloads come before the weights phase');
  assert.equal(phases.at(-1), 'done');
});

describe('abort', () => {
  test('before, during the download and during the weights phase: AbortError, no heap, nothing cached', async () => {
    const cache = freshCache();
    const from = { from: 'test/sort-gpt2', endpoint: hub.url, cache };
    const controller = new AbortController();
    controller.abort();
    await failsCleanly({ ...from, signal: controller.signal }, { name: 'AbortError' });
    const abortIn = async (phase) => {
      const stop = new AbortController();
      await failsCleanly({
        ...from, signal: stop.signal, onProgress: (event) => { if (event.phase === phase) stop.abort(); },
      }, (error) => error.name === 'AbortError' && /aborted/.test(error.message));
    };
    await abortIn('download');
    assert.deepEqual(await cachedModels({ cache }), [], 'an aborted download is not a cached model');
    // Aborted while converting: every file had arrived whole, so the next load needs no download.
    await abortIn('weights');
    assert.deepEqual((await cachedModels({ cache })).map((model) => model.from), ['test/sort-gpt2']);
    // The module still loads and runs.
    assert.deepEqual((await loadAndRun(from)).attention, sortReference);
  });
});

describe('errors say what happened and what to do', () => {
  const from = (name) => ({ from: name, endpoint: hub.url, cache: freshCache() });
  test('a missing repository, a gated one (401, 403), no weights', async () => {
    await failsCleanly(from('test/missing'), /test\/missing\/resolve\/main\/config\.json was not found \(HTTP 404\)\. Check the model's name/);
    await failsCleanly(from('test/gated'), /needs a login \(HTTP 401\): gated and private models.*Accept the model's terms/);
    await failsCleanly(from('test/forbidden'), /needs a login \(HTTP 403\)/);
    await failsCleanly(from('test/no-weights'), /has neither model\.safetensors nor model\.safetensors\.index\.json/);
    await failsCleanly({ from: './no/such/folder' }, /no\/such\/folder is not a folder; from names a local folder/);
    await failsCleanly({ from: join(scratch) }, /attnlens-hub-\w+\/config\.json was not found\. A model folder holds/);
  });

  test('no server: the request failed before any answer came back', async () => {
    const closed = await serveTestHub({ repos: {} });
    await closed.close();
    await failsCleanly({ from: `${closed.url}/some/folder/`, cache: false },
      (error) => /request failed before any answer came back.*offline.*\(CORS\)/.test(error.message) && error.cause !== undefined);
  });

  // README, "Downloads": programs (the page's advice) act on error.reason, not on the message's words.
  test('each kind of download failure names itself in error.reason (and HTTP answers their status)', async () => {
    const closed = await serveTestHub({ repos: {} });
    await closed.close();
    const cases = [
      [from('test/missing'), 'not-found', 404], [from('test/gated'), 'needs-login', 401], [from('test/forbidden'), 'needs-login', 403],
      [from('test/server-error'), 'http-error', 500], [from('test/no-weights'), 'not-found', undefined],
      [{ from: join(scratch) }, 'not-found', 404], [{ from: `${closed.url}/some/folder/`, cache: false }, 'unreachable', undefined],
      [from('test/dropped'), 'broken-off', undefined],
    ];
    for (const [options, reason, status] of cases) {
      await failsCleanly(options, (error) => {
        assert.equal(error.reason, reason, `${options.from}: ${error.message}`);
        assert.equal(error.status, status, `${options.from}: ${error.message}`);
        return true;
      });
    }
  });

  test('a dropped connection: says how far it got, and nothing is cached', async () => {
    const options = from('test/dropped');
    await failsCleanly(options, /model\.safetensors broke off after \d+ of 346792 bytes \(the connection was closed\)/);
    assert.deepEqual(await cachedModels({ cache: options.cache }), []);
    const kept = readdirSync(join(options.cache, 'models', readdirSync(join(options.cache, 'models'))[0]));
    assert.ok(!kept.some((name) => name.includes('safetensors')), `partial weights kept: ${kept}`);
    assert.deepEqual((await loadAndRun({ ...from('test/sort-gpt2') })).attention, sortReference, 'the module still works');
  });

  test('bad options: clear TypeErrors', async () => {
    const cases = [
      [{ from: 'test/sort-gpt2', config: '{}' }, /from cannot be combined with config/],
      [{ from: 'test/sort-gpt2', weights: new Uint8Array(1), tokenizer: 'x' }, /from cannot be combined with weights, tokenizer/],
      [{ from: 42 }, /from must be a hub model name such as 'openai-community\/gpt2', a hub URL or a folder URL, got 42/],
      [{ from: '' }, /from must be a hub model name/],
      [{ from: 'gpt2' }, /from "gpt2" is neither a hub model name/],
      [{ from: 'ftp://example.com/model/' }, /from must be an http\(s\) URL here, got ftp:/],
      [{ from: 'test/sort-gpt2', revision: '' }, /revision must be a branch, tag or commit name/],
      [{ from: 'test/sort-gpt2', revision: 3 }, /revision must be a branch, tag or commit name such as 'main', got 3/],
      [{ from: `${hub.url}/x/y/`, revision: 'v2' }, /revision applies to hub models only/],
      [{ from: sortFolder, revision: 'v2' }, /revision applies to hub models only, not to the local folder/],
      [{ from: 'https://huggingface.co/a/b/resolve/v1/', revision: 'v2' }, /names revision 'v1' but revision is 'v2'/],
      [{ from: 'test/sort-gpt2', cache: 0 }, /cache must be true, false or a non-empty string/],
      [{ from: 'test/sort-gpt2', signal: {} }, /signal must be an AbortSignal/],
      [{ from: 'test/sort-gpt2', onProgress: 'log' }, /onProgress must be a function/],
      [{ from: 'test/sort-gpt2', endpoint: 'huggingface.co' }, /endpoint must be the hub's http\(s\) base URL/],
      [{ from: 'test/sort-gpt2', form: 1 }, /unknown option "form"; with from, expected one of from, revision/],
      [{ form: 'test/sort-gpt2' }, /unknown option "form"; expected one of config.*\(or from\)/],
    ];
    for (const [options, message] of cases) await failsCleanly(options, (error) => error instanceof TypeError && message.test(error.message));
  });
});

describe('the cache', () => {
  test('a second load makes no request at all, and works with the hub gone', async () => {
    const cache = freshCache();
    const options = { from: 'test/sort-gpt2', endpoint: hub.url, cache };
    await loadAndRun(options);
    assert.equal(weightRequests().filter((r) => r.method === 'GET').length > 0, true);
    const before = hub.requests.length;
    const events = [];
    const { attention } = await loadAndRun({ ...options, onProgress: (event) => events.push(event) });
    assert.deepEqual(attention, sortReference);
    assert.deepEqual(hub.requests.slice(before), [], 'the cached model made requests');
    assert.ok(events.filter((event) => event.phase === 'download').every((event) => event.cached === true));
  });

  test('offline: a cached model loads after its server is gone', async () => {
    const cache = freshCache();
    const shortLived = await serveTestHub({ repos: { 'test/sort-gpt2': { revisions: { main: sortFiles } } } });
    const options = { from: 'test/sort-gpt2', endpoint: shortLived.url, cache };
    await loadAndRun(options);
    await shortLived.close();
    await failsCleanly({ ...options, cache: false }, /request failed before any answer came back/);
    assert.deepEqual((await loadAndRun(options)).attention, sortReference);
  });

  test('offline: a saved folder with vocab.json but neither merges.txt nor Marian\'s .spm files loads without them', async () => {
    const cache = freshCache();
    // vocab.json alone is no tokenizer: GPT-2's needs merges.txt, opus-mt's source.spm and target.spm (binary files).
    const files = { 'config.json': other.files['config.json'], 'model.safetensors': other.files['model.safetensors'], 'vocab.json': '{"a": 0}' };
    const shortLived = await serveTestHub({ repos: { 'test/vocab-json-only': { revisions: { main: files } } } });
    const options = { from: 'test/vocab-json-only', endpoint: shortLived.url, cache };
    const online = await loadAndRun(options, { ids: [1, 5, 2] });
    assert.equal(online.info.tokenizer, null);
    const asked = shortLived.requests.map((request) => request.path.split('/').at(-1));
    assert.ok(asked.includes('source.spm'), asked.join(', '));
    await shortLived.close();
    const offline = await loadAndRun(options, { ids: [1, 5, 2] });
    assert.deepEqual(offline.attention, online.attention);
  });

  test('keyed by revision: another revision is downloaded again', async () => {
    const cache = freshCache();
    await loadAndRun({ from: 'test/sort-gpt2', endpoint: hub.url, cache });
    const before = weightRequests().length;
    await loadAndRun({ from: 'test/sort-gpt2', revision: 'v2', endpoint: hub.url, cache });
    assert.ok(weightRequests().length > before);
    assert.deepEqual((await cachedModels({ cache })).map((model) => model.revision), ['main', 'v2']);
  });

  test('cache: false downloads every time and writes nothing', async () => {
    const cache = freshCache();
    const options = { from: 'test/sort-gpt2', endpoint: hub.url, cache: false };
    process.env.XDG_CACHE_HOME = cache;
    try {
      const gets = () => weightRequests().filter((request) => request.method === 'GET').length;
      const before = gets();
      await loadAndRun(options);
      await loadAndRun(options);
      assert.equal(gets() - before, 4, 'two downloads, each from the hub and its redirect');
      assert.equal(existsSync(cache), false);
    } finally {
      delete process.env.XDG_CACHE_HOME;
    }
  });

  test('the default folder is $XDG_CACHE_HOME/attnlens; cachedModels and clearModelCache', async () => {
    const home = freshCache();
    process.env.XDG_CACHE_HOME = home;
    try {
      await loadAndRun({ from: 'test/sort-gpt2', endpoint: hub.url });
      await loadAndRun({ from: 'test/other', endpoint: hub.url }, { ids: [1, 2] });
      assert.ok(existsSync(join(home, 'attnlens', 'models')));
      const listed = await cachedModels();
      assert.deepEqual(listed.map(({ from, url, revision, files, bytes }) => ({ from, url, revision, files, bytes })), [
        {
          from: 'test/other', url: `${hub.url}/test/other/resolve/main/`, revision: 'main',
          files: ['config.json', 'model.safetensors'],
          bytes: other.files['config.json'].length + other.files['model.safetensors'].length,
        },
        {
          from: 'test/sort-gpt2', url: `${hub.url}/test/sort-gpt2/resolve/main/`, revision: 'main',
          files: ['config.json', 'tokenizer.json', 'model.safetensors'],
          bytes: Object.values(sortFiles).reduce((sum, file) => sum + file.length, 0),
        },
      ]);
      assert.ok(listed.every((model) => model.savedAt instanceof Date && Date.now() - model.savedAt < 60_000));
      assert.equal(await clearModelCache('test/other'), 1);
      assert.deepEqual((await cachedModels()).map((model) => model.from), ['test/sort-gpt2']);
      assert.equal(await clearModelCache(), 1);
      assert.deepEqual(await cachedModels(), []);
      assert.equal(existsSync(join(home, 'attnlens', 'models')), false);
    } finally {
      delete process.env.XDG_CACHE_HOME;
    }
  });

  test('clearModelCache and cachedModels refuse bad arguments', async () => {
    await assert.rejects(clearModelCache(42), /attnlens\.clearModelCache: from must be a hub model name/);
    await assert.rejects(cachedModels({ cache: false }), /attnlens\.cachedModels: cache must be true or a non-empty string/);
    await assert.rejects(cachedModels({ path: 'x' }), /attnlens\.cachedModels: unknown option "path"; expected cache/);
    await assert.rejects(clearModelCache(undefined, 'x'), /expected an options object \{ cache \}, got/);
  });
});
