// Matrices as HTML tables: the step-by-step view and the text alternative of
// every heatmap. Labels are set with textContent only (user text is text).
import { hiddenCss, inkOn, weightCss } from './colors.js';
import { displayToken } from './tokens.js';

export function formatNumber(value, digits = 4) {
  if (value === -Infinity) return '-∞';
  if (value === Infinity) return '∞';
  const text = value.toFixed(digits);
  return /^-0\.0*$/.test(text) ? text.slice(1) : text; // no "-0.0000"
}

/** A table's size as its caption says it. */
export const matrixShape = (rows, cols) => ` ${rows} × ${cols}`;

/**
 * @param {object} matrix  { name, rows, cols, values, rowLabels?, colLabels?, note? }
 * @param {object} options { maxRows, maxCols, digits, colored (shade cells by weight), highlightRow (a row index),
 *                           hiddenBy: (row, col) => what hid the cell ('the window', ...) or null: such cells say "hidden" }
 */
export function matrixTable(matrix, { maxRows = 24, maxCols = 16, digits = 4, colored = false, highlightRow = null, hiddenBy = null } = {}) {
  const { rows, cols, values } = matrix;
  const shownRows = Math.min(rows, maxRows);
  const shownCols = Math.min(cols, maxCols);
  const table = document.createElement('table');
  table.className = 'matrix';
  const caption = table.createCaption();
  const name = document.createElement('span');
  name.className = 'matrix-name';
  name.textContent = matrix.name;
  const shape = document.createElement('span');
  shape.className = 'matrix-shape';
  shape.textContent = matrixShape(rows, cols);
  caption.append(name, shape);
  if (shownRows < rows || shownCols < cols) {
    const clipped = document.createElement('span');
    clipped.className = 'matrix-clipped';
    clipped.textContent = ` (showing ${shownRows} × ${shownCols}; export CSV/JSON for all)`;
    caption.append(clipped);
  }

  const head = table.createTHead().insertRow();
  head.append(document.createElement('td'));
  for (let col = 0; col < shownCols; col += 1) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = displayToken(matrix.colLabels?.[col] ?? String(col));
    head.append(th);
  }
  const body = table.createTBody();
  for (let row = 0; row < shownRows; row += 1) {
    const tr = body.insertRow();
    if (row === highlightRow) tr.className = 'attnlens-highlight';
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = displayToken(matrix.rowLabels?.[row] ?? String(row));
    tr.append(th);
    for (let col = 0; col < shownCols; col += 1) {
      const value = values[row * cols + col];
      const td = tr.insertCell();
      const hidden = hiddenBy?.(row, col);
      if (hidden) {
        // Not a weight of 0: the key was never visible to this query.
        Object.assign(td, { textContent: 'hidden', title: `hidden by ${hidden}` }).style.background = hiddenCss;
        continue;
      }
      td.textContent = formatNumber(value, digits);
      td.title = Number.isFinite(value) ? String(value) : td.textContent;
      if (colored && Number.isFinite(value)) {
        td.style.background = weightCss(value);
        td.style.color = inkOn(value);
      }
    }
  }
  return table;
}
