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
//   { kind: 'grid', x, y, w, h, rows, cols, values, lut }  values row-major in [0, 1]
// Colours are CSS colours, or '--name' for the theme's colour `name` (see
// theme.js), so the same scene draws light, dark or in the page's own colours.
import { lutIndex } from './colors.js';
import { lightTheme } from './theme.js';

export const fontFamily = lightTheme.font;

const color = (value, theme) => (value?.startsWith('--') ? theme[value.slice(2)] : value);

const svgBaseline = { middle: 'central', alphabetic: 'alphabetic', hanging: 'hanging' };

// Rough text width for layout; views only use it to reserve label space.
export function textWidth(text, size) {
  return text.length * size * 0.58;
}

// Cells become one pixel each in an ImageData, which the canvas then scales
// without smoothing: fast for 512 x 512 weights, crisp at any size. Hovering
// redraws the scene on every move, so the image is kept per values array.
const gridImages = new WeakMap();

function gridImage(shape) {
  const cached = gridImages.get(shape.values);
  if (cached && cached.lut === shape.lut && cached.rows === shape.rows && cached.cols === shape.cols) return cached.canvas;
  const canvas = paintGrid(shape);
  gridImages.set(shape.values, { lut: shape.lut, rows: shape.rows, cols: shape.cols, canvas });
  return canvas;
}

function paintGrid(shape) {
  const image = new ImageData(shape.cols, shape.rows);
  const { data } = image;
  for (let index = 0; index < shape.rows * shape.cols; index += 1) {
    const [r, g, b] = shape.lut[lutIndex(shape.values[index])];
    data[index * 4] = r;
    data[index * 4 + 1] = g;
    data[index * 4 + 2] = b;
    data[index * 4 + 3] = 255;
  }
  const canvas = document.createElement('canvas');
  canvas.width = shape.cols;
  canvas.height = shape.rows;
  canvas.getContext('2d').putImageData(image, 0, 0);
  return canvas;
}

// Lines [x1, y1, x2, y2, ...] as one path, one stroke, in the shape's colour, width and opacity.
function strokeSegments(context, points, { stroke, width = 1, opacity = 1 }, theme) {
  context.globalAlpha = opacity;
  context.strokeStyle = color(stroke, theme);
  context.lineWidth = width;
  context.beginPath();
  for (let i = 0; i < points.length; i += 4) {
    context.moveTo(points[i], points[i + 1]);
    context.lineTo(points[i + 2], points[i + 3]);
  }
  context.stroke();
  context.globalAlpha = 1;
}

function drawShape(context, shape, theme) {
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
      strokeSegments(context, [shape.x1, shape.y1, shape.x2, shape.y2], shape, theme);
      break;
    case 'segments':
      strokeSegments(context, shape.points, shape, theme);
      break;
    case 'grid':
      context.imageSmoothingEnabled = false;
      context.drawImage(gridImage(shape), shape.x, shape.y, shape.w, shape.h);
      break;
    default:
      throw new Error(`unknown shape kind ${shape.kind}`);
  }
}

// Draws the scene into `canvas` at the device pixel ratio (sharp on HiDPI).
// `theme`: colours and font (theme.js); the page's light theme by default.
export function renderCanvas(canvas, scene, { pixelRatio = globalThis.devicePixelRatio || 1, theme = lightTheme, background = theme.background } = {}) {
  canvas.width = Math.ceil(scene.width * pixelRatio);
  canvas.height = Math.ceil(scene.height * pixelRatio);
  canvas.style.width = `${scene.width}px`;
  canvas.style.height = `${scene.height}px`;
  const context = canvas.getContext('2d');
  context.setTransform(pixelRatio, 0, 0, pixelRatio, 0, 0);
  context.fillStyle = background;
  context.fillRect(0, 0, scene.width, scene.height);
  for (const shape of scene.shapes) drawShape(context, shape, theme);
  return canvas;
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
          const [r, g, b] = shape.lut[lutIndex(shape.values[row * shape.cols + col])];
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
