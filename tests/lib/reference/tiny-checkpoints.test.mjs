// The tiny checkpoint generator: every (arch, naming, dtype) variant writes
// hub-shaped files whose tensors read back, through the test-side name
// mapping, to exactly the canonical tensors it reports; the naming features
// each variant claims are really in the file; shards hold the same weights;
// the values are seeded, rounded to the dtype, and keep activations O(1).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { modelDimensions, referenceForward, referenceTensorShapes } from '../../support/model-reference.mjs';
import { readSafetensors, storedValue } from '../../support/safetensors.mjs';
import {
  canonicalName, canonicalTensors, checkpointVariants, dtypes, hasMaskedLmHead, namingVariants, tinyCheckpoint,
} from '../../support/tiny-checkpoints.mjs';

const torchDtypes = { F32: 'float32', F16: 'float16', BF16: 'bfloat16' };

test('checkpointVariants covers every arch x naming x dtype', () => {
  const expected = Object.entries(namingVariants).reduce((sum, [, v]) => sum + Object.keys(v).length, 0) * dtypes.length;
  assert.equal(checkpointVariants.length, expected);
  assert.ok(checkpointVariants.length >= 45);
  assert.deepEqual(dtypes, ['F32', 'F16', 'BF16']);
});

for (const { arch, naming, dtype } of checkpointVariants) {
  test(`${arch} ${naming} ${dtype}: the file reads back to the reported canonical tensors`, () => {
    const checkpoint = tinyCheckpoint({ arch, naming, dtype });
    const { config, files, tensors, hubNames, entries } = checkpoint;
    const variant = namingVariants[arch][naming];

    // config.json as the hub writes it.
    assert.deepEqual(JSON.parse(files['config.json']), config);
    assert.equal(config.model_type, arch);
    assert.ok(Array.isArray(config.architectures) && config.architectures.length === 1);
    assert.equal(config.torch_dtype, torchDtypes[dtype]);

    const file = readSafetensors(files['model.safetensors']);
    assert.deepEqual(file.metadata, { format: 'pt' });
    assert.deepEqual(Object.keys(file.tensors), entries.map((e) => e.name));

    // Canonical tensors: exactly the contract list (lm_head only when the variant has one).
    const specs = referenceTensorShapes(arch, config, { maskedLmHead: hasMaskedLmHead(arch, variant) })
      .filter((s) => !s.optional || variant.lmHead);
    assert.deepEqual(Object.keys(tensors).sort(), specs.map((s) => s.name).sort());
    const fromFile = canonicalTensors(arch, file.tensors);
    assert.deepEqual(Object.keys(fromFile).sort(), Object.keys(tensors).sort());
    for (const { name, shape } of specs) {
      const stored = file.tensors[hubNames[name]];
      assert.ok(stored, `${name} is stored as ${hubNames[name]}`);
      assert.deepEqual(stored.shape, shape, name);
      assert.equal(stored.dtype, dtype, name);
      assert.equal(canonicalName(arch, hubNames[name]), name);
      // Bit for bit what the checkpoint reports, and representable in the dtype.
      assert.deepEqual(fromFile[name], tensors[name], name);
      for (const v of tensors[name]) assert.ok(Object.is(storedValue(dtype, v), v), `${name}: ${v} is not a ${dtype}`);
    }

    // Every other tensor in the file is one a loader must ignore.
    const ignored = Object.keys(file.tensors).filter((name) => canonicalName(arch, name) === null);
    assert.equal(ignored.length + specs.length, Object.keys(file.tensors).length);

    // The naming features the variant claims.
    const names = Object.keys(file.tensors);
    const model = names.filter((n) => n !== 'lm_head.weight' && !n.startsWith('cls.'));
    assert.equal(names.includes('lm_head.weight'), Boolean(variant.lmHead));
    if (arch === 'gpt2') {
      assert.ok(model.every((n) => n.startsWith('transformer.') === (variant.prefix === 'transformer.')), 'prefix');
      const P = config.n_positions;
      const masks = names.filter((n) => n.endsWith('.attn.bias'));
      const maskedBiases = names.filter((n) => n.endsWith('.attn.masked_bias'));
      assert.equal(masks.length, variant.buffers ? config.n_layer : 0);
      assert.equal(maskedBiases.length, masks.length);
      for (const n of masks) {
        assert.deepEqual(file.tensors[n].shape, [1, 1, P, P]);
        const v = file.tensors[n].values;
        assert.equal(v[0 * P + 1], 0); // above the diagonal: masked
        assert.equal(v[1 * P + 0], 1);
        assert.equal(v[(P - 1) * P + P - 1], 1);
      }
      for (const n of maskedBiases) assert.deepEqual(file.tensors[n].shape, []);
      if (variant.lmHead) assert.equal(config.tie_word_embeddings, false);
      else assert.equal(config.tie_word_embeddings ?? true, true);
    } else if (arch === 'bert') {
      assert.ok(model.every((n) => n.startsWith('bert.') === (variant.prefix === 'bert.')), 'prefix');
      const norms = names.filter((n) => n.includes('LayerNorm.'));
      assert.ok(norms.length > 0);
      assert.ok(norms.every((n) => /LayerNorm\.(gamma|beta)$/.test(n) === Boolean(variant.gammaBeta)), 'gamma/beta');
      const positionIds = file.tensors[`${variant.prefix}embeddings.position_ids`];
      assert.equal(Boolean(positionIds), Boolean(variant.extras));
      if (positionIds) {
        assert.equal(positionIds.dtype, 'I64');
        assert.deepEqual(positionIds.shape, [1, config.max_position_embeddings]);
        assert.deepEqual(Array.from(positionIds.values), [...Array(config.max_position_embeddings).keys()]);
        assert.ok(names.includes(`${variant.prefix}pooler.dense.weight`));
      }
      assert.equal(names.some((n) => n.startsWith('cls.')), Boolean(variant.heads));
    } else {
      const bare = model.filter((n) => !n.startsWith('model.'));
      assert.equal(bare.length === model.length, variant.prefix === '', 'model. prefix');
      const invFreq = names.filter((n) => n.endsWith('rotary_emb.inv_freq'));
      assert.equal(invFreq.length, variant.invFreq ? config.num_hidden_layers : 0);
      const dims = modelDimensions('llama', config);
      for (const n of invFreq) {
        assert.deepEqual(file.tensors[n].shape, [dims.headWidth / 2]);
        assert.equal(file.tensors[n].values[0], 1);
      }
    }
  });
}

