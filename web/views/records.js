// The one conversion from attnlens's results (its records) to the views'
// data. The page, the custom elements and anyone using both the library and
// the views go through here; other engines' attention goes through
// fromLayers (attention-data.js) or is passed as plain data.
//
// The library checked the weights of the results it brands (finite; softmax
// rows; web/lib/validation.js markChecked), so the data made from those is
// marked as the library's: the views check its shape, not every weight
// again. Anything else (another engine's data in the same shape, a record
// rebuilt by hand or copied through postMessage) is checked in full.
import { AttentionDataError, markLibraryData } from './attention-data.js';

// The library's brand (a registered symbol: the views never import the library).
const CHECKED = Symbol.for('attnlens.checked');
const fromLibrary = (data, result) => (result[CHECKED] === true ? markLibraryData(data) : data);

/** Labels of rows that have no tokens (matrices typed by hand): t0, t1, ... (keys: c0, c1, ...). */
const rowLabels = (count, prefix = 't') => Array.from({ length: count }, (_, index) => `${prefix}${index}`);

function expect(condition, what, record) {
  if (!condition) throw new AttentionDataError(`${what}: expected ${record}`);
}

/**
 * An Explanation (lens.explainSentence, lens.explainMatrices, model.explain) as the views' data:
 * { tokens, keyTokens, weights [head][query][key], heads, causal, windows, keyMask }. Rows without
 * tokens are t0, t1, ...; keys are the context's tokens (c0, c1, ...) when the record is
 * cross-attention. What the record says hid keys (padding mask, causal mask, window) goes along, so
 * the views draw those cells as hidden.
 */
export function fromExplanation(record, { crossAttention = record?.crossAttention ?? record?.nContext !== record?.n } = {}) {
  expect(record?.weights instanceof Float32Array && record.heads >= 1, 'fromExplanation',
    'an Explanation (lens.explainSentence, lens.explainMatrices or model.explain)');
  const tokens = record.tokens ?? rowLabels(record.n);
  const keyTokens = crossAttention ? record.contextTokens ?? rowLabels(record.nContext, 'c') : null;
  const hiding = { causal: record.causal ?? false, windows: [record.window ?? 0], keyMask: record.keyMask ?? null };
  return fromLibrary({ tokens, keyTokens, weights: record.weights, heads: record.heads, ...hiding }, record);
}

// Where each kind of an encoder-decoder's attention is in its run (field) and in its analysis
// (weighted: value-weighted attention), and which tokens are its rows and keys.
const runKinds = {
  encoder: { field: 'attention', weighted: 'valueWeighted', rows: 'tokens', keys: 'tokens', layers: 'layers' },
  decoder: { field: 'decoderAttention', weighted: 'decoderValueWeighted', rows: 'targetTokens', keys: 'targetTokens', layers: 'decoderLayers' },
  cross: { field: 'crossAttention', weighted: 'crossValueWeighted', rows: 'targetTokens', keys: 'tokens', layers: 'decoderLayers' },
};

// One kind's values of a run (`values` 'field') or of an analysis ('weighted'), as layerData.
function kindData(name, record, kind, layer, values, expected) {
  const where = runKinds[kind];
  if (!where) throw new RangeError(`attnlens/views: ${name}: kind must be 'encoder', 'decoder' or 'cross', got ${JSON.stringify(kind)}`);
  const field = where[values];
  expect(record?.[field] instanceof Float32Array && record[where.layers] >= 1 && record.heads >= 1, name, expected(field));
  const tokens = record[where.rows];
  const keyTokens = kind === 'cross' ? record[where.keys] : null;
  // A decoder-only run's key mask, causal mask and windows; an encoder-decoder's decoder
  // self-attention is causal, its encoder's and cross-attention are not.
  // A run's weights may be pooled (model.run's attention { pool }), every kind alike.
  const pool = values === 'field' ? record.attentionPool ?? 1 : 1;
  const hiding = kind === 'encoder' ? { causal: record.causal ?? false, windows: record.windows ?? null, keyMask: record.keyMask ?? null, pool }
    : { causal: kind === 'decoder', pool };
  return layerData(name, { tokens, keyTokens, heads: record.heads, layers: record[where.layers], ...hiding }, record[field], layer);
}

/**
 * A model's run (model.run, or the page's worker's copy of it) as the views' data: every layer
 * ({ tokens, weights, heads, layers }), or with `layer` that layer alone ({ tokens, weights, heads }),
 * with its padding mask (the run's keyMask), causal mask and each layer's window (model.info.windows), drawn as hidden;
 * pooled as the run's attentionPool says (model.run's attention { pool }: for modelView and allHeads);
 * `quantity: 'valueWeighted'` when the run's attentionQuantity says so (attention { valueWeighted: true }).
 * An encoder-decoder's run holds three kinds: `kind` 'encoder' (its `attention`, the default),
 * 'decoder' (`decoderAttention`, target × target, causal) or 'cross' (`crossAttention`: target tokens as
 * rows, source tokens as keys).
 */
export function fromRun(run, { layer = null, kind = 'encoder' } = {}) {
  const data = kindData('fromRun', run, kind, layer, 'field', (field) => (kind === 'encoder' ? 'a run (model.run)'
    : `an encoder-decoder's run (model.run with a target) holding ${field}`));
  return fromLibrary(run.attentionQuantity === 'valueWeighted' ? { ...data, quantity: 'valueWeighted' } : data, run);
}

/**
 * model.analyze's value-weighted attention (Kobayashi et al., 2020: ‖α_ij v_j W_O^h‖, each row
 * normalised to 1) as the views' data, like fromRun: every layer, or with `layer` that layer alone;
 * an encoder-decoder's of one `kind` ('encoder', the default, 'decoder' or 'cross'), as fromRun's.
 * The data says `quantity: 'valueWeighted'`, so every view labels what it draws "value-weighted".
 */
export function fromValueWeighted(analysis, { layer = null, kind = 'encoder' } = {}) {
  const data = kindData('fromValueWeighted', analysis, kind, layer, 'weighted', (field) => `model.analyze's result with its ${field} `
    + '(analyze({ valueWeighted: true }))');
  return fromLibrary({ ...data, quantity: 'valueWeighted' }, analysis);
}

// [layer][head][query][key] values of a run or an analysis: every layer, or `layer` alone (a view, no copy).
// keyTokens: cross-attention's keys (the source), when they are not the rows' tokens.
// With the key mask, causal mask and each layer's window the source carries (a run's
// keyMask, causal and windows), drawn as hidden. `pool` > 1: each head's blocks (a run's attentionPool).
function layerData(where, { tokens, keyTokens = null, heads, layers, causal = false, windows = null, keyMask = null, pool = 1 }, values, layer) {
  const keys = keyTokens ? { keyTokens } : {};
  const pooled = pool > 1 ? { pool } : {};
  if (layer === null) return { tokens, ...keys, weights: values, heads, layers, causal, windows, keyMask, ...pooled };
  if (!(Number.isInteger(layer) && layer >= 0 && layer < layers)) {
    throw new RangeError(`attnlens/views: ${where}: layer must be an integer from 0 to ${layers - 1}, got ${layer}`);
  }
  const size = heads * Math.ceil(tokens.length / pool) * Math.ceil((keyTokens ?? tokens).length / pool);
  return { tokens, ...keys, weights: values.subarray(layer * size, (layer + 1) * size), heads, causal, windows: windows && [windows[layer]], keyMask, ...pooled };
}
