// The head detector scores of a whole model (model.analyze's `scores`, or any
// named layers x heads arrays) as view data: checked once, then read as
// per-head rows in layer order or sorted by one score, and as CSV.
import { AttentionDataError } from './attention-data.js';

/** A score's name as the view shows it: "previous token" for previousToken ("induction" stays). */
export const scoreLabel = (name) => name.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`);

/**
 * Checks `{ layers, heads, scores: { name: Float32Array(layers × heads) } }` and
 * returns `{ layers, heads, names, scores }`; an AttentionDataError names the problem.
 */
export function headScoresData(data) {
  const fail = (message) => { throw new AttentionDataError(`headScores: ${message}`); };
  const { layers, heads, scores } = data ?? fail('expected { layers, heads, scores } (model.analyze gives it)');
  for (const [name, value] of [['layers', layers], ['heads', heads]]) {
    if (!(Number.isInteger(value) && value > 0)) fail(`${name} must be a positive integer, got ${value}`);
  }
  const names = Object.keys(scores ?? {});
  if (!names.length) fail('scores must hold at least one named array, one number per head');
  for (const name of names) {
    const values = scores[name];
    if (values?.length !== layers * heads || typeof values === 'string') fail(`scores.${name} must hold layers × heads = ${layers * heads} numbers, got ${values?.length}`);
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
  if (sortBy !== null && !model.names.includes(sortBy)) {
    throw new RangeError(`attnlens/views: sortBy must be null or one of ${model.names.join(', ')}, got ${sortBy}`);
  }
  const rows = Array.from({ length: model.layers * model.heads }, (_, index) => ({
    layer: Math.floor(index / model.heads), head: index % model.heads,
    values: Object.fromEntries(model.names.map((name) => [name, model.scores[name][index]])),
  }));
  return sortBy === null ? rows : rows.sort((a, b) => (descending ? -1 : 1) * (a.values[sortBy] - b.values[sortBy]));
}

/** The rows as CSV: layer, head (both from 0), then one column per score. */
export function scoresCsv(model, rows) {
  return [['layer', 'head', ...model.names], ...rows.map(({ layer, head, values }) => [layer, head, ...model.names.map((name) => values[name])])]
    .map((line) => `${line.join(',')}\n`).join('');
}
