// The page's export files: the weights of the layer shown as CSV and JSON
// (the views' own formats, web/views/export.js, in the page's envelope: its
// settings, the model and the token ids), as downloads that never leave the machine.
import { blocksCsv, layerBlocks, toNested } from '../views/export.js';
import { shownScores } from './analysis-panel.js';

// `shownLayer`: { model, blocks, layer, layers, hasLayers } (link-and-exports.js shownLayer): the views' model of
// what is shown, the layer's every head as blocks { layer, head, values }, that layer and how many the run has.

// Long format, one row per (head, query, key); a trained model's rows name their layer in a first column.
export function weightsCsv({ model, blocks, hasLayers }) {
  return blocksCsv(model, blocks, { layerColumn: hasLayers });
}

// `trained`: { info, name, ids } when the weights are a trained model's.
export function weightsJson({ model, blocks, layer, layers }, { settings, version, trained = null }) {
  return JSON.stringify({
    generator: `attnlens ${version}`,
    settings,
    ...(trained ? { model: { name: trained.name, ...trained.info }, layer, layers, ids: trained.ids } : {}),
    // `weights` holds what the views drew: value-weighted attention when the switch was on.
    quantity: model.valueWeighted ? 'valueWeighted' : 'weights',
    heads: blocks.length,
    queryTokens: model.queryTokens,
    keyTokens: model.keyTokens,
    shape: [blocks.length, model.n, model.nKeys],
    weights: blocks.map(({ values }) => toNested(values, model.n, model.nKeys)),
  }, null, 1);
}

// An encoder-decoder's model view (model/kinds-model-view.js toJSON: { view, kinds: [{ kind, title, queryTokens,
// keyTokens, shape, weights }] }) in the page's envelope; targetIds: the decoder's inputs of the run.
export function kindsJson(kinds, { settings, version, trained, targetIds }) {
  return JSON.stringify({
    generator: `attnlens ${version}`,
    settings,
    model: { name: trained.name, ...trained.info }, ids: Array.from(trained.ids), targetIds: Array.from(targetIds ?? []),
    ...kinds,
  }, null, 1);
}

// The Analysis tab's numbers: every head's scores ([layer][head] per score) and the rollout ([layer][query][key]).
export function analysisJson(state, { settings, version, trained }) {
  const { layers, heads, scores } = shownScores(state);
  const { tokens, n, rollout } = state.analysis.result;
  const perHead = (values) => toNested(values, layers, heads);
  return JSON.stringify({
    generator: `attnlens ${version}`,
    settings,
    model: { name: trained.name, ...trained.info },
    text: state.analysis.text, tokens, ids: state.analysis.result.ids, layers, heads,
    scores: Object.fromEntries(Object.entries(scores).map(([name, values]) => [name, perHead(values)])),
    ...(state.induction ? { inductionOnRepeats: { length: state.induction.length, seed: state.induction.seed } } : {}),
    rollout: Array.from({ length: layers }, (_, layer) => toNested(rollout.subarray(layer * n * n, (layer + 1) * n * n), n, n)),
  }, null, 1);
}

export function download(filename, blob) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
