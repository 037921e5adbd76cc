// A time-bounded fuzzer for pytorch_model.bin as loadModel reads it
// (web/lib/model/pytorch/: the zip archive and the restricted pickle reader,
// all JavaScript): mutated small checkpoints written by the test-side
// torch.save writer (tests/support/torch-save.mjs). Every file is either read
// into tensors whose bytes match their dtype and shape, or refused with a
// RangeError naming the file, quickly; nothing else is thrown.
//   node tests/fuzz/fuzz-pytorch-bin.mjs [seconds]   (default 5)
// Exits non-zero on the first violation, printing the seed of the file.
import { torchSave } from '../support/torch-save.mjs';
import { seededRandom } from './seeded-random.mjs';

const seconds = Number(process.argv[2] ?? 5);
if (!(seconds > 0)) {
  console.error(`[fuzz-pytorch-bin] the time limit must be a positive number of seconds, got ${process.argv[2]}`);
  process.exit(2);
}
const { readPytorchBin } = await import('../../web/lib/model/pytorch/read-bin.js');
const DTYPE_BYTES = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };
const MAX_MS = 1000;

const { random, pick } = seededRandom(0x6b8b4567);
const entries = [
  { name: 'wte.weight', dtype: 'F32', shape: [4, 3], values: Array.from({ length: 12 }, (_, i) => i / 7) },
  { name: 'h.0.ln_1.bias', dtype: 'F16', shape: [3], values: [0.5, -1, 2] },
  { name: 'h.0.attn.bias', dtype: 'U8', shape: [1, 1, 2, 2], values: [1, 0, 1, 1] },
  { name: 'embeddings.position_ids', dtype: 'I64', shape: [1, 4], values: [0, 1, 2, 3] },
  { name: 'masked_bias', dtype: 'BF16', shape: [], values: [-1e4] },
];
const SEEDS = [
  torchSave(entries),
  torchSave(entries, { container: 'dict', protocol: 4, zip64: true }),
  torchSave(entries, { byteOrder: 'big', layout: { 'wte.weight': 'transposed', masked_bias: { offset: 2 } } }),
];
// Bytes worth writing over others: opcodes (marks, tuples, memo, globals, REDUCE, BUILD, STOP, PERSID), sizes, signatures.
const PIECES = [[0x28], [0x74], [0x85], [0x86], [0x87], [0x29], [0x7d], [0x5d], [0x75], [0x73], [0x61], [0x65], [0x68, 0],
  [0x71, 200], [0x6a, 0xff, 0xff, 0xff, 0x7f], [0x52], [0x62], [0x51], [0x2e], [0x81], [0x93], [0x94], [0x95],
  [0x4b, 0xff], [0x4a, 0xff, 0xff, 0xff, 0xff], [0x8a, 8, 0, 0, 0, 0, 0, 0, 0, 0x80], [0x80, 5], [0x0a], [0xff, 0xff, 0xff, 0xff],
  [0, 0, 0, 0], [0x50, 0x4b, 0x01, 0x02], [0x50, 0x4b, 0x06, 0x06], [8, 0]];

function mutate(file) {
  let out = file.slice();
  for (let count = 1 + Math.floor(random() * 4); count > 0; count--) {
    const kind = random();
    // Most mutations fall in the first kilobyte (the pickle), the rest anywhere.
    const at = Math.floor(random() * (random() < 0.7 ? Math.min(out.length, 1024) : out.length));
    if (kind < 0.5) out.set(pick(PIECES).slice(0, out.length - at), at);
    else if (kind < 0.9) out[at] = Math.floor(random() * 256);
    else out = out.subarray(0, at);
  }
  return out;
}

function check(file, label) {
  const fail = (why) => {
    console.error(`[fuzz-pytorch-bin] ${label}: ${why}`);
    process.exit(1);
  };
  const started = performance.now();
  let read;
  try {
    read = readPytorchBin(file, 'weights');
  } catch (error) {
    if (!(error instanceof RangeError) || !error.message.startsWith('attnlens.loadModel: weights ')) {
      fail(`refused without a clear error: ${error?.stack ?? error}`);
    }
  }
  if (performance.now() - started > MAX_MS) fail(`took ${Math.round(performance.now() - started)} ms`);
  if (!read) return false;
  for (const { name, dtype, shape, data } of read.tensors) {
    if (typeof name !== 'string') fail('a tensor name that is not a string');
    if (!Object.hasOwn(DTYPE_BYTES, dtype)) fail(`unknown dtype ${dtype}`);
    if (!shape.every((size) => Number.isSafeInteger(size) && size >= 0)) fail(`shape [${shape}]`);
    if (!(data instanceof Uint8Array) || data.length !== shape.reduce((a, b) => a * b, 1) * DTYPE_BYTES[dtype]) {
      fail(`"${name}": bytes and shape disagree`);
    }
    if (data.buffer === file.buffer && (data.byteOffset < file.byteOffset || data.byteOffset + data.length > file.byteOffset + file.length)) {
      fail(`"${name}": its data lies outside the file`);
    }
  }
  return true;
}

SEEDS.forEach((seed, i) => {
  if (!check(seed, `seed ${i}`)) {
    console.error(`[fuzz-pytorch-bin] seed ${i} is refused`);
    process.exit(1);
  }
});
const end = Date.now() + seconds * 1000;
let runs = 0, accepted = 0;
while (Date.now() < end) {
  const seed = Math.floor(random() * SEEDS.length);
  if (check(mutate(SEEDS[seed]), `run ${runs} (seed file ${seed})`)) accepted++;
  runs++;
}
console.log(`[fuzz-pytorch-bin] ${runs} files (${accepted} accepted), no violation in ${seconds} s`);
