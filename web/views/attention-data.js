// The data every view takes, checked once: { tokens, keyTokens?, weights,
// layers?, heads, quantity? } with weights a Float32Array [layer][head][query][key]
// ([head][query][key] without `layers`), as lens.multiHeadAttention,
// lens.explainSentence and model.run return it, or any other engine.
// Optionally what hid keys from queries, so that views draw those cells as
// hidden rather than as a weight of 0: causal (a query sees only itself and
// earlier keys) and windows (per layer, with causal: only the `window` keys
// ending at the query's own position; 0 = no window) and keyMask (one entry
// per key, 0 = a padding key hidden from every query).
// Optionally `pool` f (model.run's attention option { pool }): each head is
// then ceil(n/f) x ceil(nKeys/f) blocks, each the largest of its f x f
// weights, as the model view and all-heads multiples draw a long text.

/** Bad attention data: the message names the field and what is wrong with it. */
export class AttentionDataError extends Error {
  constructor(message) {
    super(`attnlens/views: ${message}`);
    this.name = 'AttentionDataError';
  }
}

const rowTolerance = 1e-3;
// What the weights are: attention weights (softmax), or value-weighted attention
// (model.analyze's valueWeighted: ‖α_ij v_j W_O^h‖ per row normalised to 1).
const quantities = ['weights', 'valueWeighted'];

// The data the adapters of records.js made from the library's own results,
// frozen: their weights were checked by the library (finite, softmax rows),
// so attentionData does not read every weight again. Foreign data (another
// engine's, a JSON file's) is never in it and is checked in full.
const libraryData = new WeakSet();

/** Freezes `data` (so no field can be swapped afterwards) and marks it as the library's. */
export function markLibraryData(data) {
  libraryData.add(Object.freeze(data));
  return data;
}

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `Array(${value.length})`;
  if (ArrayBuffer.isView(value)) return `${value.constructor.name}(${value.length})`;
  return typeof value;
}

function checkTokens(tokens, name) {
  if (!Array.isArray(tokens)) throw new AttentionDataError(`${name} must be an array of strings, got ${describe(tokens)}`);
  if (tokens.length < 1) throw new AttentionDataError(`${name} must hold at least 1 token, got 0`);
  tokens.forEach((token, index) => {
    if (typeof token !== 'string') throw new AttentionDataError(`${name}[${index}] must be a string, got ${describe(token)}`);
  });
}

function checkCount(value, name) {
  if (!Number.isInteger(value) || value < 1) {
    throw new AttentionDataError(`${name} must be a positive integer, got ${typeof value === 'number' ? value : describe(value)}`);
  }
}

/**
 * Checks `data` and returns the views' model of it:
 * { queryTokens, keyTokens, layers, heads, n, nKeys, weights, hasLayers }.
 * `normalized: false` skips the check that rows sum to 1 (raw scores, for example);
 * all-zero rows (fully masked queries) always pass.
 */
export function attentionData(data, { normalized = true } = {}) {
  if (data === null || typeof data !== 'object') throw new AttentionDataError(`data must be an object { tokens, weights, heads, layers?, keyTokens? }, got ${describe(data)}`);
  const { tokens, weights } = data;
  checkTokens(tokens, 'tokens');
  const keyTokens = data.keyTokens ?? tokens;
  if (data.keyTokens != null) checkTokens(keyTokens, 'keyTokens');
  checkCount(data.heads, 'heads');
  const quantity = data.quantity ?? 'weights';
  if (!quantities.includes(quantity)) throw new AttentionDataError(`quantity must be one of ${quantities.map((q) => `'${q}'`).join(', ')}, got ${typeof quantity === 'string' ? `'${quantity}'` : describe(quantity)}`);
  const hasLayers = data.layers != null;
  const layers = hasLayers ? data.layers : 1;
  if (hasLayers) checkCount(layers, 'layers');
  if (!(weights instanceof Float32Array)) throw new AttentionDataError(`weights must be a Float32Array, got ${describe(weights)}`);
  const n = tokens.length;
  const nKeys = keyTokens.length;
  const pool = data.pool ?? 1;
  if (!Number.isInteger(pool) || pool < 1 || pool > Math.max(n, nKeys)) {
    throw new AttentionDataError(`pool must be an integer from 1 to ${Math.max(n, nKeys)} (the number of tokens), got ${typeof pool === 'number' ? pool : describe(pool)}`);
  }
  // The rows and columns each head holds: n x nKeys, or its blocks when pooled.
  const rows = Math.ceil(n / pool);
  const cols = Math.ceil(nKeys / pool);
  const expected = layers * data.heads * rows * cols;
  if (weights.length !== expected) {
    const [r, c] = pool > 1 ? [`ceil(n/pool)*ceil(nKeys/pool)`, `${rows}*${cols}`] : ['n*nKeys', `${n}*${nKeys}`];
    const formula = hasLayers ? `layers*heads*${r} = ${layers}*${data.heads}*${c}` : `heads*${r} = ${data.heads}*${c}`;
    throw new AttentionDataError(`weights must have ${formula} = ${expected} values (ragged data), got ${weights.length}`);
  }

  // A pooled row holds each block's largest weight: it does not sum to 1.
  if (!libraryData.has(data)) checkWeights(weights, { n: rows, nKeys: cols, heads: data.heads, hasLayers, normalized: normalized && pool === 1 });
  const hiding = checkHiding(data, layers, nKeys);
  return { queryTokens: tokens, keyTokens, layers, heads: data.heads, n, nKeys, pool, rows, cols, weights, hasLayers, hiding, valueWeighted: quantity === 'valueWeighted' };
}

