// Shows the chosen view (settings.view) of the page's numbers in its panel:
// heatmap, all heads, lines, head average and model view are the mounted
// views of attnlens/views (web/views/), the same components anyone embeds,
// with their hover, arrow keys, readout, tooltip and picture exports; step by
// step is the views' steps component, and the table its matrix table. This
// module picks the data, the panel and the size (chart-fit.js: the room on
// screen), and redraws when what it shows (the store's shown record, view,
// head, layer, step, table) or that room changes.
import { chartSpace, fittedGridSize, fittedModelGrid, fittedMultiples } from './chart-fit.js';
import { attentionData, averageValues, headValues, hiddenBy, hiddenCells, quantityTitle } from '../views/attention-data.js';
import { allHeads, headAverage, heatmap, lines, modelView, steps as stepsView } from '../views/index.js';
import { runData } from './compute.js';
import { awaitsHeads, shownIndex, shownSizes } from './model/held-attention.js';
import { kindsModelView } from './model/kinds-model-view.js';
import { timed } from './part-timing.js';
import { createTableAlternative } from './views/table-alternative.js';
import { views } from './settings.js';

const legendRoom = 72; // the colour scale beside the small multiples (attnlens/views)

/** The title of one head of what is shown: "Head 2 of 4", or "Layer 1 of 3 · head 2 of 4" for a model. */
export function headTitle({ shown, settings }, head) {
  const { layers, heads, hasLayers } = shownSizes(shown);
  if (hasLayers) return `Layer ${settings.layer + 1} of ${layers} · head ${head + 1} of ${heads}`;
  return heads > 1 ? `Head ${head + 1} of ${heads}` : 'Attention weights';
}

/**
 * What the steps view (attnlens/views) and the neuron view draw, worded as the Explanation records
 * it was computed: the sentence's or the matrices' record, or for a model the worker's explanation
 * of the chosen layer (model/controller.js asks for it; null until it arrives).
 */
export function stepsRecord({ shown, settings, explanations }) {
  if (!shown) return null;
  return shown.from === 'model' ? explanations.get(settings.layer) ?? null : shown.record;
}

/**
 * The chosen layer's heads and their average: sliced once per record and layer, so the views (and the canvas
 * grid cache) see stable arrays. The average is summed only when asked for (the average view, its table):
 * not on every keystroke that shows another view. `layer` and `head`: the settings' in the shown data (a
 * model's run holds only what the page draws, model/held-attention.js); null while that head is being fetched.
 */
let layerCache = null;
export function layerValues({ shown, settings }) {
  const index = shownIndex(shown, settings);
  if (!index) return null;
  const { layer } = index;
  if (layerCache?.model !== shown.model || layerCache.layer !== layer) {
    const { model } = shown;
    let average = null;
    layerCache = {
      model, layer, heads: Array.from({ length: model.heads }, (_, head) => headValues(model, layer, head)),
      get average() { return (average ??= averageValues(model, layer)); },
    };
  }
  const cache = layerCache; // not spread: that would sum the average now
  return { layer, heads: cache.heads, head: index.head, values: cache.heads[index.head], get average() { return cache.average; } };
}

/**
 * Draws the store's `shown` record in the chosen view's panel, and the table.
 * @param ui the page's elements
 * @param store the page's store (shown, settings.view / head / layer, step, tableShown, explanations)
 */
