// Shows the chosen view (settings.view) of the page's numbers in its panel:
// heatmap, all heads, lines, head average and model view are the mounted
// views of attnlens/views (web/views/), the same components anyone embeds,
// with their hover, arrow keys, readout, tooltip and picture exports; step by
// step is the views' steps component, and the table its matrix table. This
// module picks the data, the panel and the size (chart-fit.js: the room on
// screen), and redraws when that changes.
import { chartSpace, fittedGridSize, fittedModelGrid, fittedMultiples } from './chart-fit.js';
import { matrixTable } from '../views/matrix-table.js';
import { allHeads, headAverage, heatmap, lines, modelView, steps as stepsView } from '../views/index.js';
import { views } from './settings.js';

const legendRoom = 72; // the colour scale beside the small multiples (attnlens/views)

/**
 * @param ui the page's elements; state the page's state (model, run, headValues, averageValues, step, tableShown)
 * @param trained the model controller (model/controller.js): a trained model's run, titles and steps
 * @param setView switches the view (choosing a head in "All heads" or the model view opens its heatmap)
 */
export function createPanels({ ui, state, trained, setView }) {
  function headTitle(head) {
    if (trained.active() && state.run) {
      return `Layer ${state.settings.layer + 1} of ${state.run.layers} · head ${head + 1} of ${state.model.heads}`;
    }
    return state.model.heads > 1 ? `Head ${head + 1} of ${state.model.heads}` : 'Attention weights';
  }

  function averageTitle() {
    const layer = trained.active() && state.run ? `, layer ${state.settings.layer + 1}` : '';
    return `Average of ${state.model.heads} heads${layer}`;
  }

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
  };

  let shown = null; // { name, view, data }: the one chart mounted now

  function onSelect(detail) {
    if (detail.view !== 'allHeads' && detail.view !== 'modelView') return;
    state.settings.head = detail.head;
    ui.head.value = String(detail.head + 1);
    if (detail.view === 'modelView') {
      Object.assign(state.settings, { layer: detail.layer, view: 'heatmap' });
      trained.showRun(); // the chosen layer's heads, in every view
    } else {
      setView('heatmap');
    }
    document.getElementById('heatmap-canvas').focus();
  }

  // The options of the current view, sized to the room its panel has on screen.
  function chartOptions(name, space) {
    const model = state.model;
    const options = {
      layer: trained.active() && state.run ? state.settings.layer : 0,
      head: state.settings.head, readout: ui.readout, tooltip: ui.tooltip, normalized: false, onSelect,
    };
    const labels = { queryTokens: model.queryTokens, keyTokens: model.keyTokens };
    switch (name) {
      case 'heatmap':
      case 'lines': {
        const title = headTitle(state.settings.head);
        const values = state.headValues[state.settings.head];
        return { ...options, title, ...(name === 'heatmap' ? { gridSize: fittedGridSize({ ...labels, values, title }, space) } : {}) };
      }
      case 'average': {
        const title = averageTitle();
        return { ...options, title, gridSize: fittedGridSize({ ...labels, values: state.averageValues, title }, space) };
      }
      case 'multiples': {
        const { columns, maxGrid } = fittedMultiples(model.heads, { ...space, width: space.width - legendRoom });
        return { ...options, columns, gridSize: maxGrid };
      }
      default: { // the model view: every layer and head of the run, with each head's measured role
        const { run } = state;
        return { ...options, roles: true, title: `${state.trained.name}: every layer and head`, gridSize: fittedModelGrid(run.layers, run.heads, space) };
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
    const name = state.settings.view;
    const slot = slots[name];
    if (!slot || !state.model || (name === 'model' && !(trained.active() && state.run))) {
      unmountChart();
      return;
    }
    const space = chartSpace(slot.box);
    const data = state.data; // a trained model's whole run (the layer is an option), or one Explanation's heads
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
    ui.head.disabled = view === 'multiples' || view === 'average' || view === 'model';
    ui.layer.disabled = view === 'model';
    ui.readout.textContent = '';
    ui.tooltip.hidden = true;
    drawChart(fresh);
    if (!state.model) return;
    if (view === 'steps') renderSteps();
    renderTable();
  }

  // PNG/SVG of what is shown: the mounted view's own exports (null without one).
  function chartExports() {
    return shown ? { png: () => shown.view.toPNG(), svg: () => shown.view.toSVG() } : null;
  }

  // ---- Step by step and the table -----------------------------------------------------

  // What the steps view (attnlens/views) draws: the random pipeline's result,
  // or for a model the worker's explanation of the chosen layer (asked for
  // once; null until it arrives), and how to word it.
  function currentSteps() {
    if (trained.active()) return trained.steps();
    return { data: state.record }; // worded as the Explanation records it was computed
  }

  // The page has its own Previous / Next buttons and arrow keys (main.js), so the view's controls are off.
  let stepsShown = null;
  function renderSteps() {
    if (!state.model) return;
    const input = currentSteps();
    if (stepsShown && (!input || !ui.step.contains(stepsShown.element))) {
      stepsShown.destroy();
      stepsShown = null;
    }
    if (!input) {
      ui.step.textContent = `Computing every step of layer ${state.settings.layer + 1}…`;
      ui.stepPrev.disabled = true;
      ui.stepNext.disabled = true;
      return;
    }
    const options = { ...input.options, head: state.settings.head, step: state.step, controls: false };
    if (stepsShown) {
      stepsShown.update(input.data, options);
    } else {
      ui.step.replaceChildren();
      stepsShown = stepsView.mount(ui.step, input.data, options);
    }
    state.step = stepsShown.step;
    ui.stepPrev.disabled = state.step === 0;
    ui.stepNext.disabled = state.step === stepsShown.count - 1;
  }

  function moveStep(delta) {
    state.step += delta;
    renderSteps();
  }

  // The text alternative: the weights of what is shown, as a table.
  function renderTable() {
    ui.tableAlternative.hidden = !state.tableShown;
    ui.toggleTable.setAttribute('aria-expanded', String(state.tableShown));
    ui.toggleTable.textContent = state.tableShown ? 'Hide table' : 'Show as table';
    if (!state.tableShown || !state.model) return;
    const model = state.model;
    const average = state.settings.view === 'average';
    ui.tableAlternative.replaceChildren(matrixTable({
      name: average ? `Head average weights${trained.active() ? `, layer ${state.settings.layer + 1}` : ''}`
        : `Weights, ${headTitle(state.settings.head).toLowerCase()}`,
      rows: model.n, cols: model.nKeys,
      values: average ? state.averageValues : state.headValues[state.settings.head],
      rowLabels: model.queryTokens, colLabels: model.keyTokens,
    }, { maxRows: 128, maxCols: 64 }));
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
    if (state.model) drawChart(false);
  }
  let pending = 0;
  const redrawSoon = () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(redrawIfResized);
  };
  new ResizeObserver(redrawSoon).observe(section);
  window.addEventListener('resize', redrawSoon);

  return { render, chartExports, headTitle, renderSteps, moveStep, renderTable };
}
