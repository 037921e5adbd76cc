// What the views made of real table cells (headScores, logitLens) share:
// each <td> sits in a tbody row after one row header; hover or focus shows a
// cell, a click or Enter selects it, the arrow keys (Home, End) move with one
// tab stop per tbody; and the mounted view's update, destroy and toCSV
// (mounted-view.js, shared with the steps view).
import { keyCell } from './view-heatmap.js';

/** Calls the option (onSelect / onHover) and dispatches the bubbling event of the same kind. */
export const emitter = (root, currentOptions) => (type, detail) => {
  currentOptions()[type === 'select' ? 'onSelect' : 'onHover']?.(detail);
  root.dispatchEvent(new CustomEvent(type, { detail, bubbles: true }));
};

/**
 * Listeners for the root: `cellOf(event)` finds the cell (or null), `show(td)` reads
 * it and returns its detail, `size()` is [rows, cols] of a tbody.
 */
export function cellHandlers({ cellOf, show, emit, size }) {
  let hovered = null;
  return {
    mouseover(event) {
      const td = cellOf(event);
      if (td && td !== hovered) show(td);
      hovered = td;
    },
    focusin(event) {
      const td = cellOf(event);
      if (td) show(td);
    },
    click(event) {
      const td = cellOf(event);
      if (!td) return;
      td.focus();
      emit('select', show(td));
    },
    keydown(event) {
      const td = cellOf(event);
      if (!td) return;
      if (event.key === 'Enter') emit('select', show(td));
      const next = keyCell(event, { row: td.parentElement.sectionRowIndex, col: td.cellIndex - 1 }, ...size());
      if (!next) return;
      event.preventDefault();
      const target = td.closest('tbody').rows[next.row].cells[next.col + 1]; // cells[0] is the row header
      td.tabIndex = -1;
      target.tabIndex = 0;
      target.focus();
    },
  };
}

// The mounted view's lifecycle lives in mounted-view.js, which imports nothing, so the
// steps view shares it without pulling the cell handlers' imports ahead of it in bundles.
export { mountedTableView } from './mounted-view.js';