export function createPanels({ ui, store }) {
  let state = store.state;
  const averageTitle = () => {
    const { heads, hasLayers } = shownSizes(state.shown);
    return `Average of ${heads} heads${hasLayers ? `, layer ${state.settings.layer + 1}` : ''}`;
  };

  // The charts (and the Analysis tab's rollout) show ui.tooltip where the pointer is; each mounted
  // view hides it on Escape wherever the focus is (web/views/view-core.js).

  // ---- The mounted charts ------------------------------------------------------------

  // Each chart panel: the view it mounts and where. The canvas views go in the
  // chart box and give their canvas the page's id (tests, labels and the
  // "describedby" readout use it); while none is mounted, the page's blank
  // canvas of that id holds the place.
  const canvasSlot = (view, id) => {
    const blank = document.getElementById(id);
    return { view, id, blank, box: blank.parentElement };
  };
  const slots = {
    heatmap: canvasSlot(heatmap, 'heatmap-canvas'),
    average: canvasSlot(headAverage, 'average-canvas'),
    lines: canvasSlot(lines, 'lines-canvas'),
    multiples: { view: allHeads, box: ui.multiples },
    model: { view: modelView, box: ui.modelGrid },
    // An encoder-decoder's model view: its three kinds side by side, in the same box.
    modelKinds: { view: kindsModelView, box: ui.modelGrid },
  };

  let shown = null; // { name, view, data }: the one chart mounted now

  // Choosing a head in "All heads" or the model view opens its heatmap (for the model view, of its layer).
  function onSelect(detail) {
    if (detail.view !== 'allHeads' && detail.view !== 'modelView') return;
    store.setSettings({ head: detail.head, view: 'heatmap', ...(detail.view === 'modelView' ? { layer: detail.layer } : {}) });
    document.getElementById('heatmap-canvas').focus();
  }

  // The options of the current view, sized to the room its panel has on screen.
  function chartOptions(name, space) {
    const { model } = state.shown;
    const values = layerValues(state);
    const options = {
      layer: values.layer, head: values.head, readout: ui.readout, tooltip: ui.tooltip, normalized: false, onSelect,
    };
    const labels = { queryTokens: model.queryTokens, keyTokens: model.keyTokens };
    switch (name) {
      case 'heatmap':
      case 'lines': {
        const title = headTitle(state, state.settings.head);
        return { ...options, title, ...(name === 'heatmap' ? { gridSize: fittedGridSize({ ...labels, values: values.values, title }, space) } : {}) };
      }
      case 'average': {
        const title = averageTitle();
        return { ...options, title, gridSize: fittedGridSize({ ...labels, values: values.average, title }, space) };
      }
      case 'multiples': {
        const { columns, maxGrid } = fittedMultiples(model.heads, { ...space, width: space.width - legendRoom });
        return { ...options, columns, gridSize: maxGrid };
      }
      case 'modelKinds': { // each kind in a third of the width; choosing a head opens its heatmap in that kind
        const { record } = state.shown;
        const kinds = ['encoder', 'decoder', 'cross'].map((kind) => {
          const data = runData(record, { attentionKind: kind });
          const { layers, heads } = attentionData(data);
          const chooseKind = (detail) => {
            store.setSettings({ attentionKind: kind });
            onSelect(detail);
          };
          return { kind, data, gridSize: fittedModelGrid(layers, heads, { ...space, width: space.width / 3 }), onSelect: chooseKind };
        });
        return { ...options, roles: true, kinds };
      }
      default: { // the model view: every layer and head of the run, with each head's measured role
        const { trained } = state.shown;
        return { ...options, roles: true, title: `${trained.name}: every layer and head`, gridSize: fittedModelGrid(model.layers, model.heads, space) };
      }
    }
  }

  function unmountChart() {
    if (!shown) return;
    shown.view.destroy();
    const slot = slots[shown.name];
    if (slot.blank) slot.box.append(slot.blank);
    shown = null;
  }

  // The current view's chart, mounted (or updated) at the size of its room.
  // `fresh`: a new view, head or layer, so no cell stays selected.
  function drawChart(fresh = true) {
    const kinds = state.settings.view === 'model' && state.shown?.record?.encoderDecoder === true;
    const name = kinds ? 'modelKinds' : state.settings.view;
    const slot = slots[name];
    // The three kinds wait for the run that ends a translation (cross-stream.js draws cross-attention's rows before).
    const partial = kinds && state.shown.record.streaming;
    if (!slot || !state.shown || partial || (name === 'model' && state.shown.from !== 'model')) {
      unmountChart();
      return;
    }
    // A head, layer or view whose weights the worker is still fetching: the last chart stays until they arrive.
    if (awaitsHeads(state.shown, state.settings)) return;
    const space = chartSpace(slot.box);
    const { data } = state.shown; // a trained model's whole run (the layer is an option), or one Explanation's heads
    const options = { ...chartOptions(name, space), ...(fresh ? { cell: null } : {}) };
    if (shown?.name === name) {
      shown.view.update(shown.data === data ? undefined : data, options);
      shown.data = data;
    } else {
      unmountChart();
      slot.blank?.remove();
      const view = slot.view.mount(slot.box, data, options);
      shown = { name, view, data };
      if (slot.blank) {
        const canvas = view.element.querySelector('canvas');
        canvas.id = slot.id;
        canvas.setAttribute('aria-describedby', 'readout');
        // Where the cells are: what a test (or a script) needs to point at one.
        Object.defineProperty(canvas, 'layout', { get: () => view.layout });
      }
    }
    // A chart bigger than the room (hundreds of tokens) scrolls in its own box, within the screen.
    if (slot.blank) slot.box.style.maxHeight = `${space.ownScreenHeight + 12}px`;
  }

  function render({ fresh = true } = {}) {
    const view = state.settings.view;
    for (const name of views) document.getElementById(`panel-${name}`).hidden = name !== view;
    for (const button of document.querySelectorAll('[data-view]')) {
      button.setAttribute('aria-pressed', String(button.dataset.view === view));
    }
    ui.head.disabled = view === 'multiples' || view === 'average' || view === 'model' || view === 'analysis';
    ui.layer.disabled = view === 'model';
    ui.readout.textContent = '';
    ui.tooltip.hidden = true;
    timed('chart', () => drawChart(fresh));
    if (!state.shown) {
      for (const container of [ui.step, ui.tableAlternative]) container.replaceChildren();
      return;
    }
    if (view === 'steps') renderSteps();
    timed('table', renderTable);
  }

  // PNG/SVG of what is shown: the mounted view's own exports (null without one). An encoder-decoder's
  // model view also gives its three kinds' weights (csv, json): the page's own CSV/JSON hold one kind's layer.
  function chartExports() {
    if (!shown) return null;
    const { view } = shown;
    const kinds = shown.name === 'modelKinds' ? { csv: () => view.toCSV(), json: () => view.toJSON() } : {};
    return { png: () => view.toPNG(), svg: () => view.toSVG(), ...kinds };
  }

  // ---- Step by step and the table -----------------------------------------------------

  function currentSteps() {
    const record = stepsRecord(state);
    return record ? { data: record } : null;
  }

  // The page has its own Previous / Next buttons and arrow keys (main.js), so the view's controls are off.
  let stepsShown = null;
  function renderSteps() {
    if (!state.shown) return;
    const input = currentSteps();
    if (stepsShown && (!input || !ui.step.contains(stepsShown.element))) {
      stepsShown.destroy();
      stepsShown = null;
    }
    if (!input) {
      ui.step.textContent = `Computing every step of layer ${state.settings.layer + 1}…`;
      enableSteps(false, false);
      return;
    }
    const options = { ...input.options, head: state.settings.head, step: state.step, controls: false };
    if (stepsShown) {
      stepsShown.update(input.data, options);
    } else {
      ui.step.replaceChildren();
      stepsShown = stepsView.mount(ui.step, input.data, options);
    }
    if (stepsShown.step !== state.step) store.set({ step: stepsShown.step }); // clamped to the steps there are
    enableSteps(stepsShown.step > 0, stepsShown.step < stepsShown.count - 1);
  }

  // A step button disabled under the focus (at the first or last step) would drop it to the page, where the
  // arrow keys no longer step: it hands the focus to the other button, or to the step.
  function enableSteps(previous, next) {
    const focused = document.activeElement;
    ui.stepPrev.disabled = !previous;
    ui.stepNext.disabled = !next;
    if ((focused !== ui.stepPrev && focused !== ui.stepNext) || !focused.disabled) return;
    const other = focused === ui.stepNext ? ui.stepPrev : ui.stepNext;
    (other.disabled ? ui.step : other).focus();
  }

  // The text alternative: the weights of what is shown, as a table.
  const renderTableAlternative = createTableAlternative(ui.tableAlternative);
  function renderTable() {
    // The Analysis tab's scores are tables already (attnlens/views/analysis): no weights table there.
    const analysis = state.settings.view === 'analysis';
    ui.toggleTable.hidden = analysis;
    ui.tableAlternative.hidden = !state.tableShown || analysis;
    ui.toggleTable.setAttribute('aria-expanded', String(state.tableShown));
    ui.toggleTable.textContent = state.tableShown ? 'Hide table' : 'Show as table';
    if (!state.tableShown || !state.shown || analysis) return;
    const { model } = state.shown;
    const average = state.settings.view === 'average';
    if (awaitsHeads(state.shown, state.settings)) return; // being fetched: the table follows the chart
    const values = layerValues(state);
    renderTableAlternative({
      name: quantityTitle(model, average ? `Head average weights${model.hasLayers ? `, layer ${state.settings.layer + 1}` : ''}`
        : `Weights, ${headTitle(state, state.settings.head).toLowerCase()}`),
      rows: model.n, cols: model.nKeys,
      values: average ? values.average : values.values,
      rowLabels: model.queryTokens, colLabels: model.keyTokens,
    }, { maxRows: 128, maxCols: 64, hiddenBy: hiddenCells(model, values.layer) && ((row, col) => hiddenBy(model, values.layer, row, col)) });
  }

  // A new window size or column width: the same view, drawn to its new room
  // (keeping its selected cell). Only on a real change: drawing the chart
  // changes the page's height.
  const section = document.getElementById('views');
  let drawnFor = '';
  function redrawIfResized() {
    const size = `${section.clientWidth}x${window.innerHeight}`;
    if (size === drawnFor) return;
    drawnFor = size;
    if (state.shown) drawChart(false);
  }
  let pending = 0;
  const redrawSoon = () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(redrawIfResized);
  };
  new ResizeObserver(redrawSoon).observe(section);
  window.addEventListener('resize', redrawSoon);

  // Redraws what changed: the charts for a new record, view, head or layer;
  // the steps for a new step or explanation; the table when it opens or closes.
  store.subscribe((next, changed) => {
    const before = state;
    state = next;
    const chosen = (key) => next.settings[key] !== before.settings[key];
    if (changed.has('shown') || chosen('view') || chosen('head') || chosen('layer')) render();
    else if (changed.has('step') || changed.has('explanations')) {
      if (next.settings.view === 'steps') renderSteps();
    } else if (changed.has('tableShown')) renderTable();
  });
  render();

  return { chartExports };
}
