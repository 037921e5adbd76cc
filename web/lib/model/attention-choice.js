// model.run's `attention` option: which layers' and heads' weights a run
// returns ('all', the default; 'none'; or { layers?, heads?, pool?, valueWeighted? }), and the
// result's headWeights(layer, head, { pool?, valueWeighted? }), layerWeights(layer, { heads?, pool?,
// valueWeighted? }) and computeLogits(which), which compute any one head's weights, several heads of
// a layer, or the logits of chosen positions, of that run afterwards from what the model kept (valid until its next run).
// `valueWeighted: true` gives value-weighted attention instead of the weights
// (src/analysis/kept_value_weighted.hpp: from the kept queries, keys and values,
// a head at a time; no second forward pass, no other layer's or head's n x n).
// `pool` f gives each head's n x n weights as ceil(n/f) x ceil(n/f) blocks, each
// its f x f cells' largest weight (src/attention/pooled.hpp): what a view that
// draws fewer pixels than tokens shows, at a 1/f^2 of the bytes.
import { availableMemory, describe, formatBytes } from '../validation.js';

const CHOICES = "'all', 'none' or { layers?, heads?, pool?, valueWeighted? }";
const CHOICE_KEYS = ['layers', 'heads', 'pool', 'valueWeighted'];

/**
 * The pool factor `value` (1 when absent) for n tokens: an integer from 1 to n.
 * @param {string} name what the message calls it ('attention.pool', 'pool')
 * @param {string} [what] what n is, for the message
 */
export function readPool(where, value, n, name, what = 'the number of tokens') {
  if (value === undefined) return 1;
  const Type = typeof value === 'number' ? RangeError : TypeError;
  if (!Number.isInteger(value) || value < 1 || value > n) {
    throw new Type(`${where}: ${name} must be an integer from 1 to ${n} (${what}), got ${describe(value)}`);
  }
  return value;
}

// The valueWeighted option: true or false (false when absent).
function readValueWeighted(where, value, name) {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new TypeError(`${where}: ${name} must be true or false, got ${describe(value)}`);
  return value;
}

/** The side of a pooled head: ceil(n / pool) blocks. */
export const pooledSide = (n, pool) => Math.ceil(n / pool);

// Distinct integer indices from 0 to size - 1, ascending (the order the
// weights come in); every index when absent. `option`: what messages call it; `of`: what size counts.
function readIndices(where, value, size, name, of = '', option = `attention.${name}`) {
  if (value === undefined) return Array.from({ length: size }, (_, i) => i);
  if (!Array.isArray(value)) throw new TypeError(`${where}: ${option} must be an array of ${name} indices, got ${describe(value)}`);
  for (const index of value) {
    if (!Number.isInteger(index) || index < 0 || index >= size) {
      throw new RangeError(`${where}: ${option} must hold integers from 0 to ${size - 1}${of}, got ${describe(index)}`);
    }
  }
  const sorted = [...value].sort((a, b) => a - b);
  if (sorted.some((index, i) => i > 0 && index === sorted[i - 1])) {
    throw new RangeError(`${where}: ${option} lists an index twice`);
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
    return { layers: readIndices(where, undefined, info.layers), heads: readIndices(where, undefined, info.heads), every: true, pool: 1,
      valueWeighted: false };
  }
  if (value === 'none') return { layers: [], heads: [], every: false, pool: 1, valueWeighted: false };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const Type = typeof value === 'string' ? RangeError : TypeError;
    throw new Type(`${where}: attention must be ${CHOICES}, got ${describe(value)}`);
  }
  const unknown = Object.keys(value).find((key) => !CHOICE_KEYS.includes(key));
  if (unknown !== undefined) throw new TypeError(`${where}: unknown attention option "${unknown}"; expected ${CHOICE_KEYS.join(', ')}`);
  const layers = readIndices(where, value.layers, info.layers, 'layers');
  const heads = readIndices(where, value.heads, info.heads, 'heads');
  const pool = readPool(where, value.pool, n, 'attention.pool');
  const valueWeighted = readValueWeighted(where, value.valueWeighted, 'attention.valueWeighted');
  return { layers, heads, every: layers.length === info.layers && heads.length === info.heads, pool, valueWeighted };
}

const KINDS = ['encoder', 'decoder', 'cross'];
const SEQ2SEQ_CHOICES = "'all', 'none' or { kinds?, layers?, heads?, pool? }";
const SEQ2SEQ_CHOICE_KEYS = ['kinds', 'layers', 'heads', 'pool'];