test('the variants exercise what they say: GQA, MQA, explicit head_dim, biases, rope_theta, n_inner', () => {
  const dims = (arch, naming) => modelDimensions(arch, tinyCheckpoint({ arch, naming }).config);
  assert.equal(dims('llama', 'mha').kvHeads, 4);
  assert.equal(dims('llama', 'gqa').kvHeads, 2);
  assert.notEqual(dims('llama', 'gqa').ropeTheta, 10000);
  assert.equal(dims('llama', 'bias-buffers').kvHeads, 1);
  const headDim = dims('llama', 'head-dim');
  assert.equal(headDim.headWidth, 12);
  assert.notEqual(headDim.heads * headDim.headWidth, headDim.width);
  const biased = tinyCheckpoint({ arch: 'llama', naming: 'bias-buffers' });
  assert.equal(biased.config.attention_bias, true);
  assert.equal(biased.config.mlp_bias, true);
  assert.ok(biased.tensors['model.layers.1.self_attn.o_proj.bias']);
  assert.ok(biased.tensors['model.layers.0.mlp.down_proj.bias']);
  const untied = dims('gpt2', 'untied');
  assert.notEqual(untied.mlpWidth, 4 * untied.width);
  assert.equal(tinyCheckpoint({ arch: 'gpt2', naming: 'bare' }).config.n_inner, null);
  assert.notEqual(dims('bert', 'bare').mlpWidth, 4 * dims('bert', 'bare').width);
});

test('shards: two files and an index holding the same tensors as model.safetensors', () => {
  for (const arch of ['gpt2', 'bert', 'llama']) {
    const checkpoint = tinyCheckpoint({ arch, naming: Object.keys(namingVariants[arch]).at(-1), dtype: 'BF16', shards: true });
    const { files, shards } = checkpoint;
    const names = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
    assert.deepEqual(shards, names.map((n) => files[n]));
    const whole = readSafetensors(files['model.safetensors']).tensors;
    const parts = shards.map((bytes) => readSafetensors(bytes).tensors);
    assert.ok(Object.keys(parts[0]).length > 0 && Object.keys(parts[1]).length > 0);
    const index = JSON.parse(files['model.safetensors.index.json']);
    assert.deepEqual(Object.keys(index.weight_map).sort(), Object.keys(whole).sort());
    let dataBytes = 0;
    parts.forEach((part, i) => {
      for (const [name, tensor] of Object.entries(part)) {
        assert.equal(index.weight_map[name], names[i]);
        assert.deepEqual(tensor.values, whole[name].values);
        assert.deepEqual(tensor.shape, whole[name].shape);
        dataBytes += tensor.dataOffsets[1] - tensor.dataOffsets[0];
      }
    });
    assert.equal(index.metadata.total_size, dataBytes);
    assert.deepEqual(canonicalTensors(arch, ...parts), checkpoint.tensors);
  }
  assert.equal(tinyCheckpoint({ arch: 'gpt2' }).shards, null);
  assert.equal(tinyCheckpoint({ arch: 'gpt2' }).files['model-00001-of-00002.safetensors'], undefined);
});

