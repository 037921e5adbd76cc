// A grid shape's cells (scene.js) as an image of one pixel a cell, which the
// canvas then scales without smoothing: crisp at any size. Two ways to keep it:
// - per values array (gridImage): hovering redraws the scene on every move,
//   and the image of the same array is painted once;
// - per canvas on screen (keptGridImage): one image a grid, painted in place,
//   of which only the cells whose colour changed go to the image again. Typing
//   at the end of a long text gives a causal head one more row and column and
//   leaves the others' colours as they were: the image takes the new row and
//   column, not the 1,024 x 1,024 cells (a new image of those, and uploading it,
//   took more than half of the heatmap's drawing at 1,024 tokens).
import { hiddenRgb, lutIndex } from './colors.js';

/** A grid cell's colour: its weight through the lut, or hiddenRgb. */
export const cellRgb = (shape, index) => (shape.hidden?.[index] ? hiddenRgb : shape.lut[lutIndex(shape.values[index])]);

// A lut's colours, and hiddenRgb after them, as opaque RGBA pixels in the platform's byte order (written as bytes,
// read as 32-bit words): painting a cell is then one word store, not four byte stores.
const packedLuts = new WeakMap();
function packedLut(lut) {
  let packed = packedLuts.get(lut);
  if (!packed) {
    const bytes = new Uint8Array(4 * (lut.length + 1));
    [...lut, hiddenRgb].forEach(([r, g, b], index) => bytes.set([r, g, b, 255], 4 * index));
    packedLuts.set(lut, (packed = new Uint32Array(bytes.buffer)));
  }
  return packed;
}

/**
 * Writes each cell's colour word to `pixels` (a row every `stride` words) and returns, per row, the first and
 * last column whose word changed ([lo, hi] at 2 * row, -1 when none did).
 */
function paintCells({ values, hidden = null, lut, rows, cols }, pixels, stride) {
  const colors = packedLut(lut);
  const hiddenColor = colors[lut.length];
  const spans = new Int32Array(2 * rows);
  for (let row = 0; row < rows; row += 1) {
    const from = row * cols;
    const at = row * stride;
    let lo = -1;
    let hi = -1;
    for (let col = 0; col < cols; col += 1) {
      const value = values[from + col];
      // lutIndex inlined, rounding by truncation (x + 0.5 | 0 is Math.round for x >= 0): the loop takes a third less.
      const word = hidden !== null && hidden[from + col] ? hiddenColor : colors[value > 0 ? (value < 1 ? (value * 255 + 0.5) | 0 : 255) : 0];
      if (pixels[at + col] !== word) {
        pixels[at + col] = word;
        if (lo < 0) lo = col;
        hi = col;
      }
    }
    spans[2 * row] = lo;
    spans[2 * row + 1] = hi;
  }
  return spans;
}

// Puts the changed cells of `image` on `context`: consecutive rows whose changes span the same columns go as one rectangle.
function putChanged(context, image, spans, rows) {
  let start = 0;
  for (let row = 1; row <= rows; row += 1) {
    if (row < rows && spans[2 * row] === spans[2 * start] && spans[2 * row + 1] === spans[2 * start + 1]) continue;
    const lo = spans[2 * start];
    if (lo >= 0) context.putImageData(image, 0, 0, lo, start, spans[2 * start + 1] - lo + 1, row - start);
    start = row;
  }
}

function newImage(width, height) {
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const image = new ImageData(width, height);
  return { canvas, context: canvas.getContext('2d'), image, pixels: new Uint32Array(image.data.buffer) };
}

// Whether two grid shapes paint the same image.
const sameGrid = (a, b) => a.values === b.values && (a.hidden ?? null) === (b.hidden ?? null) && a.lut === b.lut && a.rows === b.rows && a.cols === b.cols;

// Room for a grid of `size` rows or columns: 32 to 95 more, so that growing by a token keeps the image; a fresh
// (smaller) one when a text is much shorter than the one it holds.
const roomFor = (size, room) => (room >= size && room <= 2 * size + 64 ? room : Math.ceil((size + 32) / 64) * 64);

const keptImages = new WeakMap();

/**
 * The image of the grid shape `slot` of the canvas `owner` (scene.js renderCanvas's keepGrids), made from the one
 * it drew last: only the cells whose colour changed are painted onto it. The grid is the canvas's top-left
 * cols x rows pixels; `room`: it has room for more (else it is that size).
 */
export function keptGridImage(shape, owner, slot, room = true) {
  const kept = keptImages.get(owner) ?? [];
  keptImages.set(owner, kept);
  let image = kept[slot];
  if (image && sameGrid(image.shape, shape)) return image.canvas;
  const width = room ? roomFor(shape.cols, image?.image.width ?? 0) : shape.cols;
  const height = room ? roomFor(shape.rows, image?.image.height ?? 0) : shape.rows;
  if (!image || image.image.width !== width || image.image.height !== height) image = newImage(width, height);
  const spans = paintCells(shape, image.pixels, width);
  putChanged(image.context, image.image, spans, shape.rows);
  image.shape = shape;
  kept[slot] = image;
  return image.canvas;
}

/** The image of a grid shape, cols x rows pixels, painted once per values array (for hover redraws and exports). */
export const gridImage = (shape) => keptGridImage(shape, shape.values, 0, false);
