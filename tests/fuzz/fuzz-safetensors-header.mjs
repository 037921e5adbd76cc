// A time-bounded fuzzer for the safetensors header as loadModel reads it
// (web/lib/model/safetensors.js: JSON.parse and the structure walk in
// JavaScript, the table checked by the module), which libFuzzer cannot
// reach: mutated headers of real and small files. Every file is either read
// into tensors that keep the format's promises, and agree with the test-side
// reader (tests/support/safetensors.mjs), or refused with a RangeError naming
// the file; no heap memory stays allocated, and the module keeps working.
//   node tests/fuzz/fuzz-safetensors-header.mjs [seconds]   (default 5)
// Exits non-zero on the first violation, printing the header as JSON.
import { readFileSync } from 'node:fs';
import { readSafetensors as referenceRead } from '../support/safetensors.mjs';
import { seededRandom } from './seeded-random.mjs';

const seconds = Number(process.argv[2] ?? 5);
if (!(seconds > 0)) {
  console.error(`[fuzz-safetensors-header] the time limit must be a positive number of seconds, got ${process.argv[2]}`);
  process.exit(2);
}
const { readSafetensors } = await import('../../web/lib/model/safetensors.js');
const { default: createModule } = await import('../../web/lib/wasm/attnlens-simd.mjs');
const module = await createModule({ wasmBinary: readFileSync(new URL('../../web/lib/wasm/attnlens-simd.wasm', import.meta.url)) });

const DTYPE_BYTES = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U64: 8, U32: 4, U16: 2, U8: 1, BOOL: 1, F8_E4M3: 1, F8_E5M2: 1 };

// Seeded: a failure names its input, and reproduces.
const { random, pick } = seededRandom(0x2545f491);

const sortFile = readFileSync(new URL('../../../shared/models/sort-gpt2/model.safetensors', import.meta.url));
const sortHeaderLength = Number(new DataView(sortFile.buffer, sortFile.byteOffset).getBigUint64(0, true));
const SEEDS = [
  new TextDecoder().decode(sortFile.subarray(8, 8 + sortHeaderLength)),
  '{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},' +
    '"b":{"dtype":"BF16","shape":[4],"data_offsets":[24,32],"x":[1,{"y":null}]}}',
  '{"\\u65e5":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}',
];
const PIECES = ['{', '}', '[', ']', ',', ':', '"', '\\', '\\u', '\\ud800', 'dtype', 'shape', 'data_offsets',
  '__metadata__', '"a"', '"F32"', '"F24"', '0', '-1', '2.5', '1e400', '9007199254740993', 'null', 'true', ' ', '\u00e9',
  '"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}'];

function mutate(text) {
  let out = text;
  for (let count = 1 + Math.floor(random() * 4); count > 0; count--) {
    const at = Math.floor(random() * (out.length + 1));
    const length = Math.floor(random() * 8);
    switch (Math.floor(random() * 3)) {
      case 0: out = out.slice(0, at) + pick(PIECES) + out.slice(at); break;
      case 1: out = out.slice(0, at) + out.slice(at + length); break;
      default: out = out.slice(0, at) + pick(PIECES) + out.slice(at + length);
    }
  }
  return out;
}

function fileWith(header, dataBytes) {
  const bytes = new TextEncoder().encode(header);
  const file = new Uint8Array(8 + bytes.length + dataBytes);
  new DataView(file.buffer).setBigUint64(0, BigInt(bytes.length), true);
  file.set(bytes, 8);
  return file;
}

function check(header, dataBytes) {
  const file = fileWith(header, dataBytes);
  const fail = (why) => {
    console.error(`[fuzz-safetensors-header] ${why}\nheader: ${JSON.stringify(header)}\ndata bytes: ${dataBytes}`);
    process.exit(1);
  };
  const before = module.heapBytesInUse();
  let read;
  try {
    read = readSafetensors(module, file, 'weights');
  } catch (error) {
    if (!(error instanceof RangeError) || !error.message.startsWith('attnlens.loadModel: weights ')) {
      fail(`refused without a clear error: ${error?.stack ?? error}`);
    }
  }
  if (module.heapBytesInUse() !== before) fail('memory stayed allocated');
  if (!read) return false;
  const dataStart = file.length - dataBytes;
  const names = new Set();
  for (const { name, dtype, shape, data } of read.tensors) {
    if (names.has(name)) fail(`tensor "${name}" twice`);
    names.add(name);
    if (!Object.hasOwn(DTYPE_BYTES, dtype)) fail(`unknown dtype ${dtype}`);
    if (!shape.every((size) => Number.isSafeInteger(size) && size >= 0)) fail(`shape [${shape}]`);
    if (data.length !== shape.reduce((a, b) => a * b, 1) * DTYPE_BYTES[dtype]) fail(`"${name}": bytes and shape disagree`);
    if (data.buffer !== file.buffer || data.byteOffset < dataStart || data.byteOffset + data.length > file.length) {
      fail(`"${name}": its data lies outside the data part`);
    }
  }
  // The test-side reader (looser: it does not look for repeated keys) sees the same table.
  let reference;
  try {
    reference = referenceRead(file);
  } catch (error) {
    fail(`accepted, but the reference reader refuses it: ${error.message}`);
  }
  for (const { name, dtype, shape, data } of read.tensors) {
    const other = reference.tensors[name];
    if (!other || other.dtype !== dtype || other.shape.join() !== shape.join() ||
        other.dataOffsets[0] !== data.byteOffset - dataStart) {
      fail(`"${name}" read differently by the reference reader`);
    }
  }
  if (Object.keys(reference.tensors).length !== read.tensors.length) fail('the reference reader sees other tensors');
  return true;
}

const end = Date.now() + seconds * 1000;
let runs = 0, accepted = 0;
while (Date.now() < end) {
  const seed = pick(SEEDS);
  const header = random() < 0.05 ? seed : mutate(seed);
  if (check(header, pick([0, 1, 24, 32, 96, sortFile.length]))) accepted++;
  runs++;
}
if (module.limits().panelWidth !== 16) {
  console.error('[fuzz-safetensors-header] the module stopped answering');
  process.exit(1);
}
console.log(`[fuzz-safetensors-header] ${runs} headers (${accepted} accepted), no violation in ${seconds} s`);
