// pytorch_model.bin bytes -> its tensors, in the shape readSafetensors gives
// them ({ name, dtype, shape, data }), so load-model.js loads either.
//
// The format (torch.save since PyTorch 1.6, torch/serialization.py): a zip
// archive (zip.js) of <archive>/data.pkl, a pickle of the state dict, and
// <archive>/data/<key>, the raw bytes of each storage, with <archive>/version
// and <archive>/byteorder beside them. The pickle rebuilds each tensor as
//   torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, backward_hooks)
// where storage is the persistent id ('storage', torch.FloatStorage, key, location, numel).
// pickle.js runs it with only those globals allowed (plus collections.OrderedDict
// and torch._utils._rebuild_parameter); each tensor's offset, sizes and strides
// are checked against its storage here, and it becomes a view of the
// storage's bytes (a copy only for non-contiguous or big-endian tensors).
import { Global, PickleProblem, unpickle } from './pickle.js';
import { readStoredZip, ZipProblem } from './zip.js';

const WHERE = 'attnlens.loadModel';
// data.pkl of a real checkpoint is kilobytes (about 130 bytes per tensor); the
// cap bounds the values a hostile pickle can make (one per byte at most).
const MAX_PICKLE_BYTES = 16 * 1024 * 1024;

// Storage classes -> the safetensors dtype names of their elements.
const STORAGES = {
  FloatStorage: ['F32', 4], HalfStorage: ['F16', 2], BFloat16Storage: ['BF16', 2], DoubleStorage: ['F64', 8],
  LongStorage: ['I64', 8], IntStorage: ['I32', 4], ShortStorage: ['I16', 2], CharStorage: ['I8', 1],
  ByteStorage: ['U8', 1], BoolStorage: ['BOOL', 1],
};

class BinProblem extends Error {}

// The formats of torch.save, by their first bytes (as torch.load tells them
// apart): a zip archive, "PK\x03\x04" (PyTorch >= 1.6), or the legacy
// format (PyTorch < 1.6), a pickle opening with PROTO 2 and LONG1 of the magic
// number 0x1950a86a20f9469cfc6c (10 little-endian bytes).
const ZIP = [0x50, 0x4b, 0x03, 0x04];
const LEGACY = [0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19];
const startsWith = (bytes, magic) => bytes.length >= magic.length && magic.every((byte, i) => bytes[i] === byte);

const REBUILD_TENSOR = { rebuild: 'tensor' };
const REBUILD_PARAMETER = { rebuild: 'parameter' };
const ORDERED_DICT = { rebuild: 'OrderedDict' };
const GLOBALS = new Map([
  ['collections.OrderedDict', ORDERED_DICT],
  ['torch._utils._rebuild_tensor_v2', REBUILD_TENSOR],
  ['torch._utils._rebuild_parameter', REBUILD_PARAMETER],
  ...Object.entries(STORAGES).map(([name, [dtype, size]]) => [`torch.${name}`, { dtype, size }]),
]);

class Storage {
  constructor(dtype, size, key, bytes) {
    Object.assign(this, { dtype, size, key, bytes });
  }
}
// A call of _rebuild_tensor_v2, read by readTensor once its name is known.
class Tensor {
  constructor(args) {
    this.args = args;
  }
}

const isCount = (value) => Number.isSafeInteger(value) && value >= 0;
const describeValue = (value) => (value === null ? 'None' : value instanceof Map ? 'a dict' : Array.isArray(value)
  ? 'a tuple or list' : value instanceof Global ? value.name : value instanceof Tensor ? 'a tensor'
    : value instanceof Storage ? 'a storage' : `a ${typeof value}`);

function sizes(value, what) {
  if (!Array.isArray(value) || !value.every(isCount)) {
    throw new BinProblem(`its ${what} is not a tuple of non-negative integers`);
  }
  return value;
}

// Copies the elements a strided view reads, in row-major order, swapping bytes if needed.
function gather(storage, offset, shape, stride, swap) {
  const { size, bytes } = storage;
  const count = shape.reduce((a, b) => a * b, 1);
  const out = new Uint8Array(count * size);
  const index = shape.map(() => 0);
  for (let i = 0; i < count; i++) {
    let element = offset;
    for (let d = 0; d < shape.length; d++) element += index[d] * stride[d];
    for (let b = 0; b < size; b++) out[i * size + b] = bytes[element * size + (swap ? size - 1 - b : b)];
    for (let d = shape.length - 1; d >= 0 && ++index[d] === shape[d]; d--) index[d] = 0;
  }
  return out;
}

