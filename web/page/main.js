// The attention page: reads the controls, asks the attnlens library for every
// intermediate step, and hands the result to the views. All numbers come from
// the library (WASM); this file only wires inputs, views and exports.
// Two engines feed the same views: random projections (explainSentence, on
// this thread: a sentence takes a millisecond or two) and a trained model
// (lens.loadModel in a worker, model/, since its forward pass can take seconds).
import { load } from 'attnlens';
import { ModelClient } from './model/model-client.js';
import { createModelPanel } from './model/model-panel.js';
import { headOf, layerViewModel, runStatus } from './model/trained-run.js';
import { attentionModel, averageOverHeads, headWeights } from './views/data.js';
import { cellAt, heatmapScene } from './views/heatmap.js';
import { linesScene, tokenAt } from './views/lines.js';
import { matrixTable } from './views/matrix-table.js';
import { modelGridScene, multipleSize, renderModelGrid } from './views/model-grid.js';
import { renderPredictions } from './views/predictions.js';
import { renderCanvas } from './views/scene.js';
import { renderStep, stepsFor } from './views/steps.js';
import { displayToken, renderTokenStrip } from './views/token-strip.js';
import { download, pngBlob, svgBlob, weightsCsv, weightsJson } from './export.js';
import { MatrixInputError, matricesToJson, parseMatrices, workedExample } from './matrices-input.js';
import { defaults, headCounts, modelWidths, settingsFromHash, settingsToHash, views } from './settings.js';

const $ = (id) => document.getElementById(id);
const ui = {
  sentence: $('sentence'), context: $('context'), status: $('status'), error: $('error'),
  dModel: $('d-model'), heads: $('heads'), seed: $('seed'), temperature: $('temperature'),
  causal: $('causal'), identity: $('identity'), head: $('head'),
  heatmapCanvas: $('heatmap-canvas'), linesCanvas: $('lines-canvas'), averageCanvas: $('average-canvas'),
  multiples: $('multiples'), step: $('step'), stepPrev: $('step-prev'), stepNext: $('step-next'),
  readout: $('readout'), tooltip: $('tooltip'), tableAlternative: $('table-alternative'), toggleTable: $('toggle-table'),
  shareUrl: $('share-url'), matrixEditor: $('matrix-editor'), matrixError: $('matrix-error'),
  engineRandom: $('engine-random'), engineModel: $('engine-model'), modelName: $('model-name'), modelPanel: $('model-panel'),
  contextField: $('context-field'), randomControls: $('random-controls'), randomNote: $('random-note'), modelNote: $('model-note'),
  layer: $('layer'), layerControl: $('layer-control'), modelGrid: $('model-grid'), modelViewButton: document.querySelector('[data-view="model"]'),
  tokens: $('tokens'), tokenStrip: $('token-strip'), predictions: $('predictions'), modelUrl: $('model-url'),
};

const state = {
  lens: null,
  settings: settingsFromHash(location.hash),
  // 'sentence' or 'matrices': where the numbers come from.
  source: 'sentence',
  matrixText: '',
  model: null,
  // Per-head weights and the head average, sliced once per result so the
  // views (and the canvas grid cache) see stable arrays.
  headValues: [],
  averageValues: null,
  cell: null, // highlighted heatmap cell { row, col }
  lineFocus: null, // focused token in the line view { side, index }
  step: 0,
  tableShown: false,
  // 'random' or 'model': the Model choice. A trained model is used once one
  // is loaded (`trained`); until then the random projections keep running.
  engine: 'random',
  trained: null, // { info, name, url, simd } of the model the worker holds
  run: null, // the latest run of it: { text, tokens, ids, n, layers, heads, attention, predictions, elapsedMs }
  explanations: new Map(), // layer -> model.explain result, for the run's text
  explaining: null, // { run, layer } being explained by the worker
  runGeneration: 0, // increases per requested run: late answers to older texts are dropped
  linked: null, // { model, layer, head, view } of a link made with a trained model
};

const client = new ModelClient();

window.attnlens = { last: null, lens: null, timings: null };