test('seeded: same seed same bytes; tensors do not depend on naming; dtypes differ by rounding only', () => {
  const a = tinyCheckpoint({ arch: 'llama', naming: 'gqa', seed: 7 });
  const b = tinyCheckpoint({ arch: 'llama', naming: 'gqa', seed: 7 });
  assert.deepEqual(a.files['model.safetensors'], b.files['model.safetensors']);
  const c = tinyCheckpoint({ arch: 'llama', naming: 'gqa', seed: 8 });
  assert.notDeepEqual(c.tensors['model.embed_tokens.weight'], a.tensors['model.embed_tokens.weight']);
  const base = tinyCheckpoint({ arch: 'llama', naming: 'base-model', seed: 7 });
  assert.deepEqual(base.tensors['model.layers.0.mlp.up_proj.weight'], a.tensors['model.layers.0.mlp.up_proj.weight']);
  for (const dtype of ['F16', 'BF16']) {
    const f32 = tinyCheckpoint({ arch: 'bert', naming: 'hub', dtype: 'F32' }).tensors;
    const rounded = tinyCheckpoint({ arch: 'bert', naming: 'hub', dtype }).tensors;
    const relative = dtype === 'F16' ? 2 ** -11 : 2 ** -8;
    let changed = 0;
    for (const name of Object.keys(f32)) {
      f32[name].forEach((v, i) => {
        // The 16-bit file holds the float32 weights rounded, as torch's
        // .half() / .bfloat16() of a float32 model would.
        assert.equal(storedValue(dtype, v), rounded[name][i]);
        assert.ok(Math.abs(rounded[name][i] - v) <= relative * Math.abs(v) + 2 ** -24);
        if (rounded[name][i] !== v) changed++;
      });
    }
    assert.ok(changed > 1000, `${dtype} rounding changed ${changed} values`);
  }
});

test('config overrides change the config and the tensors; undefined removes a key', () => {
  const { config, tensors } = tinyCheckpoint({ arch: 'gpt2', naming: 'untied', n_layer: 3, n_inner: undefined, vocab_size: 33 });
  assert.equal(config.n_layer, 3);
  assert.ok(!('n_inner' in config));
  assert.ok(!JSON.parse(tinyCheckpoint({ arch: 'gpt2', n_inner: undefined }).files['config.json']).hasOwnProperty('n_inner'));
  assert.deepEqual(tensors['h.2.mlp.c_fc.weight'].length, 24 * 96);
  assert.equal(tensors['lm_head.weight'].length, 33 * 24);
});

test('activations stay O(1) and attention is neither uniform nor one-hot', () => {
  for (const arch of ['gpt2', 'bert', 'llama']) {
    for (const naming of Object.keys(namingVariants[arch])) {
      const { config, tensors } = tinyCheckpoint({ arch, naming, dtype: 'BF16' });
      const dims = modelDimensions(arch, config);
      const n = 12;
      const ids = Array.from({ length: n }, (_, i) => (3 + 7 * i) % dims.vocabSize);
      const { attention, hidden, logits } = referenceForward(arch, config, tensors, ids);
      const rms = (a) => Math.sqrt(a.reduce((s, v) => s + v * v, 0) / a.length);
      assert.ok(rms(hidden) > 0.5 && rms(hidden) < 2, `${arch} ${naming}: hidden rms ${rms(hidden)}`);
      if (logits) assert.ok(rms(logits) > 0.5 && rms(logits) < 10, `${arch} ${naming}: logits rms ${rms(logits)}`);
      // Over rows that see at least 4 keys: the largest weight, on average.
      let sum = 0;
      let rows = 0;
      for (let row = 0; row < dims.layers * dims.heads * n; row++) {
        const i = row % n;
        if (arch !== 'bert' && i < 3) continue;
        sum += Math.max(...attention.subarray(row * n, row * n + n));
        rows++;
      }
      const meanMax = sum / rows;
      assert.ok(meanMax > 0.15 && meanMax < 0.9, `${arch} ${naming}: mean largest weight ${meanMax}`);
    }
  }
});

test('tinyCheckpoint refuses unknown arch, naming and dtype', () => {
  assert.throws(() => tinyCheckpoint({ arch: 't5' }), /unknown arch t5/);
  assert.throws(() => tinyCheckpoint({ arch: 'bert', naming: 'nope' }), /unknown bert naming nope/);
  assert.throws(() => tinyCheckpoint({ arch: 'gpt2', dtype: 'F64' }), /F64 is not F32, F16 or BF16/);
});
