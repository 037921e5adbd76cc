// A small, independent writer of PyTorch checkpoints for tests (nothing shared
// with web/lib): what torch.save writes since PyTorch 1.6 (torch/serialization.py
// _save, caffe2/serialize/inline_container.cc), with no torch at hand.
//
//   zip archive, every entry stored (not compressed), each entry's data padded
//   to a multiple of 64 bytes by an "FB" extra field, zip64 end records:
//     <archive>/version      "3\n"
//     <archive>/data.pkl     the pickle of the state dict (protocol 2)
//     <archive>/byteorder    "little"
//     <archive>/data/<key>   each storage's raw little-endian bytes
//   The pickle, as CPython's pickler writes it (strings, globals and tuples
//   memoized with BINPUT, reused with BINGET): an OrderedDict (or a dict)
//   whose values are REDUCE(torch._utils._rebuild_tensor_v2, (storage,
//   offset, size, stride, requires_grad, OrderedDict())), with each storage
//   the persistent id ('storage', torch.FloatStorage, key, 'cpu', numel).
//
// torchSave(entries, options) -> Uint8Array: entries as tiny-checkpoints.mjs
//   writes them ([{ name, dtype, shape, values }]); options:
//     container: 'OrderedDict' (a module's state_dict, with its _metadata; the
//                default) or 'dict' (transformers' save_pretrained shards)
//     protocol:  2 (torch's default) or 4 (FRAME, SHORT_BINUNICODE, MEMOIZE, STACK_GLOBAL)
//     archive:   the folder inside the zip ('pytorch_model', from the file's name)
//     byteOrder: 'little', 'big' (storages written big-endian) or null (no record)
//     zip64:     true: every central directory entry carries zip64 sizes and offset
//     parameters: true: each tensor wrapped as an nn.Parameter (_rebuild_parameter), as
//                state_dict(keep_vars=True) saves them
//     layout:    name -> 'transposed' (stored as the transpose, read through
//                strides) | { sharesWith: name } (a view of that tensor's storage)
//                | { offset: n } (the tensor sits n elements into a larger storage)
// savePickle(value, protocol) and zipArchive(files, options) write the parts, for
// hand-made hostile files. Values for savePickle: strings, integers, booleans,
// null, { tuple: [...] }, { global: 'module.name' }, { reduce, args },
// { persistentId: {tuple} }, { dict: [[key, value]] }, { ordered: [[key, value]], state },
// { raw: [bytes] } (opcodes written as given).
import { dtypeSizes, encodeValues } from './safetensors.mjs';

const encoder = new TextEncoder();

// ---------------------------------------------------------------------------
// The pickle

const STORAGE_CLASSES = {
  F32: 'FloatStorage', F16: 'HalfStorage', BF16: 'BFloat16Storage', F64: 'DoubleStorage', I64: 'LongStorage',
  I32: 'IntStorage', I16: 'ShortStorage', I8: 'CharStorage', U8: 'ByteStorage', BOOL: 'BoolStorage',
};

class Pickler {
  constructor(protocol) {
    this.protocol = protocol;
    this.out = [];
    this.memo = new Map(); // key (a string's or global's text, or an object) -> memo index
  }

  bytes(...values) { this.out.push(...values); }
  u32(value) { this.bytes(value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, (value >>> 24) & 0xff); }

  // BINPUT / LONG_BINPUT (protocol 2) or MEMOIZE (4), as the pickler does after each new object.
  remember(key) {
    const index = this.memo.size;
    this.memo.set(key, index);
    if (this.protocol >= 4) this.bytes(0x94);
    else if (index < 256) this.bytes(0x71, index);
    else { this.bytes(0x72); this.u32(index); }
  }

  recall(key) {
    const index = this.memo.get(key);
    if (index < 256) this.bytes(0x68, index);
    else { this.bytes(0x6a); this.u32(index); }
  }

  string(text) {
    const key = `str:${text}`;
    if (this.memo.has(key)) return this.recall(key);
    const data = encoder.encode(text);
    if (this.protocol >= 4 && data.length < 256) this.bytes(0x8c, data.length);
    else { this.bytes(0x58); this.u32(data.length); }
    this.bytes(...data);
    this.remember(key);
  }

  integer(value) {
    if (value >= 0 && value < 256) return this.bytes(0x4b, value);
    if (value >= 0 && value < 65536) return this.bytes(0x4d, value & 0xff, value >> 8);
    if (value >= -(2 ** 31) && value < 2 ** 31) { this.bytes(0x4a); return this.u32(value); }
    // LONG1: the shortest little-endian two's complement.
    let big = BigInt(value);
    const digits = [];
    do {
      digits.push(Number(big & 0xffn));
      big >>= 8n;
    } while (!(big === 0n && !(digits.at(-1) & 0x80)) && !(big === -1n && digits.at(-1) & 0x80));
    this.bytes(0x8a, digits.length, ...digits);
  }

