// What every mounted view shares: its options and data (checked once per
// change), its box (a scrolling area, a readout line, a tooltip), listeners
// that destroy() removes, the `select` / `hover` events, the width it follows,
// the colour scheme, and the exports. Each kind of view (view-heatmap.js,
// view-lines.js, view-grid.js, view-table.js) adds its surface, its drawing and
// its interactions through the `kind` object it passes to mountView:
//   kind.name                 'heatmap', 'lines', ...
//   kind.create(view)         -> { surface, render(theme), scene(theme)?, layout?, dataChanged?(options), destroy?() }
//   kind.averaged?(options)   true when it shows the head average
//   kind.title?(view)         its default title
//   kind.json?(view, blocks)  its toJSON() fields, when it shows more than one head
//   kind.drawsPooled?         true when it draws pooled data (data.pool: blocks, not each weight)
// The scene of what is shown is a pure function of data and options (heatmap.js, lines.js, model-grid.js).
import { attentionData, averageValues, headValues, hiddenCells, quantityTitle, requireUnpooled } from './attention-data.js';
import { blocksCsv, scenePng, toNested } from './export.js';
import { renderSvg } from './scene.js';
import { readTheme, useStyles } from './theme.js';
import { displayToken } from './tokens.js';

const defaults = {
  layer: 0, head: 0, token: null, cell: null, normalized: true, title: undefined,
  maxSize: undefined, maxRows: 128, maxCols: 64, average: false, onSelect: null, onHover: null,
  // For a host that lays out the chart itself (the attnlens page): sizes it
  // chose, its own readout line and tooltip, the model view's head roles.
  gridSize: undefined, columns: undefined, readout: null, tooltip: null, roles: false,
};
const optionNames = new Set(Object.keys(defaults));

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

/** A token as the readout quotes it. */
export const quote = (token) => `“${displayToken(token)}”`;
/** A weight as the readout shows it: every float32 digit. */
export const exact = (value) => value.toPrecision(7);

