// The lines view (BertViz's head view): queries left, keys right, one line
// per pair with the weight as opacity; the pointer or the keys isolate one
// token's lines. It can be thousands of px tall: its canvas holds only the
// band on screen (banded-canvas.js).
import { bandedCanvas } from './banded-canvas.js';
import { linesScene, tokenAt } from './lines.js';
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
  let focus = null; // { side, index }
  const band = bandedCanvas(view, surface);
  const parts = {
    surface,
    get layout() { return band.layout; },
    scene(theme) {
      const { options } = view;
      const data = { ...view.tokens(), values: view.values(), title: view.title() };
      return linesScene(data, { focus: focus ?? (options.token === null ? null : { side: 'query', index: options.token }), width: view.available() });
    },
    render(theme) {
      const { scene, layout } = parts.scene(theme);
      band.draw(scene, theme, layout);
      const { model } = view;
      surface.setAttribute('aria-label', `${view.title() ?? 'Attention'}: lines from ${model.n} query tokens to ${model.nKeys} key tokens. Arrow keys isolate one token.`);
    },
    dataChanged({ newData }) {
      if (newData) focus = null;
    },
    // A host often sizes its box right after mounting (the attnlens page does).
    mounted: () => band.schedule(),
  };

  // The token's label on screen.
  function revealToken({ side, index }) {
    const { layout } = parts;
    band.reveal({ left: side === 'query' ? layout.leftX - 2 : layout.rightX + 2, top: layout.top + index * layout.rowH, width: 1, height: layout.rowH });
  }

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
