// The page's pure model-loading helpers, in Node: which files of a hub folder
// it takes, how it reads a "Load from URL" address, and the top-k softmax of
// the next-token predictions (against a float64 sort of the whole row). The
// address is read by the library's modelSource (lens.loadModel's `from`).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { modelSource } from '../../web/lib/model/hub/source.js';
import { HubFilesError, modelName, pickHubFiles } from '../../web/page/model/hub-files.js';
import { topPredictions } from '../../web/page/model/predictions.js';

const file = (path) => ({ name: path.split('/').at(-1), path });

describe('pickHubFiles', () => {
  test('a plain pick: config, weights, tokenizer.json; other files ignored', () => {
    const picked = pickHubFiles(['config.json', 'model.safetensors', 'tokenizer.json', 'README.md', 'LICENSE'].map(file));
    assert.equal(picked.config.name, 'config.json');
    assert.deepEqual(picked.weights.map((f) => f.name), ['model.safetensors']);
    assert.equal(picked.tokenizer.kind, 'tokenizer.json');
    assert.deepEqual(picked.ignored, ['README.md', 'LICENSE']);
  });

  test('shards in numeric order; model.safetensors wins over shards and consolidated copies', () => {
    const shards = ['model-00002-of-00002.safetensors', 'config.json', 'model-00001-of-00002.safetensors', 'consolidated.safetensors'];
    assert.deepEqual(pickHubFiles(shards.map(file)).weights.map((f) => f.name),
      ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
    assert.deepEqual(pickHubFiles([...shards, 'model.safetensors'].map(file)).weights.map((f) => f.name), ['model.safetensors']);
  });

  test('a missing shard is named', () => {
    assert.throws(() => pickHubFiles(['config.json', 'model-00001-of-00003.safetensors', 'model-00003-of-00003.safetensors'].map(file)),
      (error) => error instanceof HubFilesError && /shard 2 is missing/.test(error.message));
  });

  test('older tokenizer files, in the order transformers prefers', () => {
    const base = ['config.json', 'model.safetensors'];
    assert.equal(pickHubFiles([...base, 'vocab.json', 'merges.txt', 'vocab.txt'].map(file)).tokenizer.kind, 'vocab.json + merges.txt');
    assert.equal(pickHubFiles([...base, 'vocab.txt'].map(file)).tokenizer.kind, 'vocab.txt');
    assert.equal(pickHubFiles([...base, 'vocab.json'].map(file)).tokenizer, null, 'vocab.json alone is not a tokenizer');
    // opus-mt: no tokenizer.json, its two sentencepiece models and the shared vocab.json.
    const marian = pickHubFiles([...base, 'vocab.json', 'source.spm', 'target.spm', 'tokenizer_config.json'].map(file)).tokenizer;
    assert.equal(marian.kind, 'source.spm + target.spm + vocab.json');
    assert.deepEqual(Object.fromEntries(Object.entries(marian.files).map(([key, chosen]) => [key, chosen.name])),
      { vocabJson: 'vocab.json', sourceSpm: 'source.spm', targetSpm: 'target.spm' });
    assert.equal(pickHubFiles([...base, 'vocab.json', 'source.spm'].map(file)).tokenizer, null, 'target.spm is needed too');
  });

  test('a picked folder: its top level, not its sub-folders', () => {
    const picked = pickHubFiles(['gpt2/config.json', 'gpt2/model.safetensors', 'gpt2/onnx/config.json', 'gpt2/onnx/model.safetensors',
      'gpt2/tokenizer.json'].map(file));
    assert.equal(picked.folder, 'gpt2');
    assert.equal(picked.weights[0].path, 'gpt2/model.safetensors');
    assert.equal(modelName({ folder: picked.folder }), 'gpt2');
  });

  test('pytorch_model.bin when there is no .safetensors: alone, or every pytorch_model-…-of-….bin shard', () => {
    assert.deepEqual(pickHubFiles(['config.json', 'pytorch_model.bin', 'tf_model.h5'].map(file)).weights.map((f) => f.name),
      ['pytorch_model.bin']);
    assert.deepEqual(pickHubFiles(['config.json', 'pytorch_model.bin', 'model.safetensors'].map(file)).weights.map((f) => f.name),
      ['model.safetensors'], 'safetensors first, as transformers prefers');
    const shards = ['config.json', 'pytorch_model-00002-of-00002.bin', 'pytorch_model-00001-of-00002.bin', 'pytorch_model.bin.index.json'];
    assert.deepEqual(pickHubFiles(shards.map(file)).weights.map((f) => f.name),
      ['pytorch_model-00001-of-00002.bin', 'pytorch_model-00002-of-00002.bin']);
    assert.throws(() => pickHubFiles(['config.json', 'pytorch_model-00001-of-00003.bin'].map(file)),
      /shards 2, 3 are missing: choose every pytorch_model-…-of-00003\.bin file/);
  });

  test('clear errors: no config.json, no weights (and which files are not read)', () => {
    assert.throws(() => pickHubFiles(['model.safetensors'].map(file)), /There is no config.json among the 1 file chosen/);
    assert.throws(() => pickHubFiles(['config.json', 'tf_model.h5', 'model.onnx'].map(file)),
      /There are no weights next to config\.json: this page reads model\.safetensors and pytorch_model\.bin \(or their shards\), not tf_model\.h5, model\.onnx/);
    assert.throws(() => pickHubFiles(['config.json', 'tokenizer.json'].map(file)), /Choose model\.safetensors or pytorch_model\.bin/);
    assert.throws(() => pickHubFiles([]), /No files were chosen/);
  });
});

describe('modelSource (Load from URL)', () => {
  const gpt2 = 'https://huggingface.co/openai-community/gpt2/resolve/main/';
  const folderOf = (input, options) => modelSource(input, options).url;
  test('hub folder, repository page, tree, blob, file and "org/name" forms all give the folder', () => {
    for (const input of [gpt2, 'https://huggingface.co/openai-community/gpt2', 'huggingface.co/openai-community/gpt2/',
      'https://huggingface.co/openai-community/gpt2/tree/main', 'https://huggingface.co/openai-community/gpt2/blob/main/config.json',
      'https://huggingface.co/openai-community/gpt2/resolve/main/config.json', 'openai-community/gpt2', `  ${gpt2}?download=true  `,
      'https://hf.co/openai-community/gpt2']) {
      assert.deepEqual(modelSource(input), { url: gpt2, name: 'openai-community/gpt2', revision: 'main' }, input);
    }
    assert.equal(folderOf('https://huggingface.co/org/name/tree/v1.0/sub'), 'https://huggingface.co/org/name/resolve/v1.0/sub/');
    assert.equal(folderOf('org/name', { revision: 'refs/pr/1' }), 'https://huggingface.co/org/name/resolve/refs%2Fpr%2F1/');
    assert.deepEqual(modelSource('http://127.0.0.1:9000/models/sort-gpt2/config.json'),
      { url: 'http://127.0.0.1:9000/models/sort-gpt2/', name: null, revision: null });
    // Another hub (endpoint): its URLs read as the hub's, its names resolve there.
    assert.equal(folderOf('http://127.0.0.1:9000/org/name/tree/v2', { endpoint: 'http://127.0.0.1:9000/' }),
      'http://127.0.0.1:9000/org/name/resolve/v2/');
    assert.equal(folderOf('org/name', { endpoint: 'http://127.0.0.1:9000/mirror' }), 'http://127.0.0.1:9000/mirror/org/name/resolve/main/');
    assert.equal(modelName({ url: gpt2 }), 'openai-community/gpt2');
  });

  test('what cannot be fetched says why', () => {
    assert.throws(() => modelSource(''), (error) => error instanceof TypeError && /from must be a hub model name/.test(error.message));
    assert.throws(() => modelSource('not a url'), /"not a url" is neither a hub model name such as 'openai-community\/gpt2' nor a URL/);
    assert.throws(() => modelSource('file:///home/me/gpt2/'), /from must be an http\(s\) URL here, got file:/);
    assert.throws(() => modelSource('https://huggingface.co/gpt2x'), /https:\/\/huggingface\.co\/gpt2x is not a model on the hub/);
  });
});

describe('topPredictions', () => {
  test('the top k of the last row, with softmax probabilities, against a float64 reference', () => {
    const n = 3;
    const vocab = 1000;
    const logits = Float32Array.from({ length: n * vocab }, (_, i) => Math.sin(i * 12.9898) * 8);
    const row = Array.from(logits.subarray((n - 1) * vocab));
    const max = Math.max(...row);
    const sum = row.reduce((total, value) => total + Math.exp(value - max), 0);
    const expected = row.map((logit, id) => ({ id, probability: Math.exp(logit - max) / sum }))
      .sort((a, b) => b.probability - a.probability).slice(0, 5);
    const top = topPredictions(logits, n, vocab, 5);
    assert.deepEqual(top.map((p) => p.id), expected.map((p) => p.id));
    top.forEach((p, i) => assert.ok(Math.abs(p.probability - expected[i].probability) < 1e-12));
  });

  test('huge logits neither overflow nor give NaN', () => {
    const top = topPredictions(Float32Array.from([1e30, 1e30 - 1e24, -1e30]), 1, 3, 2);
    assert.ok(top.every((p) => Number.isFinite(p.probability)));
    assert.ok(Math.abs(top[0].probability + top[1].probability - 1) < 1e-9);
  });
});
