// The attention page: reads the controls, asks the attnlens library for every
// intermediate step, and hands the result to the views. All numbers come from
// the library (WASM); this file only wires inputs, views and exports.
// Two engines feed the same views: random projections (explainSentence, on
// this thread: a sentence takes a millisecond or two) and a trained model
// (lens.loadModel in a worker, model/controller.js, since its forward pass can take seconds).
//   controls.js          the form <-> state.settings, inline errors
//   panels.js            mounts the chosen view (attnlens/views: hover, keys, readout) in its panel, and the table
//   link-and-exports.js  the share link and the export buttons
//   model/controller.js  the trained model: loading, running, layer, model view, predictions, steps
import { load } from 'attnlens';
import { fillSelect, readSettings, showError, showSettings } from './controls.js';
import { createLink, wireExports } from './link-and-exports.js';
import { matricesToJson, workedExample } from './matrices-input.js';
import { engineName } from './engine-name.js';
import { createModelController } from './model/controller.js';
import { createPanels } from './panels.js';
import { defaults, settingsFromHash } from './settings.js';
import { MatrixInputError, readMatrices } from '../views/input.js';
import { attentionData, fromExplanation } from '../views/index.js';
import { averageValues, headValues } from '../views/attention-data.js';
import { renderTokenStrip } from './views/token-strip.js';

const $ = (id) => document.getElementById(id);
const ui = {
  sentence: $('sentence'), context: $('context'), status: $('status'), error: $('error'),
  dModel: $('d-model'), heads: $('heads'), seed: $('seed'), temperature: $('temperature'),
  causal: $('causal'), identity: $('identity'), head: $('head'),
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
  // What is shown: the library's record (an Explanation, or a model's run), its
  // data for the views (attnlens/views fromExplanation / fromRun) and the views'
  // model of that data (attentionData: tokens, counts, weights).
  record: null,
  data: null,
  model: null,
  // The chosen layer's per-head weights and head average, sliced once per
  // result so the views (and the canvas grid cache) see stable arrays.
  headValues: [],
  averageValues: null,
  step: 0,
  tableShown: false,
  // The trained model (model/controller.js).
  // 'random' or 'model': the Model choice. A trained model is used once one
  // is loaded (`trained`); until then the random projections keep running.
  engine: 'random', // set by the controller's openInitial from the link's settings
  trained: null, // { info, name, url, simd } of the model the worker holds
  run: null, // the latest run of it: { text, tokens, ids, n, layers, heads, attention, predictions, elapsedMs }
  explanations: new Map(), // layer -> model.explain result, for the run's text
  explaining: null, // { run, layer } being explained by the worker
  runGeneration: 0, // increases per requested run: a late answer older than the one shown is dropped
  linked: null, // { model, layer, head, view } of a link made with a trained model
};

window.attnlens = { last: null, lens: null, timings: null };

const trained = createModelController({
  ui, state,
  page: {
    showRecord, showTokens, draw, clearViews, computeNow,
    renderSteps: () => panels.renderSteps(), updateLink: () => link.updateLink(),
  },
});
const panels = createPanels({ ui, state, trained, setView });
const link = createLink({ ui, state, trained });
const { render } = panels;

// ---- Computing ---------------------------------------------------------------

// The library's Explanation of the sentence or of the typed matrices.
function explain() {
  const s = state.settings;
  if (state.source === 'matrices') {
    const { options, tokens, contextTokens } = readMatrices(state.matrixText);
    const result = state.lens.explainMatrices({ ...options, causal: s.causal, temperature: s.temperature });
    return tokens || contextTokens ? { ...result, tokens, contextTokens } : result;
  }
  const context = s.context.trim() === '' ? undefined : s.context;
  return state.lens.explainSentence({
    text: s.text, context, dModel: s.dModel, heads: s.heads, seed: s.seed,
    causal: s.causal, temperature: s.temperature, identity: s.identity,
  });
}

function compute() {
  if (!state.lens) return;
  if (trained.active()) {
    trained.compute();
    return;
  }
  state.runGeneration += 1; // an answer still on its way from the model worker is stale now
  let result;
  try {
    result = explain();
  } catch (error) {
    // Bad input keeps the last good picture and says what is wrong, inline.
    const target = state.source === 'matrices' ? ui.matrixError : ui.error;
    showError(target, error instanceof MatrixInputError ? error.message : `${error.name}: ${error.message}`);
    return;
  }
  showError(ui.error, null);
  showError(ui.matrixError, null);
  showRecord(result, fromExplanation(result));
  const { model } = state;
  window.attnlens.last = { tokens: model.queryTokens, keyTokens: model.keyTokens, layers: 1, heads: model.heads, weights: model.weights, model: null };
  showTokens(state.source === 'sentence' ? model.queryTokens : null);
  trained.renderExtras();
  const drawMs = draw();
  window.attnlens.timings = { wasmMs: result.elapsedMs, drawMs };
  showStatus(result, drawMs);
  link.updateLink();
}

