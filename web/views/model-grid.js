// The model view (after BertViz's): every layer x every head of a model as
// small heatmaps in one grid, rows = layers, columns = heads, all on the
// same colour scale, so you can see at a glance which heads look back one
// token, which look at the first token, and how that changes with depth.
// Click a head (or move with the arrow keys and press Enter) to open it.
// With one layer and no layer labels it is the "all heads" small multiples.
import { heatmapScene, legendRoom, legendShapes } from './heatmap.js';
import { renderCanvas } from './scene.js';

const rowLabelWidth = 64;
const gap = 8;
const buttonChrome = 12; // the button's padding and border around its canvas

/** The side of each small heatmap, in px, so that `heads` columns fill `width`. */
export function multipleSize(width, heads, labelWidth = rowLabelWidth) {
  return Math.max(36, Math.min(180, Math.floor((width - labelWidth) / heads - gap - buttonChrome)));
}

// `hidden`: the layer's hidden cells (a mask or window), or null; `data.pool`: values pooled into blocks (attention-data.js).
function smallScene(data, values, maxGrid, title, token, hidden = null) {
  const queryTokens = data.queryTokens ?? data.tokens;
  const keyTokens = data.keyTokens ?? queryTokens;
  return heatmapScene({ queryTokens, keyTokens, values, title, hidden, pool: data.pool }, { compact: true, maxGrid, token }).scene;
}

// What a pooled multiple's label adds: each drawn block is the largest of its weights.
const pooledNote = (pool) => (pool > 1 ? `; each block the largest of ${pool} × ${pool} weights (open the head for each weight)` : '');

/**
 * Draws the grid into `container` (a CSS grid), one button per head.
 * Handlers are set as properties (onclick, onkeydown) on `container`, so
 * redrawing replaces them and nothing accumulates.
 * @param {object} data { layers, heads, tokens | queryTokens + keyTokens, weightsOf(layer, head) -> Float32Array,
 *                        pool (optional: the weights are blocks of pool x pool, each their largest weight),
 *                        hiddenOf(layer) -> the layer's hidden cells (1 = a mask or window hid it) or null (optional),
 *                        current: { layer, head } }
 * @param {object} options { maxGrid, onOpen(layer, head), layerLabels = true, titles = false (a "Head h" title
 *                           in each multiple), token: highlighted query index | null, theme,
 *                           columns: heads per row without layer labels (the multiples wrap; Up/Down move a row),
 *                           roles: headRoles(...) of the data (head-roles.js), to name each head's measured role }
 */
