// attnlens/views: the page's attention views as components you mount in any
// element, fed with plain data from anywhere (attnlens, onnxruntime-web,
// transformers.js, a JSON file). No WebAssembly, no dependencies.
//
//   import { heatmap } from 'attnlens/views';
//   const view = heatmap.mount(element, { tokens, weights, heads }, { head: 0 });
//   view.update(undefined, { head: 1 });  view.toCSV();  view.destroy();
//   steps.mount(element, lens.explainSentence({ text }), { head: 0, step: 6 });
//
// Each view draws a scene (a pure function of data and options: heatmap.js,
// lines.js, model-grid.js) and adds the interactions: exact values on hover
// and with the arrow keys, selection (a `select` event), token highlighting,
// a width that follows its container, exports and theming.
import { attentionData, averageValues, headValues } from './attention-data.js';
import { blocksCsv, scenePng, toNested } from './export.js';
import { headRoles } from './head-roles.js';
import { cellAt, heatmapScene, legendScene, maxGridFor } from './heatmap.js';
import { linesScene, tokenAt } from './lines.js';
import { matrixTable } from './matrix-table.js';
import { modelGridScene, multipleSize, multiplesScene, renderModelGrid } from './model-grid.js';
import { renderCanvas, renderSvg, shiftBand } from './scene.js';
import { bandToDraw, covers, neededRows } from './scroll-band.js';
import { mountSteps } from './steps.js';
import { readTheme, useStyles } from './theme.js';
import { displayToken } from './tokens.js';

export { AttentionDataError, attentionData, fromLayers } from './attention-data.js';
export { fromExplanation, fromRun } from './records.js';
export { headRoles } from './head-roles.js';
export { weightLut, weightCss } from './colors.js';
export { stepsOf } from './steps.js';
export { darkTheme, lightTheme } from './theme.js';

const defaults = {
  layer: 0, head: 0, token: null, cell: null, normalized: true, title: undefined,
  maxSize: undefined, maxRows: 128, maxCols: 64, average: false, onSelect: null, onHover: null,
  // For a host that lays out the chart itself (the attnlens page): sizes it
  // chose, its own readout line and tooltip, the model view's head roles.
  gridSize: undefined, columns: undefined, readout: null, tooltip: null, roles: false,
};
const optionNames = new Set(Object.keys(defaults));
const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };

function checkOptions(options, model) {
  for (const name of Object.keys(options)) {
    if (!optionNames.has(name)) throw new TypeError(`attnlens/views: unknown option "${name}"`);
  }
  const inRange = (name, value, count) => {
    if (!Number.isInteger(value) || value < 0 || value >= count) {
      throw new RangeError(`attnlens/views: ${name} must be an integer from 0 to ${count - 1}, got ${value}`);
    }
  };
  inRange('layer', options.layer, model.layers);
  inRange('head', options.head, model.heads);
  if (options.token !== null) inRange('token', options.token, model.n);
}

const quote = (token) => `“${displayToken(token)}”`;
const exact = (value) => value.toPrecision(7);

