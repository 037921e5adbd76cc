// What people type, read once for the page and for attnlens/elements:
// matrices (JSON or CSV) for lens.explainMatrices, and token ids for a model
// loaded without a tokenizer. Plain data in, plain data out; not part of the
// views' bundle (index.js does not import it).
//
// Matrices, as JSON (names match loosely: W_Q, wq, Wq):
//   { "X": [[...], ...], "W_Q": [[...]], "W_K": [[...]], "W_V": [[...]],
//     optional "W_O", "context" (cross-attention: keys and values from these rows),
//     "heads", "causal", "temperature", "keyMask" (one 0 or 1 per key: 0 hides it),
//     "tokens" and "contextTokens" (row labels) }
// or as CSV: a line holding only a name (X, W_Q, ...) starts a matrix; each following
// line is one row of numbers separated by commas, semicolons or spaces; "heads: 2" sets heads.
// The shapes are checked here (rows and columns, which the flat arrays lose); the
// library checks the rest (heads dividing d_model, temperature, ...).

/** Matrices that cannot be read; the message says where (the format, the line, the matrix, the row). */
export class MatrixInputError extends TypeError {
  constructor(message) {
    super(message);
    this.name = 'MatrixInputError';
  }
}

const fields = {
  x: 'x', wq: 'wq', wk: 'wk', wv: 'wv', wo: 'wo', context: 'context', xcontext: 'context',
  heads: 'heads', causal: 'causal', temperature: 'temperature', keymask: 'keyMask', tokens: 'tokens', contexttokens: 'contextTokens',
};
const shown = { x: 'X', wq: 'W_Q', wk: 'W_K', wv: 'W_V', wo: 'W_O', context: 'context' };

function fieldOf(name, where) {
  const field = fields[String(name).toLowerCase().replace(/[^a-z]/g, '')];
  if (!field) throw new MatrixInputError(`${where}unknown name "${name}"; use X, W_Q, W_K, W_V, and optionally W_O, context, heads, causal, temperature, keyMask, tokens, contextTokens`);
  return field;
}

function parseJson(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new MatrixInputError(`JSON: ${error.message}`);
  }
  return data;
}

function fromJsonObject(data) {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new MatrixInputError('JSON: expected an object like {"X": [[1, 0], [0, 1]], "W_Q": [[...]], "W_K": [[...]], "W_V": [[...]]}');
  }
  const raw = {};
  for (const [name, value] of Object.entries(data)) raw[fieldOf(name, 'JSON: ')] = value;
  return raw;
}

function fromCsv(text) {
  const raw = {};
  let current = null;
  text.split(/\r?\n/).forEach((line, index) => {
    const where = `line ${index + 1}: `;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('//')) return;
    const header = trimmed.replace(/^#\s*/, '').replace(/[:=]\s*$/, '');
    if (/^[A-Za-z][A-Za-z_ ]*$/.test(header)) {
      current = fieldOf(header, where);
      // A name line starts a matrix; the other fields have no rows (their numbers would become one).
      if (current === 'heads') throw new MatrixInputError(`${where}heads is one number, not a matrix: write it on one line, "heads: 2"`);
      if (!(current in shown)) throw new MatrixInputError(`${where}${header} is not a matrix; CSV holds the matrices and "heads: 2" only: write ${header} in JSON`);
      raw[current] = [];
      return;
    }
    const heads = /^heads\s*[:=,]\s*(\S+)$/i.exec(trimmed);
    if (heads) {
      raw.heads = Number(heads[1]);
      return;
    }
    if (!current) throw new MatrixInputError(`${where}numbers before any matrix name; start with a line "X"`);
    raw[current].push(trimmed.split(/[,;\s]+/).filter((cell) => cell !== '').map((cell) => {
      const value = Number(cell);
      if (!Number.isFinite(value)) throw new MatrixInputError(`${where}"${cell}" is not a number`);
      return value;
    }));
  });
  return raw;
}