// True when the views show a trained model's run (not random projections, not typed matrices).
function usingModel() {
  return state.engine === 'model' && state.trained !== null && state.source === 'sentence';
}

// ---- Controls ----------------------------------------------------------------

function fillSelect(select, values, selected) {
  select.replaceChildren(...values.map((value) => {
    const option = document.createElement('option');
    option.value = String(value);
    option.textContent = String(value);
    option.selected = value === selected;
    return option;
  }));
}

function showSettings() {
  const s = state.settings;
  ui.sentence.value = s.text;
  ui.context.value = s.context;
  fillSelect(ui.dModel, modelWidths, s.dModel);
  fillSelect(ui.heads, headCounts.filter((h) => s.dModel % h === 0), s.heads);
  ui.seed.value = String(s.seed);
  ui.temperature.value = String(s.temperature);
  ui.causal.checked = s.causal;
  ui.identity.checked = s.identity;
}

function readSettings() {
  const s = state.settings;
  s.text = ui.sentence.value;
  s.context = ui.context.value;
  s.dModel = Number(ui.dModel.value);
  // Keep heads a divisor of d_model: the select only offers those.
  fillSelect(ui.heads, headCounts.filter((h) => s.dModel % h === 0), Number(ui.heads.value));
  if (!ui.heads.value) ui.heads.value = '1';
  s.heads = Number(ui.heads.value);
  const seed = Number(ui.seed.value);
  s.seed = Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff ? seed : defaults.seed;
  const temperature = Number(ui.temperature.value);
  s.temperature = temperature > 0 ? temperature : defaults.temperature;
  s.causal = ui.causal.checked;
  s.identity = ui.identity.checked;
}

// ---- Computing ---------------------------------------------------------------

function showError(element, message) {
  element.hidden = !message;
  element.textContent = message ?? '';
}

// Returns { result, crossAttention } from the library.
function explain() {
  const s = state.settings;
  if (state.source === 'matrices') {
    const options = parseMatrices(state.matrixText);
    const result = state.lens.explainMatrices({ ...options, causal: s.causal, temperature: s.temperature });
    return { result, crossAttention: options.context !== undefined };
  }
  const context = s.context.trim() === '' ? undefined : s.context;
  const result = state.lens.explainSentence({
    text: s.text, context, dModel: s.dModel, heads: s.heads, seed: s.seed,
    causal: s.causal, temperature: s.temperature, identity: s.identity,
  });
  return { result, crossAttention: context !== undefined };
}

function compute() {
  if (!state.lens) return;
  if (usingModel()) {
    computeModel();
    return;
  }
  state.runGeneration += 1; // an answer still on its way from the model worker is stale now
  let result;
  let crossAttention;
  try {
    ({ result, crossAttention } = explain());
  } catch (error) {
    // Bad input keeps the last good picture and says what is wrong, inline.
    const target = state.source === 'matrices' ? ui.matrixError : ui.error;
    showError(target, error instanceof MatrixInputError ? error.message : `${error.name}: ${error.message}`);
    return;
  }
  showError(ui.error, null);
  showError(ui.matrixError, null);
  const model = attentionModel(result, { crossAttention });
  showViewModel(model);
  window.attnlens.last = { tokens: model.queryTokens, keyTokens: model.keyTokens, layers: 1, heads: model.heads, weights: model.weights, model: null };
  showTokens(state.source === 'sentence' ? model.queryTokens : null);
  renderModelExtras();
  const drawMs = draw();
  window.attnlens.timings = { wasmMs: result.elapsedMs, drawMs };
  showStatus(model, drawMs);
  updateLink();
}

// Hands a view model (random projections, matrices, or one layer of a
// trained model) to the views: per-head slices and the head average.
function showViewModel(model) {
  state.model = model;
  state.headValues = Array.from({ length: model.heads }, (_, head) => headWeights(model, head));
  state.averageValues = averageOverHeads(model);
  if (state.settings.head >= model.heads) state.settings.head = 0;
  state.cell = null;
  state.lineFocus = null;
  fillSelect(ui.head, Array.from({ length: model.heads }, (_, h) => h + 1), state.settings.head + 1);
}

