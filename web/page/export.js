// The page's export files: the weights of the layer shown as CSV and JSON
// (the views' own formats, web/views/export.js, in the page's envelope: its
// settings, the model and the token ids), as downloads that never leave the machine.
import { blocksCsv, layerBlocks, toNested } from '../views/export.js';

// Long format, one row per (head, query, key); a trained model's rows name their layer in a first column.
export function weightsCsv(model, layer) {
  return blocksCsv(model, layerBlocks(model, layer), { layerColumn: model.hasLayers });
}

// `trained`: { info, name, ids } when the weights are a trained model's.
export function weightsJson(model, layer, { settings, version, trained = null }) {
  return JSON.stringify({
    generator: `attnlens ${version}`,
    settings,
    ...(trained ? { model: { name: trained.name, ...trained.info }, layer, layers: model.layers, ids: trained.ids } : {}),
    heads: model.heads,
    queryTokens: model.queryTokens,
    keyTokens: model.keyTokens,
    shape: [model.heads, model.n, model.nKeys],
    weights: layerBlocks(model, layer).map(({ values }) => toNested(values, model.n, model.nKeys)),
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
