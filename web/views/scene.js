// A view is a pure function from data to a "scene": a width, a height and a
// flat list of shapes. Two renderers turn the same scene into pixels (canvas,
// for the screen and PNG export) or into an SVG document (SVG export), so
// what you export is exactly what you see.
//
// Shapes:
//   { kind: 'rect', x, y, w, h, fill?, stroke?, lineWidth? }
//   { kind: 'text', x, y, text, size?, fill?, anchor?: 'start'|'middle'|'end',
//     baseline?: 'middle'|'alphabetic'|'hanging', rotate? (degrees), bold? }
//   { kind: 'line', x1, y1, x2, y2, stroke, width?, opacity? }
//   { kind: 'segments', points: [x1, y1, x2, y2, ...], stroke, width?, opacity? }  many lines, one stroke
//   { kind: 'grid', x, y, w, h, rows, cols, values, lut, hidden? }  values row-major in [0, 1];
//     hidden: null or rows*cols entries, 1 where a mask or window hid the cell (drawn in hiddenRgb)
// Colours are CSS colours, or '--name' for the theme's colour `name` (see
// theme.js), so the same scene draws light, dark or in the page's own colours.
import { cellRgb, gridImage, keptGridImage } from './grid-image.js';
import { lightTheme } from './theme.js';

export const fontFamily = lightTheme.font;

const color = (value, theme) => (value?.startsWith('--') ? theme[value.slice(2)] : value);

const svgBaseline = { middle: 'central', alphabetic: 'alphabetic', hanging: 'hanging' };

// Rough text width for layout; views only use it to reserve label space.
export function textWidth(text, size) {
  return text.length * size * 0.58;
}

// Lines [x1, y1, x2, y2, ...] as one path, one stroke, in the shape's colour, width and opacity;
// only those that cross the band of rows [top, bottom] being drawn.
function strokeSegments(context, points, { stroke, width = 1, opacity = 1 }, theme, { top, bottom }) {
  context.globalAlpha = opacity;
  context.strokeStyle = color(stroke, theme);
  context.lineWidth = width;
  context.beginPath();
  const reach = width / 2;
  for (let i = 0; i < points.length; i += 4) {
    const y1 = points[i + 1];
    const y2 = points[i + 3];
    if (Math.max(y1, y2) + reach < top || Math.min(y1, y2) - reach > bottom) continue;
    context.moveTo(points[i], y1);
    context.lineTo(points[i + 2], y2);
  }
  context.stroke();
  context.globalAlpha = 1;
}

// Whether a shape can touch the band of rows [top, bottom] (rotated text is always drawn).
function inBand(shape, { top, bottom }) {
  switch (shape.kind) {
    case 'rect':
    case 'grid':
      return shape.y <= bottom && shape.y + shape.h >= top;
    case 'text':
      return Boolean(shape.rotate) || Math.abs(shape.y - (top + bottom) / 2) <= (bottom - top) / 2 + (shape.size ?? 12) * 1.5;
    default: // lines and segments are checked one segment at a time
      return true;
  }
}

// `grid`: the image of a grid shape (grid-image.js), its cells the top-left cols x rows pixels.
function drawShape(context, shape, theme, band, grid) {
  if (!inBand(shape, band)) return;
  switch (shape.kind) {
    case 'rect':
      if (shape.fill) {
        context.fillStyle = color(shape.fill, theme);
        context.fillRect(shape.x, shape.y, shape.w, shape.h);
      }
      if (shape.stroke) {
        context.strokeStyle = color(shape.stroke, theme);
        context.lineWidth = shape.lineWidth ?? 1;
        context.strokeRect(shape.x, shape.y, shape.w, shape.h);
      }
      break;
    case 'text':
      context.save();
      context.font = `${shape.bold ? '600 ' : ''}${shape.size ?? 12}px ${theme.font}`;
      context.fillStyle = color(shape.fill ?? '--text', theme);
      context.textAlign = shape.anchor === 'middle' ? 'center' : shape.anchor === 'end' ? 'right' : 'left';
      context.textBaseline = shape.baseline === 'hanging' ? 'top' : shape.baseline ?? 'middle';
      context.translate(shape.x, shape.y);
      if (shape.rotate) context.rotate((shape.rotate * Math.PI) / 180);
      context.fillText(shape.text, 0, 0);
      context.restore();
      break;
    case 'line':
      strokeSegments(context, [shape.x1, shape.y1, shape.x2, shape.y2], shape, theme, band);
      break;
    case 'segments':
      strokeSegments(context, shape.points, shape, theme, band);
      break;
    case 'grid':
      context.imageSmoothingEnabled = false;
      context.drawImage(grid(shape), 0, 0, shape.cols, shape.rows, shape.x, shape.y, shape.w, shape.h);
      break;
    default:
      throw new Error(`unknown shape kind ${shape.kind}`);
  }
}

