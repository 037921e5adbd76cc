// model.run's `attention` option: which layers' and heads' weights a run
// returns ('all', the default; 'none'; or { layers?, heads? }), and the
// result's headWeights(layer, head) and computeLogits(which), which compute
// any one head's weights, or the logits, of that run afterwards from what the
// model kept (valid until its next run).
import { describe } from '../validation.js';

const CHOICES = "'all', 'none' or { layers?, heads? }";

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
export function readAttentionChoice(where, value, info) {
  if (value === undefined || value === 'all') {
    return { layers: readIndices(where, undefined, info.layers), heads: readIndices(where, undefined, info.heads), every: true };
  }
  if (value === 'none') return { layers: [], heads: [], every: false };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const Type = typeof value === 'string' ? RangeError : TypeError;
    throw new Type(`${where}: attention must be ${CHOICES}, got ${describe(value)}`);
  }
  for (const key of Object.keys(value)) {
    if (key !== 'layers' && key !== 'heads') throw new TypeError(`${where}: unknown attention option "${key}"; expected layers, heads`);
  }
  const layers = readIndices(where, value.layers, info.layers, 'layers');
  const heads = readIndices(where, value.heads, info.heads, 'heads');
  return { layers, heads, every: layers.length === info.layers && heads.length === info.heads };
}

/** The flags the core reads: one byte per layer, then one per head (1 = chosen). */
export function choiceFlags(choice, info) {
  const flags = new Uint8Array(info.layers + info.heads);
  for (const layer of choice.layers) flags[layer] = 1;
  for (const head of choice.heads) flags[info.layers + head] = 1;
  return flags;
}

/**
 * A run result's methods that read what the model kept of that run, valid until its next run (an Error
 * once the model ran again, dropped its cache or was disposed): headWeights(layer, head), any head's
 * n x n weights, from the kept queries and keys; computeLogits(which), the logits of the last position
 * ('last') or of every one ('all'), from the kept last-layer rows: the bits run({ logits: which }) gives.
 */
export function keptRunMethods({ module, handle, info, n, generation, alive, Heap, checkFinite }) {
  const requireKept = (where, what, name) => {
    alive(where);
    if (handle.cacheGeneration() !== generation) {
      throw new Error(`${where}: this run's ${what} are gone (the model ran again, or dropCache was called); ` +
        `${name} is valid until the model's next run`);
    }
  };
  // Runs `fill(out)` into `count` floats of the heap; the C++ error, if any, as a RangeError.
  const compute = (where, count, fill) => {
    const heap = new Heap(module, where);
    try {
      const out = heap.floats(count);
      const error = fill(out);
      if (error) throw new RangeError(`${where}: ${error}`);
      return { out: heap.readFloats(out, count), finite: Number.isFinite(module.maxMagnitude(out, count)) };
    } finally {
      heap.release();
    }
  };
  function headWeights(layer, head) {
    const where = 'model.run result headWeights';
    requireKept(where, 'queries and keys', 'headWeights');
    for (const [value, size, name] of [[layer, info.layers, 'layer'], [head, info.heads, 'head']]) {
      if (!Number.isInteger(value) || value < 0 || value >= size) {
        throw new RangeError(`${where}: ${name} must be an integer from 0 to ${size - 1}, got ${describe(value)}`);
      }
    }
    return compute(where, n * n, (out) => handle.headWeights(layer, head, out)).out;
  }
  function computeLogits(which = 'last') {
    const where = 'model.run result computeLogits';
    requireKept(where, 'last-layer rows', 'computeLogits');
    if (which !== 'last' && which !== 'all') {
      throw new (typeof which === 'string' ? RangeError : TypeError)(`${where}: which must be 'last' or 'all', got ${describe(which)}`);
    }
    const from = which === 'last' ? n - 1 : 0;
    const { out, finite } = compute(where, (n - from) * info.vocabSize, (pointer) => handle.keptLogits(from, pointer));
    if (!finite) checkFinite(where, [['logits', out]]);
    return out;
  }
  return { headWeights, computeLogits };
}
