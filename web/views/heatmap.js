// Heatmap of one n x nKeys weight matrix: queries down the left, keys along
// the top, a legend with the true range [0, 1]. Pure: (data, options) -> scene
// plus the layout needed to map a pointer position back to a cell.
import { hiddenCss, inkOn, weightLut } from './colors.js';
import { textWidth } from './scene.js';
import { shortLabel as cut } from './tokens.js';

const labelSize = 12;
const maxLabelChars = 14;

// " the" is drawn as "␣the": the space is part of the token.
const shortLabel = (token) => cut(token, maxLabelChars);

// Label every `step`-th token so labels never overlap on long inputs.
function labelStep(cell) {
  return Math.max(1, Math.ceil((labelSize + 2) / cell));
}

/**
 * The side in px of each token's cell in a grid of rows x cols no larger than maxGrid, in quarter pixels.
 * At least `minCell` px per cell (compact: 0.25): 512 tokens give a 1024 px grid the page scrolls.
 */
export function cellSide(rows, cols, maxGrid, { compact = false, minCell = 2 } = {}) {
  return Math.max(compact ? 0.25 : minCell, Math.min(compact ? 24 : 48, Math.floor((maxGrid / Math.max(rows, cols)) * 4) / 4));
}

/**
 * @param {object} data     { queryTokens, keyTokens, values (Float32Array n*nKeys), title?, legend? (the scale's heading, 'weight'),
 *                            hidden? (n*nKeys, 1 where a mask or window hid the cell: drawn grey, with a legend entry),
 *                            pool? (compact only: values and hidden are ceil(n/pool) x ceil(nKeys/pool) blocks) }
 * @param {object} options  { maxGrid: largest grid side in px, compact: no labels/legend (small multiples),
 *                            highlight: { row, col } | null (the selected cell),
 *                            token: query index | null (a highlighted token: its row outlined, its label bold),
 *                            minCell: smallest cell side in px (2) }
 */
export function heatmapScene(data, { maxGrid = 560, compact = false, highlight = null, token = null, minCell = 2 } = {}) {
  const rows = data.queryTokens.length;
  const cols = data.keyTokens.length;
  const cell = cellSide(rows, cols, maxGrid, { compact, minCell });
  const gridW = cell * cols;
  const gridH = cell * rows;
  const shapes = [];
  const titleH = data.title ? 24 : 0;

  if (compact) {
    const pad = 2;
    if (data.title) shapes.push({ kind: 'text', x: pad, y: 12, text: data.title, size: 12, bold: true, baseline: 'middle' });
    const x = pad;
    const y = titleH;
    // Pooled values (data.pool f, attention-data.js): blocks of f x f tokens, f cells of the tokens' size a side.
    const pool = data.pool ?? 1;
    const [blockRows, blockCols] = [Math.ceil(rows / pool), Math.ceil(cols / pool)];
    shapes.push({ kind: 'grid', x, y, w: blockCols * pool * cell, h: blockRows * pool * cell, rows: blockRows, cols: blockCols, values: data.values, lut: weightLut, hidden: data.hidden ?? null });
    if (token !== null && token < rows) shapes.push({ kind: 'rect', x, y: y + token * cell, w: gridW, h: cell, stroke: '--accent', lineWidth: 1.5 });
    return { scene: { width: gridW + 2 * pad, height: y + gridH + pad, shapes }, layout: { x, y, cell, rows, cols } };
  }

  const rowLabelW = Math.min(maxLabelChars, Math.max(...data.queryTokens.map((t) => t.length), 1)) * labelSize * 0.58 + 10;
  const colLabelLen = Math.min(maxLabelChars, Math.max(...data.keyTokens.map((t) => t.length), 1)) * labelSize * 0.58;
  // Key labels run up and to the right at 45 degrees.
  const colLabelH = colLabelLen * Math.SQRT1_2 + 12;
  const axisTitleH = 18;
  const x = 20 + rowLabelW; // 20 px for the rotated "query" axis title
  const y = titleH + axisTitleH + colLabelH;
  const legendX = x + gridW + colLabelLen * Math.SQRT1_2 + 24;
  const legendH = Math.max(140, Math.min(gridH, 320));

  if (data.title) shapes.push({ kind: 'text', x: 4, y: 12, text: data.title, size: 14, bold: true });
  shapes.push({ kind: 'text', x: x + gridW / 2, y: titleH + 9, text: 'key (attended to) →', size: 12, fill: '--muted', anchor: 'middle' });
  shapes.push({ kind: 'text', x: 9, y: y + gridH / 2, text: 'query (attending) →', size: 12, fill: '--muted', anchor: 'middle', rotate: 90 });

  shapes.push({ kind: 'grid', x, y, w: gridW, h: gridH, rows, cols, values: data.values, lut: weightLut, hidden: data.hidden ?? null });

  // Exact values inside cells when there is room: the worked example reads like a table.
  if (cell >= 34) {
    for (let row = 0; row < rows; row += 1) {
      for (let col = 0; col < cols; col += 1) {
        const value = data.values[row * cols + col];
        if (data.hidden?.[row * cols + col]) continue; // no weight to read: the key was hidden
        shapes.push({
          kind: 'text', x: x + (col + 0.5) * cell, y: y + (row + 0.5) * cell, text: value.toFixed(2),
          size: Math.min(12, cell / 3.4), fill: inkOn(value), anchor: 'middle',
        });
      }
    }
  }

  const rowStep = labelStep(cell);
  const labelFont = Math.min(labelSize, Math.max(8, cell - 1));
  for (let row = 0; row < rows; row += rowStep) {
    shapes.push({
      kind: 'text', x: x - 6, y: y + (row + 0.5) * cell, text: shortLabel(data.queryTokens[row]),
      size: labelFont, anchor: 'end', bold: highlight?.row === row || token === row,
      fill: token === row ? '--accent' : undefined,
    });
  }
  for (let col = 0; col < cols; col += rowStep) {
    shapes.push({
      kind: 'text', x: x + (col + 0.5) * cell, y: y - 6, text: shortLabel(data.keyTokens[col]),
      size: labelFont, anchor: 'start', rotate: -45, bold: highlight?.col === col,
    });
  }

  if (token !== null && token < rows) {
    shapes.push({ kind: 'rect', x: x - 1, y: y + token * cell - 1, w: gridW + 2, h: cell + 2, stroke: '--accent', lineWidth: 2 });
  }
  if (highlight && highlight.row < rows && highlight.col < cols) {
    const box = { kind: 'rect', x: x + highlight.col * cell, y: y + highlight.row * cell, w: cell, h: cell };
    shapes.push({ ...box, stroke: '#000', lineWidth: 3 });
    shapes.push({ ...box, stroke: '#fff', lineWidth: 1 });
  }

  const hiddenShown = Boolean(data.hidden); // null when nothing is hidden (hiddenCells)
  shapes.push(...legendShapes(legendX, y, legendH, { label: data.legend, hidden: hiddenShown }));
  const width = legendX + legendRoom(data.legend);
  const height = Math.max(y + gridH, y + legendH + (hiddenShown ? hiddenEntryHeight : 0)) + 12;
  return { scene: { width, height, shapes }, layout: { x, y, cell, rows, cols } };
}

