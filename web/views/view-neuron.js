// The neuron view (BertViz's): for one head and one query token, the query
// vector q, then one row per key: its key vector k, the elementwise product
// q ∘ k (orange positive, blue negative, one scale per kind), their dot
// product, that times the scale, and the softmax weight (viridis). The query
// tokens above are buttons that pick the query; hover or focus a key (the
// arrow keys, Home and End move between keys) to read its row; a click or
// Enter selects it. Every token is set as text.
import { weightCss, inkOn } from './colors.js';
import { formatNumber } from './matrix-table.js';
import { largest, neuronOf, neuronRecord } from './neuron.js';
import { useStyles } from './theme.js';
import { csvField, displayToken } from './tokens.js';
import { emitter, mountedTableView } from './table-cells.js';
import { keyCell } from './view-heatmap.js';

const optionNames = ['head', 'query', 'onSelect', 'onHover'];
const stripCell = 6; // px per vector component

// A vector as a strip of small squares: orange for positive, blue for negative, opacity the magnitude.
function strip(document, vector, scale) {
  const span = document.createElement('span');
  span.className = 'attnlens-strip';
  span.style.cssText = 'display:inline-flex;vertical-align:middle';
  for (const value of vector) {
    const square = document.createElement('span');
    const alpha = Math.min(1, Math.abs(value) / scale).toFixed(3);
    square.style.cssText = `width:${stripCell}px;height:14px;background:rgba(${value >= 0 ? '230,120,20' : '40,110,220'},${alpha})`;
    span.append(square);
  }
  return span;
}