  global(name) {
    const key = `global:${name}`;
    if (this.memo.has(key)) return this.recall(key);
    const dot = name.lastIndexOf('.');
    const [module, attribute] = [name.slice(0, dot), name.slice(dot + 1)];
    if (this.protocol >= 4) {
      this.string(module);
      this.string(attribute);
      this.bytes(0x93);
    } else {
      this.bytes(0x63, ...encoder.encode(`${module}\n${attribute}\n`));
    }
    this.remember(key);
  }

  tuple(items) {
    if (items.length === 0) return this.bytes(0x29);
    if (items.length <= 3) {
      for (const item of items) this.save(item);
      this.bytes(0x84 + items.length); // TUPLE1..TUPLE3
    } else {
      this.bytes(0x28);
      for (const item of items) this.save(item);
      this.bytes(0x74);
    }
    this.remember({});
  }

  // EMPTY_DICT or OrderedDict(), then its items in one MARK ... SETITEMS batch (1000 at most each, as CPython does).
  setItems(pairs) {
    for (let i = 0; i < pairs.length; i += 1000) {
      const batch = pairs.slice(i, i + 1000);
      if (batch.length === 1) {
        this.save(batch[0][0]);
        this.save(batch[0][1]);
        this.bytes(0x73);
        continue;
      }
      this.bytes(0x28);
      for (const [key, value] of batch) {
        this.save(key);
        this.save(value);
      }
      this.bytes(0x75);
    }
  }

  save(value) {
    if (value === null) return this.bytes(0x4e);
    if (value === true) return this.bytes(0x88);
    if (value === false) return this.bytes(0x89);
    if (typeof value === 'string') return this.string(value);
    if (typeof value === 'number') return this.integer(value);
    if (value.raw) return this.bytes(...value.raw);
    if (value.tuple) return this.tuple(value.tuple);
    if (value.global) return this.global(value.global);
    if (value.persistentId) {
      this.save(value.persistentId);
      return this.bytes(0x51);
    }
    if (value.reduce) {
      this.save(value.reduce);
      this.save(value.args);
      this.bytes(0x52);
      return this.remember({});
    }
    if (value.dict) {
      this.bytes(0x7d);
      this.remember({});
      return this.setItems(value.dict);
    }
    if (value.ordered) {
      this.global('collections.OrderedDict');
      this.bytes(0x29, 0x52);
      this.remember({});
      this.setItems(value.ordered);
      if (value.state) {
        this.save(value.state);
        this.bytes(0x62);
      }
      return undefined;
    }
    throw new Error(`savePickle: cannot write ${JSON.stringify(value)}`);
  }
}

/** A pickle of `value` (see the header for the value forms), ending in STOP. */
export function savePickle(value, protocol = 2) {
  const pickler = new Pickler(protocol);
  pickler.bytes(0x80, protocol);
  pickler.save(value);
  pickler.bytes(0x2e);
  let body = Uint8Array.from(pickler.out);
  if (protocol >= 4) {
    // One FRAME around everything after PROTO, as the pickler does for a small pickle.
    const framed = new Uint8Array(body.length + 9);
    framed.set(body.subarray(0, 2));
    framed[2] = 0x95;
    new DataView(framed.buffer).setBigUint64(3, BigInt(body.length - 2), true);
    framed.set(body.subarray(2), 11);
    body = framed;
  }
  return body;
}

// ---------------------------------------------------------------------------
// The zip archive

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

class ByteWriter {
  constructor() { this.parts = []; this.length = 0; }
  push(bytes) { this.parts.push(bytes); this.length += bytes.length; }
  fields(spec) {
    // spec: [[bytes, value], ...] little-endian integers of 2, 4 or 8 bytes
    const size = spec.reduce((sum, [width]) => sum + width, 0);
    const out = new Uint8Array(size);
    const view = new DataView(out.buffer);
    let at = 0;
    for (const [width, value] of spec) {
      if (width === 2) view.setUint16(at, value, true);
      else if (width === 4) view.setUint32(at, value, true);
      else view.setBigUint64(at, BigInt(value), true);
      at += width;
    }
    this.push(out);
  }
  bytes() {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }
}

/**
 * A zip archive of stored entries, as PyTorchStreamWriter writes it.
 * files: [[name, bytes]]; options.zip64: zip64 extra fields in every central entry;
 * options.method: the compression method written in the headers (the data is still stored).
 */