// Whether `list` (an array or typed array) holds `length` integers >= 0.
const countsOf = (list, length) => list.length === length && Array.prototype.every.call(list, (w) => Number.isInteger(w) && w >= 0);

// { causal, windows (one per layer), keyMask (one per key) } from the data's optional fields, checked.
function checkHiding({ causal = false, windows = null, keyMask = null }, layers, nKeys) {
  if (typeof causal !== 'boolean') throw new AttentionDataError(`causal must be a boolean, got ${describe(causal)}`);
  if (windows && !countsOf(windows, layers)) {
    throw new AttentionDataError(`windows must hold ${layers} integers >= 0 (one per layer), got ${describe(windows)}`);
  }
  if (keyMask && !countsOf(keyMask, nKeys)) {
    throw new AttentionDataError(`keyMask must hold ${nKeys} integers >= 0 (one per key, 0 hides it), got ${describe(keyMask)}`);
  }
  return { causal, windows, keyMask, layers: [] };
}

/**
 * What hides key `col` from query `row` in `layer`: 'the padding mask', 'the causal mask', 'the window', or null (visible).
 * The rule of the core's key_hidden (src/attention/attention.cpp): queries are the last n of nKeys positions.
 */
export function hiddenBy(model, layer, row, col) {
  const { causal, windows, keyMask } = model.hiding;
  const position = row + model.nKeys - model.n;
  if (keyMask?.[col] === 0) return 'the padding mask';
  if (!causal) return null;
  if (col > position) return 'the causal mask';
  return col + (windows?.[layer] || Infinity) <= position ? 'the window' : null;
}

/**
 * One layer's hidden cells as an n x nKeys Uint8Array (1 = hidden), the same array each time; null when none is hidden.
 * Pooled data: its rows x cols blocks, a block hidden only when every one of its cells is.
 */
export function hiddenCells(model, layer) {
  const { hiding } = model;
  if (!hiding || layer in hiding.layers) return hiding?.layers[layer] ?? null;
  const cells = hiddenRows(model, layer);
  const blocks = (model.pool ?? 1) > 1 ? poolHidden(model, cells) : cells;
  return (hiding.layers[layer] = blocks.includes(1) ? blocks : null);
}

// A pooled grid's block is hidden only when every cell in it is.
function poolHidden(model, cells) {
  const { pool, n, nKeys } = model;
  const rows = model.rows ?? Math.ceil(n / pool);
  const cols = model.cols ?? Math.ceil(nKeys / pool);
  const blocks = new Uint8Array(rows * cols).fill(1);
  for (let row = 0; row < n; row += 1) {
    const blockRow = Math.floor(row / pool) * cols;
    for (let col = 0; col < nKeys; col += 1) {
      if (!cells[row * nKeys + col]) blocks[blockRow + Math.floor(col / pool)] = 0;
    }
  }
  return blocks;
}

/** Throws when `model` is pooled: `what` (a view, an export) needs each weight, not blocks. */
export function requireUnpooled(model, what) {
  if ((model.pool ?? 1) > 1) {
    throw new AttentionDataError(`${what} needs each weight, but these are pooled by ${model.pool} (data.pool): ` +
      'only modelView and allHeads draw pooled weights');
  }
}

// hiddenBy's rule for every cell, a row at a time: each row is the padding mask's row with the keys before its
// window and after its position filled in. A causal model's 1024 x 1024 cells are a million calls of hiddenBy
// (50 ms a run on the page); filled by ranges they take about a millisecond.
function hiddenRows(model, layer) {
  const { causal, windows, keyMask } = model.hiding;
  const { n, nKeys } = model;
  const cells = new Uint8Array(n * nKeys);
  const padding = keyMask && Uint8Array.from(keyMask, (kept) => (kept === 0 ? 1 : 0));
  const window = causal ? windows?.[layer] || 0 : 0;
  const clamp = (col) => Math.min(Math.max(col, 0), nKeys);
  for (let row = 0; row < n; row += 1) {
    const start = row * nKeys;
    if (padding) cells.set(padding, start);
    if (!causal) continue;
    const position = row + nKeys - n;
    cells.fill(1, start + clamp(position + 1), start + nKeys); // after the query: the causal mask
    if (window) cells.fill(1, start, start + clamp(position - window + 1)); // before its window
  }
  return cells;
}