// Draws the scene into `canvas` at the device pixel ratio (sharp on HiDPI).
// `theme`: colours and font (theme.js); the page's light theme by default.
// `band`: { top, height } draws only that horizontal strip of the scene, on a
// canvas of that height (a tall view draws what is on screen: scroll-band.js).
// `keepGrids`: the canvas keeps its grids' images and repaints only the cells
// whose colour changed (grid-image.js), for a canvas redrawn with new data.
// `slack`: the canvas may be up to that many px wider than the scene, its
// right edge in the background colour, so that a scene a little wider or
// narrower than the last one draws on the same bitmap: a new one (a 2,000 px
// square at a device pixel ratio of 2) costs more than drawing it.
export function renderCanvas(canvas, scene, {
  pixelRatio = globalThis.devicePixelRatio || 1, theme = lightTheme, background = theme.background, band = null, keepGrids = false, slack = 0,
} = {}) {
  const top = band ? Math.max(0, band.top) : 0;
  const height = band ? Math.max(0, Math.min(band.height, scene.height - top)) : scene.height;
  const width = Math.ceil(scene.width * pixelRatio);
  const extra = Math.ceil(slack * pixelRatio);
  if (canvas.width < width || canvas.width > width + extra) canvas.width = width + Math.ceil(extra / 2);
  if (canvas.height !== Math.ceil(height * pixelRatio)) canvas.height = Math.ceil(height * pixelRatio);
  canvas.style.width = `${slack ? canvas.width / pixelRatio : scene.width}px`;
  canvas.style.height = `${height}px`;
  // To the canvas's last device pixel (a scene's height need not be whole): a canvas drawn again keeps nothing of the last drawing.
  paintRows(canvas.getContext('2d'), scene, { top, bottom: top + canvas.height / pixelRatio }, { origin: top, pixelRatio, theme, background, keepGrids });
  return canvas;
}

// Paints the scene's rows [top, bottom] into a canvas whose top edge shows scene row `origin`, over its whole width.
function paintRows(context, scene, rows, { origin, pixelRatio, theme, background, clip = false, keepGrids = false }) {
  const width = context.canvas.width / pixelRatio;
  context.save();
  context.setTransform(pixelRatio, 0, 0, pixelRatio, 0, -origin * pixelRatio);
  if (clip) {
    context.beginPath();
    context.rect(0, rows.top, width, rows.bottom - rows.top);
    context.clip();
  }
  // Cleared first: the background replaces what the canvas held, even a transparent one (a canvas drawn again keeps its bitmap).
  context.clearRect(0, rows.top, width, rows.bottom - rows.top);
  context.fillStyle = background;
  context.fillRect(0, rows.top, width, rows.bottom - rows.top);
  const grids = keepGrids ? scene.shapes.filter((shape) => shape.kind === 'grid') : [];
  const image = keepGrids ? (shape) => keptGridImage(shape, context.canvas, grids.indexOf(shape)) : gridImage;
  for (const shape of scene.shapes) drawShape(context, shape, theme, rows, image);
  context.restore();
}

/**
 * Scrolling a band drawn by renderCanvas(canvas, scene, { band: from }) to the
 * band { top: to, height: from.height }: the rows both show are moved, not
 * drawn again, and only the rows that come into it are painted (what makes
 * scrolling a tall lines view cheap). False, and nothing drawn, when it cannot
 * (a jump past the band, a move by a fraction of a device pixel, a canvas of
 * another size): then call renderCanvas.
 */
