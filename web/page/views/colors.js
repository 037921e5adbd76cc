// The one colour scale of the page: attention weights live in [0, 1] and map
// through viridis, which stays ordered for colour-blind readers and in grey.
import { scaleSequential } from 'd3-scale';
import { interpolateViridis } from 'd3-scale-chromatic';

export const weightDomain = [0, 1];
export const weightScale = scaleSequential(interpolateViridis).domain(weightDomain).clamp(true);

// 256 precomputed [r, g, b] entries: canvas views colour hundreds of thousands
// of cells, and parsing a CSS colour string per cell would dominate the frame.
export const weightLut = Array.from({ length: 256 }, (_, index) => {
  // viridis yields '#rrggbb' strings.
  const hex = weightScale(index / 255);
  return [1, 3, 5].map((start) => parseInt(hex.slice(start, start + 2), 16));
});

export function lutIndex(value) {
  if (!(value > 0)) return 0;
  if (value >= 1) return 255;
  return Math.round(value * 255);
}

export function weightCss(value) {
  const [r, g, b] = weightLut[lutIndex(value)];
  return `rgb(${r},${g},${b})`;
}

// Text drawn on top of a cell: dark on the bright (yellow) end, light on the dark end.
export function inkOn(value) {
  return value > 0.55 ? '#111' : '#fff';
}
