// A small, independent safetensors writer and reader for tests (nothing shared
// with web/lib or src). The format, as the safetensors project defines it:
//   8 bytes   little-endian u64 N: the length of the JSON header
//   N bytes   UTF-8 JSON object: { name: { dtype, shape, data_offsets: [begin, end] },
//             "__metadata__"?: { string: string } }, padded with spaces (0x20) so
//             that the data starts 8-byte aligned
//   rest      the data; each tensor's bytes are data[begin, end), row-major,
//             little-endian, offsets counted from the start of the data
//
// writeSafetensors encodes F64 F32 F16 BF16 and the integer and BOOL dtypes;
// F16 and BF16 round to nearest, ties to even, as torch's .half() and
// .bfloat16() do. readSafetensors checks everything a loader must check and
// decodes every tensor to a Float64Array, so a round trip shows exactly which
// values a file stores. brokenSafetensors makes deliberately bad files.

export const dtypeSizes = {
  F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1,
  U64: 8, U32: 4, U16: 2, U8: 1, BOOL: 1, F8_E4M3: 1, F8_E5M2: 1,
};

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder('utf-8', { fatal: true });

// ---------------------------------------------------------------------------
// float16 and bfloat16

function roundHalfToEven(x) {
  // x >= 0 and far below 2^52, so x - floor(x) is exact.
  const floor = Math.floor(x);
  const fraction = x - floor;
  if (fraction > 0.5) return floor + 1;
  if (fraction < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

// Largest e with 2^e <= a, for a > 0 (Math.log2 alone can be off by one).
function exponentOf(a) {
  let e = Math.floor(Math.log2(a));
  while (2 ** e > a) e--;
  while (2 ** (e + 1) <= a) e++;
  return e;
}

// IEEE binary16 bits of a number, rounding the exact (float64) value to
// nearest, ties to even. float16: 1 sign, 5 exponent (bias 15), 10 mantissa
// bits; normals from 2^-14, subnormals are multiples of 2^-24, max 65504.
export function float16Bits(value) {
  if (Number.isNaN(value)) return 0x7e00;
  const sign = value < 0 || Object.is(value, -0) ? 0x8000 : 0;
  const a = Math.abs(value);
  if (a === Infinity) return sign | 0x7c00;
  if (a === 0) return sign;
  // The spacing of float16 values around a: 2^-24 below 2^-14 (subnormals),
  // else 2^(e-10). Dividing by a power of two is exact in float64.
  const quantum = a < 2 ** -14 ? 2 ** -24 : 2 ** (exponentOf(a) - 10);
  const rounded = roundHalfToEven(a / quantum) * quantum;
  // 65504 + half a step (65520) and above round to 65536: out of range.
  if (rounded >= 65536) return sign | 0x7c00;
  if (rounded < 2 ** -14) return sign | (rounded / 2 ** -24); // subnormal (1024 would be the smallest normal, and is encoded the same way)
  const e = exponentOf(rounded); // rounding may have carried into the next binade
  return sign | ((e + 15) << 10) | ((rounded / 2 ** e - 1) * 1024);
}

export function float16Value(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

const float32Scratch = new Float32Array(1);
const uint32Scratch = new Uint32Array(float32Scratch.buffer);

// bfloat16 is the top half of a float32: take the float32 bits and round
// the dropped 16 bits to nearest, ties to even (what torch does).
export function bfloat16Bits(value) {
  float32Scratch[0] = value;
  const bits = uint32Scratch[0];
  if (Number.isNaN(float32Scratch[0])) return ((bits >>> 16) & 0x8000) | 0x7fc0;
  const lsb = (bits >>> 16) & 1;
  return ((bits + 0x7fff + lsb) >>> 16) & 0xffff; // a carry into the exponent is right, up to infinity
}

export function bfloat16Value(bits) {
  uint32Scratch[0] = (bits << 16) >>> 0;
  return float32Scratch[0];
}

// The value a number becomes once stored in `dtype` (for building expected
// tensors without writing a file).
export function storedValue(dtype, value) {
  switch (dtype) {
    case 'F64': return value;
    case 'F32': return Math.fround(value);
    case 'F16': return float16Value(float16Bits(value));
    case 'BF16': return bfloat16Value(bfloat16Bits(value));
    default: throw new Error(`storedValue: not a float dtype: ${dtype}`);
  }
}

// ---------------------------------------------------------------------------
// Writing

function product(shape) {
  return shape.reduce((count, size) => count * size, 1);
}

// Little-endian bytes of `values` as `dtype` (F16/BF16 rounded to nearest even).
export function encodeValues(dtype, values) {
  const n = values.length;
  const bytes = new Uint8Array(n * dtypeSizes[dtype]);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < n; i++) {
    const v = values[i];
    switch (dtype) {
      case 'F64': view.setFloat64(i * 8, v, true); break;
      case 'F32': view.setFloat32(i * 4, v, true); break;
      case 'F16': view.setUint16(i * 2, float16Bits(v), true); break;
      case 'BF16': view.setUint16(i * 2, bfloat16Bits(v), true); break;
      case 'I64': view.setBigInt64(i * 8, BigInt(v), true); break;
      case 'U64': view.setBigUint64(i * 8, BigInt(v), true); break;
      case 'I32': view.setInt32(i * 4, v, true); break;
      case 'U32': view.setUint32(i * 4, v, true); break;
      case 'I16': view.setInt16(i * 2, v, true); break;
      case 'U16': view.setUint16(i * 2, v, true); break;
      case 'I8': view.setInt8(i, v); break;
      case 'U8': view.setUint8(i, v); break;
      case 'BOOL': view.setUint8(i, v ? 1 : 0); break;
      default: throw new Error(`writeSafetensors: cannot encode dtype ${dtype}`);
    }
  }
  return bytes;
}

function asEntryList(tensors) {
  if (Array.isArray(tensors)) return tensors;
  return Object.entries(tensors).map(([name, tensor]) => ({ name, ...tensor }));
}

// tensors: { name: { dtype, shape, values } } or [{ name, dtype, shape, values }].
// An entry may carry `bytes` (a Uint8Array) instead of values: written as is.
// options.metadata: string map for "__metadata__"; options.order: names in the
// order their data is laid out (default: as given); options.padTo8 (default
// true): pad the header with spaces to a multiple of 8 bytes.
export function writeSafetensors(tensors, { metadata, order, padTo8 = true } = {}) {
  let entries = asEntryList(tensors);
  if (order) {
    const byName = new Map(entries.map((entry) => [entry.name, entry]));
    entries = order.map((name) => {
      if (!byName.has(name)) throw new Error(`writeSafetensors: order names unknown tensor ${name}`);
      return byName.get(name);
    });
  }
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  const chunks = [];
  let offset = 0;
  for (const { name, dtype, shape, values, bytes } of entries) {
    if (name in header) throw new Error(`writeSafetensors: duplicate tensor ${name}`);
    let data = bytes;
    if (!data) {
      if (values.length !== product(shape)) {
        throw new Error(`writeSafetensors: ${name} has ${values.length} values for shape [${shape}]`);
      }
      data = encodeValues(dtype, values);
    }
    header[name] = { dtype, shape: [...shape], data_offsets: [offset, offset + data.length] };
    chunks.push(data);
    offset += data.length;
  }
  let json = JSON.stringify(header);
  if (padTo8) json += ' '.repeat((8 - (textEncoder.encode(json).length % 8)) % 8);
  const headerBytes = textEncoder.encode(json);
  const file = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(file.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  file.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const chunk of chunks) {
    file.set(chunk, at);
    at += chunk.length;
  }
  return file;
}

// ---------------------------------------------------------------------------
// Reading

function decodeValues(dtype, view, begin, count) {
  const values = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    switch (dtype) {
      case 'F64': values[i] = view.getFloat64(begin + i * 8, true); break;
      case 'F32': values[i] = view.getFloat32(begin + i * 4, true); break;
      case 'F16': values[i] = float16Value(view.getUint16(begin + i * 2, true)); break;
      case 'BF16': values[i] = bfloat16Value(view.getUint16(begin + i * 2, true)); break;
      case 'I64': values[i] = Number(view.getBigInt64(begin + i * 8, true)); break;
      case 'U64': values[i] = Number(view.getBigUint64(begin + i * 8, true)); break;
      case 'I32': values[i] = view.getInt32(begin + i * 4, true); break;
      case 'U32': values[i] = view.getUint32(begin + i * 4, true); break;
      case 'I16': values[i] = view.getInt16(begin + i * 2, true); break;
      case 'U16': values[i] = view.getUint16(begin + i * 2, true); break;
      case 'I8': values[i] = view.getInt8(begin + i); break;
      case 'U8': case 'BOOL': values[i] = view.getUint8(begin + i); break;
      default: return null; // F8 kinds: validated, not decoded
    }
  }
  return values;
}

function isCount(value) {
  return Number.isSafeInteger(value) && value >= 0;
}

// bytes -> { header (the parsed JSON), metadata, tensors: { name: { dtype,
// shape, dataOffsets, values: Float64Array } } }. Throws an Error naming the
// problem (and the tensor) for anything a loader must refuse.
export function readSafetensors(input) {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  if (bytes.length < 8) throw new Error(`safetensors: file of ${bytes.length} bytes is shorter than its 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getBigUint64(0, true);
  if (headerLength > BigInt(bytes.length - 8)) {
    throw new Error(`safetensors: header length ${headerLength} runs past the end of the ${bytes.length}-byte file`);
  }
  const dataStart = 8 + Number(headerLength);
  let header;
  try {
    header = JSON.parse(textDecoder.decode(bytes.subarray(8, dataStart)));
  } catch (error) {
    throw new Error(`safetensors: header is not JSON (${error.message})`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw new Error('safetensors: header is not a JSON object');
  }
  const dataBytes = bytes.length - dataStart;
  const tensors = {};
  let metadata = null;
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (entry === null || typeof entry !== 'object' || Object.values(entry).some((v) => typeof v !== 'string')) {
        throw new Error('safetensors: __metadata__ is not a map of strings');
      }
      metadata = entry;
      continue;
    }
    if (entry === null || typeof entry !== 'object') throw new Error(`safetensors: ${name}: entry is not an object`);
    const { dtype, shape, data_offsets: offsets } = entry;
    if (typeof dtype !== 'string') throw new Error(`safetensors: ${name}: no dtype`);
    if (!(dtype in dtypeSizes)) throw new Error(`safetensors: ${name}: unknown dtype ${dtype}`);
    if (!Array.isArray(shape)) throw new Error(`safetensors: ${name}: no shape`);
    if (!shape.every(isCount)) throw new Error(`safetensors: ${name}: shape [${shape}] has a negative or non-integer size`);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount)) {
      throw new Error(`safetensors: ${name}: data_offsets missing or not two non-negative integers`);
    }
    const [begin, end] = offsets;
    if (begin > end) throw new Error(`safetensors: ${name}: data_offsets [${begin}, ${end}] are reversed`);
    if (end > dataBytes) throw new Error(`safetensors: ${name}: data_offsets [${begin}, ${end}] lie outside the ${dataBytes} data bytes`);
    const count = product(shape);
    if (end - begin !== count * dtypeSizes[dtype]) {
      throw new Error(`safetensors: ${name}: shape [${shape}] of ${dtype} needs ${count * dtypeSizes[dtype]} bytes but data_offsets give ${end - begin}`);
    }
    tensors[name] = {
      dtype, shape: [...shape], dataOffsets: [begin, end],
      values: decodeValues(dtype, view, dataStart + begin, count),
    };
  }
  return { header, headerLength: Number(headerLength), metadata, tensors };
}

// ---------------------------------------------------------------------------
// Deliberately broken files

// Each kind, what is wrong with it, and which tensor (if any) the loader's
// error should name.
export const brokenKinds = [
  { kind: 'empty', description: 'zero bytes', tensor: null },
  { kind: 'truncated', description: 'fewer than the 8 bytes of the header length', tensor: null },
  { kind: 'header-past-end', description: 'the header length is larger than the rest of the file', tensor: null },
  { kind: 'header-not-json', description: 'the header bytes are not JSON', tensor: null },
  { kind: 'offsets-outside-data', description: "a tensor's data_offsets end past the data", tensor: 'broken.weight' },
  { kind: 'shape-mismatch', description: "a tensor's shape needs more bytes than its data_offsets give", tensor: 'broken.weight' },
  { kind: 'unknown-dtype', description: 'a tensor has a dtype safetensors does not define (F24)', tensor: 'broken.weight' },
  { kind: 'negative-shape', description: 'a tensor has negative sizes whose product still matches its bytes', tensor: 'broken.weight' },
  { kind: 'offsets-reversed', description: "a tensor's data_offsets have begin > end", tensor: 'broken.weight' },
  { kind: 'missing-offsets', description: 'a tensor entry has no data_offsets', tensor: 'broken.weight' },
];

// A valid little file, with the tensor that the header-level kinds break
// named broken.weight: 8 float32 values, shape [2, 4].
function defaultBrokenBase() {
  return [
    { name: 'ok.bias', dtype: 'F32', shape: [4], values: [0.5, -0.25, 1, 2] },
    { name: 'broken.weight', dtype: 'F32', shape: [2, 4], values: [1, 2, 3, 4, 5, 6, 7, 8] },
  ];
}

// Rewrites the header of a valid file (and pads it to keep the data aligned).
function withEditedHeader(file, edit) {
  const { header } = readSafetensors(file);
  const edited = edit(structuredClone(header));
  const oldLength = Number(new DataView(file.buffer, file.byteOffset).getBigUint64(0, true));
  const data = file.subarray(8 + oldLength);
  let json = JSON.stringify(edited);
  json += ' '.repeat((8 - (textEncoder.encode(json).length % 8)) % 8);
  const headerBytes = textEncoder.encode(json);
  const out = new Uint8Array(8 + headerBytes.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  out.set(data, 8 + headerBytes.length);
  return out;
}

// brokenSafetensors(kind, { tensors, target }) -> Uint8Array. `tensors` is the
// valid file to break (default: two small F32 tensors); `target` is the tensor
// the tensor-level kinds break (default: 'broken.weight').
export function brokenSafetensors(kind, { tensors = defaultBrokenBase(), target = 'broken.weight' } = {}) {
  const valid = writeSafetensors(tensors);
  const setHeaderLength = (file, length) => {
    new DataView(file.buffer, file.byteOffset).setBigUint64(0, BigInt(length), true);
    return file;
  };
  switch (kind) {
    case 'empty':
      return new Uint8Array(0);
    case 'truncated':
      return valid.slice(0, 5);
    case 'header-past-end':
      // Claims one byte more header than the whole file holds after the length.
      return setHeaderLength(valid.slice(), valid.length - 8 + 1);
    case 'header-not-json': {
      // Same length as the real header, so only the content is wrong.
      const headerLength = Number(new DataView(valid.buffer).getBigUint64(0, true));
      const file = valid.slice();
      const garbage = textEncoder.encode('{"broken.weight": {"dtype": "F32", "shape": [2, 4], oops');
      file.fill(0x20, 8, 8 + headerLength);
      file.set(garbage.subarray(0, headerLength), 8);
      return file;
    }
    case 'offsets-outside-data':
      return withEditedHeader(valid, (header) => {
        const dataBytes = valid.length - 8 - Number(new DataView(valid.buffer).getBigUint64(0, true));
        const [begin, end] = header[target].data_offsets;
        // Shift the tensor so it ends 16 bytes past the data; shape still matches the length.
        header[target].data_offsets = [dataBytes + 16 - (end - begin), dataBytes + 16];
        return header;
      });
    case 'shape-mismatch':
      return withEditedHeader(valid, (header) => {
        header[target].shape = [...header[target].shape, 2]; // twice the bytes it has
        return header;
      });
    case 'unknown-dtype':
      return withEditedHeader(valid, (header) => {
        header[target].dtype = 'F24';
        return header;
      });
    case 'negative-shape':
      return withEditedHeader(valid, (header) => {
        // [-1, -count]: the product of the sizes is still the right count,
        // so only a check of each size's sign catches it.
        header[target].shape = [-1, -product(header[target].shape)];
        return header;
      });
    case 'offsets-reversed':
      return withEditedHeader(valid, (header) => {
        const [begin, end] = header[target].data_offsets;
        header[target].data_offsets = [end, begin];
        return header;
      });
    case 'missing-offsets':
      return withEditedHeader(valid, (header) => {
        delete header[target].data_offsets;
        return header;
      });
    default:
      throw new Error(`brokenSafetensors: unknown kind ${kind}`);
  }
}
