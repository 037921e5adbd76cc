// Exports: the weights as CSV and JSON (with their tokens), the current view
// as PNG and SVG, all as file downloads that never leave the machine.
import { headWeights, toNested } from './views/data.js';
import { renderCanvas, renderSvg } from '../views/scene.js';

function csvField(text) {
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

// Long format, one row per (head, query, key): loads directly into a data frame.
// For a trained model the rows are those of one layer, named in a first column.
export function weightsCsv(model, { layer = null } = {}) {
  const lines = [`${layer === null ? '' : 'layer,'}head,query_index,query_token,key_index,key_token,weight`];
  const prefix = layer === null ? '' : `${layer},`;
  for (let head = 0; head < model.heads; head += 1) {
    const weights = headWeights(model, head);
    for (let query = 0; query < model.n; query += 1) {
      for (let key = 0; key < model.nKeys; key += 1) {
        lines.push(prefix + [
          head, query, csvField(model.queryTokens[query]), key, csvField(model.keyTokens[key]),
          weights[query * model.nKeys + key],
        ].join(','));
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

// `trained`: { layer, layers, info, name, ids } when the weights are a trained model's layer.
export function weightsJson(model, { settings, version, trained = null }) {
  return JSON.stringify({
    generator: `attnlens ${version}`,
    settings,
    ...(trained ? { model: { name: trained.name, ...trained.info }, layer: trained.layer, layers: trained.layers, ids: trained.ids } : {}),
    heads: model.heads,
    queryTokens: model.queryTokens,
    keyTokens: model.keyTokens,
    shape: [model.heads, model.n, model.nKeys],
    weights: Array.from({ length: model.heads }, (_, head) => toNested(headWeights(model, head), model.n, model.nKeys)),
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

export function pngBlob(scene) {
  const canvas = renderCanvas(document.createElement('canvas'), scene, { pixelRatio: 2 });
  return new Promise((resolve, reject) => {
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('the browser could not encode the PNG'))), 'image/png');
  });
}

export function svgBlob(scene, title) {
  return new Blob([renderSvg(scene, { title })], { type: 'image/svg+xml' });
}