function showStatus(model, drawMs) {
  const result = model.result;
  const engine = state.lens.simd ? 'WASM SIMD' : 'WASM (scalar)';
  const source = state.source === 'matrices' ? 'your matrices: ' : '';
  const unit = state.source === 'matrices' ? 'rows' : 'tokens';
  const tokens = model.crossAttention
    ? `${model.n} query ${unit} × ${model.nKeys} context ${unit}`
    : `${model.n} ${model.n === 1 ? unit.slice(0, -1) : unit}`;
  ui.status.textContent = `${source}${tokens} · d_model ${result.dModel} · ${result.heads} head${result.heads > 1 ? 's' : ''} · `
    + `computed in ${result.elapsedMs.toFixed(2)} ms (${engine}) · drawn in ${drawMs.toFixed(0)} ms`;
}

function draw() {
  const drawStarted = performance.now();
  render();
  return performance.now() - drawStarted;
}

// ---- A trained model -----------------------------------------------------------

// Runs the model in its worker. Typing fast starts many runs; the client
// keeps only the newest waiting, and an answer to an older text is dropped.
async function computeModel() {
  state.runGeneration += 1;
  const generation = state.runGeneration;
  const text = state.settings.text;
  const { name } = state.trained;
  // Say so only when it takes long enough to notice (a small model answers within a frame).
  const busy = setTimeout(() => { ui.status.textContent = `Running ${name}…`; }, 150);
  let run;
  try {
    run = await client.run(text);
  } catch (error) {
    if (generation !== state.runGeneration) return;
    showError(ui.error, `${error.name}: ${error.message}`);
    if (error.modelLoaded === false) modelLost();
    // A model just loaded whose first run failed (e.g. the text has more tokens than it has
    // positions): the old picture belongs to another model, so show none rather than a wrong one.
    else if (state.run === null) clearViews(`${name} is loaded; it could not run this text (see above).`);
    return;
  } finally {
    clearTimeout(busy);
  }
  if (run === null || generation !== state.runGeneration || !usingModel()) return;
  showError(ui.error, null);
  state.run = { ...run, text };
  state.explanations = new Map();
  showRun();
}

// The current run at the chosen layer: every view, the token strip, the
// predictions, window.attnlens.last, the status line and the link.
function showRun() {
  const { run, trained } = state;
  state.settings.layer = Math.min(state.settings.layer, run.layers - 1);
  fillSelect(ui.layer, Array.from({ length: run.layers }, (_, l) => l + 1), state.settings.layer + 1);
  showViewModel(layerViewModel(run, state.settings.layer));
  window.attnlens.last = {
    tokens: run.tokens, keyTokens: run.tokens, layers: run.layers, heads: run.heads, weights: run.attention,
    model: trained.info, layer: state.settings.layer, ids: run.ids, predictions: run.predictions,
  };
  showTokens(run.tokens, run.ids);
  renderModelExtras();
  const drawMs = draw();
  window.attnlens.timings = { wasmMs: run.elapsedMs, drawMs };
  ui.status.textContent = runStatus({ name: trained.name, run, simd: trained.simd, drawMs });
  updateLink();
}

function clearViews(status) {
  state.model = null;
  state.headValues = [];
  state.averageValues = null;
  window.attnlens.last = null;
  for (const canvas of [ui.heatmapCanvas, ui.linesCanvas, ui.averageCanvas]) {
    canvas.layout = null; // hover has nothing to read
    canvas.width = 0;
    canvas.height = 0;
    canvas.style.width = '0';
    canvas.style.height = '0';
  }
  for (const container of [ui.multiples, ui.modelGrid, ui.step, ui.tableAlternative]) container.replaceChildren();
  showTokens(null);
  renderModelExtras();
  render();
  ui.status.textContent = status;
}

function showTokens(tokens, ids = null) {
  ui.tokens.hidden = tokens === null;
  if (tokens) renderTokenStrip(ui.tokenStrip, tokens, { ids });
}

