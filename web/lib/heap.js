// WebAssembly heap allocations of one call, and the clock calls are timed with.
import { formatBytes } from './validation.js';

// ---- WebAssembly memory --------------------------------------------------------

const CACHE_LINE = 64;

// The allocations of one call. `release()` frees them all; callers use
// try/finally so that no error path leaks.
export class Heap {
  constructor(module, where) {
    this.module = module;
    this.where = where;
    this.pointers = [];
  }

  // On a cache line of its own, as the core's threads write it (performance.md, round 15).
  allocate(bytes) {
    const pointer = this.module._malloc(Math.max(bytes, 1) + CACHE_LINE - 1);
    if (!pointer) {
      throw new RangeError(`${this.where}: out of WebAssembly memory allocating ${formatBytes(bytes)}`);
    }
    this.pointers.push(pointer);
    return Math.ceil(pointer / CACHE_LINE) * CACHE_LINE;
  }

  // Copies an optional typed array in; 0 (null in C++) when absent.
  // HEAP views are re-read after every allocation: memory growth replaces them.
  copyIn(array) {
    if (!array) return 0;
    const pointer = this.allocate(array.byteLength);
    this.write(pointer, array);
    return pointer;
  }

  // Copies a typed array to memory allocated before (none when absent).
  write(pointer, array) {
    if (!array) return;
    if (array instanceof Float32Array) this.module.HEAPF32.set(array, pointer >>> 2);
    else this.module.HEAPU8.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), pointer);
  }

  floats(count) {
    return this.allocate(count * 4);
  }

  // A copy of `count` floats at `pointer`: into `target` when the caller gave
  // one (the `into` option: its pages are already mapped, so the copy is a
  // plain memcpy), else into a fresh array.
  readFloats(pointer, count, target) {
    const start = pointer >>> 2;
    if (!target) return this.module.HEAPF32.slice(start, start + count);
    target.set(this.module.HEAPF32.subarray(start, start + count));
    return target;
  }

  release() {
    for (const pointer of this.pointers) this.module._free(pointer);
    this.pointers.length = 0;
  }
}

// A fresh Float32Array with its pages mapped (a write to each 4 KB faults
// it in): made while other threads work, it takes a copy at memcpy speed.
export function mappedFloats(count) {
  const array = new Float32Array(count);
  for (let i = 0; i < count; i += 1024) array[i] = 0;
  return array;
}

export function now() {
  return globalThis.performance?.now() ?? Date.now();
}