function createView(kind, element, data, userOptions = {}) {
  if (!(element instanceof Element)) throw new TypeError(`attnlens/views: ${kind}.mount needs a DOM element to draw in, got ${element === null ? 'null' : typeof element}`);
  let options = { ...defaults, ...userOptions };
  let model = attentionData(data, options);
  checkOptions(options, model);

  const document = element.ownerDocument;
  const releaseStyles = useStyles(document);
  const root = document.createElement('div');
  root.className = 'attnlens-view';
  root.dataset.view = kind;
  const scroll = document.createElement('div');
  scroll.className = 'attnlens-scroll';
  const readout = document.createElement('div');
  readout.className = 'attnlens-readout';
  readout.setAttribute('aria-live', 'polite');
  const tooltip = document.createElement('div');
  tooltip.className = 'attnlens-tooltip';
  tooltip.hidden = true;
  root.append(scroll, readout, tooltip);

  const canvasKinds = ['heatmap', 'headAverage', 'lines'];
  let surface;
  if (canvasKinds.includes(kind)) {
    surface = document.createElement('canvas');
    surface.tabIndex = 0;
    surface.setAttribute('role', 'img');
  } else if (kind === 'table') {
    surface = document.createElement('div');
  } else {
    surface = document.createElement('div');
    surface.className = 'attnlens-grid';
    surface.setAttribute('role', 'group');
  }
  // The lines view can be thousands of px tall: its canvas holds only the band
  // on screen (scroll-band.js), placed in a spacer of the full height.
  const spacer = kind === 'lines' ? document.createElement('div') : null;
  // The keyboard's token is scrolled into view through a marker at its row.
  const rowMarker = spacer ? document.createElement('div') : null;
  if (spacer) {
    spacer.className = 'attnlens-band';
    rowMarker.className = 'attnlens-row-marker';
    rowMarker.setAttribute('aria-hidden', 'true');
    spacer.append(surface, rowMarker);
    scroll.append(spacer);
  } else {
    scroll.append(surface);
  }
  // The small multiples share one colour scale: its legend sits beside them.
  const legend = kind === 'allHeads' || kind === 'modelView' ? document.createElement('canvas') : null;
  if (legend) {
    legend.className = 'attnlens-legend';
    legend.setAttribute('role', 'img');
    legend.setAttribute('aria-label', 'Colour scale: viridis, weight 0 (dark purple) to 1 (yellow)');
    scroll.classList.add('attnlens-with-legend');
    scroll.append(legend);
  }
  element.append(root);

  // Every listener goes through `listen`, so destroy() removes each one.
  const listeners = [];
  function listen(target, type, handler, listenOptions = {}) {
    target.addEventListener(type, handler, listenOptions);
    listeners.push([target, type, handler, listenOptions]);
  }

  let cell = options.cell; // heatmap, head average, table: the selected cell
  let focus = null; // lines: { side, index }
  let layout = null;
  let drawing = null; // lines: { scene, layout, theme, band } last drawn, redrawn in another band on scroll
  let width = 0;
  let averageCache = null;
  let headCache = null;
  let rolesCache = null;
  let destroyed = false;

  const values = () => {
    if (kind === 'headAverage' || (kind === 'table' && options.average)) {
      if (averageCache?.model !== model || averageCache.layer !== options.layer) {
        averageCache = { model, layer: options.layer, values: averageValues(model, options.layer) };
      }
      return averageCache.values;
    }
    // The same array while the head is the same: scene.js keeps its painted grid per array.
    if (headCache?.model !== model || headCache.layer !== options.layer || headCache.head !== options.head) {
      headCache = { model, layer: options.layer, head: options.head, values: headValues(model, options.layer, options.head) };
    }
    return headCache.values;
  };
  const averaged = () => kind === 'headAverage' || (kind === 'table' && options.average);

  function title() {
    if (options.title !== undefined) return options.title ?? undefined;
    const layer = model.hasLayers ? `Layer ${options.layer + 1} of ${model.layers} · ` : '';
    if (kind === 'modelView') return undefined;
    if (averaged()) return `${model.hasLayers ? `Layer ${options.layer + 1} · a` : 'A'}verage of ${model.heads} heads`;
    if (kind === 'allHeads') return model.hasLayers ? `Layer ${options.layer + 1} of ${model.layers}` : undefined;
    return model.heads > 1 || model.hasLayers ? `${layer}head ${options.head + 1} of ${model.heads}` : 'Attention weights';
  }

  const available = () => Math.max(160, width || 640);
  const maxSize = (theme) => options.maxSize ?? (theme.maxSize || 640);
  const tokensData = () => ({ queryTokens: model.queryTokens, keyTokens: model.keyTokens });
  const gridData = () => ({
    ...tokensData(),
    layers: kind === 'modelView' ? model.layers : 1,
    heads: model.heads,
    weightsOf: (layer, head) => headValues(model, kind === 'modelView' ? layer : options.layer, head),
    current: { layer: kind === 'modelView' ? options.layer : 0, head: options.head },
  });
  const legendWidth = 72; // the legend beside the small multiples, and its gap
  // The page's size rule, less each multiple's 2 px padding on both sides.
  const modelGrid = () => options.gridSize ?? multipleSize(available() - 4 * model.heads - 4 - legendWidth, model.heads);
  const allHeadsColumns = () => Math.max(1, Math.min(model.heads, options.columns ?? Math.floor((available() - legendWidth) / 150)));
  const allHeadsGrid = () => options.gridSize ?? Math.max(36, Math.min(220, Math.floor((available() - legendWidth) / allHeadsColumns()) - 28));
  // The readout line and tooltip in use: the host's (options) or the view's own.
  const readoutLine = () => options.readout ?? readout;
  const tip = () => options.tooltip ?? tooltip;
  // modelView with `roles`: each head's measured role (self-attention only), once per data.
  function roles() {
    if (!options.roles || model.queryTokens !== model.keyTokens) return null;
    if (rolesCache?.model !== model) rolesCache = { model, roles: headRoles(model.weights, model) };
    return rolesCache.roles;
  }

  // The scene of what is shown: drawn on the canvas and exported as SVG and PNG.
  function currentScene(theme) {
    const data = { ...tokensData(), values: values(), title: title() };
    switch (kind) {
      case 'lines':
        return linesScene(data, { focus: focus ?? (options.token === null ? null : { side: 'query', index: options.token }), width: available() });
      case 'allHeads':
        return { scene: multiplesScene({ ...tokensData(), headValues: Array.from({ length: model.heads }, (_, h) => headValues(model, options.layer, h)) },
          { maxGrid: allHeadsGrid(), columns: allHeadsColumns(), token: options.token }) };
      case 'modelView':
        return { scene: modelGridScene(gridData(), { maxGrid: modelGrid(), token: options.token, title: title() }) };
      default: {
        const maxGrid = options.gridSize ?? Math.min(maxSize(theme), maxGridFor(data, available(), { minCell: 1 }));
        // Cells down to 1 px, so 512 tokens still fit a 700 px container.
        return heatmapScene(data, { maxGrid, highlight: cell, token: options.token, minCell: 1 });
      }
    }
  }

  function render() {
    const theme = readTheme(root);
    readout.hidden = Boolean(options.readout);
    if (kind === 'lines') {
      drawing = { ...currentScene(theme), theme };
      spacer.style.width = `${drawing.scene.width}px`;
      spacer.style.height = `${drawing.scene.height}px`;
      drawBand(bandToDraw(spacer, drawing.scene.height));
    } else if (canvasKinds.includes(kind)) {
      const result = currentScene(theme);
      layout = result.layout;
      renderCanvas(surface, result.scene, { theme });
    }
    if (canvasKinds.includes(kind)) {
      const what = kind === 'lines' ? `lines from ${model.n} query tokens to ${model.nKeys} key tokens. Arrow keys isolate one token.`
        : `heatmap of ${model.n} query tokens by ${model.nKeys} key tokens. Arrow keys read the weights.`;
      surface.setAttribute('aria-label', `${title() ?? 'Attention'}: ${what}`);
    } else if (kind === 'table') {
      const table = matrixTable({
        name: title() ?? 'Attention weights', rows: model.n, cols: model.nKeys, values: values(),
        rowLabels: model.queryTokens, colLabels: model.keyTokens,
      }, { maxRows: options.maxRows, maxCols: options.maxCols, highlightRow: options.token });
      const cells = table.tBodies[0].querySelectorAll('td');
      const shownCols = Math.min(model.nKeys, options.maxCols);
      const current = cell && cell.row < options.maxRows && cell.col < shownCols ? cell.row * shownCols + cell.col : 0;
      cells.forEach((td, index) => { td.tabIndex = index === current ? 0 : -1; });
      surface.replaceChildren(table);
    } else {
      const modelView = kind === 'modelView';
      renderCanvas(legend, legendScene(), { theme });
      renderModelGrid(surface, gridData(), {
        maxGrid: modelView ? modelGrid() : allHeadsGrid(),
        layerLabels: modelView, titles: !modelView, token: options.token, theme,
        columns: modelView ? model.heads : allHeadsColumns(), roles: modelView ? roles() : null,
        onOpen: (layer, head) => {
          options = { ...options, head, ...(modelView ? { layer } : {}) };
          render();
          surface.querySelector(`button[data-layer="${modelView ? layer : 0}"][data-head="${head}"]`)?.focus();
          emit('select', { view: kind, layer: modelView ? layer : options.layer, head });
        },
      });
    }
  }

  // Lines: draws the rows `band` ({ top, height }) of the last scene; `layout.bandTop`
  // is the scene row at the canvas's top edge (pointer rows are offset by it).
  function drawBand(band) {
    renderCanvas(surface, drawing.scene, { theme: drawing.theme, band });
    placeBand(band);
  }
  function placeBand(band) {
    surface.style.top = `${band.top}px`;
    drawing.band = band;
    layout = { ...drawing.layout, bandTop: band.top };
  }

  // Lines: scrolls (whatever scrolls) so that the token's label is on screen.
  function revealToken({ side, index }) {
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
    if (destroyed || !drawing || covers(drawing.band, neededRows(spacer, drawing.scene.height))) return;
    const band = bandToDraw(spacer, drawing.scene.height);
    const moved = band.height === drawing.band.height && shiftBand(surface, drawing.scene, drawing.band, band.top, { theme: drawing.theme });
    if (moved) placeBand(band);
    else drawBand(band);
  }
  function scheduleBand() {
    if (!bandFrame) bandFrame = requestAnimationFrame(checkBand);
  }

  function emit(type, detail) {
    const callback = type === 'select' ? options.onSelect : options.onHover;
    if (callback) callback(detail);
    root.dispatchEvent(new CustomEvent(type, { detail, bubbles: true }));
  }

  // ---- heatmap, head average and table: one cell --------------------------------
  function cellDetail({ row, col }) {
    const weight = values()[row * model.nKeys + col];
    return {
      view: kind, layer: options.layer, head: averaged() ? null : options.head, row, col,
      query: model.queryTokens[row], key: model.keyTokens[col], weight,
    };
  }
  const describeCell = (detail) => `query ${quote(detail.query)} (#${detail.row}) → key ${quote(detail.key)} (#${detail.col}): weight ${exact(detail.weight)}`;

  function showCell(next, pointer) {
    const same = next?.row === cell?.row && next?.col === cell?.col;
    cell = next;
    if (!same) render();
    if (!next) {
      tip().hidden = true;
      readoutLine().textContent = '';
      return null;
    }
    const detail = cellDetail(next);
    readoutLine().textContent = describeCell(detail);
    if (pointer) {
      tip().textContent = describeCell(detail);
      tip().hidden = false;
      // Placed from the box it is positioned in (none for position: fixed).
      const box = tip().offsetParent?.getBoundingClientRect() ?? { left: 0, top: 0 };
      tip().style.left = `${pointer.clientX - box.left + 14}px`;
      tip().style.top = `${pointer.clientY - box.top + 14}px`;
    } else {
      tip().hidden = true;
    }
    if (!same) emit('hover', detail);
    return detail;
  }

  function keyCell(event, rows, cols) {
    const from = cell ?? { row: 0, col: 0 };
    if (moves[event.key]) {
      const [dr, dc] = cell ? moves[event.key] : [0, 0];
      return { row: Math.min(Math.max(from.row + dr, 0), rows - 1), col: Math.min(Math.max(from.col + dc, 0), cols - 1) };
    }
    if (event.key === 'Home') return { row: from.row, col: 0 };
    if (event.key === 'End') return { row: from.row, col: cols - 1 };
    if (event.key === 'Escape') return null;
    return undefined;
  }

  if (kind === 'heatmap' || kind === 'headAverage') {
    listen(surface, 'mousemove', (event) => {
      if (layout) showCell(cellAt(layout, event.offsetX, event.offsetY), event);
    });
    listen(surface, 'mouseleave', () => showCell(null));
    listen(surface, 'click', (event) => {
      const detail = layout && cellAt(layout, event.offsetX, event.offsetY);
      if (detail) emit('select', showCell(detail, event));
    });
    listen(surface, 'keydown', (event) => {
      if (event.key === 'Enter' && cell) {
        emit('select', cellDetail(cell));
        return;
      }
      const next = keyCell(event, model.n, model.nKeys);
      if (next === undefined) return;
      event.preventDefault();
      showCell(next);
    });
  }

  if (kind === 'table') {
    const tdOf = (event) => event.target.closest?.('td');
    const cellOf = (td) => ({ row: td.parentElement.sectionRowIndex, col: td.cellIndex - 1 });
    listen(surface, 'focusin', (event) => {
      const td = tdOf(event);
      if (td) {
        cell = cellOf(td);
        const detail = cellDetail(cell);
        readoutLine().textContent = describeCell(detail);
        emit('hover', detail);
      }
    });
    listen(surface, 'click', (event) => {
      const td = tdOf(event);
      if (td) { td.focus(); emit('select', cellDetail(cellOf(td))); }
    });
    listen(surface, 'keydown', (event) => {
      const td = tdOf(event);
      if (!td) return;
      if (event.key === 'Enter') { emit('select', cellDetail(cellOf(td))); return; }
      const rows = Math.min(model.n, options.maxRows);
      const cols = Math.min(model.nKeys, options.maxCols);
      cell = cellOf(td);
      const next = keyCell(event, rows, cols);
      if (!next) return;
      event.preventDefault();
      const tds = surface.querySelectorAll('tbody td');
      const target = tds[next.row * cols + next.col];
      for (const other of tds) other.tabIndex = other === target ? 0 : -1;
      target.focus();
    });
  }

  // ---- lines: one token ----------------------------------------------------------
  function tokenDetail(next) {
    const v = values();
    const others = next.side === 'query' ? model.nKeys : model.n;
    const weights = Array.from({ length: others }, (_, other) => (next.side === 'query' ? v[next.index * model.nKeys + other] : v[other * model.nKeys + next.index]));
    const strongest = weights.indexOf(Math.max(...weights));
    const tokens = next.side === 'query' ? model.queryTokens : model.keyTokens;
    const otherTokens = next.side === 'query' ? model.keyTokens : model.queryTokens;
    return {
      view: kind, layer: options.layer, head: options.head, side: next.side, index: next.index, token: tokens[next.index],
      strongest: { index: strongest, token: otherTokens[strongest], weight: weights[strongest] },
    };
  }
  const describeToken = (d) => (d.side === 'query'
    ? `query ${quote(d.token)} (#${d.index}) looks most at ${quote(d.strongest.token)} (#${d.strongest.index}), weight ${exact(d.strongest.weight)}`
    : `key ${quote(d.token)} (#${d.index}) is looked at most by ${quote(d.strongest.token)} (#${d.strongest.index}), weight ${exact(d.strongest.weight)}`);

  function showFocus(next) {
    if (next?.side === focus?.side && next?.index === focus?.index) return null;
    focus = next;
    render();
    if (!next) {
      readoutLine().textContent = '';
      return null;
    }
    const detail = tokenDetail(next);
    readoutLine().textContent = describeToken(detail);
    emit('hover', detail);
    return detail;
  }

  if (kind === 'lines') {
    const pointed = (event) => layout && tokenAt(layout, event.offsetX, event.offsetY + layout.bandTop);
    listen(surface, 'mousemove', (event) => showFocus(pointed(event)));
    listen(surface, 'mouseleave', () => showFocus(null));
    listen(surface, 'click', (event) => {
      const hit = pointed(event);
      if (hit) emit('select', tokenDetail(hit));
    });
    // Capture: scroll events do not bubble, and any ancestor may be the one scrolling.
    listen(document, 'scroll', scheduleBand, { capture: true, passive: true });
    listen(document.defaultView, 'resize', scheduleBand);
    listen(surface, 'keydown', (event) => {
      if (event.key === 'Enter' && focus) {
        emit('select', tokenDetail(focus));
        return;
      }
      const from = focus ?? { side: 'query', index: -1 };
      const count = (side) => (side === 'query' ? model.n : model.nKeys);
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
  }

  // ---- size and colour scheme ------------------------------------------------------
  const observer = new ResizeObserver(() => {
    const next = root.clientWidth;
    if (Math.abs(next - width) < 1) return;
    width = next;
    render();
  });
  observer.observe(root);
  const scheme = globalThis.matchMedia?.('(prefers-color-scheme: dark)');
  if (scheme) listen(scheme, 'change', () => render());
  width = root.clientWidth;
  render();
  // A host often sizes its box right after mounting (the attnlens page does).
  if (kind === 'lines') scheduleBand();

  // ---- exports -----------------------------------------------------------------------
  function blocks() {
    if (averaged()) return [{ layer: options.layer, head: 'mean', values: values() }];
    const layers = kind === 'modelView' ? Array.from({ length: model.layers }, (_, l) => l) : [options.layer];
    const heads = kind === 'modelView' || kind === 'allHeads' ? Array.from({ length: model.heads }, (_, h) => h) : [options.head];
    return layers.flatMap((layer) => heads.map((head) => ({ layer, head, values: headValues(model, layer, head) })));
  }

  function alive(name) {
    if (destroyed) throw new Error(`attnlens/views: ${kind}.${name}() after destroy()`);
  }

  return {
    element: root,
    /** The geometry of the last drawing (heatmap: x, y, cell, rows, cols; lines: its token rows, and bandTop, the row of the view at its canvas's top edge), or null. */
    get layout() { return layout; },
    update(nextData, nextOptions = {}) {
      alive('update');
      const merged = { ...options, ...nextOptions };
      const nextModel = nextData === undefined || nextData === null ? model : attentionData(nextData, merged);
      checkOptions(merged, nextModel);
      if (nextModel !== model) { cell = nextOptions.cell ?? null; focus = null; }
      else if ('cell' in nextOptions) cell = nextOptions.cell;
      if (cell && (cell.row >= nextModel.n || cell.col >= nextModel.nKeys)) cell = null;
      options = merged;
      model = nextModel;
      readoutLine().textContent = '';
      tip().hidden = true;
      render();
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      if (options.tooltip) options.tooltip.hidden = true; // the host's tooltip outlives the view
      observer.disconnect();
      cancelAnimationFrame(bandFrame);
      for (const [target, type, handler, listenOptions] of listeners) target.removeEventListener(type, handler, listenOptions);
      listeners.length = 0;
      surface.onclick = null;
      surface.onkeydown = null;
      root.remove();
      releaseStyles();
    },
    toSVG() {
      alive('toSVG');
      return renderSvg(currentScene(readTheme(root)).scene, { theme: readTheme(root), title: `attnlens ${kind}` });
    },
    toPNG() {
      alive('toPNG');
      return scenePng(currentScene(readTheme(root)).scene, readTheme(root));
    },
    toCSV() {
      alive('toCSV');
      return blocksCsv(model, blocks());
    },
    toJSON() {
      alive('toJSON');
      const list = blocks();
      const matrices = list.map((block) => toNested(block.values, model.n, model.nKeys));
      const common = { generator: 'attnlens/views', view: kind, queryTokens: model.queryTokens, keyTokens: model.keyTokens };
      if (kind === 'modelView') {
        return { ...common, shape: [model.layers, model.heads, model.n, model.nKeys], weights: Array.from({ length: model.layers }, (_, l) => matrices.slice(l * model.heads, (l + 1) * model.heads)) };
      }
      if (kind === 'allHeads') return { ...common, layer: options.layer, shape: [model.heads, model.n, model.nKeys], weights: matrices };
      return { ...common, layer: options.layer, head: list[0].head, shape: [model.n, model.nKeys], weights: matrices[0] };
    },
  };
}

function defineView(kind) {
  return Object.freeze({ mount: (element, data, options) => createView(kind, element, data, options) });
}

/** One head's weights: queries down, keys across, viridis, a legend; hover or arrow keys read exact values. */
export const heatmap = defineView('heatmap');
/** Every head of one layer as small multiples on one colour scale; click (or Enter) selects a head. */
export const allHeads = defineView('allHeads');
/** Every layer x every head (BertViz's model view); click (or Enter) selects one. */
export const modelView = defineView('modelView');
/** BertViz's head view: queries left, keys right, one line per pair with the weight as opacity. */
export const lines = defineView('lines');
/** The cell-by-cell mean of one layer's heads, as a heatmap. */
export const headAverage = defineView('headAverage');
/** The weights as an HTML table: the text alternative of every chart. */
export const table = defineView('table');

/** One head's path from X to the output, a step at a time; its data is an Explanation (explainSentence, explainMatrices, model.explain). */
export const steps = Object.freeze({ mount: mountSteps });

export const views = Object.freeze({ heatmap, allHeads, modelView, lines, headAverage, table, steps });

/** `mount(element, data, { view: 'heatmap', ...options })`: any view by name. */
export function mount(element, data, { view = 'heatmap', ...options } = {}) {
  if (!Object.hasOwn(views, view)) throw new TypeError(`attnlens/views: unknown view "${view}"; one of ${Object.keys(views).join(', ')}`);
  return views[view].mount(element, data, options);
}
