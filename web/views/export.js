// Exports of what a view shows: CSV (long format, one row per weight, with
// both tokens), JSON (nested arrays), SVG (a standalone document with real
// text) and PNG (a Blob), all computed in the page, nothing uploaded.
import { headValues } from './attention-data.js';
import { renderCanvas } from './scene.js';
import { lightTheme } from './theme.js';
import { csvField } from './tokens.js';

/**
 * @param {object} model  attentionData()'s result (tokens)
 * @param {Array<{ layer, head, values }>} blocks  n x nKeys weights each; head may be 'mean'
 * @param {{ layerColumn?: boolean, lead?: [string, string] }} options  layerColumn false: no layer column (data
 *   that has no layers); lead: a first column [name, value] (the page's encoder-decoder model view: ['kind', 'cross'])
 */
export function blocksCsv(model, blocks, { layerColumn = true, lead = null } = {}) {
  const [leadName, leadValue] = lead ? [`${lead[0]},`, `${lead[1]},`] : ['', ''];
  // The last column is named for what it holds, so a file never passes value-weighted numbers off as weights.
  const lines = [`${leadName}${layerColumn ? 'layer,' : ''}head,query_index,query_token,key_index,key_token,${model.valueWeighted ? 'value_weighted' : 'weight'}`];
  for (const { layer, head, values } of blocks) {
    for (let query = 0; query < model.n; query += 1) {
      const prefix = `${leadValue}${layerColumn ? `${layer},` : ''}${head},${query},${csvField(model.queryTokens[query])},`;
      for (let key = 0; key < model.nKeys; key += 1) {
        lines.push(`${prefix}${key},${csvField(model.keyTokens[key])},${values[query * model.nKeys + key]}`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Nested arrays [row][col] from a flat row-major array. */
export function toNested(values, rows, cols) {
  return Array.from({ length: rows }, (_, row) => Array.from(values.subarray(row * cols, (row + 1) * cols)));
}

/** One layer's heads as CSV blocks [{ layer, head, values }]. */
export function layerBlocks(model, layer) {
  return Array.from({ length: model.heads }, (_, head) => ({ layer, head, values: headValues(model, layer, head) }));
}

/** A PNG of the scene at twice its CSS size. */
export function scenePng(scene, theme = lightTheme) {
  const canvas = renderCanvas(document.createElement('canvas'), scene, { pixelRatio: 2, theme });
  return new Promise((resolve, reject) => {
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('attnlens/views: the browser could not encode the PNG'))), 'image/png');
  });
}