// Rows of finite numbers, all `cols` long (default: as long as row 1), as one row-major Float32Array.
function flatten(prefix, name, rows, cols = rows?.[0]?.length, like = 'like row 1') {
  const where = `${prefix}${shown[name]}`;
  if (!Array.isArray(rows) || rows.length === 0 || !Array.isArray(rows[0]) || rows[0].length === 0) {
    throw new MatrixInputError(`${where} must be a non-empty list of rows, like [[1, 0], [0, 1]]`);
  }
  const values = new Float32Array(rows.length * cols);
  rows.forEach((row, r) => {
    if (!Array.isArray(row) || row.length !== cols) {
      throw new MatrixInputError(`${where}: row ${r + 1} has ${Array.isArray(row) ? `${row.length} numbers` : 'no list'}, expected ${cols} numbers ${like}`);
    }
    row.forEach((value, c) => {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw new MatrixInputError(`${where}: row ${r + 1}, column ${c + 1} is ${JSON.stringify(value)}, expected a finite number`);
      }
      values[r * cols + c] = value;
    });
  });
  return { values, rows: rows.length, cols };
}

function keyMask(prefix, values, count) {
  if (!Array.isArray(values) || values.length !== count || values.some((value) => ![0, 1, true, false].includes(value))) {
    throw new MatrixInputError(`${prefix}keyMask must be a list of ${count} entries, one per key, each 1 (keep) or 0 (hide), got ${JSON.stringify(values)}`);
  }
  return Uint8Array.from(values, Number);
}

function labels(prefix, name, tokens, count) {
  if (tokens === undefined) return null;
  if (!Array.isArray(tokens) || tokens.length !== count || tokens.some((token) => typeof token !== 'string')) {
    throw new MatrixInputError(`${prefix}${name} must be a list of ${count} strings, one per row${count === undefined ? ' (and needs context)' : ''}`);
  }
  return tokens;
}

/**
 * Matrices as text, or as an object of the JSON's shape, to { options (for lens.explainMatrices),
 * tokens, contextTokens } (null when not given). `format`: 'auto' reads text starting with "{"
 * as JSON and other text as CSV; 'json' reads any text as JSON.
 */
export function readMatrices(input, { format = 'auto' } = {}) {
  if (typeof input === 'string' && format !== 'json' && input.trim() === '') throw new MatrixInputError('No matrices: write X, W_Q, W_K and W_V as JSON or CSV.');
  const json = typeof input !== 'string' || format === 'json' || input.trim().startsWith('{');
  const prefix = json ? 'JSON: ' : '';
  const raw = typeof input !== 'string' ? fromJsonObject(input) : json ? fromJsonObject(parseJson(input)) : fromCsv(input);
  for (const required of ['x', 'wq', 'wk', 'wv']) {
    if (!(required in raw)) throw new MatrixInputError(`${prefix}${shown[required]} is missing`);
  }
  const x = flatten(prefix, 'x', raw.x);
  const d = x.cols;
  const options = { x: x.values, n: x.rows, dModel: d };
  for (const name of ['wq', 'wk', 'wv', 'wo']) {
    if (raw[name] === undefined) continue;
    const matrix = flatten(prefix, name, raw[name], d, `(d_model × d_model, d_model = ${d} columns of X)`);
    if (matrix.rows !== d) {
      throw new MatrixInputError(`${prefix}${shown[name]}: expected ${d} × ${d} (d_model × d_model, d_model = columns of X), got ${matrix.rows} × ${matrix.cols}`);
    }
    options[name] = matrix.values;
  }
  if (raw.context !== undefined) {
    const context = flatten(prefix, 'context', raw.context, d, `(the ${d} columns of X)`);
    options.context = context.values;
    options.nContext = context.rows;
  }
  for (const name of ['heads', 'causal', 'temperature']) if (raw[name] !== undefined) options[name] = raw[name];
  if (raw.keyMask !== undefined) options.keyMask = keyMask(prefix, raw.keyMask, options.nContext ?? options.n);
  return {
    options,
    tokens: labels(prefix, 'tokens', raw.tokens, options.n),
    contextTokens: labels(prefix, 'contextTokens', raw.contextTokens, options.nContext),
  };
}

/**
 * Token ids typed as text ("464 3290 3332", "464, 3290"), for a model without a tokenizer;
 * null when the text is not a list of whole numbers.
 */
export function tokenIds(text) {
  if (!/^\s*\d+(?:\s*[\s,]\s*\d+)*\s*$/.test(text)) return null;
  return text.trim().split(/[\s,]+/).map(Number);
}
