// The model view (after BertViz's): every layer x every head of a model as
// small heatmaps in one grid, rows = layers, columns = heads, all on the
// same colour scale, so you can see at a glance which heads look back one
// token, which look at the first token, and how that changes with depth.
// Click a head (or move with the arrow keys and press Enter) to open it.
import { heatmapScene, legendShapes } from './heatmap.js';
import { renderCanvas } from './scene.js';

const rowLabelWidth = 64;
const gap = 8;
const buttonChrome = 12; // the button's padding and border around its canvas

/** The side of each small heatmap, in px, so that `heads` columns fill `width`. */
export function multipleSize(width, heads) {
  return Math.max(36, Math.min(180, Math.floor((width - rowLabelWidth) / heads - gap - buttonChrome)));
}

function smallScene(data, values, maxGrid) {
  return heatmapScene({ queryTokens: data.tokens, keyTokens: data.tokens, values }, { compact: true, maxGrid }).scene;
}

/**
 * Draws the grid into `container` (a CSS grid), one button per head.
 * @param {object} data { layers, heads, tokens, weightsOf(layer, head) -> Float32Array n*n, current: { layer, head } }
 * @param {object} options { maxGrid, onOpen(layer, head) }
 */
export function renderModelGrid(container, data, { maxGrid, onOpen }) {
  const { layers, heads, current } = data;
  container.style.gridTemplateColumns = `${rowLabelWidth}px repeat(${heads}, max-content)`;
  const children = [document.createElement('span')];
  for (let head = 0; head < heads; head += 1) {
    const label = document.createElement('span');
    label.className = 'grid-head-label';
    label.textContent = `head ${head + 1}`;
    children.push(label);
  }
  const buttons = [];
  for (let layer = 0; layer < layers; layer += 1) {
    const label = document.createElement('span');
    label.className = 'grid-layer-label';
    label.textContent = `layer ${layer + 1}`;
    children.push(label);
    for (let head = 0; head < heads; head += 1) {
      const button = document.createElement('button');
      button.type = 'button';
      button.dataset.layer = String(layer);
      button.dataset.head = String(head);
      button.setAttribute('aria-label', `Layer ${layer + 1}, head ${head + 1}: open in the heatmap`);
      button.title = `Layer ${layer + 1}, head ${head + 1}`;
      const isCurrent = layer === current.layer && head === current.head;
      if (isCurrent) button.setAttribute('aria-current', 'true');
      // One tab stop for the whole grid; arrow keys move inside it.
      button.tabIndex = isCurrent ? 0 : -1;
      button.append(renderCanvas(document.createElement('canvas'), smallScene(data, data.weightsOf(layer, head), maxGrid)));
      button.addEventListener('click', () => onOpen(layer, head));
      buttons.push(button);
      children.push(button);
    }
  }
  container.replaceChildren(...children);

  container.onkeydown = (event) => {
    const button = event.target.closest('button[data-layer]');
    if (!button) return;
    let layer = Number(button.dataset.layer);
    let head = Number(button.dataset.head);
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (moves[event.key]) {
      layer = Math.min(Math.max(layer + moves[event.key][0], 0), layers - 1);
      head = Math.min(Math.max(head + moves[event.key][1], 0), heads - 1);
    } else if (event.key === 'Home') head = 0;
    else if (event.key === 'End') head = heads - 1;
    else return;
    event.preventDefault();
    const next = buttons[layer * heads + head];
    for (const other of buttons) other.tabIndex = other === next ? 0 : -1;
    next.focus();
  };
}

/** The same grid as one scene, for PNG and SVG export. */
export function modelGridScene(data, { maxGrid, title }) {
  const { layers, heads, current } = data;
  const shapes = [];
  const titleH = title ? 26 : 0;
  const headerH = 20;
  if (title) shapes.push({ kind: 'text', x: 4, y: 12, text: title, size: 14, bold: true });
  let cellW = 0;
  let cellH = 0;
  const scenes = [];
  for (let layer = 0; layer < layers; layer += 1) {
    for (let head = 0; head < heads; head += 1) {
      const scene = smallScene(data, data.weightsOf(layer, head), maxGrid);
      cellW = Math.max(cellW, scene.width);
      cellH = Math.max(cellH, scene.height);
      scenes.push(scene);
    }
  }
  const x0 = rowLabelWidth;
  const y0 = titleH + headerH;
  for (let head = 0; head < heads; head += 1) {
    shapes.push({ kind: 'text', x: x0 + head * (cellW + gap) + cellW / 2, y: titleH + 10, text: `head ${head + 1}`, size: 12, fill: '#555', anchor: 'middle' });
  }
  scenes.forEach((scene, index) => {
    const layer = Math.floor(index / heads);
    const head = index % heads;
    const x = x0 + head * (cellW + gap);
    const y = y0 + layer * (cellH + gap);
    if (head === 0) shapes.push({ kind: 'text', x: 4, y: y + cellH / 2, text: `layer ${layer + 1}`, size: 12, fill: '#555' });
    for (const shape of scene.shapes) shapes.push({ ...shape, x: shape.x + x, y: shape.y + y });
    if (layer === current.layer && head === current.head) {
      shapes.push({ kind: 'rect', x: x - 2, y: y - 2, w: scene.width + 4, h: scene.height + 4, stroke: '#1f4e9c', lineWidth: 2 });
    }
  });
  // The one colour scale of every multiple, as in the heatmap.
  const gridRight = x0 + heads * (cellW + gap);
  const gridHeight = layers * (cellH + gap) - gap;
  const legendHeight = Math.max(120, Math.min(gridHeight, 320));
  shapes.push(...legendShapes(gridRight + 16, y0 + 12, legendHeight));
  return {
    width: gridRight + 16 + 60,
    height: Math.max(y0 + gridHeight, y0 + 12 + legendHeight) + 8,
    shapes,
  };
}
