// The trained model on the page: the Model choice (random projections or a
// trained model), loading through the model panel, running the worker as the
// text changes, and what only a model has: the layer control, the model view,
// the next-token predictions and the explain-based steps. The other views are
// shared with random projections: the page hands them the run's data of every
// layer (attnlens/views fromRun) and the chosen layer (page.showRecord).
import { fillSelect, showError } from '../controls.js';
import { renderPredictions } from '../views/predictions.js';
import { builtinModelName } from './builtin-model.js';
import { ModelClient } from './model-client.js';
import { createModelPanel } from './model-panel.js';
import { fromRun } from '../../views/records.js';
import { runStatus } from './trained-run.js';

/**
 * @param ui the page's elements
 * @param state the page's state (engine, trained, run, explanations, explaining, runGeneration and linked are the model's)
 * @param page what the controller asks of the page: { showRecord, showTokens, draw, renderSteps, clearViews,
 *   updateLink, computeNow }
 */
export function createModelController({ ui, state, page }) {
  const client = new ModelClient(); // the worker starts on first use
  let panel = null; // the open-a-model controls (model-panel.js), once wired
  // True when the views show a trained model's run (not random projections, not typed matrices).
  function active() {
    return state.engine === 'model' && state.trained !== null && state.source === 'sentence';
  }

  // Runs the model in its worker. Typing fast starts many runs; the client
  // keeps only the newest waiting (a replaced one answers null). An answer
  // that arrives after newer keys is still drawn unless a newer answer has
  // been: while keys come faster than the model runs, the picture follows
  // the typing one run behind instead of waiting for a pause.
  let shownGeneration = 0;
  async function compute() {
    state.runGeneration += 1;
    const generation = state.runGeneration;
    const text = state.settings.text;
    const { trained } = state;
    const { name } = trained;
    // Say so only when it takes long enough to notice (a small model answers within a frame).
    const busy = setTimeout(() => { ui.status.textContent = `Running ${name}…`; }, 150);
    const requestedAt = performance.now();
    let run;
    try {
      run = await client.run(text);
    } catch (error) {
      if (generation !== state.runGeneration) return;
      showError(ui.error, `${error.name}: ${error.message}`);
      if (error.modelLoaded === false) lost();
      // A model just loaded whose first run failed (e.g. the text has more tokens than it has
      // positions): the old picture belongs to another model, so show none rather than a wrong one.
      else if (state.run === null) page.clearViews(`${name} is loaded; it could not run this text (see above).`);
      return;
    } finally {
      clearTimeout(busy);
    }
    if (run === null || generation < shownGeneration || state.trained !== trained || !active()) return;
    shownGeneration = generation;
    showError(ui.error, null);
    const arrivedAt = performance.now();
    state.run = { ...run, text };
    state.explanations = new Map();
    showRun();
    markDrawn(run, { requestedAt, arrivedAt });
  }

  // A user-timing mark once a run's text is on screen: when it was asked for,
  // when the worker took it up and answered, when it arrived and was drawn
  // (all on this page's performance.now() clock), and where the worker's time
  // went. tests/bench/typing.mjs measures keystroke to heatmap with it.
  function markDrawn(run, { requestedAt, arrivedAt }) {
    const { timing } = run;
    const local = (epochMs) => epochMs - performance.timeOrigin;
    const { simdLevel, threads } = state.trained;
    performance.mark('attnlens:model-drawn', {
      detail: {
        text: state.run.text, n: run.n, simdLevel, threads,
        requestedAt, startedAt: local(timing.startedAt), postedAt: local(timing.postedAt), arrivedAt, drawnAt: performance.now(),
        runMs: timing.runMs, forwardMs: timing.forwardMs, predictionsMs: timing.predictionsMs, drawMs: window.attnlens.timings.drawMs,
      },
    });
  }

  // The current run at the chosen layer: every view, the token strip, the
  // predictions, window.attnlens.last, the status line and the link.
  function showRun() {
    const { run, trained } = state;
    state.settings.layer = Math.min(state.settings.layer, run.layers - 1);
    fillSelect(ui.layer, Array.from({ length: run.layers }, (_, l) => l + 1), state.settings.layer + 1);
    page.showRecord(run, fromRun(run), state.settings.layer);
    window.attnlens.last = {
      tokens: run.tokens, keyTokens: run.tokens, layers: run.layers, heads: run.heads, weights: run.attention,
      model: trained.info, layer: state.settings.layer, ids: run.ids, predictions: run.predictions,
    };
    page.showTokens(run.tokens, run.ids);
    renderExtras();
    const drawMs = page.draw();
    window.attnlens.timings = { wasmMs: run.elapsedMs, drawMs };
    ui.status.textContent = runStatus({ name: trained.name, run, simdLevel: trained.simdLevel, threads: trained.threads, drawMs });
    page.updateLink();
  }

  // The predictions panel, the layer control and the model view button exist
  // only while a trained model's run is on screen.
  function renderExtras() {
    const on = active() && state.run !== null;
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
    const builtin = replaced && state.trained.source === 'builtin';
    ui.modelNote.hidden = !replaced || builtin;
    document.getElementById('builtin-note').hidden = !builtin;
    ui.contextField.hidden = replaced; // a model attends within its own text: no second sentence
    ui.modelName.textContent = state.trained ? state.trained.name : 'open a model…';
    ui.modelPanel.classList.toggle('loaded', state.trained !== null);
  }

  function setEngine(engine) {
    state.engine = engine;
    state.settings.engine = engine;
    showEngine();
    if (engine === 'random' || state.trained) {
      state.source = 'sentence';
      page.computeNow();
    } else {
      openBuiltin(); // "A trained model" with none open yet: the one the page ships
    }
  }

  // Opens the built-in model; should that ever fail, the page falls back to
  // random projections (the error stays on screen) rather than showing nothing.
  async function openBuiltin() {
    const outcome = await panel.loadBuiltin();
    if (outcome === 'failed' && state.trained === null) {
      state.engine = 'random';
      state.settings.engine = 'random';
      showEngine();
      page.computeNow();
    }
  }

  function loaded(model) {
    state.trained = model;
    state.settings.model = model.url ?? model.name;
    // The model a link was made with: restore the layer, head and view it showed.
    if (state.linked && state.linked.model === state.settings.model) {
      Object.assign(state.settings, { layer: state.linked.layer, head: state.linked.head, view: state.linked.view });
    }
    state.linked = null;
    state.run = null;
    state.source = 'sentence';
    state.engine = 'model';
    state.settings.engine = 'model';
    showEngine();
    page.computeNow();
  }

  // The worker lost its model (it crashed, or a failed load had to free it).
  function lost() {
    state.trained = null;
    state.run = null;
    state.settings.model = '';
    showEngine();
    page.computeNow();
  }

  // ---- Step by step and the model view ----------------------------------------

  // Step by step for a model: the worker explains one layer (every head) on demand.
  async function explainLayer(layer) {
    const { run } = state;
    if (state.explaining?.run === run && state.explaining.layer === layer) return;
    state.explaining = { run, layer };
    try {
      const explanation = await client.explain(run.text, layer, state.settings.head);
      if (state.run !== run) return;
      state.explanations.set(layer, explanation);
      if (state.settings.view === 'steps') page.renderSteps();
    } catch (error) {
      if (state.run === run) showError(ui.error, `${error.name}: ${error.message}`);
    } finally {
      if (state.explaining?.run === run && state.explaining.layer === layer) state.explaining = null;
    }
  }

  // The steps view's data: the worker's explanation of the chosen layer (every
  // head; asked for once; it records the model's architecture and causality), null until it arrives.
  function steps() {
    const layer = state.settings.layer;
    const explanation = state.explanations.get(layer);
    if (!explanation) {
      explainLayer(layer);
      return null;
    }
    return { data: explanation };
  }

  // ---- Wiring --------------------------------------------------------------------

  function wire() {
    const $ = (id) => document.getElementById(id);
    for (const radio of [ui.engineRandom, ui.engineModel]) {
      radio.addEventListener('change', () => {
        if (radio.checked) setEngine(radio.value);
      });
    }
    ui.layer.addEventListener('change', () => {
      state.settings.layer = Number(ui.layer.value) - 1;
      if (state.run) showRun();
    });
    panel = createModelPanel({
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
      onLoaded: loaded,
      onError: (message, error) => {
        showError(ui.error, message);
        if (error?.modelLoaded === false && state.trained) lost();
      },
    });
  }

  // What the page shows first. It opens on the built-in model (part of the page:
  // nothing is downloaded) unless the link says `engine=random`. A link made with
  // another trained model names it; the page never downloads one unasked, so it
  // shows random projections and offers the URL (or names the files to open).
  function openInitial() {
    const linked = state.settings.engine === 'model' ? state.settings.model : '';
    if (linked === builtinModelName) {
      state.engine = 'model';
      showEngine();
      openBuiltin();
      return;
    }
    page.computeNow();
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

  return { active, compute, showRun, renderExtras, steps, wire, openInitial };
}