/** Mounts the neuron view of `record` (an Explanation) in `element`; see analysis.d.ts (NeuronOptions). */
export function mountNeuron(element, record, userOptions = {}) {
  if (!(element instanceof Element)) throw new TypeError('attnlens/views: neuron.mount needs a DOM element to draw in');
  let data, options;
  function take(nextRecord, nextOptions = {}) {
    const nextData = nextRecord == null ? data : neuronRecord(nextRecord);
    const merged = { onSelect: null, onHover: null, ...options, ...nextOptions };
    for (const name in merged) if (!optionNames.includes(name)) throw new TypeError(`attnlens/views: unknown option "${name}"`);
    merged.head ??= nextData.head ?? 0;
    // The last token by default (what a causal model predicts from); kept across data while it exists.
    if (merged.query == null || !('query' in nextOptions) && merged.query >= nextData.n) merged.query = nextData.n - 1;
    neuronOf(nextData, merged.head, merged.query); // range checks before anything changes
    data = nextData;
    options = merged;
  }
  take(record, userOptions);

  const document = element.ownerDocument;
  const releaseStyles = useStyles(document);
  const make = (tag, className, text) => {
    const made = document.createElement(tag);
    if (className) made.className = className;
    if (text !== undefined) made.textContent = text;
    return made;
  };
  const root = make('div', 'attnlens-view');
  root.dataset.view = 'neuron';
  const picker = make('div', 'attnlens-queries');
  picker.setAttribute('role', 'group');
  picker.setAttribute('aria-label', 'Query token');
  const scroll = make('div', 'attnlens-scroll');
  const readout = make('div', 'attnlens-readout');
  readout.setAttribute('aria-live', 'polite');
  root.append(picker, scroll, readout);
  element.append(root);

  const queryTokens = () => data.tokens ?? Array.from({ length: data.n }, (_, i) => `t${i}`);
  const keyTokens = () => (data.crossAttention ? data.contextTokens : null) ?? data.tokens
    ?? Array.from({ length: data.nContext }, (_, j) => `${data.crossAttention ? 'c' : 't'}${j}`);
  let numbers = null;

  function render() {
    numbers = neuronOf(data, options.head, options.query);
    readout.textContent = '';
    const tokens = queryTokens();
    picker.replaceChildren(make('span', 'attnlens-muted', 'query: '), ...tokens.map((token, index) => {
      const button = make('button', '', displayToken(token));
      button.type = 'button';
      button.dataset.query = String(index);
      button.setAttribute('aria-pressed', String(index === options.query));
      return button;
    }));
    const kScale = largest(numbers.keys.map((key) => key.k).concat([numbers.q]));
    const productScale = largest(numbers.keys.map((key) => key.product));
    const table = make('table', 'matrix attnlens-neuron');
    table.createCaption().textContent = `Neuron view: head ${options.head + 1}, query ${displayToken(tokens[options.query])} (#${options.query}), `
      + `${data.headWidth} components; q · k times ${formatNumber(data.scale / (data.temperature ?? 1), 4)}, then softmax`;
    const head = table.createTHead();
    const queryRow = head.insertRow();
    // q above the key vectors, component under component.
    queryRow.append(make('th', '', 'q'), make('td'), make('td'), make('td'), make('td'), make('td'));
    queryRow.cells[1].append(strip(document, numbers.q, kScale));
    const names = head.insertRow();
    for (const name of ['key', 'k', 'q ∘ k', 'q · k', 'scaled', 'softmax']) names.append(Object.assign(make('th', '', name), { scope: 'col' }));
    const body = table.createTBody();
    const keys = keyTokens();
    numbers.keys.forEach((key, index) => {
      const tr = body.insertRow();
      const th = Object.assign(make('th', '', displayToken(keys[index])), { scope: 'row', tabIndex: index === 0 ? 0 : -1 });
      tr.append(th);
      tr.insertCell().append(strip(document, key.k, kScale));
      tr.insertCell().append(strip(document, key.product, productScale));
      tr.insertCell().textContent = formatNumber(key.dot, 3);
      tr.insertCell().textContent = key.masked ? 'masked' : formatNumber(key.scaled, 3);
      const weight = tr.insertCell();
      weight.textContent = formatNumber(key.weight, 3);
      weight.style.background = weightCss(key.weight);
      weight.style.color = inkOn(key.weight);
    });
    scroll.replaceChildren(table);
  }

  const emit = emitter(root, () => options);
  const rowOf = (event) => event.target.closest?.('.attnlens-neuron tbody tr');
  function show(tr) {
    const key = tr.sectionRowIndex;
    const { dot, scaled, weight, masked } = numbers.keys[key];
    for (const row of tr.parentElement.rows) row.classList.toggle('attnlens-highlight', row === tr);
    const detail = { view: 'neuron', head: options.head, query: options.query, key, dot, scaled, weight, masked };
    readout.textContent = `key ${displayToken(keyTokens()[key])} (#${key}): q · k = ${formatNumber(dot, 4)}, `
      + `${masked ? 'masked' : `× ${formatNumber(data.scale / (data.temperature ?? 1), 4)} = ${formatNumber(scaled, 4)}`}, softmax ${formatNumber(weight, 4)}`;
    emit('hover', detail);
    return detail;
  }
  let hovered = null;
  const handlers = {
    mouseover(event) {
      const tr = rowOf(event);
      if (tr && tr !== hovered) show(tr);
      hovered = tr;
    },
    focusin(event) {
      const tr = event.target.matches?.('th[scope=row]') ? rowOf(event) : null;
      if (tr) show(tr);
    },
    click(event) {
      const button = event.target.closest?.('button[data-query]');
      if (button) {
        const query = Number(button.dataset.query);
        take(null, { query });
        render();
        picker.querySelector(`button[data-query="${query}"]`).focus();
        emit('select', { view: 'neuron', head: options.head, query });
        return;
      }
      const tr = rowOf(event);
      if (!tr) return;
      tr.cells[0].focus();
      emit('select', show(tr));
    },
    keydown(event) {
      const tr = event.target.matches?.('th[scope=row]') ? rowOf(event) : null;
      if (!tr) return;
      if (event.key === 'Enter') emit('select', show(tr));
      const last = data.nContext - 1;
      const next = { Home: { row: 0 }, End: { row: last } }[event.key] ?? keyCell(event, { row: tr.sectionRowIndex, col: 0 }, last + 1, 1);
      if (!next) return;
      event.preventDefault();
      tr.cells[0].tabIndex = -1;
      const target = tr.parentElement.rows[next.row].cells[0];
      target.tabIndex = 0;
      target.focus();
    },
  };
  const csv = () => ['key_index,key_token,dot,scaled,softmax', ...numbers.keys.map((key, index) =>
    `${index},${csvField(keyTokens()[index])},${key.dot},${key.masked ? '' : key.scaled},${key.weight}`)].join('\n') + '\n';
  const mounted = mountedTableView('neuron', root, handlers, releaseStyles, { take, render, csv });
  return Object.defineProperty(mounted, 'query', { get: () => options.query, enumerable: true });
}
