// model.safetensors bytes -> its tensors, as views into those bytes.
//
// The format: an 8-byte little-endian header length, a JSON header naming each
// tensor's dtype, shape and byte range, then the data. The header is parsed
// and checked by the core (src/model/safetensors.cpp: nlohmann/json, strict,
// also fuzzed natively); this module checks the framing, copies the header
// into the heap, and slices the data. The tensors are views into the
// caller's bytes.
import { Heap } from '../heap.js';
import { describe, formatBytes, limitsOf } from '../validation.js';

const WHERE = 'attnlens.loadModel';

/** A file's bytes as a Uint8Array (ArrayBuffer, any typed array or DataView accepted). */
export function asBytes(value, label) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(`${WHERE}: ${label} must be the bytes of a .safetensors file (Uint8Array or ArrayBuffer), ` +
    `got ${describe(value)}`);
}

/**
 * Reads one .safetensors file.
 * @param {object} module the Embind module (parseSafetensorsHeader, limits)
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
  // Refused here before the copy (the core checks its limit again).
  const maxHeaderBytes = limitsOf(module).maxSafetensorsHeaderBytes;
  if (headerLength > maxHeaderBytes) {
    throw new RangeError(`${WHERE}: ${label} has a header of ${formatBytes(headerLength)}, more than the format's ` +
      `limit of ${formatBytes(maxHeaderBytes)}`);
  }
  const dataStart = 8 + headerLength;
  const heap = new Heap(module, WHERE);
  let parsed;
  try {
    const header = heap.copyIn(bytes.subarray(8, dataStart));
    parsed = module.parseSafetensorsHeader({ header, size: headerLength, dataBytes: bytes.length - dataStart });
  } finally {
    heap.release();
  }
  if (parsed.error) throw new RangeError(`${WHERE}: ${label} has a bad safetensors header: ${parsed.error}`);
  const tensors = parsed.tensors.map(({ name, dtype, shape, begin, end }) => ({
    name, dtype, shape, data: bytes.subarray(dataStart + begin, dataStart + end),
  }));
  return { tensors, metadata: parsed.metadata ?? {} };
}