// The predictions panel, the layer control and the model view button exist
// only while a trained model's run is on screen.
function renderModelExtras() {
  const on = usingModel() && state.run !== null;
  ui.predictions.hidden = !on;
  ui.layerControl.hidden = !on;
  ui.modelViewButton.hidden = !on;
  if (!on) {
    if (state.settings.view === 'model') state.settings.view = 'heatmap';
    return;
  }
  const { run } = state;
  renderPredictions(ui.predictions, {
    predictions: run.predictions, lastToken: run.tokens[run.n - 1], position: run.n - 1, architecture: state.trained.info.architecture,
  });
}

// Which controls show: the model panel while "A trained model" is chosen;
// the random-projection controls unless a loaded model replaced them.
function showEngine() {
  const model = state.engine === 'model';
  ui.engineModel.checked = model;
  ui.engineRandom.checked = !model;
  ui.modelPanel.hidden = !model;
  const replaced = model && state.trained !== null;
  ui.randomControls.hidden = replaced;
  ui.randomNote.hidden = replaced;
  ui.modelNote.hidden = !replaced;
  ui.contextField.hidden = replaced; // a model attends within its own text: no second sentence
  ui.modelName.textContent = state.trained ? state.trained.name : 'open a model…';
  ui.modelPanel.classList.toggle('loaded', state.trained !== null);
}

function setEngine(engine) {
  state.engine = engine;
  showEngine();
  if (engine === 'random' || state.trained) {
    state.source = 'sentence';
    computeNow();
  }
}

function modelLoaded(loaded) {
  state.trained = loaded;
  state.settings.model = loaded.url ?? loaded.name;
  // The model a link was made with: restore the layer, head and view it showed.
  if (state.linked && state.linked.model === state.settings.model) {
    Object.assign(state.settings, { layer: state.linked.layer, head: state.linked.head, view: state.linked.view });
  }
  state.linked = null;
  state.run = null;
  state.source = 'sentence';
  state.engine = 'model';
  showEngine();
  computeNow();
}

// The worker lost its model (it crashed, or a failed load had to free it).
function modelLost() {
  state.trained = null;
  state.run = null;
  state.settings.model = '';
  showEngine();
  computeNow();
}

// Step by step for a model: the worker explains one layer (every head) on demand.
async function explainLayer(layer) {
  const { run } = state;
  if (state.explaining?.run === run && state.explaining.layer === layer) return;
  state.explaining = { run, layer };
  try {
    const explanation = await client.explain(run.text, layer, state.settings.head);
    if (state.run !== run) return;
    state.explanations.set(layer, explanation);
    if (state.settings.view === 'steps') renderSteps();
  } catch (error) {
    if (state.run === run) showError(ui.error, `${error.name}: ${error.message}`);
  } finally {
    if (state.explaining?.run === run && state.explaining.layer === layer) state.explaining = null;
  }
}

let debounceTimer = 0;
function computeSoon() {
  clearTimeout(debounceTimer);
  debounceTimer = setTimeout(compute, 200);
}

function computeNow() {
  clearTimeout(debounceTimer);
  compute();
}

// ---- Views -------------------------------------------------------------------

function headTitle(head) {
  if (usingModel() && state.run) {
    return `Layer ${state.settings.layer + 1} of ${state.run.layers} · head ${head + 1} of ${state.model.heads}`;
  }
  return state.model.heads > 1 ? `Head ${head + 1} of ${state.model.heads}` : 'Attention weights';
}

function averageTitle() {
  const layer = usingModel() && state.run ? `, layer ${state.settings.layer + 1}` : '';
  return `Average of ${state.model.heads} heads${layer}`;
}

// The model view's data: every layer and head of the current run.
function modelGridData() {
  const { run } = state;
  return {
    layers: run.layers, heads: run.heads, tokens: run.tokens,
    weightsOf: (layer, head) => headOf(run, layer, head),
    current: { layer: state.settings.layer, head: state.settings.head },
  };
}

function modelGridSize() {
  return multipleSize(Math.max(ui.modelGrid.parentElement.clientWidth, 480), state.run.heads);
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
      return { scene: modelGridScene(modelGridData(), { maxGrid: modelGridSize(), title: `${state.trained.name}: every layer and head` }) };
    default:
      return heatmapScene({ ...data, values: state.headValues[head], title: headTitle(head) }, { highlight: state.cell });
  }
}