export function zipArchive(files, { zip64 = false, method = 0 } = {}) {
  const out = new ByteWriter();
  const central = [];
  for (const [name, data] of files) {
    const nameBytes = encoder.encode(name);
    const offset = out.length;
    // The "FB" extra field pads so the data starts at a multiple of 64.
    const start = offset + 30 + nameBytes.length + 4;
    const padding = (64 - (start % 64)) % 64;
    const crc = crc32(data);
    out.fields([[4, 0x04034b50], [2, 20], [2, 0], [2, method], [2, 0], [2, 0x21], [4, crc], [4, data.length],
      [4, data.length], [2, nameBytes.length], [2, 4 + padding]]);
    out.push(nameBytes);
    out.push(Uint8Array.from([0x46, 0x42, padding & 0xff, padding >> 8, ...new Array(padding).fill(0x5a)]));
    out.push(data);
    central.push({ nameBytes, crc, size: data.length, offset });
  }
  const directoryOffset = out.length;
  for (const { nameBytes, crc, size, offset } of central) {
    const big = zip64 ? 0xffffffff : null;
    const extra = zip64 ? [[2, 0x0001], [2, 24], [8, size], [8, size], [8, offset]] : [];
    out.fields([[4, 0x02014b50], [2, 45], [2, zip64 ? 45 : 20], [2, 0], [2, method], [2, 0], [2, 0x21], [4, crc],
      [4, big ?? size], [4, big ?? size], [2, nameBytes.length], [2, zip64 ? 28 : 0], [2, 0], [2, 0], [2, 0], [4, 0],
      [4, big ?? offset]]);
    out.push(nameBytes);
    if (zip64) out.fields(extra);
  }
  const directorySize = out.length - directoryOffset;
  // The zip64 end record and its locator, then the classic end record.
  const zip64End = out.length;
  out.fields([[4, 0x06064b50], [8, 44], [2, 45], [2, 45], [4, 0], [4, 0], [8, files.length], [8, files.length],
    [8, directorySize], [8, directoryOffset]]);
  out.fields([[4, 0x07064b50], [4, 0], [8, zip64End], [4, 1]]);
  out.fields([[4, 0x06054b50], [2, 0], [2, 0], [2, files.length], [2, files.length], [4, directorySize],
    [4, directoryOffset], [2, 0]]);
  return out.bytes();
}

// ---------------------------------------------------------------------------
// torch.save of a state dict

// A storage's bytes: little-endian, or each element's bytes reversed for a big-endian file.
function encodeStorage(dtype, values, bigEndian) {
  const bytes = encodeValues(dtype, values);
  const size = dtypeSizes[dtype];
  if (bigEndian) for (let at = 0; at < bytes.length; at += size) bytes.subarray(at, at + size).reverse();
  return bytes;
}

const rowMajorStrides = (shape) => shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1));

// Each entry's storage (key, elements) and how its tensor views it.
function storagesOf(entries, layout) {
  const byName = new Map();
  const storages = [];
  for (const entry of entries) {
    const how = layout[entry.name];
    const values = Array.from(entry.values);
    if (how?.sharesWith) {
      const shared = byName.get(how.sharesWith);
      if (!shared) throw new Error(`torchSave: ${entry.name} shares a storage with ${how.sharesWith}, written later or never`);
      byName.set(entry.name, { storage: shared.storage, offset: shared.offset, stride: shared.stride });
      continue;
    }
    let view = { offset: 0, stride: rowMajorStrides(entry.shape) };
    let elements = values;
    if (how === 'transposed') {
      const [rows, columns] = entry.shape;
      elements = Array.from({ length: rows * columns }, (_, i) => values[(i % rows) * columns + Math.floor(i / rows)]);
      view = { offset: 0, stride: [1, rows] };
    } else if (how?.offset) {
      elements = [...new Array(how.offset).fill(0), ...values, 0];
      view = { offset: how.offset, stride: rowMajorStrides(entry.shape) };
    }
    const storage = { key: String(storages.length), dtype: entry.dtype, elements };
    storages.push(storage);
    byName.set(entry.name, { storage, ...view });
  }
  return { storages, byName };
}

/** pytorch_model.bin of `entries` (see the header). */
export function torchSave(entries, { container = 'OrderedDict', protocol = 2, archive = 'pytorch_model', byteOrder = 'little',
  zip64 = false, layout = {}, parameters = false } = {}) {
  const { storages, byName } = storagesOf(entries, layout);
  const items = entries.map((entry) => {
    const { storage, offset, stride } = byName.get(entry.name);
    const pid = { tuple: ['storage', { global: `torch.${STORAGE_CLASSES[storage.dtype]}` }, storage.key, 'cpu', storage.elements.length] };
    const tensor = {
      reduce: { global: 'torch._utils._rebuild_tensor_v2' },
      args: { tuple: [{ persistentId: pid }, offset, { tuple: entry.shape }, { tuple: stride }, parameters, { ordered: [] }] },
    };
    return [entry.name, parameters
      ? { reduce: { global: 'torch._utils._rebuild_parameter' }, args: { tuple: [tensor, true, { ordered: [] }] } } : tensor];
  });
  // A module's state_dict carries _metadata: each submodule's version.
  const metadata = { ordered: [['', { dict: [['version', 1]] }]] };
  const state = container === 'dict' ? { dict: items } : { ordered: items, state: { dict: [['_metadata', metadata]] } };
  const files = [[`${archive}/data.pkl`, savePickle(state, protocol)]];
  if (byteOrder) files.push([`${archive}/byteorder`, encoder.encode(byteOrder)]);
  for (const storage of storages) {
    files.push([`${archive}/data/${storage.key}`, encodeStorage(storage.dtype, storage.elements, byteOrder === 'big')]);
  }
  files.push([`${archive}/version`, encoder.encode('3\n')]);
  return zipArchive(files, { zip64 });
}
