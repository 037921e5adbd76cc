// The logitLens view: what each layer would predict next if the model stopped
// there (model.analyze's `logitLens`), layers down and positions across. Each
// cell is a real table cell holding its top token and probability on a
// viridis background (the probability), so the grid is its own text
// alternative; hover or focus reads the cell's top-k list, a click or Enter
// selects it, the arrow keys (Home, End) move.
import { inkOn, weightCss } from './colors.js';
import { lensCell, lensCsv, logitLensData } from './logit-lens.js';
import { formatNumber } from './matrix-table.js';
import { useStyles } from './theme.js';
import { displayToken } from './tokens.js';
import { cellHandlers, emitter, mountedTableView } from './table-cells.js';

const optionNames = ['tokenLabel', 'vocabulary', 'onSelect', 'onHover'];

/** Mounts the logit lens of `data` in `element`; see analysis.d.ts (LogitLensOptions). */
export function mountLogitLens(element, data, userOptions = {}) {
  if (!(element instanceof Element)) throw new TypeError('attnlens/views: logitLens.mount needs a DOM element to draw in');
  let model, options;
  function take(nextData, nextOptions) {
    const merged = { tokenLabel: null, vocabulary: null, ...options, ...nextOptions };
    for (const name in merged) if (!optionNames.includes(name)) throw new TypeError(`attnlens/views: unknown option "${name}"`);
    const nextModel = logitLensData(nextData ?? model.source, merged);
    model = { ...nextModel, source: nextData ?? model.source };
    options = merged;
  }
  take(data, userOptions);

  const document = element.ownerDocument;
  const releaseStyles = useStyles(document);
  const make = (tag, className) => Object.assign(document.createElement(tag), { className });
  const root = make('div', 'attnlens-view');
  root.dataset.view = 'logitLens';
  const scroll = make('div', 'attnlens-scroll');
  const readout = make('div', 'attnlens-readout');
  readout.setAttribute('aria-live', 'polite');
  root.append(scroll, readout);
  element.append(root);

  const positionLabel = (position) => model.tokens?.[position] ?? String(position + 1);
  function render() {
    readout.textContent = '';
    const table = make('table', 'matrix attnlens-lens');
    const columns = model.positions.length;
    table.createCaption().textContent = `Logit lens: the top next token after each layer, ${model.layers} layers × ${columns} positions`;
    const head = table.createTHead().insertRow();
    head.append(document.createElement('td'));
    for (const position of model.positions) {
      const th = Object.assign(document.createElement('th'), { scope: 'col', textContent: displayToken(positionLabel(position)) });
      head.append(th);
    }
    const body = table.createTBody();
    for (let layer = 0; layer < model.layers; layer += 1) {
      const tr = body.insertRow();
      tr.append(Object.assign(document.createElement('th'), { scope: 'row', textContent: `layer\u00a0${layer + 1}` }));
      for (let column = 0; column < columns; column += 1) {
        const [top] = lensCell(model, layer, column);
        const td = tr.insertCell();
        td.tabIndex = layer === 0 && column === 0 ? 0 : -1;
        td.style.background = weightCss(top.prob);
        td.style.color = inkOn(top.prob);
        const token = make('span', 'attnlens-lens-token');
        token.textContent = displayToken(top.token);
        const prob = make('span', 'attnlens-lens-prob');
        prob.textContent = ` ${formatNumber(top.prob, 2)}`;
        td.append(token, prob);
      }
    }
    scroll.replaceChildren(table);
  }

  const cellOf = (event) => event.target.closest?.('.attnlens-lens tbody td');
  const where = (td) => ({ layer: td.parentElement.sectionRowIndex, column: td.cellIndex - 1 });
  const emit = emitter(root, () => options);
  const show = (td) => {
    const { layer, column } = where(td);
    const position = model.positions[column], top = lensCell(model, layer, column);
    const detail = { view: 'logitLens', layer, position, top };
    readout.textContent = `Layer ${layer + 1}, after ${displayToken(positionLabel(position))}: `
      + top.map(({ token, prob }) => `${displayToken(token)} ${formatNumber(prob, 3)}`).join(', ');
    emit('hover', detail);
    return detail;
  };
  const handlers = cellHandlers({ cellOf, show, emit, size: () => [model.layers, model.positions.length] });
  return mountedTableView('logitLens', root, handlers, releaseStyles, { take, render, csv: () => lensCsv(model) });
}