// All heads in one picture, for exporting the small-multiples view.
function multiplesScene() {
  const model = state.model;
  const shapes = [];
  const columns = Math.min(4, model.heads);
  let width = 0;
  let height = 0;
  let rowHeight = 0;
  state.headValues.forEach((values, head) => {
    const { scene } = heatmapScene({ queryTokens: model.queryTokens, keyTokens: model.keyTokens, values, title: `Head ${head + 1}` },
      { compact: true, maxGrid: 220 });
    const col = head % columns;
    if (col === 0 && head > 0) { height += rowHeight + 10; rowHeight = 0; }
    const dx = col * (scene.width + 10);
    for (const shape of scene.shapes) shapes.push({ ...shape, x: shape.x + dx, y: shape.y + height });
    width = Math.max(width, dx + scene.width);
    rowHeight = Math.max(rowHeight, scene.height);
  });
  return { scene: { width, height: height + rowHeight, shapes } };
}

function render() {
  const view = state.settings.view;
  for (const name of views) $(`panel-${name}`).hidden = name !== view;
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
    renderModelView();
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

function renderModelView() {
  if (!state.run) return;
  renderModelGrid(ui.modelGrid, modelGridData(), {
    maxGrid: modelGridSize(),
    onOpen: (layer, head) => {
      Object.assign(state.settings, { layer, head, view: 'heatmap' });
      showRun(); // the chosen layer's heads, in every view
      ui.heatmapCanvas.focus();
    },
  });
}

// The steps of the chosen head: from the random pipeline's result, or, for a
// model, from the worker's explanation of the chosen layer (asked for once).
function currentSteps() {
  const head = state.settings.head;
  if (!usingModel()) {
    return stepsFor(state.model, head, {
      temperature: state.settings.temperature, causal: state.settings.causal, source: state.source,
    });
  }
  const layer = state.settings.layer;
  const explanation = state.explanations.get(layer);
  if (!explanation) {
    explainLayer(layer);
    return null;
  }
  const { info } = state.trained;
  return stepsFor({ ...state.model, result: explanation }, head, {
    source: 'model', architecture: info.architecture, layer, kvHeads: info.kvHeads, causal: info.architecture !== 'bert',
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
    name: average ? `Head average weights${usingModel() ? `, layer ${state.settings.layer + 1}` : ''}`
      : `Weights, ${headTitle(state.settings.head).toLowerCase()}`,
    rows: model.n, cols: model.nKeys,
    values: average ? state.averageValues : state.headValues[state.settings.head],
    rowLabels: model.queryTokens, colLabels: model.keyTokens,
  }, { maxRows: 128, maxCols: 64 }));
}

function setView(view) {
  state.settings.view = view;
  state.cell = null;
  state.lineFocus = null;
  render();
  updateLink();
}

// ---- Reading values: hover and keyboard ------------------------------------------

function describeCell(values, { row, col }) {
  const model = state.model;
  const weight = values[row * model.nKeys + col];
  return `query “${displayToken(model.queryTokens[row])}” (#${row}) → key “${displayToken(model.keyTokens[col])}” (#${col}): weight ${weight.toPrecision(7)}`;
}

function heatmapValues(canvas) {
  return canvas === ui.averageCanvas ? state.averageValues : state.headValues[state.settings.head];
}

function showCell(canvas, cell, pointer) {
  state.cell = cell;
  render();
  if (!cell) {
    ui.tooltip.hidden = true;
    return;
  }
  const text = describeCell(heatmapValues(canvas), cell);
  ui.readout.textContent = text;
  if (pointer) {
    ui.tooltip.textContent = text;
    ui.tooltip.hidden = false;
    ui.tooltip.style.left = `${pointer.clientX + 14}px`;
    ui.tooltip.style.top = `${pointer.clientY + 14}px`;
  } else {
    ui.tooltip.hidden = true;
  }
}