// _rebuild_tensor_v2's arguments -> { dtype, shape, data }: a view of its
// storage's bytes, or a copy of the elements a strided view reads. Checked
// once the tensor's name is known (the state dict's key), so errors name it.
function readTensor(args, bigEndian) {
  const [storage, offset, shapeValue, strideValue, requiresGrad, hooks, metadata] = args;
  if (!(storage instanceof Storage)) throw new BinProblem(`its storage is ${describeValue(storage)}, not a storage`);
  if (!isCount(offset)) throw new BinProblem('its storage offset is not a non-negative integer');
  const shape = sizes(shapeValue, 'size');
  const stride = sizes(strideValue, 'stride');
  if (stride.length !== shape.length) throw new BinProblem(`it has ${shape.length} sizes but ${stride.length} strides`);
  if (typeof requiresGrad !== 'boolean') throw new BinProblem('its requires_grad is not a bool');
  if (!(hooks instanceof Map) || hooks.size) throw new BinProblem('it carries backward hooks');
  if (metadata !== undefined && (!(metadata instanceof Map) || metadata.size)) {
    throw new BinProblem('it carries metadata (conjugate or negative bits), which attnlens does not read');
  }
  const { dtype, size: elementBytes, bytes, key } = storage;
  const elements = bytes.length / elementBytes;
  const count = shape.reduce((a, b) => a * b, 1);
  if (!Number.isSafeInteger(count)) throw new BinProblem(`its size [${shape.join(', ')}] is too large`);
  if (count === 0) return { dtype, shape, data: new Uint8Array(0) };
  const last = shape.reduce((sum, size, d) => sum + (size - 1) * stride[d], offset);
  if (last >= elements) {
    throw new BinProblem(`its size [${shape.join(', ')}], stride [${stride.join(', ')}] at offset ${offset} read past ` +
      `the end of its storage "${key}" (${elements} elements)`);
  }
  let contiguous = true;
  for (let d = shape.length - 1, expected = 1; d >= 0; expected *= shape[d], d--) {
    if (shape[d] !== 1 && stride[d] !== expected) contiguous = false;
  }
  if (contiguous && !(bigEndian && elementBytes > 1)) {
    return { dtype, shape, data: bytes.subarray(offset * elementBytes, (offset + count) * elementBytes) };
  }
  // A broadcast view (a stride of 0) would be materialized larger than its storage.
  if (count > elements) {
    throw new BinProblem(`its size [${shape.join(', ')}] with stride [${stride.join(', ')}] repeats the elements of ` +
      `its storage "${key}"; attnlens reads tensors that are not broadcast views`);
  }
  return { dtype, shape, data: gather(storage, offset, shape, stride, bigEndian) };
}

function hooksFor(records, prefix) {
  const storages = new Map();
  return {
    globals: GLOBALS,
    call(global, args) {
      const kind = global.value.rebuild;
      if (kind === 'OrderedDict') {
        if (args.length) throw new BinProblem('collections.OrderedDict is called with arguments');
        return new Map();
      }
      if (kind === 'tensor') {
        if (args.length < 6 || args.length > 7) throw new BinProblem(`_rebuild_tensor_v2 takes 6 or 7 arguments, got ${args.length}`);
        return new Tensor(args);
      }
      if (kind === 'parameter') {
        if (!(args[0] instanceof Tensor)) throw new BinProblem('_rebuild_parameter is given something that is not a tensor');
        return args[0];
      }
      throw new BinProblem(`${global.name} is called, but it is not a function`);
    },
    // A dict's BUILD sets attributes (a state dict's _metadata): not needed, so ignored.
    build(object, state) {
      if (!(object instanceof Map) || !(state instanceof Map)) {
        throw new BinProblem(`BUILD sets the state of ${describeValue(object)}, which attnlens refuses`);
      }
    },
    persistent(pid) {
      if (!Array.isArray(pid) || pid[0] !== 'storage' || pid.length !== 5) {
        throw new BinProblem('a persistent id is not (\'storage\', type, key, location, numel)');
      }
      const [, type, key, location, numel] = pid;
      const kind = type instanceof Global ? type.value : null;
      if (!kind?.dtype) throw new BinProblem(`a storage's type is ${describeValue(type)}, not a storage class`);
      if (typeof key !== 'string' || typeof location !== 'string' || !isCount(numel)) {
        throw new BinProblem(`storage "${key}" has a bad key, location or element count`);
      }
      if (storages.has(key)) {
        const known = storages.get(key);
        if (known.dtype !== kind.dtype) throw new BinProblem(`storage "${key}" is read as both ${known.dtype} and ${kind.dtype}`);
        return known;
      }
      const bytes = records.get(`${prefix}data/${key}`);
      if (!bytes) throw new BinProblem(`storage "${key}" has no ${prefix}data/${key} in the archive`);
      if (bytes.length !== numel * kind.size) {
        throw new BinProblem(`storage "${key}" holds ${bytes.length} bytes, but ${numel} ${kind.dtype} elements need ` +
          `${numel * kind.size}`);
      }
      const storage = new Storage(kind.dtype, kind.size, key, bytes);
      storages.set(key, storage);
      return storage;
    },
  };
}