const hiddenEntryHeight = 30;

/** The width a legend headed `label` takes: the bar and its ticks, or its heading if that is wider. */
export const legendRoom = (label = 'weight') => Math.max(60, textWidth(label, 12) + 4);

// A vertical colour bar from 1 (top) to 0 (bottom) with ticks, headed by what
// it measures; with `hidden`, a grey swatch below it for the cells a mask or
// window hid.
export function legendShapes(x, y, height, { label = 'weight', hidden = false } = {}) {
  const steps = 128;
  const values = new Float32Array(steps).map((_, index) => 1 - index / (steps - 1));
  const shapes = [
    { kind: 'text', x, y: y - 12, text: label, size: 12, fill: '--muted' },
    { kind: 'grid', x, y, w: 14, h: height, rows: steps, cols: 1, values, lut: weightLut },
    { kind: 'rect', x, y, w: 14, h: height, stroke: '#888', lineWidth: 0.5 },
  ];
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    const tickY = y + (1 - tick) * height;
    shapes.push({ kind: 'line', x1: x + 14, y1: tickY, x2: x + 18, y2: tickY, stroke: '--muted' });
    shapes.push({ kind: 'text', x: x + 21, y: tickY, text: tick === 0 || tick === 1 ? String(tick) : tick.toFixed(2), size: 11, fill: '--text' });
  }
  if (hidden) {
    const swatchY = y + height + 14;
    shapes.push({ kind: 'rect', x, y: swatchY, w: 14, h: 10, fill: hiddenCss, stroke: '#888', lineWidth: 0.5 });
    shapes.push({ kind: 'text', x: x + 19, y: swatchY + 5, text: 'hidden', size: 11, fill: '--text' });
  }
  return shapes;
}

// The legend alone, for views whose charts have none (small multiples).
export function legendScene(height = 120, { label = 'weight', hidden = false } = {}) {
  return { width: legendRoom(label) + 4, height: height + 32 + (hidden ? hiddenEntryHeight : 0), shapes: legendShapes(4, 22, height, { label, hidden }) };
}

// The cell under a point (scene coordinates), or null.
export function cellAt(layout, px, py) {
  const col = Math.floor((px - layout.x) / layout.cell);
  const row = Math.floor((py - layout.y) / layout.cell);
  if (row < 0 || col < 0 || row >= layout.rows || col >= layout.cols) return null;
  return { row, col };
}

// The largest `maxGrid` that keeps the whole heatmap (labels and legend
// included) within `width` px: the labels and legend do not depend on it.
export function maxGridFor(data, width, options = {}) {
  const { scene, layout } = heatmapScene(data, { ...options, maxGrid: 100 });
  return Math.max(16, width - (scene.width - layout.cell * layout.cols));
}
