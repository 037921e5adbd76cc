// The line view (after BertViz's head view): queries in a left column, keys
// in a right column, one line per (query, key) whose opacity is the weight.
// Focusing a token keeps only its lines. Pure: (data, options) -> scene + layout.
import { textWidth } from './scene.js';
import { shortLabel as cut } from './tokens.js';

const maxLabelChars = 18;
// Lines fainter than this are invisible anyway; skipping them keeps 512-token
// inputs (262,144 pairs) drawable in a frame.
const minVisibleWeight = 0.004;
const opacityLevels = 64;
const segmentsPerPath = 2000;

// " the" is drawn as "␣the": the space is part of the token.
const shortLabel = (token) => cut(token, maxLabelChars);

// Rasterizing the lines is what costs: the 130,000 visible lines of a 512-token
// input took 4 s to draw, 2 px wide. Beyond `allKeysUpTo` keys each query draws
// only its `keysPerQuery` strongest keys (the others would be a grey fog), 1 px wide.
const allKeysUpTo = 64;
const keysPerQuery = 8;

// The columns of a row's strongest weights, strongest first (a small insertion list: O(cols * k)).
function strongestKeys(values, row, cols) {
  if (cols <= allKeysUpTo) return Array.from({ length: cols }, (_, col) => col);
  const offset = row * cols;
  const best = [];
  for (let col = 0; col < cols; col += 1) {
    const weight = values[offset + col];
    if (best.length === keysPerQuery && weight <= values[offset + best[keysPerQuery - 1]]) continue;
    let at = best.length === keysPerQuery ? keysPerQuery - 1 : best.length;
    while (at > 0 && values[offset + best[at - 1]] < weight) {
      best[at] = best[at - 1];
      at -= 1;
    }
    best[at] = col;
  }
  return best;
}

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

  // One stroke per opacity level: a 512-token input has up to 262,144 lines, and
  // stroking each on its own took seconds. Weights are drawn at the nearest of
  // `opacityLevels` opacities (at least the faintest), a difference no eye sees.
  const active = (row, col) => !focus || (focus.side === 'query' ? focus.index === row : focus.index === col);
  // Each level's segments go straight into strokes of at most `segmentsPerPath`
  // segments: one path of 100,000 brought Chromium's renderer down.
  const lineWidth = cols <= allKeysUpTo ? 2 : 1;
  const strokes = Array.from({ length: opacityLevels + 1 }, () => []);
  const addLine = (level, x1, y1, x2, y2) => {
    const list = strokes[level];
    let last = list[list.length - 1];
    if (!last || last.points.length === 4 * segmentsPerPath) {
      last = { kind: 'segments', points: [], stroke: color, width: lineWidth, opacity: level / opacityLevels };
      list.push(last);
    }
    last.points.push(x1, y1, x2, y2);
  };
  for (let row = 0; row < rows; row += 1) {
    for (const col of strongestKeys(data.values, row, cols)) {
      const weight = data.values[row * cols + col];
      if (weight < minVisibleWeight || !active(row, col)) continue;
      const level = Math.max(1, Math.min(opacityLevels, Math.round(weight * opacityLevels)));
      addLine(level, leftX + 4, top + (row + 0.5) * rowH, rightX - 4, top + (col + 0.5) * rowH);
    }
  }
  for (const list of strokes) shapes.push(...list);

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
