// Argument validation shared by every public entry point: errors that name
// the argument, say what was expected and what came instead.

// ---- Limits ------------------------------------------------------------------

// Stack, static data and allocator overhead stay out of a call's budget.
export const WASM_MEMORY_RESERVE = 64 * 2 ** 20;
// size_t is 32 bits in wasm32; any single dimension beyond this cannot fit anyway.
export const MAX_DIMENSION = 2 ** 31 - 1;
// Text beyond this is refused before it is encoded and copied into WASM memory.
export const MAX_TEXT_LENGTH = 2 ** 20;
export const FLOAT32_MAX = 3.4028234663852886e38;
// Bound on every intermediate (dot products, scaled scores, projections): a
// quarter of float32's range leaves room for the softmax's x*s - max*s.
export const MAGNITUDE_LIMIT = FLOAT32_MAX / 4;

// ---- The module's own limits ----------------------------------------------------

const moduleLimits = new WeakMap();

/**
 * The module's sizes and limits, asked once per module (src/bindings/limits_bindings.cpp):
 * { maxMemoryBytes, panelWidth, maxSafetensorsHeaderBytes, maxSafetensorsNesting,
 * maxSentenceTokens, maxSentenceModelWidth, weightDtypes }. JavaScript does not write the core's constants down again.
 */
export function limitsOf(module) {
  let limits = moduleLimits.get(module);
  if (!limits) {
    limits = Object.freeze(module.limits());
    moduleLimits.set(module, limits);
  }
  return limits;
}

/** Bytes of WebAssembly memory a call may still allocate. */
export function availableMemory(module) {
  return limitsOf(module).maxMemoryBytes - WASM_MEMORY_RESERVE - module.heapBytesInUse();
}

/** "(the module is limited to 2 GiB)": the end of every out-of-memory message. */
export function memoryLimitText(module) {
  return `(the module is limited to ${limitsOf(module).maxMemoryBytes / 2 ** 30} GiB)`;
}

// ---- Checked results -------------------------------------------------------------

/**
 * The brand of a result whose numbers the library checked (every weight finite,
 * softmax rows): attnlens/views' fromExplanation and fromRun then check its
 * shape but not every weight again. A registered symbol, so the views know it
 * without importing the library; not enumerable, so it stays out of JSON,
 * Object.keys and deep equality.
 */
export const CHECKED = Symbol.for('attnlens.checked');

export function markChecked(result) {
  Object.defineProperty(result, CHECKED, { value: true });
  return result;
}

// ---- Validation ----------------------------------------------------------------

/** A short, readable description of any value for error messages. */
export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `Array(${value.length})`;
  if (ArrayBuffer.isView(value)) return `${value.constructor.name}(${value.length ?? value.byteLength})`;
  switch (typeof value) {
    case 'undefined': return 'undefined';
    case 'number': return Object.is(value, -0) ? '-0' : String(value);
    case 'bigint': return `${value}n`;
    case 'boolean': return String(value);
    case 'string': return value.length > 40 ? `a string of length ${value.length}` : JSON.stringify(value);
    case 'symbol': return 'a symbol';
    case 'function': return 'a function';
    default: return value.constructor?.name ? `a ${value.constructor.name}` : 'an object';
  }
}

export function absent(value) {
  return value === undefined || value === null;
}

// Index of the first NaN or +-Infinity, or -1. (v - v is NaN exactly for those.)
export function firstNonFinite(array) {
  for (let i = 0; i < array.length; i++) {
    const value = array[i];
    if (value - value !== 0) return i;
  }
  return -1;
}

export function maxAbs(array) {
  let max = 0;
  for (let i = 0; i < array.length; i++) max = Math.max(max, Math.abs(array[i]));
  return max;
}

