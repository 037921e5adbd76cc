// Draws the chosen view (settings.view) of the page's view model into its
// panel: heatmap, all heads, lines, head average, step by step or model view,
// and the table that is the text alternative of each. The views themselves
// (views/) are functions of data; this module picks the data and the panel.
import { heatmapScene } from '../views/heatmap.js';
import { linesScene } from '../views/lines.js';
import { matrixTable } from '../views/matrix-table.js';
import { multiplesScene as multiplesGridScene } from '../views/model-grid.js';
import { renderCanvas } from '../views/scene.js';
import { renderStep, stepsFor } from './views/steps.js';
import { views } from './settings.js';

/**
 * @param ui the page's elements; state the page's state (model, headValues, averageValues, cell, lineFocus, step, tableShown)
 * @param trained the model controller (model/controller.js): a trained model's titles, steps and model view
 * @param setView switches the view (a click in "All heads" opens that head's heatmap)
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

  // The scene of the current view (also what PNG/SVG export writes).
  function currentScene() {
    const model = state.model;
    const head = state.settings.head;
    const data = { queryTokens: model.queryTokens, keyTokens: model.keyTokens };
    switch (state.settings.view) {
      case 'lines':
        return linesScene({ ...data, values: state.headValues[head], title: headTitle(head) }, { focus: state.lineFocus });
      case 'average':
        return heatmapScene({ ...data, values: state.averageValues, title: averageTitle() }, { highlight: state.cell });
      case 'multiples':
        return multiplesScene();
      case 'model':
        return trained.gridScene();
      default:
        return heatmapScene({ ...data, values: state.headValues[head], title: headTitle(head) }, { highlight: state.cell });
    }
  }

  // All heads in one picture, for exporting the small-multiples view.
  function multiplesScene() {
    const { queryTokens, keyTokens } = state.model;
    return { scene: multiplesGridScene({ queryTokens, keyTokens, headValues: state.headValues }) };
  }

  function render() {
    const view = state.settings.view;
    for (const name of views) document.getElementById(`panel-${name}`).hidden = name !== view;
    for (const button of document.querySelectorAll('[data-view]')) {
      button.setAttribute('aria-pressed', String(button.dataset.view === view));
    }
    ui.head.disabled = view === 'multiples' || view === 'average' || view === 'model';
    ui.layer.disabled = view === 'model';
    ui.readout.textContent = '';
    if (!state.model) return;
    const model = state.model;
    if (view === 'heatmap' || view === 'average') {
      const canvas = view === 'heatmap' ? ui.heatmapCanvas : ui.averageCanvas;
      const { scene, layout } = currentScene();
      renderCanvas(canvas, scene);
      canvas.layout = layout;
      canvas.setAttribute('aria-label', `${view === 'heatmap' ? headTitle(state.settings.head) : 'Head average'}: heatmap of ${model.n} query tokens by ${model.nKeys} key tokens. Use the arrow keys to read weights, or Show as table.`);
    } else if (view === 'lines') {
      const { scene, layout } = currentScene();
      renderCanvas(ui.linesCanvas, scene);
      ui.linesCanvas.layout = layout;
      ui.linesCanvas.setAttribute('aria-label', `${headTitle(state.settings.head)}: lines from ${model.n} query tokens to ${model.nKeys} key tokens. Use the arrow keys to isolate one token.`);
    } else if (view === 'multiples') {
      renderMultiples();
    } else if (view === 'model') {
      trained.renderGrid();
    } else if (view === 'steps') {
      renderSteps();
    }
    renderTable();
  }

  function renderMultiples() {
    const model = state.model;
    ui.multiples.replaceChildren(...state.headValues.map((values, head) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.setAttribute('aria-label', `Head ${head + 1}: enlarge`);
      if (head === state.settings.head) button.setAttribute('aria-current', 'true');
      const { scene } = heatmapScene({ queryTokens: model.queryTokens, keyTokens: model.keyTokens, values, title: `Head ${head + 1}` },
        { compact: true, maxGrid: 220 });
      button.append(renderCanvas(document.createElement('canvas'), scene));
      button.addEventListener('click', () => {
        state.settings.head = head;
        ui.head.value = String(head + 1);
        setView('heatmap');
        ui.heatmapCanvas.focus();
      });
      return button;
    }));
  }

  // The steps of the chosen head: from the random pipeline's result, or, for a
  // model, from the worker's explanation of the chosen layer (asked for once).
  function currentSteps() {
    const head = state.settings.head;
    if (trained.active()) return trained.steps(head);
    return stepsFor(state.model, head, {
      temperature: state.settings.temperature, causal: state.settings.causal, source: state.source,
    });
  }

  function renderSteps() {
    if (!state.model) return;
    const steps = currentSteps();
    if (!steps) {
      ui.step.textContent = `Computing every step of layer ${state.settings.layer + 1}…`;
      ui.stepPrev.disabled = true;
      ui.stepNext.disabled = true;
      return;
    }
    state.step = Math.min(Math.max(state.step, 0), steps.length - 1);
    renderStep(ui.step, steps, state.step);
    ui.stepPrev.disabled = state.step === 0;
    ui.stepNext.disabled = state.step === steps.length - 1;
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

  return { render, currentScene, headTitle, renderSteps, moveStep, renderTable };
}
