// A view much taller than the screen (the lines view of 512 tokens is 5,000 px
// tall) draws only the band of its rows that is on screen, with a margin above
// and below, on a canvas of that height; scrolling past the band moves it and
// paints the rows that come in. Rasterizing 4,096 lines over the whole height
// took ~90 ms; a screen's worth takes a fraction of that, whichever container
// (or the window) scrolls.

// The margin drawn above and below what is seen, as a share of the seen height:
// small scrolls then draw nothing, and a fast one shows no blank edge for a
// frame. Small, since every row drawn costs (a scroll only paints new rows).
const overscan = 0.1;

// The rows of `element` (px from its top) inside the viewport and every
// clipping ancestor: { top, bottom }, empty (bottom <= top) when none is seen.
function seenRows(element) {
  const view = element.ownerDocument.defaultView;
  const rect = element.getBoundingClientRect();
  let top = 0;
  let bottom = view.innerHeight;
  const page = element.ownerDocument.body;
  // The body's and root's overflow applies to the viewport, counted above.
  for (let node = element.parentElement; node && node !== page; node = node.parentElement) {
    if (view.getComputedStyle(node).overflowY === 'visible') continue;
    const box = node.getBoundingClientRect();
    top = Math.max(top, box.top + node.clientTop);
    bottom = Math.min(bottom, box.top + node.clientTop + node.clientHeight);
  }
  return { top: top - rect.top, bottom: bottom - rect.top };
}

/**
 * The rows of `element` (a view `height` px tall) that must be drawn now:
 * those on screen, or when none is (scrolled away, hidden), the screen's
 * height of it nearest to the screen. { top, bottom } within [0, height].
 */
export function neededRows(element, height) {
  const seen = seenRows(element);
  const screen = element.ownerDocument.defaultView.innerHeight;
  let { top, bottom } = seen;
  if (bottom - top < 1) {
    top = Math.min(Math.max(seen.top, 0), height);
    bottom = top + screen;
    if (bottom > height) top -= bottom - height;
  }
  return { top: Math.max(0, Math.floor(top)), bottom: Math.min(height, Math.ceil(bottom)) };
}

/**
 * The band to draw: the needed rows and a margin, { top, height } within
 * [0, height]; as tall as the last one while the seen height stays the same
 * (pushed, not cut, at the ends), so a scroll can move it (scene.js shiftBand).
 */
export function bandToDraw(element, height) {
  const { top, bottom } = neededRows(element, height);
  const margin = Math.ceil((bottom - top) * overscan);
  const size = Math.min(height, bottom - top + 2 * margin);
  return { top: Math.min(Math.max(0, top - margin), height - size), height: size };
}

/** Whether the drawn band ({ top, height }) still holds every needed row ({ top, bottom }). */
export function covers(band, rows) {
  return band.top <= rows.top && band.top + band.height >= rows.bottom;
}
