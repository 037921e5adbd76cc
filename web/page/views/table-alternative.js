// The text alternative of the chart: the weights shown, as a table
// (attnlens/views' matrixTable) of at most 128 x 64 cells. A key typed at the
// end of a long text leaves those cells as they were and changes only the
// size in the caption: the table is then kept, its caption updated.
// Rebuilding its 8,000 cells for each key took longer than drawing the
// heatmap, and a screen reader in the table would lose its place.
import { matrixShape, matrixTable } from '../../views/matrix-table.js';

// What a table of `matrix` shows, as text: the same for two tables that differ only in the size in their caption.
function shownCells({ name, rows, cols, values, rowLabels, colLabels }, { maxRows, maxCols, hiddenBy }) {
  const shownRows = Math.min(rows, maxRows);
  const shownCols = Math.min(cols, maxCols);
  const cells = [name, shownRows, shownCols, shownRows < rows || shownCols < cols, rowLabels.slice(0, shownRows), colLabels.slice(0, shownCols)];
  for (let row = 0; row < shownRows; row += 1) {
    for (let col = 0; col < shownCols; col += 1) cells.push(hiddenBy?.(row, col) ?? values[row * cols + col]);
  }
  return JSON.stringify(cells);
}

/** Shows matrixTable(matrix, options) in `container`, keeping the table there when it would show the same cells. */
export function createTableAlternative(container) {
  let shown = null; // { cells, table }
  return function renderTableAlternative(matrix, options) {
    const cells = shownCells(matrix, options);
    if (shown?.cells === cells && container.contains(shown.table)) {
      shown.table.querySelector('.matrix-shape').textContent = matrixShape(matrix.rows, matrix.cols);
      return;
    }
    const table = matrixTable(matrix, options);
    container.replaceChildren(table);
    shown = { cells, table };
  };
}
