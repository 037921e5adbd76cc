// The logit lens (model.analyze's `logitLens`) as view data: checked once,
// then read per cell ([layer][position], its top-k ids and probabilities)
// and written as CSV. Token labels come from the caller (the view has no
// tokenizer): a tokenLabel(id) function or a vocabulary array.
import { AttentionDataError } from './attention-data.js';
import { csvField } from './tokens.js';

/**
 * Checks `{ layers, n, topK?, logitLens: { ids, probs, positions? }, tokens? }` (model.analyze's
 * result is one) and `{ tokenLabel | vocabulary }`; returns
 * `{ layers, n, topK, ids, probs, positions, tokens, label }`: one column per entry of
 * `positions` (the text positions the lens holds; default every one). An AttentionDataError names the problem.
 */
export function logitLensData(data, { tokenLabel = null, vocabulary = null } = {}) {
  const fail = (message) => { throw new AttentionDataError(`logitLens: ${message}`); };
  const { layers, n, logitLens, tokens = null } = data ?? fail('expected { layers, n, logitLens: { ids, probs } } (model.analyze gives it)');
  for (const [name, value] of [['layers', layers], ['n', n]]) {
    if (!(Number.isInteger(value) && value > 0)) fail(`${name} must be a positive integer, got ${value}`);
  }
  const { ids, probs } = logitLens ?? fail('logitLens must be { ids, probs } (model.analyze with logitLens: true, on a model with an LM head)');
  if (!(ids?.length > 0) || typeof ids === 'string') fail(`logitLens.ids must be an array of token ids, got ${ids?.length ?? ids}`);
  // model.analyze with logitLens: { positions } holds those positions' columns only.
  const positions = logitLens.positions ?? Array.from({ length: n }, (_, i) => i);
  if (!(positions?.length > 0) || typeof positions === 'string') fail(`logitLens.positions must be an array of positions, got ${positions?.length ?? positions}`);
  const badPosition = Array.prototype.findIndex.call(positions, (p) => !(Number.isInteger(p) && p >= 0 && p < n));
  if (badPosition >= 0) fail(`logitLens.positions[${badPosition}] must be a position from 0 to ${n - 1}, got ${positions[badPosition]}`);
  const columns = positions.length, topK = ids.length / (layers * columns), across = logitLens.positions ? 'positions' : 'n';
  if (!Number.isInteger(topK)) fail(`logitLens.ids must hold layers × ${across} × topK numbers (layers × ${across} = ${layers * columns}), got ${ids.length}`);
  if (probs?.length !== ids.length || typeof probs === 'string') fail(`logitLens.probs must hold as many numbers as logitLens.ids (${ids.length}), got ${probs?.length}`);
  const badId = Array.prototype.findIndex.call(ids, (id) => !(Number.isInteger(id) && id >= 0));
  if (badId >= 0) fail(`logitLens.ids[${badId}] must be a token id (an integer from 0), got ${ids[badId]}`);
  const badProb = Array.prototype.findIndex.call(probs, (p) => !(p >= 0 && p <= 1));
  if (badProb >= 0) fail(`logitLens.probs[${badProb}] must be a probability in [0, 1], got ${probs[badProb]}`);
  if (tokens !== null && tokens?.length !== n) fail(`tokens must hold n = ${n} labels, got ${tokens?.length}`);
  if (tokenLabel !== null && typeof tokenLabel !== 'function') throw new TypeError('attnlens/views: tokenLabel must be a function (id) => string');
  if (vocabulary !== null && !Array.isArray(vocabulary)) throw new TypeError('attnlens/views: vocabulary must be an array of token strings');
  const label = tokenLabel ?? (vocabulary ? (id) => vocabulary[id] ?? `#${id}` : (id) => `#${id}`);
  return Object.freeze({ layers, n, topK, ids, probs, positions: Array.from(positions), tokens: tokens ? Array.from(tokens, String) : null, label });
}

/** A cell's top-k, best first: [{ id, token, prob }]; `column` indexes positions (the position itself for a full lens). */
export function lensCell(model, layer, column) {
  const start = (layer * model.positions.length + column) * model.topK;
  return Array.from({ length: model.topK }, (_, rank) => {
    const id = model.ids[start + rank];
    return { id, token: String(model.label(id)), prob: model.probs[start + rank] };
  });
}

/** layer,position,rank (from 0),id,token,prob: one line per cell and rank. */
export function lensCsv(model) {
  const lines = ['layer,position,rank,id,token,prob'];
  for (let layer = 0; layer < model.layers; layer += 1) {
    model.positions.forEach((position, column) => {
      lensCell(model, layer, column).forEach(({ id, token, prob }, rank) => lines.push(`${layer},${position},${rank},${id},${csvField(token)},${prob}`));
    });
  }
  return lines.map((line) => `${line}\n`).join('');
}
