// model.run's `attention` option: which layers' and heads' weights a run
// returns ('all', the default; 'none'; or { layers?, heads?, pool? }), and the
// result's headWeights(layer, head, { pool? }), which computes any one head's weights
// of that run afterwards from what the model kept (valid until its next run).
// `pool` f gives each head's n x n weights as ceil(n/f) x ceil(n/f) blocks, each
// its f x f cells' largest weight (src/attention/pooled.hpp): what a view that
// draws fewer pixels than tokens shows, at a 1/f^2 of the bytes.
import { describe } from '../validation.js';

const CHOICES = "'all', 'none' or { layers?, heads?, pool? }";

/**
 * The pool factor `value` (1 when absent) for n tokens: an integer from 1 to n.
 * @param {string} name what the message calls it ('attention.pool', 'pool')
 */
export function readPool(where, value, n, name) {
  if (value === undefined) return 1;
  if (typeof value !== 'number') throw new TypeError(`${where}: ${name} must be an integer from 1 to ${n} (the number of tokens), got ${describe(value)}`);
  if (!Number.isInteger(value) || value < 1 || value > n) {
    throw new RangeError(`${where}: ${name} must be an integer from 1 to ${n} (the number of tokens), got ${describe(value)}`);
  }
  return value;
}

/** The side of a pooled head: ceil(n / pool) blocks. */
export const pooledSide = (n, pool) => Math.ceil(n / pool);

// Distinct integer indices from 0 to size - 1, ascending (the order the
// weights come in); every index when absent.
function readIndices(where, value, size, name) {
  if (value === undefined) return Array.from({ length: size }, (_, i) => i);
  if (!Array.isArray(value)) throw new TypeError(`${where}: attention.${name} must be an array of ${name} indices, got ${describe(value)}`);
  for (const index of value) {
    if (!Number.isInteger(index) || index < 0 || index >= size) {
      throw new RangeError(`${where}: attention.${name} must hold integers from 0 to ${size - 1}, got ${describe(index)}`);
    }
  }
  const sorted = [...value].sort((a, b) => a - b);
  if (sorted.some((index, i) => i > 0 && index === sorted[i - 1])) {
    throw new RangeError(`${where}: attention.${name} lists an index twice`);
  }
  return sorted;
}

/**
 * The layers and heads a run returns: { layers, heads, every } (every: all of both).
 * @param {string} where the call, for messages
 * @param {unknown} value the option
 * @param {{ layers: number, heads: number }} info the model's sizes
 */
export function readAttentionChoice(where, value, info, n) {
  if (value === undefined || value === 'all') {
    return { layers: readIndices(where, undefined, info.layers), heads: readIndices(where, undefined, info.heads), every: true, pool: 1 };
  }
  if (value === 'none') return { layers: [], heads: [], every: false, pool: 1 };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const Type = typeof value === 'string' ? RangeError : TypeError;
    throw new Type(`${where}: attention must be ${CHOICES}, got ${describe(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (key !== 'layers' && key !== 'heads' && key !== 'pool') {
      throw new TypeError(`${where}: unknown attention option "${key}"; expected layers, heads, pool`);
    }
  }
  const layers = readIndices(where, value.layers, info.layers, 'layers');
  const heads = readIndices(where, value.heads, info.heads, 'heads');
  const pool = readPool(where, value.pool, n, 'attention.pool');
  return { layers, heads, every: layers.length === info.layers && heads.length === info.heads, pool };
}

/** The flags the core reads: one byte per layer, then one per head (1 = chosen). */
export function choiceFlags(choice, info) {
  const flags = new Uint8Array(info.layers + info.heads);
  for (const layer of choice.layers) flags[layer] = 1;
  for (const head of choice.heads) flags[info.layers + head] = 1;
  return flags;
}

/**
 * A run result's headWeights(layer, head, { pool }?): n x n weights of that run
 * (ceil(n/pool) squared, pooled), from the queries and keys the model kept.
 * An Error once the model ran again, dropped its cache or was disposed.
 */
export function headWeightsOf({ module, handle, info, n, generation, alive, Heap }) {
  const where = 'model.run result headWeights';
  return (layer, head, options = {}) => {
    alive(where);
    if (handle.cacheGeneration() !== generation) {
      throw new Error(`${where}: this run's queries and keys are gone (the model ran again, or dropCache was called); ` +
        "headWeights is valid until the model's next run");
    }
    for (const [value, size, name] of [[layer, info.layers, 'layer'], [head, info.heads, 'head']]) {
      if (!Number.isInteger(value) || value < 0 || value >= size) {
        throw new RangeError(`${where}: ${name} must be an integer from 0 to ${size - 1}, got ${describe(value)}`);
      }
    }
    if (options === null || typeof options !== 'object') throw new TypeError(`${where}: options must be an object { pool? }, got ${describe(options)}`);
    for (const key of Object.keys(options)) {
      if (key !== 'pool') throw new TypeError(`${where}: unknown option "${key}"; expected pool`);
    }
    const pool = readPool(where, options.pool, n, 'pool');
    const count = pooledSide(n, pool) ** 2;
    const heap = new Heap(module, where);
    try {
      const out = heap.floats(count);
      const error = handle.headWeights(layer, head, pool, out);
      if (error) throw new RangeError(`${where}: ${error}`);
      return heap.readFloats(out, count);
    } finally {
      heap.release();
    }
  };
}
