// model.safetensors bytes -> its tensors, as views into those bytes.
//
// The format: an 8-byte little-endian header length, a JSON header naming each
// tensor's dtype, shape and byte range, then the data. Checked once on each
// side of the boundary:
//   here   the framing, and the JSON: UTF-8 (a fatal TextDecoder), RFC 8259
//          (JSON.parse), what JSON.parse lets through and the format does not
//          (a key twice in one object, a lone surrogate, deep nesting:
//          json-structure.js), and the structure (objects, strings, arrays of
//          integers), with the limits asked of the module
//   core   what the data depends on: dtypes, sizes, offsets inside the data
//          and matching the shapes, unique names (checkSafetensorsTable,
//          src/model/safetensors.cpp)
// The tensors are views into the caller's bytes: nothing is copied.
import { describe, formatBytes, limitsOf } from '../validation.js';
import { structureProblem } from './json-structure.js';

const WHERE = 'attnlens.loadModel';
// ignoreBOM: a byte order mark stays in the text, where JSON.parse refuses it.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

// A problem with the header; readSafetensors names the file.
class HeaderProblem extends Error {}

/** A file's bytes as a Uint8Array (ArrayBuffer, any typed array or DataView accepted). */
export function asBytes(value, label) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(`${WHERE}: ${label} must be the bytes of a .safetensors file (Uint8Array or ArrayBuffer), ` +
    `got ${describe(value)}`);
}

// The header's JSON value.
function parseHeader(bytes, maxNesting) {
  if (bytes.length === 0) throw new HeaderProblem('the safetensors header is empty');
  let text;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new HeaderProblem('the safetensors header is not valid UTF-8');
  }
  const start = text.search(/[^ \t\r\n]/);
  if (start < 0 || text[start] !== '{') {
    throw new HeaderProblem(`the safetensors header is not a JSON object: expected '{' at byte ${
      start < 0 ? bytes.length : start}`);
  }
  let header;
  try {
    header = JSON.parse(text);
  } catch (error) {
    throw new HeaderProblem(`the safetensors header is not valid JSON: ${error.message}`);
  }
  const problem = structureProblem(text, maxNesting);
  if (problem) throw new HeaderProblem(problem);
  return header;
}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

// One size of a shape or offset: a JSON number that is an integer (its sign
// and range are the core's to check).
function integer(value, what) {
  if (typeof value !== 'number') throw new HeaderProblem(`${what} must be an integer`);
  if (!Number.isInteger(value)) throw new HeaderProblem(`expected an integer, found ${value}`);
  return value;
}

function readEntry(entry) {
  const problem = (message) => new HeaderProblem(message);
  if (!isObject(entry)) throw problem('expected an object with dtype, shape and data_offsets');
  const { dtype, shape, data_offsets: offsets } = entry;
  if (dtype === undefined) throw problem('the entry has no dtype');
  if (typeof dtype !== 'string') throw problem('dtype must be a string');
  if (shape === undefined) throw problem('the entry has no shape');
  if (!Array.isArray(shape)) throw problem('shape must be an array of integers');
  if (offsets === undefined) throw problem('the entry has no data_offsets');
  if (!Array.isArray(offsets)) throw problem('data_offsets must be an array [begin, end]');
  if (offsets.length !== 2) throw problem('data_offsets must hold exactly two integers [begin, end]');
  return {
    dtype,
    shape: shape.map((size) => integer(size, 'shape dimension')),
    begin: integer(offsets[0], 'data offset'),
    end: integer(offsets[1], 'data offset'),
  };
}

// { tensors: [{ name, dtype, shape, begin, end }], metadata } of the parsed header.
function readTable(header) {
  const tensors = [];
  // No prototype, so a key like "__proto__" stays an ordinary key.
  const metadata = Object.create(null);
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (!isObject(entry)) throw new HeaderProblem('__metadata__ must be an object of strings');
      for (const [key, value] of Object.entries(entry)) {
        if (typeof value !== 'string') throw new HeaderProblem(`__metadata__ value of "${key}" must be a string`);
        metadata[key] = value;
      }
      continue;
    }
    try {
      tensors.push({ name, ...readEntry(entry) });
    } catch (problem) {
      problem.message = `tensor "${name.slice(0, 200)}": ${problem.message}`;
      throw problem;
    }
  }
  return { tensors, metadata };
}

/**
 * Reads one .safetensors file.
 * @param {object} module the Embind module (checkSafetensorsTable, limits)
 * @param {Uint8Array} bytes the whole file
 * @param {string} label how errors name the file, e.g. "weights[1]"
 * @returns {{ tensors: Array<{ name: string, dtype: string, shape: number[], data: Uint8Array }>,
 *            metadata: Record<string, string> }}
 */
export function readSafetensors(module, bytes, label) {
  if (bytes.length < 8) {
    throw new RangeError(`${WHERE}: ${label} is not a safetensors file: it has ${bytes.length} bytes, fewer than the ` +
      '8-byte header length');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (headerLength > bytes.length - 8) {
    throw new RangeError(`${WHERE}: ${label} is truncated or not a safetensors file: its header length ` +
      `(${headerLength} bytes) runs past the end of the file (${bytes.length} bytes)`);
  }
  // Headers of real checkpoints are kilobytes; the format caps them at 100 MB.
  const { maxSafetensorsHeaderBytes, maxSafetensorsNesting } = limitsOf(module);
  if (headerLength > maxSafetensorsHeaderBytes) {
    throw new RangeError(`${WHERE}: ${label} has a header of ${formatBytes(headerLength)}, more than the format's ` +
      `limit of ${formatBytes(maxSafetensorsHeaderBytes)}`);
  }
  const dataStart = 8 + headerLength;
  const dataBytes = bytes.length - dataStart;
  let table;
  try {
    table = readTable(parseHeader(bytes.subarray(8, dataStart), maxSafetensorsNesting));
  } catch (problem) {
    if (!(problem instanceof HeaderProblem)) throw problem;
    throw new RangeError(`${WHERE}: ${label} has a bad safetensors header: ${problem.message}`);
  }
  const error = module.checkSafetensorsTable({ headerBytes: headerLength, dataBytes, tensors: table.tensors });
  if (error) throw new RangeError(`${WHERE}: ${label} has a bad safetensors header: ${error}`);
  const tensors = table.tensors.map(({ name, dtype, shape, begin, end }) => ({
    name, dtype, shape, data: bytes.subarray(dataStart + begin, dataStart + end),
  }));
  return { tensors, metadata: table.metadata };
}