// Hands a record (an Explanation, or a model's run with its data of every
// layer) to the views: the views' model of its data, and the chosen layer's
// per-head slices and head average.
function showRecord(record, data, layer = 0) {
  const model = attentionData(data);
  Object.assign(state, { record, data, model });
  state.headValues = Array.from({ length: model.heads }, (_, head) => headValues(model, layer, head));
  state.averageValues = averageValues(model, layer);
  if (state.settings.head >= model.heads) state.settings.head = 0;
  fillSelect(ui.head, Array.from({ length: model.heads }, (_, h) => h + 1), state.settings.head + 1);
}

function showStatus(result, drawMs) {
  const { model } = state;
  const engine = engineName(state.lens.simdLevel, state.lens.threads);
  const source = state.source === 'matrices' ? 'your matrices: ' : '';
  const unit = state.source === 'matrices' ? 'rows' : 'tokens';
  const tokens = result.crossAttention
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

function clearViews(status) {
  Object.assign(state, { record: null, data: null, model: null });
  state.headValues = [];
  state.averageValues = null;
  window.attnlens.last = null;
  for (const container of [ui.step, ui.tableAlternative]) container.replaceChildren();
  showTokens(null);
  trained.renderExtras();
  render(); // no numbers: the charts are unmounted, blank canvases hold their place
  ui.status.textContent = status;
}

function showTokens(tokens, ids = null) {
  ui.tokens.hidden = tokens === null;
  if (tokens) renderTokenStrip(ui.tokenStrip, tokens, { ids });
}

// Typing waits for a pause before computing, except with a trained model:
// its worker keeps only the newest text waiting (model/model-client.js), so
// starting at once costs no backlog, and the wait would be most of the
// keystroke-to-heatmap time (tests/bench/typing.mjs).
let debounceTimer = 0;
function computeSoon() {
  clearTimeout(debounceTimer);
  if (trained.active()) compute();
  else debounceTimer = setTimeout(compute, 200);
}

function computeNow() {
  clearTimeout(debounceTimer);
  compute();
}

function setView(view) {
  state.settings.view = view;
  render();
  link.updateLink();
}

// ---- Matrices editor -------------------------------------------------------------

function useMatrices(text) {
  state.matrixText = text;
  ui.matrixEditor.value = text;
  try {
    readMatrices(text); // inline error before touching the views
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
      readSettings(ui, state.settings);
      computeSoon();
    });
    field.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey) {
        event.preventDefault(); // a sentence has no line breaks; Enter means "compute now"
        state.source = 'sentence';
        readSettings(ui, state.settings);
        computeNow();
      }
    });
  }
  // Causal mask and temperature apply to typed matrices too; the others only
  // shape the sentence pipeline, so touching them returns to the sentence.
  for (const control of [ui.dModel, ui.heads, ui.seed, ui.identity, ui.temperature, ui.causal]) {
    control.addEventListener('change', () => {
      if (control !== ui.temperature && control !== ui.causal) state.source = 'sentence';
      readSettings(ui, state.settings);
      computeNow();
    });
  }
  ui.head.addEventListener('change', () => {
    state.settings.head = Number(ui.head.value) - 1;
    render();
    link.updateLink();
  });
  for (const button of document.querySelectorAll('[data-view]')) {
    button.addEventListener('click', () => setView(button.dataset.view));
  }
  ui.toggleTable.addEventListener('click', () => {
    state.tableShown = !state.tableShown;
    panels.renderTable();
  });
  ui.stepPrev.addEventListener('click', () => panels.moveStep(-1));
  ui.stepNext.addEventListener('click', () => panels.moveStep(1));
  $('panel-steps').addEventListener('keydown', (event) => {
    if (event.target.closest('input, textarea, select')) return;
    if (event.key === 'ArrowRight' || event.key === 'PageDown') panels.moveStep(1);
    else if (event.key === 'ArrowLeft' || event.key === 'PageUp') panels.moveStep(-1);
    else return;
    event.preventDefault();
  });
  wireExports({ ui, state, trained, panels, link });
  wireMatrices();
  trained.wire();
}

async function start() {
  showSettings(ui, state.settings);
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
    trained.openInitial(); // the built-in model, a linked one, or random projections
  }
}

start();