export function shiftBand(canvas, scene, from, to, {
  pixelRatio = globalThis.devicePixelRatio || 1, theme = lightTheme, background = theme.background, keepGrids = false,
} = {}) {
  const shift = (to - from.top) * pixelRatio;
  // The canvas renderCanvas drew, its slack included.
  const sameCanvas = canvas.width >= Math.ceil(scene.width * pixelRatio) && canvas.height === Math.ceil(from.height * pixelRatio);
  if (!sameCanvas || Math.abs(to - from.top) >= from.height || !Number.isInteger(shift) || to < 0 || to + from.height > scene.height) return false;
  const context = canvas.getContext('2d');
  context.save();
  context.setTransform(1, 0, 0, 1, 0, 0);
  context.globalCompositeOperation = 'copy';
  context.drawImage(canvas, 0, -shift);
  context.restore();
  const rows = to > from.top
    ? { top: from.top + from.height, bottom: to + from.height } // scrolled down: new rows at the bottom
    : { top: to, bottom: from.top };
  paintRows(context, scene, rows, { origin: to, pixelRatio, theme, background, clip: true, keepGrids });
  return true;
}

const svgNamespace = 'http://www.w3.org/2000/svg';

function svgElement(tag, attributes) {
  const element = document.createElementNS(svgNamespace, tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null) element.setAttribute(name, String(value));
  }
  return element;
}

// Small grids become one <rect> per cell (editable in a vector tool); big
// ones an embedded PNG, because 262,144 rects would make a 20 MB file.
const maxSvgCells = 4096;

function svgShape(shape, theme) {
  switch (shape.kind) {
    case 'rect':
      return svgElement('rect', {
        x: shape.x, y: shape.y, width: shape.w, height: shape.h,
        fill: color(shape.fill, theme) ?? 'none', stroke: color(shape.stroke, theme), 'stroke-width': shape.stroke ? shape.lineWidth ?? 1 : undefined,
      });
    case 'text': {
      const text = svgElement('text', {
        x: 0, y: 0,
        'font-size': shape.size ?? 12,
        'font-weight': shape.bold ? 600 : undefined,
        fill: color(shape.fill ?? '--text', theme),
        'text-anchor': shape.anchor ?? 'start',
        'dominant-baseline': svgBaseline[shape.baseline ?? 'middle'],
        transform: `translate(${shape.x} ${shape.y})${shape.rotate ? ` rotate(${shape.rotate})` : ''}`,
      });
      text.textContent = shape.text; // user text stays text
      return text;
    }
    case 'line':
      return svgElement('line', {
        x1: shape.x1, y1: shape.y1, x2: shape.x2, y2: shape.y2,
        stroke: color(shape.stroke, theme), 'stroke-width': shape.width ?? 1, 'stroke-opacity': shape.opacity ?? 1,
      });
    case 'segments': {
      const d = [];
      for (let i = 0; i < shape.points.length; i += 4) d.push(`M${shape.points[i]} ${shape.points[i + 1]}L${shape.points[i + 2]} ${shape.points[i + 3]}`);
      return svgElement('path', {
        d: d.join(''), fill: 'none', stroke: color(shape.stroke, theme), 'stroke-width': shape.width ?? 1, 'stroke-opacity': shape.opacity ?? 1,
      });
    }
    case 'grid': {
      if (shape.rows * shape.cols > maxSvgCells) {
        return svgElement('image', {
          x: shape.x, y: shape.y, width: shape.w, height: shape.h,
          preserveAspectRatio: 'none', style: 'image-rendering: pixelated',
          href: gridImage(shape).toDataURL('image/png'),
        });
      }
      const group = svgElement('g', {});
      const cellW = shape.w / shape.cols;
      const cellH = shape.h / shape.rows;
      for (let row = 0; row < shape.rows; row += 1) {
        for (let col = 0; col < shape.cols; col += 1) {
          const [r, g, b] = cellRgb(shape, row * shape.cols + col);
          group.append(svgElement('rect', {
            x: shape.x + col * cellW, y: shape.y + row * cellH, width: cellW, height: cellH, fill: `rgb(${r},${g},${b})`,
          }));
        }
      }
      return group;
    }
    default:
      throw new Error(`unknown shape kind ${shape.kind}`);
  }
}

// A standalone SVG document (string) for the scene.
export function renderSvg(scene, { theme = lightTheme, background = theme.background, title } = {}) {
  const root = svgElement('svg', {
    xmlns: svgNamespace, width: scene.width, height: scene.height,
    viewBox: `0 0 ${scene.width} ${scene.height}`, 'font-family': theme.font,
  });
  if (title) {
    const titleElement = svgElement('title', {});
    titleElement.textContent = title;
    root.append(titleElement);
  }
  root.append(svgElement('rect', { x: 0, y: 0, width: scene.width, height: scene.height, fill: background }));
  for (const shape of scene.shapes) root.append(svgShape(shape, theme));
  return new XMLSerializer().serializeToString(root);
}
