// The model view of an encoder-decoder, as BertViz's encoder-decoder model
// view shows it: the encoder's self-attention, the decoder's self-attention
// and the cross-attention side by side, each every layer × every head of one
// run (attnlens/views modelView three times, each over fromRun's kind).
// Mounted by panels.js in the model view's box in place of the one grid.
// Its exports hold the three grids in one file, each under its title: PNG and
// SVG side by side, CSV with a first column naming the kind, JSON by kind.
import { attentionData } from '../../views/attention-data.js';
import { blocksCsv, layerBlocks } from '../../views/export.js';
import { modelView } from '../../views/index.js';
import { readTheme } from '../../views/theme.js';

const svgNamespace = 'http://www.w3.org/2000/svg';
const exportGap = 16; // px between the grids in the PNG and SVG

export const attentionKindTitles = { encoder: 'Encoder self-attention', decoder: 'Decoder self-attention', cross: 'Cross-attention (target × source)' };

// Left edges of parts `widths` wide, `gap` apart, and the whole width.
function sideBySide(widths, gap) {
  const lefts = widths.map((_, index) => widths.slice(0, index).reduce((sum, width) => sum + width + gap, 0));
  return { lefts, width: lefts.at(-1) + widths.at(-1) };
}

// One SVG document with each grid's own SVG (its title inside it) placed side by side.
function svgOfParts(parts, background) {
  const documents = parts.map((svg) => new DOMParser().parseFromString(svg, 'image/svg+xml').documentElement);
  const { lefts, width } = sideBySide(documents.map((svg) => Number(svg.getAttribute('width'))), exportGap);
  const height = Math.max(...documents.map((svg) => Number(svg.getAttribute('height'))));
  const root = document.createElementNS(svgNamespace, 'svg');
  for (const [name, value] of [['width', width], ['height', height], ['viewBox', `0 0 ${width} ${height}`]]) root.setAttribute(name, value);
  const title = root.appendChild(document.createElementNS(svgNamespace, 'title'));
  title.textContent = `attnlens model view: ${Object.values(attentionKindTitles).join(', ')}`;
  const rect = root.appendChild(document.createElementNS(svgNamespace, 'rect'));
  for (const [name, value] of [['width', width], ['height', height], ['fill', background]]) rect.setAttribute(name, value);
  documents.forEach((svg, index) => {
    svg.setAttribute('x', lefts[index]);
    root.append(document.importNode(svg, true));
  });
  return new XMLSerializer().serializeToString(root);
}

// One PNG of the grids' PNGs (each at the same pixel ratio) side by side.
async function pngOfParts(blobs, background) {
  const images = await Promise.all(blobs.map((blob) => createImageBitmap(blob)));
  const ratio = 2; // the views' PNGs are drawn at twice their CSS size (views/export.js scenePng)
  const { lefts, width } = sideBySide(images.map((image) => image.width), exportGap * ratio);
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = Math.max(...images.map((image) => image.height));
  const context = canvas.getContext('2d');
  context.fillStyle = background;
  context.fillRect(0, 0, canvas.width, canvas.height);
  images.forEach((image, index) => context.drawImage(image, lefts[index], 0));
  return new Promise((resolve, reject) => {
    canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('the browser could not encode the PNG'))), 'image/png');
  });
}

/**
 * @param {HTMLElement} box where the three grids go
 * @param {object} options the model view's options, plus kinds: [{ kind, data, gridSize, onSelect }]
 * @returns a view like the others: update(data, options), destroy(), and exports of the three grids in one
 *   file: toPNG and toSVG (side by side, each with its title), toCSV (a first column `kind`), toJSON ({ kinds })
 */
function mount(box, _data, { kinds, ...options }) {
  const element = document.createElement('div');
  element.className = 'model-kinds';
  box.append(element);
  const views = kinds.map(({ kind, data, gridSize, onSelect }) => {
    const part = document.createElement('section');
    part.setAttribute('aria-label', attentionKindTitles[kind]);
    // The grids look alike: each says on screen which attention it draws (modelView draws no title).
    const title = document.createElement('h3');
    title.className = 'kind-title';
    title.textContent = attentionKindTitles[kind];
    part.append(title);
    element.append(part);
    return { kind, data, view: modelView.mount(part, data, { ...options, title: attentionKindTitles[kind], gridSize, onSelect }) };
  });
  const background = () => readTheme(element).background;
  return {
    element,
    get layout() { return null; },
    update(_next, { kinds: nextKinds, ...nextOptions }) {
      nextKinds.forEach(({ data, gridSize, onSelect }, index) => {
        views[index].data = data;
        views[index].view.update(data, { ...nextOptions, title: attentionKindTitles[views[index].kind], gridSize, onSelect });
      });
    },
    destroy() {
      for (const { view } of views) view.destroy();
      element.remove();
    },
    toPNG: async () => pngOfParts(await Promise.all(views.map(({ view }) => view.toPNG())), background()),
    toSVG: () => svgOfParts(views.map(({ view }) => view.toSVG()), background()),
    // Every layer's weights of each kind, one row per (layer, head, query, key) under the kind's name;
    // one header line (a fixed text: no token in it) for the three.
    toCSV: () => views.map(({ kind, data }, index) => {
      const model = attentionData(data, { normalized: false });
      const blocks = Array.from({ length: model.layers }, (_, layer) => layerBlocks(model, layer)).flat();
      const csv = blocksCsv(model, blocks, { lead: ['kind', kind] });
      return index === 0 ? csv : csv.slice(csv.indexOf('\n') + 1);
    }).join(''),
    toJSON: () => ({
      view: 'modelView',
      kinds: views.map(({ kind, view }) => ({ kind, title: attentionKindTitles[kind], ...view.toJSON() })),
    }),
  };
}

export const kindsModelView = { mount };
