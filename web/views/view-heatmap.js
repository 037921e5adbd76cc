// The heatmap view (one head) and the head-average view (the mean of a
// layer's heads): a canvas of cells; the pointer or the arrow keys read one
// cell's exact weight, a click or Enter selects it. The table view
// (view-table.js) shares the cell's detail, its wording and the keys.
import { hiddenBy, legendLabel } from './attention-data.js';
import { bandedCanvas } from './banded-canvas.js';
import { cellAt, heatmapScene, maxGridFor } from './heatmap.js';
import { exact, quote } from './view-core.js';

const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };

/** The `hover` / `select` detail of a cell. */
export function cellDetail(view, { row, col }) {
  const { model, options } = view;
  return {
    view: view.name, layer: options.layer, head: view.averaged() ? null : options.head, row, col,
    query: model.queryTokens[row], key: model.keyTokens[col], weight: view.values()[row * model.nKeys + col],
    hidden: hiddenBy(model, options.layer, row, col),
  };
}

export const describeCell = (detail) => `query ${quote(detail.query)} (#${detail.row}) → key ${quote(detail.key)} (#${detail.col}): ` +
  (detail.hidden ? `hidden by ${detail.hidden}` : `weight ${exact(detail.weight)}`);

/** The cell a key moves to from `cell` in a rows x cols grid: a cell, null (Escape) or undefined (not a key of the grid). */
export function keyCell(event, cell, rows, cols) {
  const from = cell ?? { row: 0, col: 0 };
  if (moves[event.key]) {
    const [dr, dc] = cell ? moves[event.key] : [0, 0];
    return { row: Math.min(Math.max(from.row + dr, 0), rows - 1), col: Math.min(Math.max(from.col + dc, 0), cols - 1) };
  }
  if (event.key === 'Home') return { row: from.row, col: 0 };
  if (event.key === 'End') return { row: from.row, col: cols - 1 };
  if (event.key === 'Escape') return null;
  return undefined;
}

/** The selected cell after update(): the one asked for, else kept unless the data is new; none outside the data. */
export function cellAfterUpdate(cell, model, { newData, nextOptions }) {
  const next = 'cell' in nextOptions ? nextOptions.cell : newData ? null : cell;
  return next && next.row < model.n && next.col < model.nKeys ? next : null;
}

/** The heatmap scene of what the view shows, fitted to its width; cells down to 1 px, so 512 tokens fit 700 px. */
export function heatmapSceneOf(view, theme, cell) {
  const { options } = view;
  const data = { ...view.tokens(), values: view.values(), title: view.title(), legend: legendLabel(view.model), hidden: view.hidden() };
  const maxGrid = options.gridSize ?? Math.min(options.maxSize ?? (theme.maxSize || 640), maxGridFor(data, view.available(), { minCell: 1 }));
  return heatmapScene(data, { maxGrid, highlight: cell, token: options.token, minCell: 1 });
}

// A long text's heatmap is taller than the screen: its canvas holds the band on screen (banded-canvas.js), and
// its grid image takes only the cells that changed (grid-image.js). Its canvas may be 32 px wider than its scene
// (scene.js renderCanvas's slack): typing at the end of a long text widens the grid a cell at a time, and the
// canvas keeps its bitmap for the next 16 px.
function createHeatmap(view) {
  const surface = view.make('canvas');
  surface.tabIndex = 0;
  surface.setAttribute('role', 'img');
  let cell = view.options.cell; // the selected cell
  const band = bandedCanvas(view, surface, { keepGrids: true, slack: 32 });
  const parts = {
    surface,
    get layout() { return band.layout; },
    scene: (theme) => heatmapSceneOf(view, theme, cell),
    render(theme) {
      const { scene, layout } = parts.scene(theme);
      band.draw(scene, theme, layout);
      const { model } = view;
      surface.setAttribute('aria-label', `${view.title() ?? 'Attention'}: heatmap of ${model.n} query tokens by ${model.nKeys} key tokens. Arrow keys read the weights.`);
    },
    dataChanged(change) {
      cell = cellAfterUpdate(cell, view.model, change);
    },
    // A host often sizes its box right after mounting (the attnlens page does).
    mounted: () => band.schedule(),
  };

  // The keyboard's cell on screen.
  function revealCell({ row, col }) {
    const { x, y, cell: side } = parts.layout;
    band.reveal({ left: x + col * side, top: y + row * side, width: side, height: side });
  }

  function showCell(next, pointer) {
    const same = next?.row === cell?.row && next?.col === cell?.col;
    cell = next;
    if (!same) view.render();
    // The tooltip only follows the pointer; the keys read the readout line.
    const tip = view.tip();
    tip.hidden = !(next && pointer);
    if (!next) {
      view.readoutLine().textContent = '';
      return null;
    }
    const detail = cellDetail(view, next);
    view.readoutLine().textContent = describeCell(detail);
    if (pointer) {
      tip.textContent = describeCell(detail);
      // Placed from the box it is positioned in (none for position: fixed); shown first, or it has none.
      const box = tip.offsetParent?.getBoundingClientRect() ?? { left: 0, top: 0 };
      tip.style.left = `${pointer.clientX - box.left + 14}px`;
      tip.style.top = `${pointer.clientY - box.top + 14}px`;
    }
    if (!same) view.emit('hover', detail);
    return detail;
  }

  const pointed = (event) => parts.layout && cellAt(parts.layout, event.offsetX, event.offsetY + parts.layout.bandTop);
  view.listen(surface, 'mousemove', (event) => {
    if (parts.layout) showCell(pointed(event), event);
  });
  view.listen(surface, 'mouseleave', () => showCell(null));
  view.listen(surface, 'click', (event) => {
    const detail = pointed(event);
    if (detail) view.emit('select', showCell(detail, event));
  });
  view.listen(surface, 'keydown', (event) => {
    if (event.key === 'Enter' && cell) {
      view.emit('select', cellDetail(view, cell));
      return;
    }
    const next = keyCell(event, cell, view.model.n, view.model.nKeys);
    if (next === undefined) return;
    event.preventDefault();
    showCell(next);
    if (next) revealCell(next);
  });
  return parts;
}

export const heatmapKind = { name: 'heatmap', create: createHeatmap };
export const headAverageKind = { name: 'headAverage', create: createHeatmap, averaged: () => true };
