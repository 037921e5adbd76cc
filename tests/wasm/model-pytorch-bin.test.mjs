// pytorch_model.bin (torch.save's zip archive of a pickled state dict):
// the same tiny checkpoints loaded from .bin and from .safetensors give the
// same attention, hidden state and logits, bit for bit, in every layout
// torch writes (F32, F16, BF16; OrderedDict or dict; protocol 2 or 4; zip64
// records; nn.Parameter; big-endian storages; shared, offset and transposed storages;
// shards). The files come from tests/support/torch-save.mjs, written from
// torch/serialization.py's layout without torch. Hostile files get an error
// naming what was refused, leave the heap as it was, and the module keeps working.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { savePickle, torchSave, zipArchive } from '../support/torch-save.mjs';
import { tinyCheckpoint } from '../support/tiny-checkpoints.mjs';
import { assertBitIdentical, load, simdLevelUnderTest } from './helpers.mjs';

const lens = await load({ simd: simdLevelUnderTest });
const heapAtStart = lens.heapBytesInUse();
const ids = [1, 5, 2, 7, 3];

async function outputsOf(options) {
  const model = await lens.loadModel(options);
  try {
    const { attention, hidden, logits } = model.run({ ids });
    return { attention, hidden, logits, info: model.info };
  } finally {
    model.dispose();
  }
}

function assertSameOutputs(actual, expected, label) {
  for (const key of ['attention', 'hidden', 'logits']) {
    // A BERT checkpoint without its MLM head has no logits, from either file.
    if (expected[key] === null) assert.equal(actual[key], null, `${label}: ${key}`);
    else assertBitIdentical(actual[key], expected[key], `${label}: ${key}`);
  }
  assert.deepEqual(actual.info.ignoredTensors, expected.info.ignoredTensors, `${label}: ignored tensors`);
  assert.equal(actual.info.dtype, expected.info.dtype, `${label}: dtype`);
}

// Each architecture in its fullest naming (buffers, I64 position_ids, heads the loader ignores).
const variants = [
  { arch: 'gpt2', naming: 'prefixed-buffers-untied' },
  { arch: 'bert', naming: 'hub' },
  { arch: 'llama', naming: 'bias-buffers' },
];
// The ways torch writes the same state dict, spread over the checkpoints.
const layouts = [
  {},
  { container: 'dict' },
  { protocol: 4, zip64: true },
  { byteOrder: 'big', archive: 'archive' },
  { byteOrder: null, container: 'dict', protocol: 4 },
  { parameters: true },
];