/** Mounts a view of `kind` in `element`; see index.d.ts (MountedView). */
export function mountView(kind, element, data, userOptions = {}) {
  const name = kind.name;
  if (!(element instanceof Element)) throw new TypeError(`attnlens/views: ${name}.mount needs a DOM element to draw in, got ${element === null ? 'null' : typeof element}`);
  let options = { ...defaults, ...userOptions };
  // Pooled data (blocks of weights) only where the kind draws blocks.
  const readData = (next, nextOptions) => {
    const read = attentionData(next, nextOptions);
    if (!kind.drawsPooled) requireUnpooled(read, name);
    return read;
  };
  let model = readData(data, options);
  checkOptions(options, model);

  const document = element.ownerDocument;
  const releaseStyles = useStyles(document);
  const make = (tag, className = '') => {
    const made = document.createElement(tag);
    if (className) made.className = className;
    return made;
  };
  const root = make('div', 'attnlens-view');
  root.dataset.view = name;
  const scroll = make('div', 'attnlens-scroll');
  const readout = make('div', 'attnlens-readout');
  readout.setAttribute('aria-live', 'polite');
  const tooltip = make('div', 'attnlens-tooltip');
  tooltip.hidden = true;
  root.append(scroll, readout, tooltip);

  // Every listener goes through `listen`, so destroy() removes each one.
  const listeners = [];
  const cleanups = [];
  let width = 0;
  let averageCache = null;
  let headCache = null;
  let destroyed = false;

  // What the kind sees of the view: read-only state and the shared helpers.
  const view = {
    name, document, root, scroll, make,
    get options() { return options; },
    get model() { return model; },
    listen(target, type, handler, listenOptions = {}) {
      target.addEventListener(type, handler, listenOptions);
      listeners.push([target, type, handler, listenOptions]);
    },
    onDestroy(cleanup) { cleanups.push(cleanup); },
    get destroyed() { return destroyed; },
    /** Options changed by the view itself (a head chosen in the grid): merged, then redrawn. */
    setOptions(next) {
      options = { ...options, ...next };
      render();
    },
    emit(type, detail) {
      const callback = type === 'select' ? options.onSelect : options.onHover;
      if (callback) callback(detail);
      root.dispatchEvent(new CustomEvent(type, { detail, bubbles: true }));
    },
    averaged: () => Boolean(kind.averaged?.(options)),
    // The values shown: the head's, or the head average; the same array while they are
    // the same (scene.js keeps its painted grid per array).
    values() {
      if (view.averaged()) {
        if (averageCache?.model !== model || averageCache.layer !== options.layer) {
          averageCache = { model, layer: options.layer, values: averageValues(model, options.layer) };
        }
        return averageCache.values;
      }
      if (headCache?.model !== model || headCache.layer !== options.layer || headCache.head !== options.head) {
        headCache = { model, layer: options.layer, head: options.head, values: headValues(model, options.layer, options.head) };
      }
      return headCache.values;
    },
    headValues: (layer, head) => headValues(model, layer, head),
    // The cells a mask or window hid in `layer` (every head alike): n x nKeys, 1 = hidden, or null.
    hidden: (layer = options.layer) => hiddenCells(model, layer),
    // The title, given or the kind's, saying "value-weighted" when that is what is drawn.
    title: () => quantityTitle(model, ownTitle()),
    tokens: () => ({ queryTokens: model.queryTokens, keyTokens: model.keyTokens }),
    available: () => Math.max(160, width || 640),
    // The readout line and tooltip in use: the host's (options) or the view's own.
    readoutLine: () => options.readout ?? readout,
    tip: () => options.tooltip ?? tooltip,
    render: () => render(),
  };
  // Escape hides the tooltip wherever the focus is (WCAG 1.4.13: dismissible without moving the pointer
  // or the focus); the host's shared tooltip too, so a page needs no listener of its own.
  view.listen(document, 'keydown', (event) => {
    if (event.key === 'Escape') view.tip().hidden = true;
  });

  function ownTitle() {
    if (options.title !== undefined) return options.title ?? undefined;
    if (kind.title) return kind.title(view);
    if (view.averaged()) return `${model.hasLayers ? `Layer ${options.layer + 1} · a` : 'A'}verage of ${model.heads} heads`;
    const layer = model.hasLayers ? `Layer ${options.layer + 1} of ${model.layers} · ` : '';
    return model.heads > 1 || model.hasLayers ? `${layer}head ${options.head + 1} of ${model.heads}` : 'Attention weights';
  }

  const parts = kind.create(view);
  element.append(root);

  function render() {
    readout.hidden = Boolean(options.readout);
    parts.render(readTheme(root));
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
  if (scheme) view.listen(scheme, 'change', () => render());
  width = root.clientWidth;
  render();
  parts.mounted?.();

  // ---- exports -----------------------------------------------------------------------
  // The weights shown, as blocks { layer, head, values }: one head, the mean, or (grids) many.
  function blocks() {
    if (view.averaged()) return [{ layer: options.layer, head: 'mean', values: view.values() }];
    return parts.blocks?.() ?? [{ layer: options.layer, head: options.head, values: view.headValues(options.layer, options.head) }];
  }
  function alive(method) {
    if (destroyed) throw new Error(`attnlens/views: ${name}.${method}() after destroy()`);
  }

  return {
    element: root,
    /** The geometry of the last drawing (heatmap: x, y, cell, rows, cols; lines: its token rows; both: bandTop, the row of the view at its canvas's top edge), or null. */
    get layout() { return parts.layout ?? null; },
    update(nextData, nextOptions = {}) {
      alive('update');
      const merged = { ...options, ...nextOptions };
      const nextModel = nextData === undefined || nextData === null ? model : readData(nextData, merged);
      checkOptions(merged, nextModel);
      const newData = nextModel !== model;
      options = merged;
      model = nextModel;
      parts.dataChanged?.({ newData, nextOptions });
      view.readoutLine().textContent = '';
      view.tip().hidden = true;
      render();
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      view.tip().hidden = true; // a host's tooltip outlives the view
      observer.disconnect();
      for (const cleanup of cleanups) cleanup();
      for (const [target, type, handler, listenOptions] of listeners) target.removeEventListener(type, handler, listenOptions);
      listeners.length = 0;
      root.remove();
      releaseStyles();
    },
    toSVG() {
      alive('toSVG');
      const theme = readTheme(root);
      return renderSvg(parts.scene(theme).scene, { theme, title: `attnlens ${name}` });
    },
    toPNG() {
      alive('toPNG');
      const theme = readTheme(root);
      return scenePng(parts.scene(theme).scene, theme);
    },
    toCSV() {
      alive('toCSV');
      requireUnpooled(model, `${name}.toCSV()`);
      return blocksCsv(model, blocks());
    },
    toJSON() {
      alive('toJSON');
      requireUnpooled(model, `${name}.toJSON()`);
      const list = blocks();
      const matrices = list.map((block) => toNested(block.values, model.n, model.nKeys));
      const common = { generator: 'attnlens/views', view: name, ...(model.valueWeighted ? { quantity: 'valueWeighted' } : {}), queryTokens: model.queryTokens, keyTokens: model.keyTokens };
      if (parts.json) return { ...common, ...parts.json(matrices) };
      return { ...common, layer: options.layer, head: list[0].head, shape: [model.n, model.nKeys], weights: matrices[0] };
    },
  };
}