function wireHeatmap(canvas) {
  canvas.addEventListener('mousemove', (event) => {
    if (!canvas.layout) return;
    const cell = cellAt(canvas.layout, event.offsetX, event.offsetY);
    if (cell?.row === state.cell?.row && cell?.col === state.cell?.col) {
      if (cell) Object.assign(ui.tooltip.style, { left: `${event.clientX + 14}px`, top: `${event.clientY + 14}px` });
      return;
    }
    showCell(canvas, cell, event);
  });
  canvas.addEventListener('mouseleave', () => showCell(canvas, null));
  canvas.addEventListener('keydown', (event) => {
    if (!state.model) return;
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const cell = state.cell ?? { row: 0, col: 0 };
    let next;
    if (moves[event.key]) {
      const [dr, dc] = state.cell ? moves[event.key] : [0, 0];
      next = {
        row: Math.min(Math.max(cell.row + dr, 0), state.model.n - 1),
        col: Math.min(Math.max(cell.col + dc, 0), state.model.nKeys - 1),
      };
    } else if (event.key === 'Home') next = { row: cell.row, col: 0 };
    else if (event.key === 'End') next = { row: cell.row, col: state.model.nKeys - 1 };
    else if (event.key === 'Escape') next = null;
    else return;
    event.preventDefault();
    showCell(canvas, next);
    canvas.focus();
  });
}

function describeToken(focus) {
  const model = state.model;
  const values = state.headValues[state.settings.head];
  const tokens = focus.side === 'query' ? model.queryTokens : model.keyTokens;
  const others = focus.side === 'query' ? model.keyTokens : model.queryTokens;
  const weights = others.map((_, other) => (focus.side === 'query'
    ? values[focus.index * model.nKeys + other] : values[other * model.nKeys + focus.index]));
  const strongest = weights.indexOf(Math.max(...weights));
  const [token, other] = [displayToken(tokens[focus.index]), displayToken(others[strongest])];
  return focus.side === 'query'
    ? `query “${token}” (#${focus.index}) looks most at “${other}” (#${strongest}), weight ${weights[strongest].toPrecision(7)}`
    : `key “${token}” (#${focus.index}) is looked at most by “${other}” (#${strongest}), weight ${weights[strongest].toPrecision(7)}`;
}

function showLineFocus(focus) {
  const same = focus?.side === state.lineFocus?.side && focus?.index === state.lineFocus?.index;
  if (same) return;
  state.lineFocus = focus;
  render();
  if (focus) ui.readout.textContent = describeToken(focus);
}

function wireLines() {
  const canvas = ui.linesCanvas;
  canvas.addEventListener('mousemove', (event) => {
    if (canvas.layout) showLineFocus(tokenAt(canvas.layout, event.offsetX, event.offsetY));
  });
  canvas.addEventListener('mouseleave', () => showLineFocus(null));
  canvas.addEventListener('keydown', (event) => {
    if (!state.model) return;
    const focus = state.lineFocus ?? { side: 'query', index: -1 };
    const count = (side) => (side === 'query' ? state.model.n : state.model.nKeys);
    let next;
    if (event.key === 'ArrowDown') next = { side: focus.side, index: Math.min(focus.index + 1, count(focus.side) - 1) };
    else if (event.key === 'ArrowUp') next = { side: focus.side, index: Math.max(focus.index - 1, 0) };
    else if (event.key === 'ArrowLeft' || event.key === 'ArrowRight') {
      const side = event.key === 'ArrowLeft' ? 'query' : 'key';
      next = { side, index: Math.min(Math.max(focus.index, 0), count(side) - 1) };
    } else if (event.key === 'Escape') next = null;
    else return;
    event.preventDefault();
    showLineFocus(next);
  });
}

// ---- Link and exports ------------------------------------------------------------

// The settings a link holds: the layer and the model only while a model's run is shown.
function linkSettings() {
  if (usingModel()) return { ...state.settings, model: state.trained.url ?? state.trained.name };
  return { ...state.settings, model: '', layer: 0 };
}

function currentLinkSettings() {
  const settings = linkSettings();
  if (state.source === 'matrices') settings.matrices = state.matrixText;
  return settings;
}