describe('the same outputs as the safetensors of the same tensors', () => {
  let round = 0;
  for (const { arch, naming } of variants) {
    for (const dtype of ['F32', 'F16', 'BF16']) {
      const layout = layouts[round++ % layouts.length];
      test(`${arch} (${naming}) ${dtype}, ${JSON.stringify(layout)}`, async () => {
        const checkpoint = tinyCheckpoint({ arch, naming, dtype, seed: 11 });
        const expected = await outputsOf({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
        const bin = torchSave(checkpoint.entries, layout);
        assertSameOutputs(await outputsOf({ config: checkpoint.config, weights: bin }), expected, 'pytorch_model.bin');
        // ArrayBuffer and a view at an offset, as for safetensors.
        const padded = new Uint8Array(bin.length + 3);
        padded.set(bin, 3);
        assertSameOutputs(await outputsOf({ config: checkpoint.config, weights: padded.subarray(3) }), expected, 'a view');
      });
    }
  }

  test('shards (pytorch_model-0000k-of-00002.bin), and a .bin beside a .safetensors shard', async () => {
    const checkpoint = tinyCheckpoint({ arch: 'llama', naming: 'gqa', dtype: 'BF16', seed: 12, shards: true });
    const expected = await outputsOf({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
    const half = Math.ceil(checkpoint.entries.length / 2);
    const parts = [checkpoint.entries.slice(0, half), checkpoint.entries.slice(half)];
    assertSameOutputs(await outputsOf({ config: checkpoint.config, weights: parts.map((part) => torchSave(part)) }), expected, 'shards');
    assertSameOutputs(await outputsOf({ config: checkpoint.config, weights: [torchSave(parts[0]), checkpoint.shards[1]] }),
      expected, 'mixed');
  });

  test('storages as torch keeps them: a transposed view, a tensor at an offset, a storage shared by two tensors', async () => {
    const checkpoint = tinyCheckpoint({ arch: 'gpt2', naming: 'untied', dtype: 'F16', seed: 13 });
    const expected = await outputsOf({ config: checkpoint.config, weights: checkpoint.files['model.safetensors'] });
    // lm_head shares wte's storage when their values are the same, as a tied model's state dict does.
    const tied = checkpoint.entries.map((entry) => (entry.name === 'lm_head.weight'
      ? { ...entry, values: checkpoint.entries.find((e) => e.name === 'transformer.wte.weight').values } : entry));
    const layout = {
      'transformer.h.0.attn.c_attn.weight': 'transposed', 'transformer.h.1.mlp.c_proj.weight': 'transposed',
      'transformer.h.0.ln_1.bias': { offset: 5 }, 'lm_head.weight': { sharesWith: 'transformer.wte.weight' },
    };
    assertSameOutputs(await outputsOf({ config: checkpoint.config, weights: torchSave(checkpoint.entries, {
      layout: Object.fromEntries(Object.entries(layout).filter(([name]) => name !== 'lm_head.weight')),
    }) }), expected, 'views');
    const tiedExpected = await outputsOf({ config: checkpoint.config, weights: torchSave(tied) });
    assertSameOutputs(await outputsOf({ config: checkpoint.config, weights: torchSave(tied, { layout }) }), tiedExpected, 'shared');
  });
});

// ---------------------------------------------------------------------------
// Refusals

const base = tinyCheckpoint({ arch: 'gpt2', naming: 'bare', dtype: 'F32', seed: 14 });
const baseExpected = await outputsOf({ config: base.config, weights: base.files['model.safetensors'] });
const encoder = new TextEncoder();

// A state dict of one hand-made value, with one 6-element float storage "0".
const tensorCall = (args) => ({ reduce: { global: 'torch._utils._rebuild_tensor_v2' }, args: { tuple: args } });
const storage = (numel = 6, type = 'torch.FloatStorage', key = '0') => ({ persistentId: { tuple: ['storage', { global: type }, key, 'cpu', numel] } });
const tensorArgs = (overrides = {}) => {
  const args = { storage: storage(), offset: 0, size: { tuple: [2, 3] }, stride: { tuple: [3, 1] }, grad: false, hooks: { ordered: [] }, ...overrides };
  return [args.storage, args.offset, args.size, args.stride, args.grad, args.hooks, ...(args.extra ? [args.extra] : [])];
};
function archive(pickle, { extra = [], storageBytes = 24, prefix = 'pytorch_model/', zip = {} } = {}) {
  return zipArchive([[`${prefix}data.pkl`, pickle], [`${prefix}data/0`, new Uint8Array(storageBytes)], ...extra,
    [`${prefix}version`, encoder.encode('3\n')]], zip);
}
const withValue = (value) => archive(savePickle({ dict: [['h.0.attn.c_attn.weight', value]] }));
const validBin = torchSave(base.entries);

// Each hostile or broken file and what its error must name.
const refusals = [
  ['an unknown global called (os.system)', withValue({ reduce: { global: 'os.system' }, args: { tuple: ['echo owned'] } }), /global os\.system, which attnlens refuses/],
  ['builtins.eval', withValue({ reduce: { global: 'builtins.eval' }, args: { tuple: ['1'] } }), /global builtins\.eval/],
  ['a global by STACK_GLOBAL (protocol 4)', archive(savePickle({ dict: [['x', { global: 'subprocess.call' }]] }, 4)), /global subprocess\.call/],
  ['_rebuild_tensor_v3 (newer dtypes)', withValue({ reduce: { global: 'torch._utils._rebuild_tensor_v3' }, args: { tuple: [] } }), /global torch\._utils\._rebuild_tensor_v3/],
  ['a storage class called', withValue({ reduce: { global: 'torch.FloatStorage' }, args: { tuple: [] } }), /torch\.FloatStorage is called, but it is not a function/],
  ['NEWOBJ', withValue({ raw: [0x81] }), /opcode NEWOBJ \(0x81\)/],
  ['INST', withValue({ raw: [0x69, ...encoder.encode('os\nsystem\n')] }), /opcode INST \(0x69\)/],
  ['an unknown opcode', withValue({ raw: [0xff] }), /opcode an unknown opcode \(0xff\)/],
  ['nesting 100 marks deep', withValue({ raw: new Array(100).fill(0x28) }), /nests deeper than 64 levels/],
  ['a GLOBAL name longer than 256 bytes', withValue({ raw: [0x63, ...encoder.encode(`${'a'.repeat(300)}\nb\n`)] }), /GLOBAL name longer than 256 bytes/],
  ['a data.pkl of more than 16 MiB', archive(new Uint8Array(16 * 1024 * 1024 + 1)), /data\.pkl has 16777217 bytes, more than the 16777216/],
  ['pickle protocol 6', archive(Uint8Array.from([0x80, 0x06, 0x7d, 0x2e])), /pickle protocol 6/],
  ['a truncated pickle', archive(savePickle({ dict: [['x', tensorCall(tensorArgs())]] }).subarray(0, 40)), /ends inside an opcode|truncated/],
  ['an integer beyond 2^53', withValue(tensorCall(tensorArgs({ offset: 2 ** 60 }))), /integer 1152921504606846976, beyond/],
  ['an offset outside the storage', withValue(tensorCall(tensorArgs({ offset: 1 }))), /tensor "h\.0\.attn\.c_attn\.weight": its size \[2, 3\], stride \[3, 1\] at offset 1 read past the end of its storage "0" \(6 elements\)/],
  ['strides outside the storage', withValue(tensorCall(tensorArgs({ stride: { tuple: [4, 1] } }))), /stride \[4, 1\] at offset 0 read past the end of its storage/],
  ['a huge size', withValue(tensorCall(tensorArgs({ size: { tuple: [2 ** 20, 2 ** 20] } }))), /its size \[1048576, 1048576\], stride \[3, 1\] at offset 0 read past the end/],
  ['a size of more than 2^53 elements', withValue(tensorCall(tensorArgs({ size: { tuple: [2 ** 30, 2 ** 30] } }))), /its size \[1073741824, 1073741824\] is too large/],
  ['a broadcast view (stride 0)', withValue(tensorCall(tensorArgs({ size: { tuple: [4, 3] }, stride: { tuple: [0, 1] } }))), /tensor "h\.0\.attn\.c_attn\.weight": its size \[4, 3\] with stride \[0, 1\] repeats the elements of its storage "0"/],
  ['negative sizes', withValue(tensorCall(tensorArgs({ size: { tuple: [-2, -3] } }))), /its size is not a tuple of non-negative integers/],
  ['sizes and strides of different lengths', withValue(tensorCall(tensorArgs({ stride: { tuple: [1] } }))), /it has 2 sizes but 1 strides/],
  ['tensor metadata', withValue(tensorCall(tensorArgs({ extra: { dict: [['neg', true]] } }))), /it carries metadata/],
  ['a storage smaller than its numel', withValue(tensorCall(tensorArgs({ storage: storage(7) }))), /storage "0" holds 24 bytes, but 7 F32 elements need 28/],
  ['a storage with no record', withValue(tensorCall(tensorArgs({ storage: storage(6, 'torch.FloatStorage', '9') }))), /no pytorch_model\/data\/9 in the archive/],
  ['a storage read as two dtypes', archive(savePickle({ dict: [['a', tensorCall(tensorArgs())], ['b', tensorCall(tensorArgs({ storage: storage(12, 'torch.HalfStorage'), size: { tuple: [2] }, stride: { tuple: [1] } }))]] })), /read as both F32 and F16/],
  ['a persistent id that is not a storage', withValue({ persistentId: { tuple: ['module', 'x'] } }), /persistent id is not \('storage'/],
  ['a value that is not a tensor', withValue(42), /"h\.0\.attn\.c_attn\.weight" is a number, not a tensor/],
  ['a pickle that is not a dict', archive(savePickle({ tuple: [1, 2] })), /holds a tuple or list, not a state dict/],
  ['BUILD on a tensor', archive(Uint8Array.from([...savePickle(tensorCall(tensorArgs())).subarray(0, -1), 0x7d, 0x62, 0x2e])),
    /BUILD sets the state of a tensor, which attnlens refuses/],
  ['a compressed entry (deflate)', archive(savePickle({ dict: [] }), { zip: { method: 8 } }), /entry "pytorch_model\/data\.pkl" is compressed \(deflate\)/],
  ['a truncated file', validBin.subarray(0, Math.floor(validBin.length / 2)), /no end-of-central-directory record \(the file is truncated/],
  ['an entry twice', archive(savePickle({ dict: [] }), { extra: [['pytorch_model/data/0', new Uint8Array(4)]] }), /holds entry "pytorch_model\/data\/0" twice/],
  ['no data.pkl', zipArchive([['pytorch_model/version', encoder.encode('3\n')]]), /no pytorch_model\/data\.pkl/],
  ['entries outside a folder', zipArchive([['data.pkl', savePickle({ dict: [] })]]), /not in a folder/],
  ['a TorchScript archive', archive(savePickle({ dict: [] }), { extra: [['pytorch_model/constants.pkl', savePickle({ tuple: [] })]] }), /TorchScript archive \(torch\.jit\.save\)/],
  ['an unknown byte order', archive(savePickle({ dict: [] }), { extra: [['pytorch_model/byteorder', encoder.encode('middle')]] }), /byteorder record is "middle"/],
  ['the legacy format (before PyTorch 1.6)', Uint8Array.from([0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e]),
    /legacy format of torch\.save before PyTorch 1\.6.*torch\.save\(torch\.load\(path, weights_only=True\), path\)/],
];

describe('hostile and broken files are refused by name; the heap is unchanged and the module keeps working', () => {
  for (const [what, bytes, pattern] of refusals) {
    test(what, async () => {
      const before = lens.heapBytesInUse();
      await assert.rejects(lens.loadModel({ config: base.config, weights: bytes }), (error) => {
        assert.ok(error instanceof RangeError, `expected a RangeError, got ${error.constructor.name}: ${error.message}`);
        assert.match(error.message, /^attnlens\.loadModel: weights /);
        assert.match(error.message, pattern);
        return true;
      });
      assert.equal(lens.heapBytesInUse(), before, 'a refused file left memory allocated');
    });
  }

  test('zip records pointing outside the file', async () => {
    const view = (bytes) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const endAt = validBin.length - 22;
    const locatorAt = endAt - 20;
    const movedLocator = validBin.slice();
    view(movedLocator).setBigUint64(locatorAt + 8, BigInt(validBin.length * 2), true);
    const directoryAt = Number(view(validBin).getBigUint64(locatorAt + 8, true)); // the zip64 end record
    const movedDirectory = validBin.slice();
    view(movedDirectory).setBigUint64(directoryAt + 48, BigInt(validBin.length), true);
    const centralAt = Number(view(validBin).getBigUint64(directoryAt + 48, true));
    const movedEntry = validBin.slice();
    view(movedEntry).setUint32(centralAt + 42, validBin.length - 10, true);
    const grownEntry = validBin.slice();
    view(grownEntry).setUint32(centralAt + 20, 2 ** 31, true);
    view(grownEntry).setUint32(centralAt + 24, 2 ** 31, true);
    for (const [bytes, pattern] of [[movedLocator, /zip64 end-of-central-directory locator points outside the file/],
      [movedDirectory, /central directory .* runs past the end of the file/], [movedEntry, /has no local header at byte/],
      [grownEntry, /entry "pytorch_model\/data\.pkl" \(2147483648 bytes at \d+\) runs past the archive's data/]]) {
      const before = lens.heapBytesInUse();
      await assert.rejects(lens.loadModel({ config: base.config, weights: bytes }), (error) => error instanceof RangeError &&
        pattern.test(error.message));
      assert.equal(lens.heapBytesInUse(), before);
    }
  });

  test('after every refusal: the valid file still loads, with the same outputs', async () => {
    assertSameOutputs(await outputsOf({ config: base.config, weights: validBin }), baseExpected, 'after the refusals');
  });
});

after(() => assert.equal(lens.heapBytesInUse(), heapAtStart, 'the tests left memory allocated'));
