// The matrices of an <attnlens-matrices> element, from the JSON in its
// <script type="application/json"> child (or the `matrices` property):
//   { "X": [[...], ...], "W_Q": [[...]], "W_K": [[...]], "W_V": [[...]],
//     optional "W_O", "context" (cross-attention: keys and values from these rows),
//     "heads", "causal", "temperature", "keyMask" (one 0 or 1 per key: 0 hides it, a padding mask),
//     "tokens" and "contextTokens" (row labels) }
// to the options of lens.explainMatrices. Names are matched loosely (W_Q, wq,
// Wq). The library checks the shapes against X's; this file checks that each
// matrix is a list of equal rows of finite numbers, and says where one is not.

const fields = {
  x: 'x', wq: 'wq', wk: 'wk', wv: 'wv', wo: 'wo', context: 'context', xcontext: 'context',
  heads: 'heads', causal: 'causal', temperature: 'temperature', keymask: 'keyMask', tokens: 'tokens', contexttokens: 'contextTokens',
};
const shown = { x: 'X', wq: 'W_Q', wk: 'W_K', wv: 'W_V', wo: 'W_O', context: 'context' };

export function parseMatricesJson(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new SyntaxError(`JSON: ${error.message}`);
  }
  return readMatrices(data);
}

/** Checks a matrices object and returns { options (for explainMatrices), tokens, contextTokens }. */
export function readMatrices(data) {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new TypeError('JSON: expected an object like {"X": [[1, 0], [0, 1]], "W_Q": [[...]], "W_K": [[...]], "W_V": [[...]]}');
  }
  const raw = {};
  for (const [name, value] of Object.entries(data)) {
    const field = fields[name.toLowerCase().replace(/[^a-z]/g, '')];
    if (!field) throw new TypeError(`JSON: unknown name "${name}"; use X, W_Q, W_K, W_V, and optionally W_O, context, heads, causal, temperature, keyMask, tokens, contextTokens`);
    raw[field] = value;
  }
  for (const required of ['x', 'wq', 'wk', 'wv']) {
    if (!(required in raw)) throw new TypeError(`JSON: ${shown[required]} is missing`);
  }
  const x = flatten('x', raw.x);
  const options = { x: x.values, n: x.rows, dModel: x.cols };
  for (const name of ['wq', 'wk', 'wv', 'wo', 'context']) {
    if (raw[name] === undefined) continue;
    const matrix = flatten(name, raw[name]);
    options[name] = matrix.values;
    if (name === 'context') options.nContext = matrix.rows;
  }
  for (const name of ['heads', 'causal', 'temperature']) if (raw[name] !== undefined) options[name] = raw[name];
  if (raw.keyMask !== undefined) options.keyMask = keyMask(raw.keyMask, options.nContext ?? options.n);
  return {
    options,
    tokens: labels('tokens', raw.tokens, options.n),
    contextTokens: labels('contextTokens', raw.contextTokens, options.nContext),
  };
}

function flatten(name, rows) {
  const where = `JSON: ${shown[name]}`;
  if (!Array.isArray(rows) || rows.length === 0 || !Array.isArray(rows[0]) || rows[0].length === 0) {
    throw new TypeError(`${where} must be a non-empty list of rows, like [[1, 0], [0, 1]]`);
  }
  const cols = rows[0].length;
  const values = new Float32Array(rows.length * cols);
  rows.forEach((row, r) => {
    if (!Array.isArray(row) || row.length !== cols) {
      throw new TypeError(`${where}: row ${r + 1} has ${Array.isArray(row) ? `${row.length} numbers` : 'no list'}, expected ${cols} numbers like row 1`);
    }
    row.forEach((value, c) => {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw new TypeError(`${where}: row ${r + 1}, column ${c + 1} is ${JSON.stringify(value)}, expected a finite number`);
      }
      values[r * cols + c] = value;
    });
  });
  return { values, rows: rows.length, cols };
}

// Booleans or 0 / 1, one per key (a row of context, or of X without one).
function keyMask(values, count) {
  if (!Array.isArray(values) || values.length !== count || values.some((value) => ![0, 1, true, false].includes(value))) {
    throw new TypeError(`JSON: keyMask must be a list of ${count} entries, one per key, each 1 (keep) or 0 (hide), got ${JSON.stringify(values)}`);
  }
  return Uint8Array.from(values, Number);
}

function labels(name, tokens, count) {
  if (tokens === undefined) return null;
  if (!Array.isArray(tokens) || tokens.length !== count || tokens.some((token) => typeof token !== 'string')) {
    throw new TypeError(`JSON: ${name} must be a list of ${count} strings, one per row${count === undefined ? ' (and needs context)' : ''}`);
  }
  return tokens;
}