export function renderModelGrid(container, data, { maxGrid, onOpen, layerLabels = true, titles = false, token = null, theme, columns = data.heads, roles = null }) {
  const { layers, heads, current } = data;
  container.style.gridTemplateColumns = layerLabels ? `${rowLabelWidth}px repeat(${heads}, max-content)` : `repeat(${columns}, max-content)`;
  const children = [];
  if (layerLabels) {
    children.push(document.createElement('span'));
    for (let head = 0; head < heads; head += 1) {
      const label = document.createElement('span');
      label.className = 'grid-head-label';
      label.textContent = `head ${head + 1}`;
      children.push(label);
    }
  }
  const buttons = [];
  for (let layer = 0; layer < layers; layer += 1) {
    if (layerLabels) {
      const label = document.createElement('span');
      label.className = 'grid-layer-label';
      label.textContent = `layer ${layer + 1}`;
      children.push(label);
    }
    for (let head = 0; head < heads; head += 1) {
      const button = document.createElement('button');
      button.type = 'button';
      button.dataset.layer = String(layer);
      button.dataset.head = String(head);
      const name = layerLabels ? `Layer ${layer + 1}, head ${head + 1}` : `Head ${head + 1}`;
      const role = roles?.[layer * heads + head];
      const measured = role?.role ? roleText(role) : null;
      button.setAttribute('aria-label', `${name}${measured ? `, ${measured.long}` : ''}: open in the heatmap`);
      button.title = `${measured ? `${name}: ${measured.long}` : name}${pooledNote(data.pool)}`;
      const isCurrent = layer === current.layer && head === current.head;
      if (isCurrent) button.setAttribute('aria-current', 'true');
      // One tab stop for the whole grid; arrow keys move inside it.
      button.tabIndex = isCurrent ? 0 : -1;
      const scene = smallScene(data, data.weightsOf(layer, head), maxGrid, titles ? `Head ${head + 1}` : undefined, token, data.hiddenOf?.(layer));
      button.append(renderCanvas(document.createElement('canvas'), scene, theme ? { theme } : {}));
      if (measured) {
        const badge = document.createElement('span');
        badge.className = 'grid-role';
        badge.style.cssText = 'display:block;font-size:0.75em;line-height:1.3;white-space:nowrap';
        badge.textContent = measured.short;
        button.append(badge);
      }
      buttons.push(button);
      children.push(button);
    }
  }
  container.replaceChildren(...children);

  const buttonOf = (event) => event.target.closest?.('button[data-layer]');
  container.onclick = (event) => {
    const button = buttonOf(event);
    if (button) onOpen(Number(button.dataset.layer), Number(button.dataset.head));
  };
  container.onkeydown = (event) => {
    const button = buttonOf(event);
    if (!button) return;
    let layer = Number(button.dataset.layer);
    let head = Number(button.dataset.head);
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (layers === 1 && columns < heads && (event.key === 'ArrowUp' || event.key === 'ArrowDown')) {
      head = Math.min(Math.max(head + (event.key === 'ArrowUp' ? -columns : columns), 0), heads - 1);
    } else if (moves[event.key]) {
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
  return buttons;
}

// "previous token 0.83": a head's measured role, short under its heatmap and long for its label.
function roleText({ role, previous, first }) {
  const value = role === 'previous token' ? previous : first;
  const where = role === 'previous token' ? 'the previous token' : 'the first token';
  return { short: `${role} ${value.toFixed(2)}`, long: `looks at ${where} (mean weight ${value.toFixed(2)} on this text)` };
}

/** Whether any layer of the grid's data has hidden cells (the legend then explains grey). */
export const anyHidden = (data) => Array.from({ length: data.layers }, (_, layer) => data.hiddenOf?.(layer)).some(Boolean);

/** The same grid as one scene, for PNG and SVG export. Options as renderModelGrid, plus `title`. */
export function modelGridScene(data, { maxGrid, title, layerLabels = true, titles = false, token = null }) {
  const { layers, heads, current } = data;
  const shapes = [];
  const titleH = title ? 26 : 0;
  const headerH = layerLabels ? 20 : 0;
  if (title) shapes.push({ kind: 'text', x: 4, y: 12, text: title, size: 14, bold: true });
  let cellW = 0;
  let cellH = 0;
  const scenes = [];
  for (let layer = 0; layer < layers; layer += 1) {
    for (let head = 0; head < heads; head += 1) {
      const scene = smallScene(data, data.weightsOf(layer, head), maxGrid, titles ? `Head ${head + 1}` : undefined, token, data.hiddenOf?.(layer));
      cellW = Math.max(cellW, scene.width);
      cellH = Math.max(cellH, scene.height);
      scenes.push(scene);
    }
  }
  const x0 = layerLabels ? rowLabelWidth : 4;
  const y0 = titleH + headerH;
  if (layerLabels) {
    for (let head = 0; head < heads; head += 1) {
      shapes.push({ kind: 'text', x: x0 + head * (cellW + gap) + cellW / 2, y: titleH + 10, text: `head ${head + 1}`, size: 12, fill: '--muted', anchor: 'middle' });
    }
  }
  scenes.forEach((scene, index) => {
    const layer = Math.floor(index / heads);
    const head = index % heads;
    const x = x0 + head * (cellW + gap);
    const y = y0 + layer * (cellH + gap);
    if (head === 0 && layerLabels) shapes.push({ kind: 'text', x: 4, y: y + cellH / 2, text: `layer ${layer + 1}`, size: 12, fill: '--muted' });
    for (const shape of scene.shapes) shapes.push({ ...shape, x: shape.x + x, y: shape.y + y });
    if (layer === current.layer && head === current.head) {
      shapes.push({ kind: 'rect', x: x - 2, y: y - 2, w: scene.width + 4, h: scene.height + 4, stroke: '--accent', lineWidth: 2 });
    }
  });
  // The one colour scale of every multiple, as in the heatmap.
  const gridRight = x0 + heads * (cellW + gap);
  const gridHeight = layers * (cellH + gap) - gap;
  const legendHeight = Math.max(120, Math.min(gridHeight, 320));
  shapes.push(...legendShapes(gridRight + 16, y0 + 12, legendHeight, { label: data.legend, hidden: anyHidden(data) }));
  return {
    width: gridRight + 16 + legendRoom(data.legend),
    height: Math.max(y0 + gridHeight, y0 + 12 + legendHeight) + 8,
    shapes,
  };
}

/**
 * Every head of one layer as small multiples in rows of `columns`, as one scene (the page's "All heads" export).
 * @param {object} data { queryTokens, keyTokens, headValues: Float32Array[], legend? (the scale's heading),
 *                        hidden? (the layer's hidden cells or null) }
 */
export function multiplesScene(data, { maxGrid = 220, columns = Math.min(4, data.headValues.length), token = null } = {}) {
  const shapes = [];
  let width = 0;
  let height = 0;
  let rowHeight = 0;
  data.headValues.forEach((values, head) => {
    const scene = smallScene(data, values, maxGrid, `Head ${head + 1}`, token, data.hidden);
    const col = head % columns;
    if (col === 0 && head > 0) { height += rowHeight + 10; rowHeight = 0; }
    const dx = col * (scene.width + 10);
    for (const shape of scene.shapes) shapes.push({ ...shape, x: shape.x + dx, y: shape.y + height });
    width = Math.max(width, dx + scene.width);
    rowHeight = Math.max(rowHeight, scene.height);
  });
  // The one colour scale of every multiple.
  const legendHeight = Math.max(100, Math.min(height + rowHeight - 30, 240));
  shapes.push(...legendShapes(width + 16, 22, legendHeight, { label: data.legend, hidden: Boolean(data.hidden) }));
  return { width: width + 16 + legendRoom(data.legend), height: Math.max(height + rowHeight, 22 + legendHeight + 8), shapes };
}
