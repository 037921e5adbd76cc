// Bad model files and bad calls: each gets a clear Error naming the problem,
// no memory stays allocated, and the module keeps working afterwards.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { brokenKinds, brokenSafetensors, readSafetensors, writeSafetensors } from '../support/safetensors.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { load, repoRoot } from './helpers.mjs';

const lens = await load();
const folder = `${repoRoot}../shared/models/sort-gpt2`;
const sort = {
  config: JSON.parse(readFileSync(`${folder}/config.json`, 'utf8')),
  weights: readFileSync(`${folder}/model.safetensors`),
  tokenizer: readFileSync(`${folder}/tokenizer.json`, 'utf8'),
};
const heapAtStart = lens.heapBytesInUse();

// Asserts loadModel rejects with `type` and a message matching `pattern`,
// and that nothing it allocated is left behind.
async function rejects(options, type, pattern) {
  const before = lens.heapBytesInUse();
  await assert.rejects(lens.loadModel(options), (error) => {
    assert.ok(error instanceof type, `expected ${type.name}, got ${error.constructor.name}: ${error.message}`);
    assert.match(error.message, /^attnlens\.loadModel: /);
    assert.match(error.message, pattern);
    return true;
  });
  assert.equal(lens.heapBytesInUse(), before, 'a failed load left memory allocated');
}

// What each broken file's error must mention.
const brokenMessages = {
  'empty': /weights .*0 bytes/,
  'truncated': /weights .*5 bytes/,
  'header-past-end': /header length .* past the end/,
  'header-not-json': /header/i,
  'offsets-outside-data': /broken\.weight.*(offset|outside|past)|(offset|outside|past).*broken\.weight/i,
  'shape-mismatch': /broken\.weight.*(shape|bytes)/i,
  'unknown-dtype': /F24/,
  'negative-shape': /broken\.weight.*shape|shape.*broken\.weight/i,
  'offsets-reversed': /broken\.weight/,
  'missing-offsets': /broken\.weight.*data_offsets|data_offsets.*broken\.weight/,
};

for (const { kind, description } of brokenKinds) {
  test(`a safetensors file with ${description} (${kind}) is refused clearly`, async () => {
    await rejects({ config: sort.config, weights: brokenSafetensors(kind) }, Error, brokenMessages[kind]);
  });
}

test('tensors missing, of the wrong shape, of an unusable dtype, or twice', async () => {
  const { config, files, tensorsByHubName } = sortPieces();
  const without = (name) => writeSafetensors(tensorsByHubName.filter((t) => t.name !== name));
  await rejects({ config, weights: without('transformer.h.1.mlp.c_fc.weight') }, RangeError,
    /lacks 1 tensor the config needs: "h\.1\.mlp\.c_fc\.weight"/);
  const reshaped = tensorsByHubName.map((t) => (t.name === 'transformer.wpe.weight' ? { ...t, shape: [48, 11] } : t));
  await rejects({ config, weights: writeSafetensors(reshaped) }, RangeError,
    /"transformer\.wpe\.weight" has shape \[48, 11\], but the config needs \[11, 48\]/);
  const integers = tensorsByHubName.map((t) => (t.name === 'transformer.ln_f.bias' ? { ...t, dtype: 'I32' } : t));
  await rejects({ config, weights: writeSafetensors(integers) }, RangeError, /"transformer\.ln_f\.bias" has dtype I32/);
  // The same tensor in two shards.
  await rejects({ config, weights: [files, writeSafetensors(tensorsByHubName.slice(0, 1))] }, RangeError, /appears twice/);
  // Without its own LM head the model ties it to the embeddings.
  const tied = await lens.loadModel({ config, weights: without('lm_head.weight') });
  assert.equal(tied.info.tiedLmHead, true);
  tied.dispose();
  // A NaN weight is caught at load, with the tensor named.
  const poisoned = tensorsByHubName.map((t) => (t.name === 'transformer.h.0.ln_1.weight'
    ? { ...t, values: t.values.map((v, i) => (i === 5 ? NaN : v)) } : t));
  await rejects({ config, weights: writeSafetensors(poisoned) }, RangeError, /h\.0\.ln_1\.weight.*(finite|NaN)/);
});