/**
 * An encoder-decoder's attention option for n source and m target tokens: which kinds ('encoder',
 * 'decoder', 'cross'; every one when absent), and of each the same layers (indices into every chosen
 * kind's stack; each its every layer when absent) and heads, pooled by `pool` (1 to max(n, m)).
 * @returns {{ kinds: string[], layers: { encoder: number[], decoder: number[], cross: number[] }, heads: number[], pool: number, every: boolean }}
 *   every: every kind's every layer and head in full (the core's fast path: no flags)
 */
export function readSeq2seqChoice(where, value, info, n, m) {
  const stack = (kind) => (kind === 'encoder' ? info.layers : info.decoderLayers);
  const choose = (kinds, layers, heads, pool) => ({
    kinds,
    layers: Object.fromEntries(KINDS.map((kind) => [kind, kinds.includes(kind) ? layers ?? readIndices(where, undefined, stack(kind)) : []])),
    heads, pool, every: kinds.length === KINDS.length && layers === undefined && heads.length === info.heads && pool === 1,
  });
  if (value === undefined || value === 'all') return choose(KINDS, undefined, readIndices(where, undefined, info.heads), 1);
  if (value === 'none') return choose([], undefined, [], 1);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new (typeof value === 'string' ? RangeError : TypeError)(`${where}: attention must be ${SEQ2SEQ_CHOICES}, got ${describe(value)}`);
  }
  if (value.valueWeighted !== undefined) {
    throw new TypeError(`${where}: attention.valueWeighted is not offered by an encoder-decoder's run; model.analyze gives ` +
      "each kind's value-weighted attention");
  }
  const unknown = Object.keys(value).find((key) => !SEQ2SEQ_CHOICE_KEYS.includes(key));
  if (unknown !== undefined) throw new TypeError(`${where}: unknown attention option "${unknown}"; expected ${SEQ2SEQ_CHOICE_KEYS.join(', ')}`);
  let kinds = KINDS;
  if (value.kinds !== undefined) {
    if (!Array.isArray(value.kinds) || value.kinds.some((kind) => !KINDS.includes(kind))) {
      throw new (Array.isArray(value.kinds) ? RangeError : TypeError)(`${where}: attention.kinds must be an array of ` +
        `'encoder', 'decoder' and 'cross', got ${describe(value.kinds)}`);
    }
    if (new Set(value.kinds).size !== value.kinds.length) throw new RangeError(`${where}: attention.kinds lists a kind twice`);
    kinds = KINDS.filter((kind) => value.kinds.includes(kind));
  }
  // Layers index every chosen kind's stack: below the shortest of them.
  const shortest = Math.min(...kinds.map(stack));
  const layers = value.layers === undefined ? undefined
    : readIndices(where, value.layers, shortest, 'layers', kinds.length > 0 ? ` (the layers of ${kinds.join(', ')})` : '');
  const heads = readIndices(where, value.heads, info.heads, 'heads');
  const pool = readPool(where, value.pool, Math.max(n, m), 'attention.pool', 'the number of source or target tokens, whichever is more');
  return choose(kinds, layers, heads, pool);
}

/** The flags the core reads: one byte per layer, then one per head (1 = chosen). */
export function choiceFlags(choice, info) {
  const flags = new Uint8Array(info.layers + info.heads);
  for (const layer of choice.layers) flags[layer] = 1;
  for (const head of choice.heads) flags[info.layers + head] = 1;
  return flags;
}

/**
 * The floats the core allocates besides its output to give value-weighted attention of n tokens
 * (kept_value_weighted.cpp): W_O unpacked, the layer's kept values unpacked from their panels, one
 * head's v W_O rows, its norms, W_O^h packed, and one head's n x n to pool (about: the packing rounds up).
 */
export function valueWeightedScratch(info, n) {
  const { dModel, heads, kvHeads, headWidth } = info;
  return heads * headWidth * dModel + n * kvHeads * headWidth + n * dModel + n + headWidth * (dModel + 16) + n * n;
}

/**
 * Writes the value-weighted attention of `choice`'s layers and heads (each pooled by choice.pool) of
 * the run the model keeps to `out`, a heap address: [chosen layer][chosen head][query][key], each
 * layer one call of the core (W_O unpacked once per layer).
 */