// The archive's folder ("pytorch_model/", "archive/"), its pickle and its byte order.
function archiveParts(records) {
  const first = records.keys().next().value ?? '';
  const slash = first.indexOf('/');
  if (slash < 0) throw new BinProblem('its first entry is not in a folder, as torch.save writes them');
  const prefix = first.slice(0, slash + 1);
  if (records.has(`${prefix}constants.pkl`)) {
    throw new BinProblem('it is a TorchScript archive (torch.jit.save), not a state dict saved by torch.save');
  }
  const pickle = records.get(`${prefix}data.pkl`);
  if (!pickle) throw new BinProblem(`it has no ${prefix}data.pkl, so it is not a state dict saved by torch.save`);
  if (pickle.length > MAX_PICKLE_BYTES) {
    throw new BinProblem(`its data.pkl has ${pickle.length} bytes, more than the ${MAX_PICKLE_BYTES} a state dict needs`);
  }
  const order = records.get(`${prefix}byteorder`);
  const byteOrder = order ? new TextDecoder().decode(order) : 'little';
  if (byteOrder !== 'little' && byteOrder !== 'big') throw new BinProblem(`its byteorder record is "${byteOrder.slice(0, 20)}"`);
  return { prefix, pickle, bigEndian: byteOrder === 'big' };
}

/**
 * Reads one pytorch_model.bin (a torch.save zip archive of a state dict).
 * @param {Uint8Array} bytes the whole file
 * @param {string} label how errors name the file, e.g. "weights[1]"
 * @returns {{ tensors: Array<{ name: string, dtype: string, shape: number[], data: Uint8Array }> }}
 */
export function readPytorchBin(bytes, label) {
  if (startsWith(bytes, LEGACY)) {
    throw new RangeError(`${WHERE}: ${label} is a pytorch_model.bin in the legacy format of torch.save before ` +
      'PyTorch 1.6, which attnlens does not read. Convert it with PyTorch 1.6 or later: ' +
      'torch.save(torch.load(path, weights_only=True), path) writes the zip format, or ' +
      'save_pretrained(folder, safe_serialization=True) in transformers writes model.safetensors');
  }
  if (!startsWith(bytes, ZIP)) {
    throw new RangeError(`${WHERE}: ${label} is neither a safetensors file nor a pytorch_model.bin (a zip archive)`);
  }
  const refused = (message) => new RangeError(`${WHERE}: ${label} (pytorch_model.bin) is refused: ${message}`);
  let state;
  let bigEndian;
  try {
    const records = readStoredZip(bytes);
    const parts = archiveParts(records);
    bigEndian = parts.bigEndian;
    state = unpickle(parts.pickle, hooksFor(records, parts.prefix));
    if (!(state instanceof Map)) throw new BinProblem(`its pickle holds ${describeValue(state)}, not a state dict`);
  } catch (problem) {
    if (problem instanceof ZipProblem) throw new RangeError(`${WHERE}: ${label} is not a readable pytorch_model.bin: ${problem.message}`);
    if (problem instanceof PickleProblem || problem instanceof BinProblem) throw refused(problem.message);
    throw problem;
  }
  const tensors = [];
  for (const [name, value] of state) {
    if (typeof name !== 'string') throw refused(`it has a key that is ${describeValue(name)}, not a string`);
    const shown = `"${name.slice(0, 200)}"`;
    if (!(value instanceof Tensor)) {
      throw refused(`${shown} is ${describeValue(value)}, not a tensor; attnlens reads state dicts of tensors ` +
        '(as save_pretrained writes them)');
    }
    try {
      tensors.push({ name, ...readTensor(value.args, bigEndian) });
    } catch (problem) {
      if (problem instanceof BinProblem) throw refused(`tensor ${shown}: ${problem.message}`);
      throw problem;
    }
  }
  return { tensors };
}
