// lens.loadModel({ from }) on folders that hold only torch.save weights, as
// older hub folders do: pytorch_model.bin, or the shards its index names,
// found after model.safetensors and its index (transformers' order), from
// the stand-in hub (tests/support/test-hub.mjs), a local folder and the
// cache. Each loads with the same attention and logits as the same tensors'
// model.safetensors passed as bytes; a folder with both kinds downloads only
// the safetensors.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { serveTestHub } from '../support/test-hub.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { torchSave } from '../support/torch-save.mjs';
import { assertBitIdentical, load, simdLevelUnderTest } from './helpers.mjs';

const lens = await load({ simd: simdLevelUnderTest });
const checkpoint = tinyCheckpoint({ arch: 'gpt2', naming: 'buffers', dtype: 'F16', seed: 21 });
const config = checkpoint.files['config.json'];
const bin = torchSave(checkpoint.entries);
// The shards save_pretrained writes, with their index.
const half = Math.ceil(checkpoint.entries.length / 2);
const shardNames = ['pytorch_model-00001-of-00002.bin', 'pytorch_model-00002-of-00002.bin'];
const shards = [checkpoint.entries.slice(0, half), checkpoint.entries.slice(half)].map((part) => torchSave(part, { container: 'dict' }));
const binIndex = JSON.stringify({ metadata: { total_size: 0 }, weight_map: Object.fromEntries(checkpoint.entries.map((entry, i) =>
  [entry.name, shardNames[i < half ? 0 : 1]])) });
const ids = [3, 1, 4, 1, 5];

let hub;
const scratch = mkdtempSync(join(tmpdir(), 'attnlens-hub-bin-'));
before(async () => {
  hub = await serveTestHub({
    repos: {
      'old/bin': { revisions: { main: { 'config.json': config, 'pytorch_model.bin': bin } } },
      'old/bin-shards': { revisions: { main: { 'config.json': config, 'pytorch_model.bin.index.json': binIndex,
        [shardNames[0]]: shards[0], [shardNames[1]]: shards[1] } } },
      'old/both': { revisions: { main: { 'config.json': config, 'pytorch_model.bin': bin,
        'model.safetensors': checkpoint.files['model.safetensors'] } } },
      'old/none': { revisions: { main: { 'config.json': config, 'tf_model.h5': 'not read' } } },
    },
  });
});
after(async () => {
  await hub?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function run(options) {
  const model = await lens.loadModel(options);
  try {
    const { attention, logits } = model.run({ ids });
    return { attention, logits };
  } finally {
    model.dispose();
  }
}
const reference = await run({ config, weights: checkpoint.files['model.safetensors'] });
const assertReference = (actual, label) => {
  assertBitIdentical(actual.attention, reference.attention, `${label}: attention`);
  assertBitIdentical(actual.logits, reference.logits, `${label}: logits`);
};
const requestsFor = (repo) => hub.requests.filter((request) => request.path.startsWith(`/${repo}/`))
  .map(({ method, path, server }) => `${method} ${path.split('/').pop()} ${server}`);

test('a folder with only pytorch_model.bin: found after model.safetensors and its index, downloaded through the CDN', async () => {
  const events = [];
  assertReference(await run({ from: 'old/bin', endpoint: hub.url, cache: false, onProgress: (event) => events.push(event) }), 'bin');
  assert.deepEqual(requestsFor('old/bin'), ['GET config.json hub', 'GET tokenizer.json hub', 'GET vocab.json hub', 'GET vocab.txt hub',
    'HEAD model.safetensors hub', 'GET model.safetensors.index.json hub', 'HEAD pytorch_model.bin hub', 'HEAD pytorch_model.bin cdn',
    'GET pytorch_model.bin hub', 'GET pytorch_model.bin cdn']);
  const downloads = events.filter((event) => event.phase === 'download');
  assert.equal(downloads.at(-1).file, 'pytorch_model.bin');
  assert.equal(downloads.at(-1).totalBytes, bin.length, 'the size was known from HEAD');
});

test('pytorch_model.bin.index.json: every shard it names', async () => {
  assertReference(await run({ from: 'old/bin-shards', endpoint: hub.url, cache: false }), 'shards');
  const gets = requestsFor('old/bin-shards').filter((request) => request.startsWith('GET') && request.endsWith('cdn'));
  assert.deepEqual(gets, shardNames.map((name) => `GET ${name} cdn`));
});

test('a folder with both: only model.safetensors is downloaded', async () => {
  assertReference(await run({ from: 'old/both', endpoint: hub.url, cache: false }), 'both');
  assert.ok(!requestsFor('old/both').some((request) => request.includes('pytorch_model')), requestsFor('old/both').join('; '));
});

test('no weights at all: the error names every file looked for, and the heap is unchanged', async () => {
  const heap = lens.heapBytesInUse();
  await assert.rejects(lens.loadModel({ from: 'old/none', endpoint: hub.url, cache: false }), (error) =>
    /has neither model\.safetensors nor model\.safetensors\.index\.json, nor pytorch_model\.bin nor pytorch_model\.bin\.index\.json \(HTTP 404\)\. attnlens reads safetensors weights and torch\.save's pytorch_model\.bin/
      .test(error.message) && error.cause?.status === 404);
  assert.equal(lens.heapBytesInUse(), heap);
});

test('a local folder with pytorch_model.bin shards, and a cached .bin model with the hub gone', async () => {
  const folder = join(scratch, 'local');
  mkdirSync(folder);
  writeFileSync(join(folder, 'config.json'), config);
  writeFileSync(join(folder, 'pytorch_model.bin.index.json'), binIndex);
  shardNames.forEach((name, i) => writeFileSync(join(folder, name), shards[i]));
  assertReference(await run({ from: folder }), 'local folder');

  const cache = join(scratch, 'cache');
  const shortLived = await serveTestHub({ repos: { 'old/bin': { revisions: { main: { 'config.json': config, 'pytorch_model.bin': bin } } } } });
  assertReference(await run({ from: 'old/bin', endpoint: shortLived.url, cache }), 'downloaded');
  await shortLived.close();
  assertReference(await run({ from: 'old/bin', endpoint: shortLived.url, cache }), 'from the cache, offline');
});
