// The custom-matrices editor: parses X, W_Q, W_K, W_V (and optionally W_O,
// a context matrix, heads) typed as JSON or CSV into the flat Float32Arrays
// that lens.explainMatrices takes. Errors say where (line, matrix, row).

export class MatrixInputError extends Error {}

// The worked example of issue 2: 3 tokens, d = 4, one head, W_O = identity.
export const workedExample = Object.freeze({
  x: [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]],
  wq: [[0.1, 0.2, 0, 0], [0, 0.1, 0.3, 0], [0.1, 0, 0, 0.2], [0, 0, 0.2, 0.3]],
  wk: [[0.2, 0, 0.1, 0], [0, 0.1, 0, 0.3], [0.1, 0, 0.2, 0], [0, 0.2, 0, 0.1]],
  wv: [[0, 0.1, 0, 0.2], [0.2, 0, 0.2, 0], [0, 0.3, 0.1, 0], [0.1, 0, 0, 0.3]],
});

// JSON with one matrix row per line: readable in the editor.
export function matricesToJson(matrices) {
  const entries = Object.entries(matrices).map(([name, value]) => {
    if (!Array.isArray(value)) return `  "${name}": ${JSON.stringify(value)}`;
    const rows = value.map((row) => `    ${JSON.stringify(row)}`).join(',\n');
    return `  "${name}": [\n${rows}\n  ]`;
  });
  return `{\n${entries.join(',\n')}\n}`;
}

const aliases = { x: 'x', context: 'context', xcontext: 'context', wq: 'wq', wk: 'wk', wv: 'wv', wo: 'wo', heads: 'heads' };
const matrixNames = { x: 'X', context: 'context', wq: 'W_Q', wk: 'W_K', wv: 'W_V', wo: 'W_O' };

function canonicalName(name, where) {
  const key = aliases[String(name).toLowerCase().replace(/[^a-z]/g, '')];
  if (!key) throw new MatrixInputError(`${where}unknown name "${name}"; use X, W_Q, W_K, W_V, and optionally W_O, context, heads`);
  return key;
}

function parseJson(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new MatrixInputError(`JSON: ${error.message}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new MatrixInputError('JSON: expected an object like {"x": [[...]], "wq": [[...]], "wk": [[...]], "wv": [[...]]}');
  }
  const out = {};
  for (const [name, value] of Object.entries(data)) out[canonicalName(name, 'JSON: ')] = value;
  return out;
}

// CSV: a line holding only a name (X, W_Q, ...) starts a matrix; each
// following line is one row of numbers separated by commas, semicolons or spaces.
function parseCsv(text) {
  const out = {};
  let current = null;
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    const where = `line ${index + 1}: `;
    if (line === '' || line.startsWith('//')) return;
    const header = line.replace(/^#\s*/, '').replace(/[:=]\s*$/, '');
    if (/^[A-Za-z][A-Za-z_ ]*$/.test(header)) {
      current = canonicalName(header, where);
      out[current] = [];
      return;
    }
    const headsMatch = /^heads\s*[:=,]\s*(\S+)$/i.exec(line);
    if (headsMatch) {
      out.heads = Number(headsMatch[1]);
      return;
    }
    if (!current) throw new MatrixInputError(`${where}numbers before any matrix name; start with a line "X"`);
    const cells = line.split(/[,;\s]+/).filter((cell) => cell !== '');
    const row = cells.map((cell) => {
      const value = Number(cell);
      if (!Number.isFinite(value)) throw new MatrixInputError(`${where}"${cell}" is not a number`);
      return value;
    });
    out[current].push(row);
  });
  return out;
}

function flatten(name, rows, expectedCols) {
  const label = matrixNames[name];
  if (!Array.isArray(rows) || rows.length === 0) throw new MatrixInputError(`${label}: expected a non-empty list of rows`);
  const cols = expectedCols ?? (Array.isArray(rows[0]) ? rows[0].length : 0);
  if (cols === 0) throw new MatrixInputError(`${label}: row 1 is empty or not a list`);
  const values = new Float32Array(rows.length * cols);
  rows.forEach((row, r) => {
    if (!Array.isArray(row)) throw new MatrixInputError(`${label}: row ${r + 1} is not a list of numbers`);
    if (row.length !== cols) throw new MatrixInputError(`${label}: row ${r + 1} has ${row.length} numbers, expected ${cols}`);
    row.forEach((value, c) => {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw new MatrixInputError(`${label}: row ${r + 1}, column ${c + 1} is ${JSON.stringify(value)}, expected a finite number`);
      }
      values[r * cols + c] = value;
    });
  });
  return { values, rows: rows.length, cols };
}

// Text (JSON or CSV) -> options for lens.explainMatrices.
export function parseMatrices(text) {
  const trimmed = text.trim();
  if (trimmed === '') throw new MatrixInputError('The editor is empty: paste X, W_Q, W_K and W_V as JSON or CSV.');
  const raw = trimmed.startsWith('{') ? parseJson(trimmed) : parseCsv(trimmed);
  for (const required of ['x', 'wq', 'wk', 'wv']) {
    if (!(required in raw)) throw new MatrixInputError(`${matrixNames[required]} is missing`);
  }
  const x = flatten('x', raw.x);
  const dModel = x.cols;
  const options = { x: x.values, n: x.rows, dModel };
  for (const name of ['wq', 'wk', 'wv', 'wo']) {
    if (!(name in raw)) continue;
    const matrix = flatten(name, raw[name]);
    if (matrix.rows !== dModel || matrix.cols !== dModel) {
      throw new MatrixInputError(`${matrixNames[name]}: expected ${dModel} × ${dModel} (d_model × d_model, d_model = columns of X), got ${matrix.rows} × ${matrix.cols}`);
    }
    options[name] = matrix.values;
  }
  if ('context' in raw) {
    const context = flatten('context', raw.context, dModel);
    options.context = context.values;
    options.nContext = context.rows;
  }
  if ('heads' in raw) {
    const heads = raw.heads;
    if (!Number.isInteger(heads) || heads < 1 || dModel % heads !== 0) {
      throw new MatrixInputError(`heads: expected a whole number that divides d_model = ${dModel}, got ${JSON.stringify(heads)}`);
    }
    options.heads = heads;
  }
  return options;
}
