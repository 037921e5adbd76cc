// The headScores view: every head of every layer scored by each detector
// (model.analyze's `scores`). A small table per score, layers down and heads
// across, each cell a viridis square (hover or focus reads its value, a click
// or Enter selects it, the arrow keys move within a score), and its text
// alternative, a table of every head that sorts by any score. Both are
// matrixTable's tables, so screen readers get row and column headers.
import { headScoresData, scoreLabel, scoreRows, scoresCsv } from './head-scores.js';
import { formatNumber, matrixTable } from './matrix-table.js';
import { useStyles } from './theme.js';
import { cellHandlers, emitter, mountedTableView } from './table-cells.js';

const optionNames = ['sortBy', 'descending', 'onSelect', 'onHover'];
// matrixTable shows labels as tokens (a space as ␣): these join words with no-break spaces.
const label = (text) => text.replaceAll(' ', '\u00a0');
const numbered = (count, prefix) => Array.from({ length: count }, (_, i) => label(`${prefix} ${i + 1}`));

/** Mounts the scores of `data` in `element`; see index.d.ts (HeadScoresOptions). */
export function mountHeadScores(element, data, userOptions = {}) {
  if (!(element instanceof Element)) throw new TypeError('attnlens/views: headScores.mount needs a DOM element to draw in');
  let model, options;
  function take(nextData, nextOptions) {
    const merged = { sortBy: null, descending: true, ...options, ...nextOptions };
    for (const name in merged) if (!optionNames.includes(name)) throw new TypeError(`attnlens/views: unknown option "${name}"`);
    const nextModel = nextData == null ? model : headScoresData(nextData);
    scoreRows(nextModel, merged); // checks sortBy, before anything changes
    model = nextModel;
    options = merged;
  }
  take(data, userOptions);

  const document = element.ownerDocument;
  const releaseStyles = useStyles(document);
  const make = (className) => Object.assign(document.createElement('div'), { className });
  const root = make('attnlens-view');
  root.dataset.view = 'headScores';
  const grids = make('attnlens-scores');
  const readout = make('attnlens-readout');
  readout.setAttribute('aria-live', 'polite');
  const sorted = make('attnlens-scroll');
  root.append(grids, readout, sorted);
  element.append(root);

  const table = (name, rows, cols, values, rowLabels, colLabels) =>
    matrixTable({ name, rows, cols, values, rowLabels, colLabels }, { maxRows: rows, maxCols: cols, digits: 3, colored: true });

  // The sorted table, its column headers turned into sort buttons.
  function renderSorted() {
    const { sortBy, descending } = options;
    const rows = scoreRows(model, options);
    const order = sortBy === null ? 'by layer and head' : `by ${scoreLabel(sortBy)}, ${descending ? 'largest' : 'smallest'} first`;
    const list = table(`Head scores, ${order}`, rows.length, model.names.length,
      rows.flatMap((row) => model.names.map((name) => row.values[name])),
      rows.map(({ layer, head }) => label(`layer ${layer + 1} head ${head + 1}`)), model.names.map((name) => label(scoreLabel(name))));
    list.tHead.querySelectorAll('th').forEach((th, index) => {
      const name = model.names[index];
      th.setAttribute('aria-sort', sortBy === name ? (descending ? 'descending' : 'ascending') : 'none');
      const button = Object.assign(document.createElement('button'), { textContent: th.textContent + (sortBy === name ? (descending ? ' ▼' : ' ▲') : '') });
      button.dataset.sort = name;
      th.replaceChildren(button);
    });
    sorted.replaceChildren(list);
  }

  function render() {
    readout.textContent = '';
    grids.replaceChildren(...model.names.map((name) => {
      const grid = table(scoreLabel(name), model.layers, model.heads, model.scores[name], numbered(model.layers, 'layer'), numbered(model.heads, 'head'));
      grid.dataset.score = name;
      grid.tBodies[0].querySelectorAll('td').forEach((td, index) => { td.tabIndex = index ? -1 : 0; });
      return grid;
    }));
    renderSorted();
  }

  const cellOf = (event) => event.target.closest?.('[data-score] tbody td');
  const emit = emitter(root, () => options);
  const show = (td) => {
    const score = td.closest('table').dataset.score, layer = td.parentElement.sectionRowIndex, head = td.cellIndex - 1;
    const detail = { view: 'headScores', score, layer, head, value: model.scores[score][layer * model.heads + head] };
    readout.textContent = `${scoreLabel(score)}, layer ${layer + 1} head ${head + 1}: ${formatNumber(detail.value, 3)}`;
    emit('hover', detail);
    return detail;
  };
  const cells = cellHandlers({ cellOf, show, emit, size: () => [model.layers, model.heads] });
  const handlers = {
    ...cells,
    click(event) {
      cells.click(event);
      const sort = event.target.closest?.('[data-sort]')?.dataset.sort;
      if (!sort) return;
      // A click on the sorted column flips the order; on another, sorts by it, largest first.
      options = { ...options, descending: options.sortBy !== sort || !options.descending, sortBy: sort };
      renderSorted();
      sorted.querySelector(`[data-sort="${sort}"]`).focus();
    },
  };
  return mountedTableView('headScores', root, handlers, releaseStyles, { take, render, csv: () => scoresCsv(model, scoreRows(model, options)) });
}