function updateLink() {
  const hash = settingsToHash(linkSettings()) + (state.source === 'matrices'
    ? `&m=${encodeURIComponent(state.matrixText)}` : '');
  history.replaceState(null, '', hash);
  ui.shareUrl.value = location.href;
}

function fileStem() {
  const view = state.settings.view === 'steps' ? 'heatmap' : state.settings.view;
  const layer = usingModel() && view !== 'model' ? `-layer${state.settings.layer + 1}` : '';
  return `attnlens-${view}${layer}${view === 'heatmap' || view === 'lines' ? `-head${state.settings.head + 1}` : ''}`;
}

// PNG/SVG write the current picture; the step view exports its head's heatmap.
function exportScene() {
  if (state.settings.view !== 'steps') return currentScene().scene;
  const head = state.settings.head;
  return heatmapScene({ queryTokens: state.model.queryTokens, keyTokens: state.model.keyTokens, values: state.headValues[head], title: headTitle(head) }).scene;
}

function wireExports() {
  $('export-png').addEventListener('click', async () => {
    if (state.model) download(`${fileStem()}.png`, await pngBlob(exportScene()));
  });
  $('export-svg').addEventListener('click', () => {
    if (state.model) download(`${fileStem()}.svg`, svgBlob(exportScene(), `attnlens ${state.settings.view}`));
  });
  $('export-csv').addEventListener('click', () => {
    if (!state.model) return;
    const csv = weightsCsv(state.model, { layer: usingModel() ? state.settings.layer : null });
    download(usingModel() ? `attnlens-weights-layer${state.settings.layer + 1}.csv` : 'attnlens-weights.csv', new Blob([csv], { type: 'text/csv' }));
  });
  $('export-json').addEventListener('click', () => {
    if (!state.model) return;
    const trained = usingModel()
      ? { name: state.trained.name, info: state.trained.info, layer: state.settings.layer, layers: state.run.layers, ids: state.run.ids }
      : null;
    const json = weightsJson(state.model, { settings: currentLinkSettings(), version: state.lens.version, trained });
    download(usingModel() ? `attnlens-weights-layer${state.settings.layer + 1}.json` : 'attnlens-weights.json', new Blob([json], { type: 'application/json' }));
  });
  $('copy-link').addEventListener('click', async () => {
    updateLink();
    try {
      await navigator.clipboard.writeText(location.href);
      ui.readout.textContent = 'Link copied: it restores the sentence and every setting.';
    } catch {
      // No clipboard permission (e.g. file://): select the link for Ctrl+C instead.
      ui.shareUrl.focus();
      ui.shareUrl.select();
      ui.readout.textContent = 'Press Ctrl+C (⌘C) to copy the selected link.';
    }
  });
}

// ---- Matrices editor -------------------------------------------------------------

function useMatrices(text) {
  state.matrixText = text;
  ui.matrixEditor.value = text;
  try {
    parseMatrices(text); // inline error before touching the views
  } catch (error) {
    showError(ui.matrixError, error.message);
    return false;
  }
  state.source = 'matrices';
  state.settings.head = 0;
  state.step = 0;
  computeNow();
  return ui.matrixError.hidden;
}

function wireMatrices() {
  $('compute-matrices').addEventListener('click', () => useMatrices(ui.matrixEditor.value));
  for (const id of ['load-example', 'load-example-editor']) {
    $(id).addEventListener('click', () => {
      // The example's published numbers assume no mask and temperature 1:
      // reset those two, or a reader checking by hand would see other values.
      Object.assign(state.settings, { causal: false, temperature: defaults.temperature });
      ui.causal.checked = false;
      ui.temperature.value = String(defaults.temperature);
      if (useMatrices(matricesToJson(workedExample))) setView('steps');
      ui.step.focus();
    });
  }
  $('back-to-sentence').addEventListener('click', () => {
    state.source = 'sentence';
    computeNow();
    ui.sentence.focus();
  });
}

// ---- Start -------------------------------------------------------------------------

