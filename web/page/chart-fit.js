// Sizing the page's charts to the room they have on screen: the width of
// their box, and the height left between the box's top and the bottom of the
// first screen, so that on a laptop the whole chart is in view without
// scrolling. The views (../views/) draw at any size; this module only picks it.
import { heatmapScene } from '../views/heatmap.js';

const boxPadding = 6; // .scroll's padding on each side: room for the focus ring
const belowChart = 44; // the readout line under the chart stays in the first screen too
const panelHelp = 60; // the panel's help line above a chart scrolled to the top of the screen
const smallestChart = 160;
// Cells this big show every token's label (heatmap.js labels every cell from 14 px, at full size from 13).
const readableCell = 14;

/**
 * The room for a chart in `box` (an element of the page, shown), in CSS px:
 * its width, the height left in the first screen below the box's top, and,
 * when that is a small part of the screen (controls above it on a phone), the
 * height of a screen of its own, for a chart too small to read in the first.
 * @returns {{ width: number, height: number, ownScreenHeight: number }}
 */
export function chartSpace(box) {
  const width = Math.max(Math.floor(box.clientWidth) - 2 * boxPadding - 1, smallestChart); // 1 px for fractional widths
  const top = box.getBoundingClientRect().top + window.scrollY; // from the document's top: the same at any scroll
  const firstScreen = Math.floor(window.innerHeight - top - 2 * boxPadding - belowChart);
  const ownScreen = Math.min(width, window.innerHeight - 2 * boxPadding - belowChart - panelHelp);
  const height = Math.max(firstScreen, smallestChart);
  return { width, height, ownScreenHeight: firstScreen < 0.75 * ownScreen ? Math.max(ownScreen, height) : height };
}

/**
 * The side of the heatmap grid (square cells, the views' `gridSize`) whose grid, labels and legend fill `space`
 * as far as they can: the labels and legend take the same room at any cell
 * size, so one probe measures them and the grid gets the rest. In the first
 * screen if its cells are readable there, else in a screen of its own. On a
 * phone, labels and legend would leave the grid cells too small to label:
 * there the grid and its labels fit the width, and the legend, last on the
 * right, is a sideways scroll of the chart's box away.
 */
// data: { queryTokens, keyTokens, values, title } as the heatmap will draw them.
export function fittedGridSize(data, space) {
  const probe = heatmapScene(data, { maxGrid: 100 });
  const { cell, rows, cols, x, y } = probe.layout;
  const besideGrid = probe.scene.width - cell * cols;
  const aroundGrid = y + 12; // title, key labels above; the scene's bottom margin below
  const side = (width, height) => Math.min((width - besideGrid) / cols, (height - aroundGrid) / rows);
  let fitted = side(space.width, space.height);
  if (fitted < readableCell) fitted = side(space.width, space.ownScreenHeight);
  if (fitted < readableCell) {
    const gridAlone = side(space.width + besideGrid - x, space.ownScreenHeight); // the legend's room given to the grid
    fitted = Math.max(fitted, Math.min(readableCell, gridAlone));
  }
  return Math.max(fitted, 0) * Math.max(rows, cols);
}

/** The largest side of the small heatmaps in "All heads", in CSS px. */
export const largestMultiple = 320;

/**
 * The side of each small heatmap in "All heads", and how many go in a row, so
 * that all of them fit `space`; on a screen too small for that, they keep a
 * readable size and the page scrolls to the rest.
 * @param heads how many small heatmaps; `titleHeight` and `chrome` the px each adds around its grid
 */
export function fittedMultiples(heads, space, { gap = 10, titleHeight = 26, chrome = 16, largest = largestMultiple, readable = 96 } = {}) {
  const fit = (height) => {
    let best = { columns: 1, maxGrid: 0 };
    for (let columns = 1; columns <= heads; columns += 1) {
      const rows = Math.ceil(heads / columns);
      const across = Math.floor((space.width - gap * (columns - 1)) / columns) - chrome;
      const down = Math.floor((height - gap * (rows - 1)) / rows) - chrome - titleHeight;
      const maxGrid = Math.min(largest, across, Math.max(down, readable));
      if (maxGrid > best.maxGrid) best = { columns, maxGrid };
    }
    return best;
  };
  let best = fit(space.height);
  if (best.maxGrid <= readable) best = fit(space.ownScreenHeight);
  return { columns: best.columns, maxGrid: Math.max(best.maxGrid, 24) };
}

/** The largest side of the model view's small heatmaps, in CSS px. */
export const largestModelGrid = 180;

/**
 * The side of each small heatmap of the model view (every layer x head, a
 * legend beside them), so that the whole grid fits `space`: the width and the
 * height left in the first screen (else a screen of its own; else it scrolls).
 * @param badges room under each heatmap for its head-role badge
 */
export function fittedModelGrid(layers, heads, space, { badges = true } = {}) {
  const gap = 8; // the views' grid gap
  const button = 12 + 2; // each button's padding and border, and the small scene's margin
  const legend = 72 + gap; // the colour scale beside the grid
  const layerLabel = 64 + gap;
  const headLabels = 18 + gap;
  const badge = badges ? 14 : 0;
  const across = Math.floor((space.width - legend - layerLabel) / heads) - gap - button;
  const down = (height) => Math.floor((height - headLabels) / layers) - gap - button - badge;
  let side = Math.min(across, down(space.height));
  if (side < 36) side = Math.min(across, down(space.ownScreenHeight));
  return Math.max(36, Math.min(largestModelGrid, side));
}
