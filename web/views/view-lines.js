// The lines view (BertViz's head view): queries left, keys right, one line
// per pair with the weight as opacity; the pointer or the keys isolate one
// token's lines. It can be thousands of px tall: its canvas holds only the
// band on screen (scroll-band.js), placed in a spacer of the full height, and
// scrolling draws the band that comes into view.
import { linesScene, tokenAt } from './lines.js';
import { renderCanvas, shiftBand } from './scene.js';
import { bandToDraw, covers, neededRows } from './scroll-band.js';
import { exact, quote } from './view-core.js';

function tokenDetail(view, next) {
  const { model, options } = view;
  const v = view.values();
  const others = next.side === 'query' ? model.nKeys : model.n;
  const weights = Array.from({ length: others }, (_, other) => (next.side === 'query' ? v[next.index * model.nKeys + other] : v[other * model.nKeys + next.index]));
  const strongest = weights.indexOf(Math.max(...weights));
  const tokens = next.side === 'query' ? model.queryTokens : model.keyTokens;
  const otherTokens = next.side === 'query' ? model.keyTokens : model.queryTokens;
  return {
    view: view.name, layer: options.layer, head: options.head, side: next.side, index: next.index, token: tokens[next.index],
    strongest: { index: strongest, token: otherTokens[strongest], weight: weights[strongest] },
  };
}

const describeToken = (d) => (d.side === 'query'
  ? `query ${quote(d.token)} (#${d.index}) looks most at ${quote(d.strongest.token)} (#${d.strongest.index}), weight ${exact(d.strongest.weight)}`
  : `key ${quote(d.token)} (#${d.index}) is looked at most by ${quote(d.strongest.token)} (#${d.strongest.index}), weight ${exact(d.strongest.weight)}`);

function createLines(view) {
  const surface = view.make('canvas');
  surface.tabIndex = 0;
  surface.setAttribute('role', 'img');
  const spacer = view.make('div', 'attnlens-band');
  // The keyboard's token is scrolled into view through a marker at its row.
  const rowMarker = view.make('div', 'attnlens-row-marker');
  rowMarker.setAttribute('aria-hidden', 'true');
  spacer.append(surface, rowMarker);
  view.scroll.append(spacer);

  let focus = null; // { side, index }
  let drawing = null; // { scene, layout, theme, band } last drawn, redrawn in another band on scroll
  const parts = {
    surface,
    layout: null,
    scene(theme) {
      const { options } = view;
      const data = { ...view.tokens(), values: view.values(), title: view.title() };
      return linesScene(data, { focus: focus ?? (options.token === null ? null : { side: 'query', index: options.token }), width: view.available() });
    },
    render(theme) {
      drawing = { ...parts.scene(theme), theme };
      spacer.style.width = `${drawing.scene.width}px`;
      spacer.style.height = `${drawing.scene.height}px`;
      drawBand(bandToDraw(spacer, drawing.scene.height));
      const { model } = view;
      surface.setAttribute('aria-label', `${view.title() ?? 'Attention'}: lines from ${model.n} query tokens to ${model.nKeys} key tokens. Arrow keys isolate one token.`);
    },
    dataChanged({ newData }) {
      if (newData) focus = null;
    },
    // A host often sizes its box right after mounting (the attnlens page does).
    mounted: () => scheduleBand(),
  };

  // Draws the rows `band` ({ top, height }) of the last scene; `layout.bandTop`
  // is the scene row at the canvas's top edge (pointer rows are offset by it).
  function drawBand(band) {
    renderCanvas(surface, drawing.scene, { theme: drawing.theme, band });
    placeBand(band);
  }
  function placeBand(band) {
    surface.style.top = `${band.top}px`;
    drawing.band = band;
    parts.layout = { ...drawing.layout, bandTop: band.top };
  }

  // Scrolls (whatever scrolls) so that the token's label is on screen.
  function revealToken({ side, index }) {
    const { layout } = parts;
    rowMarker.style.left = `${side === 'query' ? layout.leftX - 2 : layout.rightX + 2}px`;
    rowMarker.style.top = `${layout.top + index * layout.rowH}px`;
    rowMarker.style.height = `${layout.rowH}px`;
    rowMarker.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }

  // Scrolling (any container, or the window) and resizing the window may bring
  // rows outside the drawn band on screen: at the next frame, draw the band there.
  let bandFrame = 0;
  function checkBand() {
    bandFrame = 0;
    if (view.destroyed || !drawing || covers(drawing.band, neededRows(spacer, drawing.scene.height))) return;
    const band = bandToDraw(spacer, drawing.scene.height);
    const moved = band.height === drawing.band.height && shiftBand(surface, drawing.scene, drawing.band, band.top, { theme: drawing.theme });
    if (moved) placeBand(band);
    else drawBand(band);
  }
  function scheduleBand() {
    if (!bandFrame) bandFrame = requestAnimationFrame(checkBand);
  }
  view.onDestroy(() => cancelAnimationFrame(bandFrame));

  function showFocus(next) {
    if (next?.side === focus?.side && next?.index === focus?.index) return null;
    focus = next;
    view.render();
    if (!next) {
      view.readoutLine().textContent = '';
      return null;
    }
    const detail = tokenDetail(view, next);
    view.readoutLine().textContent = describeToken(detail);
    view.emit('hover', detail);
    return detail;
  }

  const pointed = (event) => parts.layout && tokenAt(parts.layout, event.offsetX, event.offsetY + parts.layout.bandTop);
  view.listen(surface, 'mousemove', (event) => showFocus(pointed(event)));
  view.listen(surface, 'mouseleave', () => showFocus(null));
  view.listen(surface, 'click', (event) => {
    const hit = pointed(event);
    if (hit) view.emit('select', tokenDetail(view, hit));
  });
  // Capture: scroll events do not bubble, and any ancestor may be the one scrolling.
  view.listen(view.document, 'scroll', scheduleBand, { capture: true, passive: true });
  view.listen(view.document.defaultView, 'resize', scheduleBand);
  view.listen(surface, 'keydown', (event) => {
    if (event.key === 'Enter' && focus) {
      view.emit('select', tokenDetail(view, focus));
      return;
    }
    const from = focus ?? { side: 'query', index: -1 };
    const count = (side) => (side === 'query' ? view.model.n : view.model.nKeys);
    let next;
    if (event.key === 'ArrowDown') next = { side: from.side, index: Math.min(from.index + 1, count(from.side) - 1) };
    else if (event.key === 'ArrowUp') next = { side: from.side, index: Math.max(from.index - 1, 0) };
    else if (event.key === 'ArrowLeft' || event.key === 'ArrowRight') {
      const side = event.key === 'ArrowLeft' ? 'query' : 'key';
      next = { side, index: Math.min(Math.max(from.index, 0), count(side) - 1) };
    } else if (event.key === 'Escape') next = null;
    else return;
    event.preventDefault();
    showFocus(next);
    if (next) revealToken(next);
  });
  return parts;
}

export const linesKind = { name: 'lines', create: createLines };
