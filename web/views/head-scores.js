// The head detector scores of a whole model (model.analyze's `scores`, or any
// named layers x heads arrays) as view data: checked once, then read as
// per-head rows in layer order or sorted by one score, and as CSV.
import { AttentionDataError } from './attention-data.js';

const labels = {
  previousToken: 'previous token', firstToken: 'first token', currentToken: 'current token',
  duplicateToken: 'duplicate token', induction: 'induction',
};
/** A score's name as the view shows it: "previous token" for previousToken; other names as given. */
export const scoreLabel = (name) => labels[name] ?? name;

/**
 * Checks `{ layers, heads, scores: { name: Float32Array(layers × heads) } }` and
 * returns `{ layers, heads, names, scores }`; an AttentionDataError names the problem.
 */
export function headScoresData(data) {
  const fail = (message) => { throw new AttentionDataError(`headScores: ${message}`); };
  if (data === null || typeof data !== 'object') fail('expected { layers, heads, scores } (model.analyze gives it)');
  const { layers, heads, scores } = data;
  for (const [name, value] of [['layers', layers], ['heads', heads]]) {
    if (!(Number.isInteger(value) && value >= 1)) fail(`${name} must be a positive integer, got ${value}`);
  }
  if (scores === null || typeof scores !== 'object') fail('scores must be an object of named arrays, one number per head');
  const names = Object.keys(scores);
  if (names.length === 0) fail('scores must hold at least one score');
  for (const name of names) {
    const values = scores[name];
    if (!(ArrayBuffer.isView(values) || Array.isArray(values)) || values.length !== layers * heads) {
      fail(`scores.${name} must hold layers × heads = ${layers * heads} numbers, got ${values?.length ?? values}`);
    }
    const bad = Array.prototype.findIndex.call(values, (value) => !Number.isFinite(value));
    if (bad >= 0) fail(`scores.${name}[${bad}] must be a finite number, got ${values[bad]}`);
  }
  return Object.freeze({ layers, heads, names, scores });
}

/**
 * One row per head, `{ layer, head, values: { name: value } }`: by layer then
 * head, or by the score `sortBy` (largest first unless `descending` is false;
 * ties keep layer order).
 */
export function scoreRows(model, { sortBy = null, descending = true } = {}) {
  const rows = Array.from({ length: model.layers * model.heads }, (_, index) => ({
    layer: Math.floor(index / model.heads), head: index % model.heads,
    values: Object.fromEntries(model.names.map((name) => [name, model.scores[name][index]])),
  }));
  if (sortBy === null) return rows;
  if (!model.names.includes(sortBy)) {
    throw new RangeError(`attnlens/views: sortBy must be null or one of ${model.names.join(', ')}, got ${sortBy}`);
  }
  const sign = descending ? -1 : 1;
  return rows.sort((a, b) => sign * (a.values[sortBy] - b.values[sortBy]));  // stable: ties stay in layer order
}

/** The rows as CSV: layer, head (both from 0), then one column per score. */
export function scoresCsv(model, rows) {
  const lines = [['layer', 'head', ...model.names].join(',')];
  for (const { layer, head, values } of rows) lines.push([layer, head, ...model.names.map((name) => values[name])].join(','));
  return `${lines.join('\n')}\n`;
}