/**
 * A title that says what is drawn: value-weighted attention (model.valueWeighted) is never
 * mistaken for raw weights in a screenshot. `title` may be undefined (no title of its own).
 */
export function quantityTitle(model, title) {
  if (!model.valueWeighted) return title;
  return title ? `${title} · value-weighted` : 'Value-weighted attention';
}

/** The colour scale's heading: what its 0 to 1 measure. */
export const legendLabel = (model) => (model.valueWeighted ? 'value-weighted' : 'weight');

// Every weight finite and >= 0, and (when `normalized`) every row summing to 1 or all 0.
function checkWeights(weights, { n, nKeys, heads, hasLayers, normalized }) {
  const where = (index) => {
    const key = index % nKeys;
    const query = Math.floor(index / nKeys) % n;
    const head = Math.floor(index / (n * nKeys)) % heads;
    const layer = Math.floor(index / (heads * n * nKeys));
    return `${hasLayers ? `layer ${layer}, ` : ''}head ${head}, query ${query}, key ${key}`;
  };
  for (let start = 0; start < weights.length; start += nKeys) {
    let sum = 0;
    for (let index = start; index < start + nKeys; index += 1) {
      const value = weights[index];
      if (!Number.isFinite(value)) throw new AttentionDataError(`weights[${index}] (${where(index)}) is ${value}, not a finite number`);
      if (value < 0) throw new AttentionDataError(`weights[${index}] (${where(index)}) is negative (${value}); attention weights are >= 0`);
      sum += value;
    }
    if (normalized && sum !== 0 && Math.abs(sum - 1) > rowTolerance) {
      throw new AttentionDataError(`the row at weights[${start}] (${where(start).replace(/, key 0$/, '')}) sums to ${sum}, not 1 ` +
        `(within ${rowTolerance}); pass { normalized: false } for weights that are not a softmax`);
    }
  }
}

/** One head's n x nKeys weights (its blocks when pooled): a view (no copy). */
export function headValues(model, layer, head) {
  const size = (model.rows ?? model.n) * (model.cols ?? model.nKeys);
  const start = (layer * model.heads + head) * size;
  return model.weights.subarray(start, start + size);
}

/** The cell-by-cell mean of one layer's heads (rows still sum to 1). */
export function averageValues(model, layer) {
  const size = model.n * model.nKeys;
  const mean = new Float32Array(size);
  for (let head = 0; head < model.heads; head += 1) {
    const values = headValues(model, layer, head);
    for (let index = 0; index < size; index += 1) mean[index] += values[index];
  }
  for (let index = 0; index < size; index += 1) mean[index] /= model.heads;
  return mean;
}

/**
 * The views' data from attention given one tensor per layer, as other engines return it:
 * transformers.js (`output_attentions: true` gives `attentions`, one Tensor per layer) and
 * onnxruntime-web outputs are objects { data: Float32Array, dims: [1, heads, n, nKeys] }
 * (a batch of one; [heads, n, nKeys] works too). Returns { tokens, keyTokens, layers, heads,
 * weights } with the layers' weights copied, in order, into one [layer][head][query][key] array.
 */
export function fromLayers(tokens, layerTensors, { keyTokens = null } = {}) {
  if (!Array.isArray(layerTensors) || layerTensors.length < 1) {
    throw new AttentionDataError(`layers must be a non-empty array of tensors { data, dims }, got ${describe(layerTensors)}`);
  }
  checkTokens(tokens, 'tokens');
  if (keyTokens) checkTokens(keyTokens, 'keyTokens');
  const n = tokens.length;
  const nKeys = keyTokens ? keyTokens.length : n;
  let heads = null;
  layerTensors.forEach((tensor, layer) => {
    const dims = Array.from(tensor?.dims ?? []);
    if (dims.length === 4 && dims[0] !== 1) throw new AttentionDataError(`layers[${layer}] has a batch of ${dims[0]}: pass one sequence (batch 1)`);
    const [h, rows, cols] = dims.length === 4 ? dims.slice(1) : dims;
    if (dims.length < 3 || dims.length > 4 || rows !== n || cols !== nKeys) {
      throw new AttentionDataError(`layers[${layer}].dims must be [1, heads, ${n}, ${nKeys}] (tokens x keys), got [${dims.join(', ')}]`);
    }
    if (!(tensor.data instanceof Float32Array) || tensor.data.length !== h * n * nKeys) {
      throw new AttentionDataError(`layers[${layer}].data must be a Float32Array of ${h}*${n}*${nKeys} values, got ${describe(tensor.data)}`);
    }
    if (heads !== null && h !== heads) throw new AttentionDataError(`layers[${layer}] has ${h} heads, layers[0] has ${heads}`);
    heads = h;
  });
  const size = heads * n * nKeys;
  const weights = new Float32Array(layerTensors.length * size);
  layerTensors.forEach((tensor, layer) => weights.set(tensor.data, layer * size));
  return { tokens, keyTokens: keyTokens ?? tokens, layers: layerTensors.length, heads, weights };
}
