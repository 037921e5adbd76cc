// The table view: the weights as an HTML table, the text alternative of
// every chart (one head, or with `average` the head average). Tab reaches the
// table, the arrow keys move between cells (one cell is in the tab order),
// and its picture exports are the heatmap of the same values.
import { hiddenBy } from './attention-data.js';
import { matrixTable } from './matrix-table.js';
import { cellAfterUpdate, cellDetail, describeCell, heatmapSceneOf, keyCell } from './view-heatmap.js';

function createTable(view) {
  const surface = view.make('div');
  view.scroll.append(surface);
  let cell = view.options.cell;
  const parts = {
    surface,
    scene: (theme) => heatmapSceneOf(view, theme, cell),
    render() {
      const { model, options } = view;
      const table = matrixTable({
        name: view.title() ?? 'Attention weights', rows: model.n, cols: model.nKeys, values: view.values(),
        rowLabels: model.queryTokens, colLabels: model.keyTokens,
      }, { maxRows: options.maxRows, maxCols: options.maxCols, highlightRow: options.token,
        hiddenBy: view.hidden() && ((row, col) => hiddenBy(model, options.layer, row, col)) });
      const cells = table.tBodies[0].querySelectorAll('td');
      const shownCols = Math.min(model.nKeys, options.maxCols);
      const current = cell && cell.row < options.maxRows && cell.col < shownCols ? cell.row * shownCols + cell.col : 0;
      cells.forEach((td, index) => { td.tabIndex = index === current ? 0 : -1; });
      surface.replaceChildren(table);
    },
    dataChanged(change) {
      cell = cellAfterUpdate(cell, view.model, change);
    },
  };

  const tdOf = (event) => event.target.closest?.('td');
  const cellOf = (td) => ({ row: td.parentElement.sectionRowIndex, col: td.cellIndex - 1 });
  view.listen(surface, 'focusin', (event) => {
    const td = tdOf(event);
    if (!td) return;
    cell = cellOf(td);
    const detail = cellDetail(view, cell);
    view.readoutLine().textContent = describeCell(detail);
    view.emit('hover', detail);
  });
  view.listen(surface, 'click', (event) => {
    const td = tdOf(event);
    if (td) {
      td.focus();
      view.emit('select', cellDetail(view, cellOf(td)));
    }
  });
  view.listen(surface, 'keydown', (event) => {
    const td = tdOf(event);
    if (!td) return;
    if (event.key === 'Enter') {
      view.emit('select', cellDetail(view, cellOf(td)));
      return;
    }
    const rows = Math.min(view.model.n, view.options.maxRows);
    const cols = Math.min(view.model.nKeys, view.options.maxCols);
    cell = cellOf(td);
    const next = keyCell(event, cell, rows, cols);
    if (!next) return;
    event.preventDefault();
    const tds = surface.querySelectorAll('tbody td');
    const target = tds[next.row * cols + next.col];
    for (const other of tds) other.tabIndex = other === target ? 0 : -1;
    target.focus();
  });
  return parts;
}

export const tableKind = { name: 'table', create: createTable, averaged: (options) => options.average };