test('configs: unknown model_type, missing fields, heads that do not divide the width, absurd sizes', async () => {
  const weights = sort.weights;
  const withConfig = (patch) => ({ config: { ...sort.config, ...patch }, weights });
  await rejects(withConfig({ model_type: 'whisper' }), RangeError, /model_type = "whisper" is not supported; attnlens runs gpt2, bert, llama/);
  await rejects({ config: { n_embd: 48 }, weights }, TypeError, /config\.model_type is required/);
  await rejects(withConfig({ n_head: undefined }), TypeError, /config\.n_head is required/);
  await rejects(withConfig({ n_head: 5 }), RangeError, /model width \(48\) must be divisible by the number of heads \(5\)/);
  await rejects(withConfig({ n_layer: 2.5 }), RangeError, /config\.n_layer must be a positive integer, got 2\.5/);
  await rejects(withConfig({ n_embd: 2 ** 20 * 3, n_head: 3 }), RangeError, /config\.n_embd 3145728 is too large/);
  await rejects(withConfig({ vocab_size: 2 ** 31 }), RangeError, /config\.vocab_size 2147483648 is too large/);
  await rejects(withConfig({ n_layer: 100000 }), RangeError, /config\.n_layer 100000 is too large/);
  await rejects(withConfig({ activation_function: 'relu' }), RangeError, /activation_function = "relu" is not supported/);
  await rejects(withConfig({ layer_norm_epsilon: -1 }), RangeError, /layer_norm_epsilon must be a finite number greater than 0/);
  await rejects({ config: '{"model_type": "gpt2",', weights }, SyntaxError, /config is not valid JSON/);
  await rejects({ config: sort.config }, TypeError, /weights is required/);
  await rejects({ config: sort.config, weights: 'model.safetensors' }, TypeError, /weights must be the bytes of a \.safetensors file/);
  await rejects({ ...sort, extra: 1 }, TypeError, /unknown option "extra"/);
});