export function formatBytes(bytes) {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(3)} GiB`;
  if (bytes >= 2 ** 20) return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  return `${Math.round(bytes)} bytes`;
}

// ---- Preallocated outputs (`into`) ---------------------------------------------

// Two views share memory when they lie in one buffer and their bytes overlap.
function overlapping(a, b) {
  return a.buffer === b.buffer &&
    a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength;
}

/**
 * Reads the `into` option: preallocated Float32Arrays the results are copied
 * into instead of fresh arrays, so a caller that runs the same shapes again
 * and again reuses memory whose pages are already mapped (a fresh 48 MB array
 * costs first-touch page faults on every call; see web/docs/performance.md).
 * `outputs` lists what the call produces: { name, length, lengthText (a
 * string or a function giving one), absentBecause (set when this call does
 * not produce that output, e.g. "weights is false") }. Returns { name: array }
 * for the arrays given; throws TypeError / RangeError naming into.<name>.
 */
export function readInto(where, into, outputs) {
  if (absent(into)) return {};
  const names = outputs.map((output) => output.name);
  if (typeof into !== 'object' || Array.isArray(into) || ArrayBuffer.isView(into)) {
    throw new TypeError(`${where}: into must be an object of preallocated Float32Arrays ` +
      `{ ${names.join(', ')} }, got ${describe(into)}`);
  }
  for (const key of Object.keys(into)) {
    if (!names.includes(key)) {
      throw new TypeError(`${where}: unknown key "${key}" in into; expected ${names.join(', ')}`);
    }
  }
  const arrays = {};
  for (const { name, length, lengthText, absentBecause } of outputs) {
    const value = into[name];
    if (absent(value)) continue;
    const text = typeof lengthText === 'function' ? lengthText() : lengthText;
    if (absentBecause) {
      throw new TypeError(`${where}: into.${name} was given, but this call returns no ${name}: ${absentBecause}`);
    }
    if (!(value instanceof Float32Array)) {
      throw new TypeError(`${where}: into.${name} must be a Float32Array of length ${text}, got ${describe(value)}`);
    }
    if (value.length !== length) {
      throw new RangeError(`${where}: into.${name} must be of length ${text}, got length ${value.length}`);
    }
    for (const [otherName, other] of Object.entries(arrays)) {
      if (overlapping(value, other)) {
        throw new RangeError(`${where}: into.${otherName} and into.${name} share memory; ` +
          'each output needs its own array');
      }
    }
    arrays[name] = value;
  }
  return arrays;
}

// Reads and checks the named fields of one options object, throwing TypeError
// (wrong kind of value) or RangeError (right kind, unusable value).
//
// With `deferFinite`, floats() checks type and length only and remembers the
// array; after the caller has copied the arrays into the WebAssembly heap,
// scanStaged() checks them there, one SIMD pass per array (about 10x faster
// than a JS loop over a Float32Array), in argument order and with the same
// messages. The same pass yields the largest magnitudes for bounded().
export class Checker {
  constructor(functionName, options, allowedKeys, { deferFinite = false } = {}) {
    this.where = `attnlens.${functionName}`;
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new TypeError(`${this.where}: expected an options object, got ${describe(options)}`);
    }
    for (const key of Object.keys(options)) {
      if (!allowedKeys.includes(key)) {
        throw new TypeError(`${this.where}: unknown option "${key}"; expected one of ${allowedKeys.join(', ')}`);
      }
    }
    this.options = options;
    this.pending = deferFinite ? [] : null;
    this.magnitudes = new Map();
  }

  // Largest |value| of a checked Float32Array (0 when it is absent).
  magnitude(name) {
    if (this.magnitudes.has(name)) return this.magnitudes.get(name);
    const value = this.options[name];
    return value instanceof Float32Array ? maxAbs(value) : 0;
  }

  // The deferred finiteness checks; `pointers` maps each deferred argument's
  // name to its copy in the heap (module.maxMagnitude returns max |x|, or
  // Infinity / NaN when some element is not finite); `measured`: ones the
  // core already found.
  scanStaged(module, pointers, measured = {}) {
    for (const name of this.pending) {
      const array = this.options[name];
      const max = name in measured ? measured[name] : module.maxMagnitude(pointers[name], array.length);
      if (!Number.isFinite(max)) throw this.nonFinite(name, array);
      this.magnitudes.set(name, max);
    }
  }

  nonFinite(name, array) {
    const bad = firstNonFinite(array);
    return this.rangeError(name, 'finite (no NaN or Infinity)', `${name}[${bad}] = ${array[bad]}`);
  }

  // Finite inputs can still overflow float32 inside the arithmetic (a dot
  // product of two 1e20 vectors is Infinity, and Infinity - Infinity is NaN).
  // `bound` is an upper bound of an intermediate's magnitude, computed from
  // the inputs' largest entries; `formula` says how, naming the arguments.
  bounded(names, formula, bound) {
    if (!(bound <= MAGNITUDE_LIMIT)) {
      throw new RangeError(`${this.where}: ${names} are too large for float32 arithmetic: ${formula} must be at ` +
        `most ${MAGNITUDE_LIMIT.toExponential(2)}, got ${bound.toExponential(2)}; scale the inputs down`);
    }
  }

  typeError(name, expected, value) {
    return new TypeError(`${this.where}: ${name} must be ${expected}, got ${describe(value)}`);
  }

  rangeError(name, expected, actual) {
    return new RangeError(`${this.where}: ${name} must be ${expected}, got ${actual}`);
  }

  // A positive integer dimension; `fallback` makes it optional.
  dimension(name, { fallback, max = MAX_DIMENSION } = {}) {
    const value = this.options[name];
    if (absent(value)) {
      if (fallback !== undefined) return fallback;
      throw this.typeError(name, 'a positive integer (it is required)', value);
    }
    if (typeof value !== 'number') throw this.typeError(name, 'a positive integer', value);
    if (!Number.isInteger(value) || value < 1 || value > max) {
      throw this.rangeError(name, `an integer from 1 to ${max}`, describe(value));
    }
    return value;
  }

  // A Float32Array of exactly `length` finite values. `lengthText` explains
  // where the length comes from, e.g. "m*dk = 3*4 = 12"; it may be a function
  // returning that text, so hot paths build strings only for errors.
  floats(name, length, lengthText, { optional = false } = {}) {
    const value = this.options[name];
    const text = () => (typeof lengthText === 'function' ? lengthText() : lengthText);
    if (absent(value)) {
      if (optional) return undefined;
      throw this.typeError(name, `a Float32Array of length ${text()} (it is required)`, value);
    }
    if (!(value instanceof Float32Array)) {
      throw this.typeError(name, `a Float32Array of length ${text()}`, value);
    }
    if (value.length !== length) {
      throw this.rangeError(name, `of length ${text()}`, `length ${value.length}`);
    }
    if (this.pending) this.pending.push(name);
    else if (firstNonFinite(value) >= 0) throw this.nonFinite(name, value);
    return value;
  }

  // An optional Uint8Array key mask (nonzero = keep) of exactly `length` entries.
  mask(name, length, lengthText) {
    const value = this.options[name];
    if (absent(value)) return undefined;
    if (!(value instanceof Uint8Array)) {
      throw this.typeError(name, `a Uint8Array of length ${lengthText} (1 = keep, 0 = mask)`, value);
    }
    if (value.length !== length) throw this.rangeError(name, `of length ${lengthText}`, `length ${value.length}`);
    return value;
  }

  flag(name, fallback) {
    const value = this.options[name];
    if (absent(value)) return fallback;
    if (typeof value !== 'boolean') throw this.typeError(name, 'a boolean', value);
    return value;
  }

  // A finite number >= 0 (or > 0 when `positive`) that stays finite as
  // float32, the precision the core computes in. Negative multipliers are
  // refused: the softmax subtracts the row maximum of the raw scores, which
  // is only the maximum of the scaled ones when the multiplier is >= 0.
  finite(name, { fallback, positive = false } = {}) {
    const value = this.options[name];
    if (absent(value)) return fallback;
    const expected = positive ? 'a finite number greater than 0' : 'a finite number >= 0';
    if (typeof value !== 'number') throw this.typeError(name, expected, value);
    const tooSmall = positive ? !(Math.fround(value) > 0) : value < 0;
    if (!Number.isFinite(value) || value > FLOAT32_MAX || tooSmall) {
      throw this.rangeError(name, `${expected} that fits float32`, describe(value));
    }
    return value;
  }

  integer(name, { fallback, min, max }) {
    const value = this.options[name];
    if (absent(value)) return fallback;
    if (typeof value !== 'number') throw this.typeError(name, `an integer from ${min} to ${max}`, value);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw this.rangeError(name, `an integer from ${min} to ${max}`, describe(value));
    }
    return value;
  }

  text(name, { optional = false } = {}) {
    const value = this.options[name];
    if (absent(value) && optional) return undefined;
    if (typeof value !== 'string') throw this.typeError(name, optional ? 'a string or undefined' : 'a string', value);
    if (value.length > MAX_TEXT_LENGTH) {
      throw this.rangeError(name, `at most ${MAX_TEXT_LENGTH} characters long`, `${value.length} characters`);
    }
    return value;
  }

  // dModel % heads must be 0: each head takes dModel / heads columns.
  divisible(dModel, heads) {
    if (dModel % heads !== 0) {
      throw new RangeError(`${this.where}: dModel must be divisible by heads, got dModel = ${dModel}, heads = ${heads}`);
    }
  }

  // scale / temperature multiplies every score in float32: it must stay finite.
  multiplier(scale, temperature) {
    if (!Number.isFinite(Math.fround(Math.fround(scale) / Math.fround(temperature)))) {
      throw new RangeError(`${this.where}: temperature must keep scale / temperature finite in float32, ` +
        `got scale = ${scale}, temperature = ${temperature}`);
    }
  }

  // Refuses a call whose buffers would not fit the WebAssembly memory.
  memory(module, bytes, sizesText) {
    const available = availableMemory(module);
    if (bytes > available) {
      if (typeof sizesText === 'function') sizesText = sizesText();
      throw new RangeError(`${this.where}: sizes ${sizesText} need about ${formatBytes(bytes)} of WebAssembly ` +
        `memory, more than the ${formatBytes(available)} available ${memoryLimitText(module)}`);
    }
  }

  // A last guard behind `bounded`: report a non-finite result as an error
  // rather than returning it.
  finiteResults(results, inputNames) {
    for (const [name, array] of Object.entries(results)) {
      const bad = firstNonFinite(array);
      if (bad >= 0) throw this.overflow(inputNames, name, array, bad);
    }
  }

  // finiteResults() for one array still in the heap: a SIMD scan there, and
  // the JS scan only to name the bad element. Callers use it for the output
  // and skip the weights, which are finite whenever `bounded` accepted the
  // inputs (finite scores give softmax weights in [0, 1]).
  finiteInHeap(module, pointer, count, name, inputNames, read) {
    if (Number.isFinite(module.maxMagnitude(pointer, count))) return;
    const array = read();
    throw this.overflow(inputNames, name, array, firstNonFinite(array));
  }

  overflow(inputNames, name, array, bad) {
    return new RangeError(`${this.where}: ${inputNames} must be small enough for float32 arithmetic: ` +
      `the result overflowed (${name}[${bad}] = ${array[bad]}); scale the inputs down`);
  }
}
