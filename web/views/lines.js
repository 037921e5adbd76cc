// The line view (after BertViz's head view): queries in a left column, keys
// in a right column, one line per (query, key) whose opacity is the weight.
// Focusing a token keeps only its lines. Pure: (data, options) -> scene + layout.
import { textWidth } from './scene.js';
import { shortLabel as cut } from './tokens.js';

const maxLabelChars = 18;
// Lines fainter than this are invisible anyway; skipping them keeps 512-token
// inputs (262,144 pairs) drawable in a frame.
const minVisibleWeight = 0.004;

// " the" is drawn as "␣the": the space is part of the token.
const shortLabel = (token) => cut(token, maxLabelChars);

/**
 * @param {object} data     { queryTokens, keyTokens, values (Float32Array n*nKeys), title? }
 * @param {object} options  { focus: { side: 'query'|'key', index } | null, color,
 *                            width: fit the scene to this many px (the gap between the columns stretches) }
 */
export function linesScene(data, { focus = null, color = '--line', width: fitWidth = null } = {}) {
  const rows = data.queryTokens.length;
  const cols = data.keyTokens.length;
  const count = Math.max(rows, cols);
  const rowH = count <= 40 ? 22 : count <= 128 ? 14 : 10;
  const size = Math.min(13, rowH - 2);
  const labelW = (tokens) => Math.min(maxLabelChars, Math.max(1, ...tokens.map((t) => t.length))) * size * 0.58 + 8;
  const leftW = labelW(data.queryTokens);
  const rightW = labelW(data.keyTokens);
  const gap = fitWidth ? Math.max(80, Math.min(420, fitWidth - leftW - rightW - 28)) : 220;
  const titleH = data.title ? 24 : 0;
  const top = titleH + 26;
  const leftX = 10 + leftW; // right edge of the query labels
  const rightX = leftX + gap; // left edge of the key labels
  const shapes = [];

  if (data.title) shapes.push({ kind: 'text', x: 4, y: 12, text: data.title, size: 14, bold: true });
  shapes.push({ kind: 'text', x: leftX, y: titleH + 10, text: 'query', size: 12, fill: '--muted', anchor: 'end' });
  shapes.push({ kind: 'text', x: rightX, y: titleH + 10, text: 'key', size: 12, fill: '--muted' });

  const active = (row, col) => !focus || (focus.side === 'query' ? focus.index === row : focus.index === col);
  for (let row = 0; row < rows; row += 1) {
    for (let col = 0; col < cols; col += 1) {
      const weight = data.values[row * cols + col];
      if (weight < minVisibleWeight || !active(row, col)) continue;
      shapes.push({
        kind: 'line', x1: leftX + 4, y1: top + (row + 0.5) * rowH, x2: rightX - 4, y2: top + (col + 0.5) * rowH,
        stroke: color, width: 2, opacity: weight,
      });
    }
  }

  const labelFill = (side, index) => {
    if (!focus) return '--text';
    return focus.side === side && focus.index === index ? '--strong' : '--faint';
  };
  for (let row = 0; row < rows; row += 1) {
    const focused = focus?.side === 'query' && focus.index === row;
    if (focused) shapes.push({ kind: 'rect', x: 4, y: top + row * rowH, w: leftW + 4, h: rowH, fill: '--highlight' });
    shapes.push({
      kind: 'text', x: leftX - 2, y: top + (row + 0.5) * rowH, text: shortLabel(data.queryTokens[row]),
      size, anchor: 'end', fill: labelFill('query', row), bold: focused,
    });
  }
  for (let col = 0; col < cols; col += 1) {
    const focused = focus?.side === 'key' && focus.index === col;
    if (focused) shapes.push({ kind: 'rect', x: rightX - 2, y: top + col * rowH, w: rightW + 4, h: rowH, fill: '--highlight' });
    shapes.push({
      kind: 'text', x: rightX + 2, y: top + (col + 0.5) * rowH, text: shortLabel(data.keyTokens[col]),
      size, fill: labelFill('key', col), bold: focused,
    });
  }

  const width = Math.max(rightX + rightW + 10, textWidth(data.title ?? '', 14) + 8);
  const height = top + count * rowH + 10;
  return { scene: { width, height, shapes }, layout: { top, rowH, leftX, leftW, rightX, rightW, rows, cols } };
}

// The token under a point (scene coordinates): { side, index } or null.
export function tokenAt(layout, px, py) {
  const index = Math.floor((py - layout.top) / layout.rowH);
  if (index < 0) return null;
  if (px <= layout.leftX + 4 && px >= layout.leftX - layout.leftW && index < layout.rows) return { side: 'query', index };
  if (px >= layout.rightX - 4 && px <= layout.rightX + layout.rightW && index < layout.cols) return { side: 'key', index };
  return null;
}
