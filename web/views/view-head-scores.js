// The headScores view: every head of every layer scored by each detector
// (model.analyze's `scores`). A small grid per score (layers down, heads
// across, each head a viridis cell: hover or focus reads its value, click or
// Enter selects it, the arrow keys move within a grid) and its text
// alternative, a table of every head that sorts by any score.
import { weightCss } from './colors.js';
import { headScoresData, scoreLabel, scoreRows, scoresCsv } from './head-scores.js';
import { formatNumber } from './matrix-table.js';
import { useStyles } from './theme.js';

const names = ['sortBy', 'descending', 'show', 'cellSize', 'onSelect', 'onHover'];
const shows = ['both', 'grid', 'table'];

function checkOptions(options, model) {
  for (const name in options) if (!names.includes(name)) throw new TypeError(`attnlens/views: unknown option "${name}"`);
  if (!shows.includes(options.show)) throw new RangeError(`attnlens/views: show must be one of ${shows.join(', ')}, got ${options.show}`);
  if (!(Number.isInteger(options.cellSize) && options.cellSize >= 4)) {
    throw new RangeError(`attnlens/views: cellSize must be an integer of at least 4 (pixels), got ${options.cellSize}`);
  }
  scoreRows(model, options); // checks sortBy
}

/** Mounts the scores of `data` in `element`; see index.d.ts (HeadScoresOptions). */
export function mountHeadScores(element, data, userOptions = {}) {
  if (!(element instanceof Element)) throw new TypeError('attnlens/views: headScores.mount needs a DOM element to draw in');
  let model = headScoresData(data);
  let options = { sortBy: null, descending: true, show: 'both', cellSize: 14, ...userOptions };
  checkOptions(options, model);

  const document = element.ownerDocument;
  const releaseStyles = useStyles(document);
  const make = (tag, text = '', css = '') => Object.assign(document.createElement(tag), { textContent: text, style: css });
  const root = make('div');
  root.className = 'attnlens-view';
  root.dataset.view = 'headScores';
  const grids = make('div', '', 'display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start');
  const readout = make('div');
  readout.className = 'attnlens-readout';
  readout.setAttribute('aria-live', 'polite');
  const tableBox = make('div');
  tableBox.className = 'attnlens-scroll';
  root.append(grids, readout, tableBox);
  element.append(root);

  const detailOf = (name, layer, head) => {
    const value = model.scores[name][layer * model.heads + head];
    return { view: 'headScores', score: name, layer, head, value };
  };
  const describe = ({ score, layer, head, value }) => `${scoreLabel(score)}, layer ${layer + 1} head ${head + 1}: ${formatNumber(value, 3)}`;
  const emit = (type, detail) => {
    options[type === 'select' ? 'onSelect' : 'onHover']?.(detail);
    root.dispatchEvent(new CustomEvent(type, { detail, bubbles: true }));
  };

  function gridOf(name) {
    const { layers, heads } = model;
    const figure = make('figure', '', 'margin:0');
    const caption = make('figcaption', scoreLabel(name), 'margin-bottom:4px');
    const grid = make('div', '', `display:grid;grid-template-columns:auto repeat(${heads},${options.cellSize}px);gap:1px;align-items:center`);
    grid.setAttribute('role', 'group');
    grid.setAttribute('aria-label', `${scoreLabel(name)}: ${layers} layers × ${heads} heads; arrow keys move between heads`);
    for (let layer = 0; layer < layers; layer += 1) {
      grid.append(make('span', `L${layer + 1}`, 'padding-right:4px;font-size:0.85em'));
      for (let head = 0; head < heads; head += 1) {
        const detail = detailOf(name, layer, head);
        const cell = make('button', '', `width:${options.cellSize}px;height:${options.cellSize}px;padding:0;border:0;background:${weightCss(detail.value)}`);
        Object.assign(cell.dataset, { score: name, layer, head });
        cell.title = describe(detail);
        cell.setAttribute('aria-label', cell.title);
        cell.tabIndex = layer === 0 && head === 0 ? 0 : -1;
        grid.append(cell);
      }
    }
    figure.append(caption, grid);
    return figure;
  }

  function tableOf() {
    const rows = scoreRows(model, options);
    const table = make('table');
    const order = options.sortBy === null ? 'by layer and head' : `by ${scoreLabel(options.sortBy)}, ${options.descending ? 'largest' : 'smallest'} first`;
    table.createCaption().textContent = `Head scores, ${model.layers} layers × ${model.heads} heads, ${order}`;
    const header = table.createTHead().insertRow();
    for (const label of ['layer', 'head']) header.append(Object.assign(make('th', label), { scope: 'col' }));
    for (const name of model.names) {
      const th = Object.assign(make('th'), { scope: 'col' });
      const sorted = options.sortBy === name;
      th.setAttribute('aria-sort', sorted ? (options.descending ? 'descending' : 'ascending') : 'none');
      const button = make('button', `${scoreLabel(name)}${sorted ? (options.descending ? ' ▼' : ' ▲') : ''}`);
      button.dataset.sort = name;
      th.append(button);
      header.append(th);
    }
    const body = table.createTBody();
    for (const { layer, head, values } of rows) {
      const tr = body.insertRow();
      tr.append(Object.assign(make('th', String(layer + 1)), { scope: 'row' }), make('td', String(head + 1)));
      for (const name of model.names) {
        const td = make('td', formatNumber(values[name], 3));
        td.title = String(values[name]);
        tr.append(td);
      }
    }
    return table;
  }

  function render() {
    grids.hidden = options.show === 'table';
    tableBox.hidden = options.show === 'grid';
    grids.replaceChildren(...model.names.map(gridOf));
    tableBox.replaceChildren(tableOf());
  }

  const cellOf = (event) => event.target.closest?.('button[data-score]');
  const show = (cell) => {
    const detail = detailOf(cell.dataset.score, Number(cell.dataset.layer), Number(cell.dataset.head));
    readout.textContent = describe(detail);
    emit('hover', detail);
    return detail;
  };
  let hovered = null;
  const handlers = {
    mouseover(event) {
      const cell = cellOf(event);
      if (cell && cell !== hovered) show(cell);
      hovered = cell;
    },
    focusin(event) {
      const cell = cellOf(event);
      if (cell) show(cell);
    },
    click(event) {
      const cell = cellOf(event);
      if (cell) {
        cell.focus();
        emit('select', show(cell));
        return;
      }
      const sort = event.target.closest?.('button[data-sort]')?.dataset.sort;
      if (!sort) return;
      // A click on the sorted column flips the order; on another, sorts by it, largest first.
      options = { ...options, descending: options.sortBy === sort ? !options.descending : true, sortBy: sort };
      tableBox.replaceChildren(tableOf());
      tableBox.querySelector(`button[data-sort="${sort}"]`).focus();
    },
    keydown(event) {
      const cell = cellOf(event);
      const step = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] }[event.key];
      if (!cell || !step) return;
      event.preventDefault();
      const layer = Math.min(Math.max(Number(cell.dataset.layer) + step[0], 0), model.layers - 1);
      const head = Math.min(Math.max(Number(cell.dataset.head) + step[1], 0), model.heads - 1);
      const target = cell.parentElement.querySelector(`button[data-layer="${layer}"][data-head="${head}"]`);
      cell.tabIndex = -1;
      target.tabIndex = 0;
      target.focus();
    },
  };
  for (const type in handlers) root.addEventListener(type, handlers[type]);
  render();

  let destroyed = false;
  const alive = (name) => { if (destroyed) throw new Error(`attnlens/views: headScores.${name}() after destroy()`); };
  return {
    element: root,
    update(nextData, nextOptions = {}) {
      alive('update');
      const nextModel = nextData === undefined || nextData === null ? model : headScoresData(nextData);
      const merged = { ...options, ...nextOptions };
      checkOptions(merged, nextModel);
      model = nextModel;
      options = merged;
      readout.textContent = '';
      render();
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      for (const type in handlers) root.removeEventListener(type, handlers[type]);
      root.remove();
      releaseStyles();
    },
    toCSV() {
      alive('toCSV');
      return scoresCsv(model, scoreRows(model, options));
    },
    toJSON() {
      alive('toJSON');
      const nested = (values) => Array.from({ length: model.layers }, (_, l) => Array.from(values.slice(l * model.heads, (l + 1) * model.heads)));
      return {
        generator: 'attnlens/views', view: 'headScores', shape: [model.layers, model.heads],
        scores: Object.fromEntries(model.names.map((name) => [name, nested(model.scores[name])])),
      };
    },
  };
}