export function writeValueWeighted({ handle, info, n }, heap, choice, out, where) {
  const headFlags = choice.heads.length === info.heads ? 0 : heap.copyIn(choiceFlags(choice, info).subarray(info.layers));
  const layerBytes = 4 * choice.heads.length * pooledSide(n, choice.pool) ** 2;
  choice.layers.forEach((layer, index) => {
    const error = handle.valueWeighted(layer, headFlags, choice.pool, out + index * layerBytes);
    if (error) throw new RangeError(`${where}: ${error}`);
  });
}

/**
 * What a run result's methods share to read what the model kept of that run (either kind of model):
 * requireKept(where, what, name), an Error once the model ran again, dropped its cache or was disposed;
 * compute(where, count, fill, { scan }), which runs `fill(out, heap)` into `count` floats of the heap (the
 * C++ error, if any, as a RangeError; `scan`: also one SIMD scan for NaN/Infinity, `finite`, for outputs
 * that can overflow, logits); and readOptions(where, options, keys), an options object of those keys.
 */
export function keptReader({ module, handle, generation, alive, Heap }) {
  const requireKept = (where, what, name) => {
    alive(where);
    if (handle.cacheGeneration() !== generation) {
      throw new Error(`${where}: this run's ${what} are gone (the model ran again, or dropCache was called); ` +
        `${name} is valid until the model's next run`);
    }
  };
  const compute = (where, count, fill, { scan = false } = {}) => {
    const heap = new Heap(module, where);
    try {
      const out = heap.floats(count);
      const error = fill(out, heap);
      if (error) throw new RangeError(`${where}: ${error}`);
      return { out: heap.readFloats(out, count), finite: !scan || Number.isFinite(module.maxMagnitude(out, count)) };
    } finally {
      heap.release();
    }
  };
  const readOptions = (where, options, keys) => {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`${where}: options must be an object { ${keys.map((key) => `${key}?`).join(', ')} }, got ${describe(options)}`);
    }
    for (const key of Object.keys(options)) {
      if (!keys.includes(key)) throw new TypeError(`${where}: unknown option "${key}"; expected ${keys.join(', ')}`);
    }
    return options;
  };
  return { requireKept, compute, readOptions };
}

/**
 * Positions of a sequence of n tokens, as an Int32Array in the order given (repeats allowed): `value`, a
 * non-empty array or typed array of integers from 0 to n - 1, else an Error naming `name` and the
 * position (`of`: what n counts). computeLogits' { positions } and model.analyze's logitLens.positions.
 */
export function readPositions(where, value, n, name, of) {
  if (!(Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView))) || value.length === 0) {
    throw new TypeError(`${where}: ${name} must be a non-empty array of positions from 0 to ${n - 1}, got ${describe(value)}`);
  }
  Array.prototype.forEach.call(value, (position, index) => readIndex(where, position, n, `${name}[${index}]`, of));
  return Int32Array.from(value);
}

/** An index from 0 to size - 1 of a headWeights call, or a RangeError naming it (`of`: what size counts). */
export function readIndex(where, value, size, name, of = '') {
  if (!Number.isInteger(value) || value < 0 || value >= size) {
    throw new RangeError(`${where}: ${name} must be an integer from 0 to ${size - 1}${of}, got ${describe(value)}`);
  }
  return value;
}

/**
 * Writes `heads` of `layer` of the run the model keeps (each pooled by `pool`, `size` floats) one after
 * another from `out`, a heap address: '' or the core's problem.
 */
export function writeHeadWeights(handle, layer, heads, pool, out, size) {
  for (const [index, head] of heads.entries()) {
    const error = handle.headWeights(-1, layer, head, pool, out + 4 * index * size);
    if (error) return error;
  }
  return '';
}

/**
 * Gives `result` (a run's, or a causal model's analysis through the cache: the run the model now keeps,
 * of n tokens) the methods that read what the model kept of that run, valid until its next run (an Error
 * once the model ran again, dropped its cache or was disposed), not enumerable, so that the result stays
 * plain data that postMessage and structured clone copy (they skip them; a function would throw). `owner`
 * names the result in their errors ('model.run result', 'model.analyze result'): headWeights(layer, head, { pool?,
 * valueWeighted? }), any head's n x n weights (ceil(n/pool) squared, pooled; value-weighted attention
 * with valueWeighted), from the kept queries, keys and values; computeLogits(which), the logits of the
 * last position ('last'), of every one ('all') or of chosen ones ({ positions }), from the kept last-layer
 * rows: each row the bits run({ logits: 'all' }) gives for its position; layerWeights(layer, { heads?, pool?, valueWeighted? }), the chosen heads
 * of one layer in one call ([chosen head][query][key], heads ascending, each what headWeights gives;
 * value-weighted, W_O unpacked once for the layer rather than once per head).
 */
