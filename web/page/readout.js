// Reading exact values: hover a heatmap cell, or focus the chart and use the
// arrow keys, to read its weight (in the readout line and a tooltip); in the
// lines view, hover a token or use the arrow keys to keep only its lines.
import { cellAt } from '../views/heatmap.js';
import { tokenAt } from '../views/lines.js';
import { displayToken } from './views/token-strip.js';

/**
 * Wires the heatmap, head average and lines canvases.
 * @param ui the page's elements; state the page's state (model, headValues, averageValues, cell, lineFocus)
 * @param render redraws the current view (with the highlighted cell or focused token)
 */
export function wireReadout({ ui, state, render }) {
  function describeCell(values, { row, col }) {
    const model = state.model;
    const weight = values[row * model.nKeys + col];
    return `query “${displayToken(model.queryTokens[row])}” (#${row}) → key “${displayToken(model.keyTokens[col])}” (#${col}): weight ${weight.toPrecision(7)}`;
  }

  function heatmapValues(canvas) {
    return canvas === ui.averageCanvas ? state.averageValues : state.headValues[state.settings.head];
  }

  function showCell(canvas, cell, pointer) {
    state.cell = cell;
    render();
    if (!cell) {
      ui.tooltip.hidden = true;
      return;
    }
    const text = describeCell(heatmapValues(canvas), cell);
    ui.readout.textContent = text;
    if (pointer) {
      ui.tooltip.textContent = text;
      ui.tooltip.hidden = false;
      ui.tooltip.style.left = `${pointer.clientX + 14}px`;
      ui.tooltip.style.top = `${pointer.clientY + 14}px`;
    } else {
      ui.tooltip.hidden = true;
    }
  }

  function wireHeatmap(canvas) {
    canvas.addEventListener('mousemove', (event) => {
      if (!canvas.layout) return;
      const cell = cellAt(canvas.layout, event.offsetX, event.offsetY);
      if (cell?.row === state.cell?.row && cell?.col === state.cell?.col) {
        if (cell) Object.assign(ui.tooltip.style, { left: `${event.clientX + 14}px`, top: `${event.clientY + 14}px` });
        return;
      }
      showCell(canvas, cell, event);
    });
    canvas.addEventListener('mouseleave', () => showCell(canvas, null));
    canvas.addEventListener('keydown', (event) => {
      if (!state.model) return;
      const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
      const cell = state.cell ?? { row: 0, col: 0 };
      let next;
      if (moves[event.key]) {
        const [dr, dc] = state.cell ? moves[event.key] : [0, 0];
        next = {
          row: Math.min(Math.max(cell.row + dr, 0), state.model.n - 1),
          col: Math.min(Math.max(cell.col + dc, 0), state.model.nKeys - 1),
        };
      } else if (event.key === 'Home') next = { row: cell.row, col: 0 };
      else if (event.key === 'End') next = { row: cell.row, col: state.model.nKeys - 1 };
      else if (event.key === 'Escape') next = null;
      else return;
      event.preventDefault();
      showCell(canvas, next);
      canvas.focus();
    });
  }

  function describeToken(focus) {
    const model = state.model;
    const values = state.headValues[state.settings.head];
    const tokens = focus.side === 'query' ? model.queryTokens : model.keyTokens;
    const others = focus.side === 'query' ? model.keyTokens : model.queryTokens;
    const weights = others.map((_, other) => (focus.side === 'query'
      ? values[focus.index * model.nKeys + other] : values[other * model.nKeys + focus.index]));
    const strongest = weights.indexOf(Math.max(...weights));
    const [token, other] = [displayToken(tokens[focus.index]), displayToken(others[strongest])];
    return focus.side === 'query'
      ? `query “${token}” (#${focus.index}) looks most at “${other}” (#${strongest}), weight ${weights[strongest].toPrecision(7)}`
      : `key “${token}” (#${focus.index}) is looked at most by “${other}” (#${strongest}), weight ${weights[strongest].toPrecision(7)}`;
  }

  function showLineFocus(focus) {
    const same = focus?.side === state.lineFocus?.side && focus?.index === state.lineFocus?.index;
    if (same) return;
    state.lineFocus = focus;
    render();
    if (focus) ui.readout.textContent = describeToken(focus);
  }

  function wireLines() {
    const canvas = ui.linesCanvas;
    canvas.addEventListener('mousemove', (event) => {
      if (canvas.layout) showLineFocus(tokenAt(canvas.layout, event.offsetX, event.offsetY));
    });
    canvas.addEventListener('mouseleave', () => showLineFocus(null));
    canvas.addEventListener('keydown', (event) => {
      if (!state.model) return;
      const focus = state.lineFocus ?? { side: 'query', index: -1 };
      const count = (side) => (side === 'query' ? state.model.n : state.model.nKeys);
      let next;
      if (event.key === 'ArrowDown') next = { side: focus.side, index: Math.min(focus.index + 1, count(focus.side) - 1) };
      else if (event.key === 'ArrowUp') next = { side: focus.side, index: Math.max(focus.index - 1, 0) };
      else if (event.key === 'ArrowLeft' || event.key === 'ArrowRight') {
        const side = event.key === 'ArrowLeft' ? 'query' : 'key';
        next = { side, index: Math.min(Math.max(focus.index, 0), count(side) - 1) };
      } else if (event.key === 'Escape') next = null;
      else return;
      event.preventDefault();
      showLineFocus(next);
    });
  }

  wireHeatmap(ui.heatmapCanvas);
  wireHeatmap(ui.averageCanvas);
  wireLines();
}