test('tokenizers attnlens cannot read are refused when loading', async () => {
  // UnicodeScripts: a real Hugging Face pre-tokenizer that attnlens does not implement.
  const scripts = { model: { type: 'WordLevel', vocab: { a: 0, '[UNK]': 1 }, unk_token: '[UNK]' }, pre_tokenizer: { type: 'UnicodeScripts' } };
  await rejects({ ...sort, tokenizer: scripts }, Error, /tokenizer: unsupported pre_tokenizer "?UnicodeScripts/);
  await rejects({ ...sort, tokenizer: '{not json' }, Error, /tokenizer: /);
});

test('bad calls on a loaded model, then a disposed model', async () => {
  const model = await lens.loadModel(sort);
  const before = lens.heapBytesInUse();
  const throwsLike = (call, type, pattern) => assert.throws(call, (error) => error instanceof type && pattern.test(error.message));
  throwsLike(() => model.run({ ids: [0, 1, 3] }), RangeError, /model\.run: ids\[2\] must be an integer from 0 to 2/);
  throwsLike(() => model.run({ ids: [0, -1] }), RangeError, /ids\[1\]/);
  throwsLike(() => model.run({ ids: [0, 1.5] }), RangeError, /ids\[1\]/);
  throwsLike(() => model.run({ ids: new Array(12).fill(0) }), RangeError, /12 tokens, more than the model's 11 positions/);
  throwsLike(() => model.run({ ids: [] }), RangeError, /at least one token/);
  throwsLike(() => model.run({ text: '' }), RangeError, /text must give at least one token/);
  throwsLike(() => model.run({ text: '   ' }), RangeError, /at least one token/);
  throwsLike(() => model.run({ text: '1', ids: [1] }), TypeError, /exactly one of text and ids/);
  throwsLike(() => model.run({}), TypeError, /exactly one of text and ids/);
  throwsLike(() => model.run({ ids: 'abc' }), TypeError, /ids must be an Int32Array or an array/);
  throwsLike(() => model.run({ ids: [0], extra: true }), TypeError, /unknown option "extra"/);
  throwsLike(() => model.explain({ ids: [0, 1], layer: 3 }), RangeError, /layer must be an integer from 0 to 2, got 3/);
  throwsLike(() => model.explain({ ids: [0, 1], head: -1 }), RangeError, /head must be an integer from 0 to 2/);
  throwsLike(() => model.run({ ids: [0, 1], keyMask: new Uint8Array(3) }), RangeError, /keyMask must be of length n = 2/);
  assert.equal(lens.heapBytesInUse(), before, 'failed calls left memory allocated');
  // Still computes after all that.
  assert.equal(model.run({ ids: [2, 1, 0] }).n, 3);
  model.dispose();
  model.dispose(); // twice is harmless
  throwsLike(() => model.run({ ids: [0] }), Error, /this model was disposed/);
  throwsLike(() => model.tokenize('0'), Error, /this model was disposed/);
});

test('a forward pass that overflows float32 is refused, not handed on with NaN; the module keeps working', async () => {
  // Finite weights, loaded without complaint, whose first MLP multiplies activations by ~1e30 twice.
  const checkpoint = tinyCheckpoint({ arch: 'gpt2', dtype: 'F32', seed: 3 });
  const huge = new Set(['h.0.mlp.c_fc.weight', 'h.0.mlp.c_proj.weight'].map((name) => checkpoint.hubNames[name]));
  const entries = checkpoint.entries.map((entry) => (huge.has(entry.name)
    ? { ...entry, values: Float64Array.from(entry.values, (value) => value * 1e30) } : entry));
  const model = await lens.loadModel({ config: checkpoint.config, weights: writeSafetensors(entries) });
  try {
    const before = lens.heapBytesInUse();
    const overflow = /the forward pass overflowed float32 \((attention|hidden|logits|weights|output|layerOutput)\[\d+\] = (NaN|-?Infinity)\)/;
    assert.throws(() => model.run({ ids: [1, 2, 3] }), (error) => error instanceof RangeError &&
      /^model\.run: /.test(error.message) && overflow.test(error.message));
    assert.throws(() => model.explain({ ids: [1, 2, 3], layer: 1 }), (error) => error instanceof RangeError &&
      /^model\.explain: /.test(error.message) && overflow.test(error.message));
    // Layer 0's attention comes before its MLP overflows, but its last step (the layer's output) does not.
    assert.throws(() => model.explain({ ids: [1, 2, 3], layer: 0 }), /model\.explain: the forward pass overflowed float32 \(layerOutput\[\d+\] = (NaN|-?Infinity)\)/);
    assert.equal(lens.heapBytesInUse(), before, 'refused calls left memory allocated');
  } finally {
    model.dispose();
  }
  const sane = await lens.loadModel(sort);
  assert.equal(sane.run({ ids: [2, 1, 0] }).n, 3);
  sane.dispose();
});

test('text without a tokenizer is refused; ids still run', async () => {
  const model = await lens.loadModel({ config: sort.config, weights: sort.weights });
  try {
    assert.throws(() => model.run({ text: '0 1' }), /loaded without a tokenizer; pass \{ ids \}/);
    assert.deepEqual(model.run({ ids: [0, 1] }).tokens, ['0', '1']);
  } finally {
    model.dispose();
  }
});

test('loading and disposing leaves the heap as it was', async () => {
  const checkpoint = tinyCheckpoint({ arch: 'llama', dtype: 'BF16', seed: 7 });
  for (let round = 0; round < 3; round++) {
    const model = await lens.loadModel({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
    model.run({ ids: [1, 2, 3] });
    model.explain({ ids: [1, 2, 3], layer: 1 });
    model.dispose();
  }
  assert.equal(lens.heapBytesInUse(), heapAtStart);
});

after(() => assert.equal(lens.heapBytesInUse(), heapAtStart, 'the tests left memory allocated'));

// sort-gpt2's tensors as writeSafetensors entries under their hub names.
function sortPieces() {
  const tensorsByHubName = Object.entries(readSafetensors(sort.weights).tensors)
    .map(([name, tensor]) => ({ name, dtype: tensor.dtype, shape: tensor.shape, values: Array.from(tensor.values) }));
  return { config: sort.config, files: sort.weights, tensorsByHubName };
}