function wireInputs() {
  for (const field of [ui.sentence, ui.context]) {
    field.addEventListener('input', () => {
      state.source = 'sentence';
      readSettings();
      computeSoon();
    });
    field.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey) {
        event.preventDefault(); // a sentence has no line breaks; Enter means "compute now"
        state.source = 'sentence';
        readSettings();
        computeNow();
      }
    });
  }
  // Causal mask and temperature apply to typed matrices too; the others only
  // shape the sentence pipeline, so touching them returns to the sentence.
  for (const control of [ui.dModel, ui.heads, ui.seed, ui.identity, ui.temperature, ui.causal]) {
    control.addEventListener('change', () => {
      if (control !== ui.temperature && control !== ui.causal) state.source = 'sentence';
      readSettings();
      computeNow();
    });
  }
  ui.head.addEventListener('change', () => {
    state.settings.head = Number(ui.head.value) - 1;
    state.cell = null;
    state.lineFocus = null;
    render();
    updateLink();
  });
  for (const button of document.querySelectorAll('[data-view]')) {
    button.addEventListener('click', () => setView(button.dataset.view));
  }
  ui.toggleTable.addEventListener('click', () => {
    state.tableShown = !state.tableShown;
    renderTable();
  });
  ui.stepPrev.addEventListener('click', () => moveStep(-1));
  ui.stepNext.addEventListener('click', () => moveStep(1));
  $('panel-steps').addEventListener('keydown', (event) => {
    if (event.target.closest('input, textarea, select')) return;
    if (event.key === 'ArrowRight' || event.key === 'PageDown') moveStep(1);
    else if (event.key === 'ArrowLeft' || event.key === 'PageUp') moveStep(-1);
    else return;
    event.preventDefault();
  });
  wireHeatmap(ui.heatmapCanvas);
  wireHeatmap(ui.averageCanvas);
  wireLines();
  wireExports();
  wireMatrices();
  wireModel();
}

function wireModel() {
  for (const radio of [ui.engineRandom, ui.engineModel]) {
    radio.addEventListener('change', () => {
      if (radio.checked) setEngine(radio.value);
    });
  }
  ui.layer.addEventListener('change', () => {
    state.settings.layer = Number(ui.layer.value) - 1;
    if (state.run) showRun();
  });
  createModelPanel({
    openModel: $('open-model'), openFolder: $('open-folder'), filesInput: $('model-files'), folderInput: $('model-folder'),
    urlForm: $('url-form'), urlInput: ui.modelUrl, cancel: $('cancel-load'),
    progress: $('model-progress'), progressBar: $('model-progress-bar'), progressText: $('model-progress-text'),
    info: $('model-info'), dropTarget: document.body,
  }, {
    client,
    onStart: () => {
      state.engine = 'model';
      showEngine();
      showError(ui.error, null);
    },
    onLoaded: modelLoaded,
    onError: (message, error) => {
      showError(ui.error, message);
      if (error?.modelLoaded === false && state.trained) modelLost();
    },
  });
}

// A link made with a trained model names it; the page never downloads one
// unasked, so it offers the URL (or names the files to open) instead.
function offerLinkedModel() {
  const linked = state.settings.model;
  if (!linked) return;
  state.engine = 'model';
  showEngine();
  if (/^https?:\/\//.test(linked)) {
    ui.modelUrl.value = linked;
    ui.status.textContent = `This link was made with ${linked}: press “Load from URL” to download it and see the same numbers.`;
  } else {
    ui.status.textContent = `This link was made with the model “${linked}”: open its files to see the same numbers.`;
  }
}

async function start() {
  showSettings();
  const { model, layer, head, view } = state.settings;
  if (model) state.linked = { model, layer, head, view };
  const matrixText = new URLSearchParams(location.hash.slice(1)).get('m');
  ui.matrixEditor.value = matrixText ?? matricesToJson(workedExample);
  wireInputs();
  render();
  try {
    state.lens = await load();
  } catch (error) {
    showError(ui.error, `The WebAssembly module could not start: ${error.message}`);
    ui.status.textContent = 'Not running.';
    return;
  }
  window.attnlens.lens = state.lens;
  if (matrixText !== null) {
    const view = state.settings.view;
    useMatrices(matrixText);
    setView(view);
  } else {
    computeNow();
  }
  offerLinkedModel();
}

start();
