// An opus-mt folder end to end: a tiny random Marian checkpoint in the hub's
// layout with the tokenizer files of tests/fixtures/marian (source.spm,
// target.spm, vocab.json, no tokenizer.json), loaded from a local folder and
// from a stand-in hub (tests/support/test-hub.mjs). Text goes in through
// source.spm and target text through target.spm, with the ids transformers'
// MarianTokenizer gives (reference.json, computed with sentencepiece);
// generate's tokens come out as text read with target.spm.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { marianReference } from '../fixtures/marian/fixture.mjs';
import { tinyMarianFolder } from '../support/marian-folder.mjs';
import { serveTestHub } from '../support/test-hub.mjs';
import { load, simdLevelUnderTest } from './helpers.mjs';

const lens = await load({ simd: simdLevelUnderTest });
const { files: folderFiles, pad } = tinyMarianFolder();
const cases = marianReference().filter(({ ids, targetIds }) => ids.length <= 40 && targetIds.length <= 40);
const scratch = mkdtempSync(join(tmpdir(), 'attnlens-marian-'));
let hub;

before(async () => {
  for (const [name, bytes] of Object.entries(folderFiles)) writeFileSync(join(scratch, name), bytes);
  hub = await serveTestHub({ repos: { 'test/opus-mt-tiny': { revisions: { main: folderFiles } } } });
});

after(async () => {
  await hub?.close();
  rmSync(scratch, { recursive: true, force: true });
});

test('a local opus-mt folder: text -> source.spm ids, target text -> target.spm ids, generate -> text', async () => {
  const model = await lens.loadModel({ from: scratch });
  try {
    assert.equal(model.info.tokenizer, 'marian');
    assert.equal(model.info.decoderStartId, pad);
    assert.ok(cases.length > 100);
    for (const { text, ids, targetIds } of cases.slice(0, 120)) {
      const label = JSON.stringify(text);
      assert.deepEqual([...model.tokenize(text).ids], ids, label);
      const result = model.run({ text, target: text });
      assert.deepEqual([...result.ids], ids, label);
      assert.deepEqual([...result.targetIds], [pad, ...targetIds], `${label}: the decoder start, then target.spm's ids`);
    }
    const { text, ids } = cases.find((entry) => entry.text.startsWith('Tom asked'));
    const seen = [];
    const generated = model.generate({ text, maxTokens: 12, onToken: (token) => seen.push(token) });
    assert.deepEqual([...generated.ids], [...model.generate({ ids, maxTokens: 12 }).ids], 'the same as from the reference ids');
    assert.equal(seen.length, generated.ids.length);
    assert.equal(generated.text, model.decode(generated.ids, { skipSpecialTokens: true }));
    assert.ok(generated.ids.length >= 3 && generated.text.length > 0, `a random model still writes something: ${generated.text}`);
    for (const source of cases.slice(0, 20)) {
      assert.ok(!model.generate({ ids: source.ids, maxTokens: 8 }).ids.includes(pad), 'bad_words_ids [[pad]] keeps <pad> out, as in opus-mt');
    }
  } finally {
    model.dispose();
  }
});

test('decode reads target.spm: the reference texts of every target', async () => {
  const model = await lens.loadModel({ from: scratch });
  try {
    for (const { text, targetIds, decoded, decodedSkipping } of cases) {
      assert.equal(model.decode(targetIds), decoded, JSON.stringify(text));
      assert.equal(model.decode(targetIds, { skipSpecialTokens: true }), decodedSkipping, JSON.stringify(text));
    }
  } finally {
    model.dispose();
  }
});

test('from a hub: source.spm and target.spm are downloaded as bytes and cached; the second load asks nothing', async () => {
  const cache = join(scratch, 'cache');
  const first = await lens.loadModel({ from: 'test/opus-mt-tiny', endpoint: hub.url, cache });
  const { text, ids } = cases[0];
  try {
    assert.equal(first.info.tokenizer, 'marian');
    assert.deepEqual([...first.tokenize(text).ids], ids);
  } finally {
    first.dispose();
  }
  const asked = hub.requests.filter((request) => request.method === 'GET').map((request) => request.path.split('/').at(-1));
  for (const name of ['source.spm', 'target.spm', 'vocab.json', 'tokenizer_config.json']) assert.ok(asked.includes(name), `${name} was downloaded`);
  const requests = hub.requests.length;
  const second = await lens.loadModel({ from: 'test/opus-mt-tiny', endpoint: hub.url, cache });
  try {
    assert.deepEqual([...second.tokenize(text).ids], ids);
    assert.equal(hub.requests.length, requests, 'the cached model made no request');
  } finally {
    second.dispose();
  }
});
