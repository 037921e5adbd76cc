// A view's canvas that holds only the band of its scene on screen
// (scroll-band.js), placed in a spacer of the scene's full size: a view
// thousands of px tall (the lines view of 512 tokens, the heatmap of 1,024)
// draws a screen's worth a time, and scrolling (any container, or the window)
// or resizing the window draws, at the next frame, the band that comes into view.
import { renderCanvas, shiftBand } from './scene.js';
import { bandToDraw, covers, neededRows } from './scroll-band.js';

/**
 * `surface` (a canvas), placed in the view's scroll box in a spacer, drawn by band.
 * `options`: renderCanvas's keepGrids; slack, used when the scene is taller than its band (a canvas that follows
 * a growing text on screen keeps its bitmap).
 * Returns { draw(scene, theme, layout), layout (the last drawn's, and bandTop: the scene row at the canvas's top
 * edge, by which pointer rows are offset), schedule() (check the band at the next frame), reveal(box) (scroll,
 * whatever scrolls, so that the scene's box { left, top, width, height } is on screen: the keyboard's cell or token) }.
 */
export function bandedCanvas(view, surface, { keepGrids = false, slack = 0 } = {}) {
  const spacer = view.make('div', 'attnlens-band');
  const marker = view.make('div', 'attnlens-row-marker');
  marker.setAttribute('aria-hidden', 'true');
  spacer.append(surface, marker);
  view.scroll.append(spacer);
  let drawing = null; // { scene, theme, layout, band } last drawn, redrawn in another band on scroll
  let frame = 0;
  const drawOptions = (band) => ({ theme: drawing.theme, keepGrids, slack: band.height < drawing.scene.height ? slack : 0 });

  function place(band) {
    surface.style.top = `${band.top}px`;
    drawing.band = band;
  }
  function drawBand(band) {
    renderCanvas(surface, drawing.scene, { ...drawOptions(band), band });
    place(band);
  }
  function check() {
    frame = 0;
    if (view.destroyed || !drawing || covers(drawing.band, neededRows(spacer, drawing.scene.height))) return;
    const band = bandToDraw(spacer, drawing.scene.height);
    const moved = band.height === drawing.band.height && shiftBand(surface, drawing.scene, drawing.band, band.top, drawOptions(band));
    if (moved) place(band);
    else drawBand(band);
  }
  function schedule() {
    if (!frame) frame = requestAnimationFrame(check);
  }
  // Capture: scroll events do not bubble, and any ancestor may be the one scrolling.
  view.listen(view.document, 'scroll', schedule, { capture: true, passive: true });
  view.listen(view.document.defaultView, 'resize', schedule);
  view.onDestroy(() => cancelAnimationFrame(frame));

  return {
    get layout() {
      return drawing && { ...drawing.layout, bandTop: drawing.band.top };
    },
    draw(scene, theme, layout) {
      drawing = { scene, theme, layout, band: null };
      spacer.style.width = `${scene.width}px`;
      spacer.style.height = `${scene.height}px`;
      drawBand(bandToDraw(spacer, scene.height));
    },
    schedule,
    reveal(box) {
      for (const side in box) marker.style[side] = `${box[side]}px`;
      marker.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    },
  };
}