export function withKeptRunMethods(result, { module, handle, info, n, generation, alive, Heap, checkFinite, owner = 'model.run result' }) {
  const { requireKept, compute, readOptions } = keptReader({ module, handle, generation, alive, Heap });
  // The pool and valueWeighted options of headWeights or layerWeights, its keys among `keys`.
  const readHeadOptions = (where, options, keys) => {
    readOptions(where, options, keys);
    return { pool: readPool(where, options.pool, n, 'pool'), valueWeighted: readValueWeighted(where, options.valueWeighted, 'valueWeighted') };
  };
  // `heads` (ascending) of `layer`, each pooledSide(n, pool) squared: weights a head at a time, value-weighted a layer at a time.
  const layerHeads = (where, layer, heads, { pool, valueWeighted }) => {
    const size = pooledSide(n, pool) ** 2;
    if (heads.length === 0) return new Float32Array(0);
    return compute(where, heads.length * size, (out, heap) => {
      if (valueWeighted) {
        writeValueWeighted({ handle, info, n }, heap, { layers: [layer], heads, pool }, out, where);
        return '';
      }
      return writeHeadWeights(handle, layer, heads, pool, out, size);
    }).out;
  };
  function headWeights(layer, head, options = {}) {
    const where = `${owner} headWeights`;
    requireKept(where, 'queries and keys', 'headWeights');
    readIndex(where, layer, info.layers, 'layer');
    readIndex(where, head, info.heads, 'head');
    return layerHeads(where, layer, [head], readHeadOptions(where, options, ['pool', 'valueWeighted']));
  }
  function layerWeights(layer, options = {}) {
    const where = `${owner} layerWeights`;
    requireKept(where, 'queries and keys', 'layerWeights');
    readIndex(where, layer, info.layers, 'layer');
    const read = readHeadOptions(where, options, ['heads', 'pool', 'valueWeighted']);
    return layerHeads(where, layer, readIndices(where, options.heads, info.heads, 'head', '', 'heads'), read);
  }
  // The positions computeLogits(which) gives the rows of, as an Int32Array: 'last' (n - 1), 'all' (0 to
  // n - 1), or { positions } (readPositions), whose rows must fit in the WebAssembly memory left.
  function logitPositions(where, which) {
    if (which === 'last') return Int32Array.of(n - 1);
    if (which === 'all') return Int32Array.from({ length: n }, (_, t) => t);
    if (which === null || typeof which !== 'object' || Array.isArray(which) || ArrayBuffer.isView(which)) {
      throw new (typeof which === 'string' ? RangeError : TypeError)(`${where}: which must be 'last', 'all' or ` +
        `{ positions }, got ${describe(which)}`);
    }
    const positions = readPositions(where, readOptions(where, which, ['positions']).positions, n, 'positions',
      ` (the run's ${n} positions)`);
    // The rows, and what the core gathers and norms them in (forward.cpp kept_logits: 3 x dModel a row).
    const bytes = 4 * positions.length * (info.vocabSize + 3 * info.dModel + 1);
    if (bytes > availableMemory(module)) {
      throw new RangeError(`${where}: ${positions.length} rows of logits need about ${formatBytes(bytes)} of WebAssembly ` +
        `memory, more than the ${formatBytes(availableMemory(module))} available; ask for fewer positions`);
    }
    return positions;
  }
  function computeLogits(which = 'last') {
    const where = `${owner} computeLogits`;
    requireKept(where, 'last-layer rows', 'computeLogits');
    const positions = logitPositions(where, which);
    const { out, finite } = compute(where, positions.length * info.vocabSize, (pointer, heap) =>
      handle.keptLogits(heap.copyIn(positions), positions.length, pointer), { scan: true });
    if (!finite) checkFinite(where, [['logits', out]]);
    return out;
  }
  for (const [name, value] of Object.entries({ headWeights, layerWeights, computeLogits })) Object.defineProperty(result, name, { value });
  return result;
}
