// The trained model on the page: the Model choice (random projections or a
// trained model), loading through the model panel, and what only a model has:
// the layer control, the model view button, the next-token predictions and
// the explain-based steps. Its runs are computed like every other source's
// (compute.js, with model-source.js); this part changes the store (engine,
// trained model, explanations) and draws its own controls from it.
import { attentionData } from '../../views/index.js';
import { runShown, selectorSizes } from '../compute.js';
import { fillSelect } from '../controls.js';
import { errorText } from '../error-text.js';
import { timed } from '../part-timing.js';
import { renderPredictions } from '../views/predictions.js';
import { defaultSentence } from '../settings.js';
import { builtinHead, builtinModelName, builtinModelNames, builtinText, isBuiltinModel } from './builtin-model.js';
import { fetchedHeads, fetchedTranslationHeads, kindSizes, lacks, shownSizes, wantedAttention } from './held-attention.js';
import { createModelPanel } from './model-panel.js';
import { shownPredictions } from './predictions.js';

/**
 * @param ui the page's elements
 * @param store the page's store (settings.engine / model / layer, trained, linked, shown, explanations)
 * @param computing compute.js: asked to compute when the model or the engine changes
 * @param client the model worker's client; source its model-source.js (explain)
 */
export function createModelController({ ui, store, computing, client, source }) {
  let panel = null; // the open-a-model controls (model-panel.js), once wired
  const setEngine = (engine) => store.setSettings({ engine });

  // Which controls show: the model panel while "A trained model" is chosen;
  // the random-projection controls unless a loaded model replaced them.
  function showEngine({ settings, trained }) {
    const model = settings.engine === 'model';
    ui.engineModel.checked = model;
    ui.engineRandom.checked = !model;
    ui.modelPanel.hidden = !model;
    const replaced = model && trained !== null;
    ui.randomControls.hidden = replaced;
    ui.randomNote.hidden = replaced;
    const builtin = replaced && trained.source === 'builtin';
    ui.modelNote.hidden = !replaced || builtin;
    // Each built-in model has its note; the buttons say which one is open.
    for (const note of document.querySelectorAll('[data-builtin-note]')) note.hidden = !builtin || note.dataset.builtinNote !== trained.name;
    for (const button of ui.builtinButtons) button.setAttribute('aria-pressed', String(trained?.source === 'builtin' && trained.name === button.dataset.builtin));
    ui.contextField.hidden = replaced; // a model attends within its own text: no second sentence
    ui.modelName.textContent = trained ? trained.name : 'open a model…';
    ui.modelPanel.classList.toggle('loaded', trained !== null);
  }

  // A layer's number, and what its window hides when it has one ("2 (local, window 256)";
  // "1 (global)" beside local layers, as GPT-Neo's config names them).
  const layerLabel = (windows) => (number) => {
    const window = windows[number - 1];
    if (window) return `${number} (local, window ${window})`;
    return windows.some(Boolean) ? `${number} (global)` : String(number);
  };

  // The predictions panel, the layer control and the model view button exist
  // only while a trained model's run is on screen. A new picture that is not a
  // model's leaves the model view (a model view chosen before its run arrives,
  // as a link restores it, waits for the run).
  // A loaded model whose run failed keeps its layer control, filled from its config (compute.js selectorSizes).
  function showExtras(state, newPicture) {
    const { shown, settings } = state;
    const on = shown?.from === 'model';
    const sizes = shown ? null : selectorSizes(state);
    ui.predictions.hidden = !on;
    ui.layerControl.hidden = !on && !sizes;
    ui.weightingControl.hidden = !on;
    ui.modelViewButton.hidden = !on;
    if (!on) {
      if (sizes) fillSelect(ui.layer, Array.from({ length: sizes.layers }, (_, l) => l + 1), settings.layer + 1);
      if (newPicture && settings.view === 'model') store.setSettings({ view: 'heatmap' });
      return;
    }
    const run = shown.record;
    // The shown kind's layers (an encoder-decoder's decoder and cross-attention have decoderLayers).
    const windows = (shown.held ? shown.record.windows : shown.model.hiding?.windows) ?? [];
    fillSelect(ui.layer, Array.from({ length: shownSizes(shown).layers }, (_, l) => l + 1), settings.layer + 1, layerLabel(windows));
    showPredictions(shown, store.state.predictions);
    if (run.predictionsPending && shownPredictions(shown, store.state.predictions) === null) askPredictions(shown);
  }

  // The predictions panel; a decoder's run that is waiting for its predictions leaves the last ones up.
  function showPredictions(shown, predictions) {
    const run = shown.record;
    const shownOnes = shownPredictions(shown, predictions);
    if (run.predictionsPending && shownOnes === null) return;
    timed('predictions', () => renderPredictions(ui.predictions, {
      predictions: shownOnes, lastToken: run.tokens[run.n - 1], position: run.n - 1, architecture: shown.trained.info.architecture,
      maskPredictions: run.maskPredictions, tokens: run.tokens,
    }));
  }

  // A decoder's run comes without its predictions (model-worker.js run): they are asked for once its
  // attention is drawn (after the task that draws it), so the LM head is not on the way to the heatmap.
  let predicting = null; // the text whose predictions were asked for
  function askPredictions({ record: { text }, trained }) {
    if (predicting === text) return;
    predicting = text;
    setTimeout(async () => {
      try {
        const answer = await source.predictions(text);
        if (answer?.predictions && store.state.shown?.record.text === answer.text && store.state.trained === trained) {
          store.set({ predictions: { text: answer.text, trained, predictions: answer.predictions, forward: answer.forward } });
        }
      } catch (error) {
        if (store.state.shown?.record.text === text) store.set({ error: errorText(error) });
      } finally {
        if (predicting === text) predicting = null;
      }
    }, 0);
  }

  // Step by step for a model: the worker explains one layer (every head) on demand, once.
  let explaining = null; // { run, layer, kind } being explained (kind: an encoder-decoder's attention)
  async function explainLayer(run, layer) {
    const { head, attentionKind: kind } = store.state.settings;
    if (explaining?.run === run && explaining.layer === layer && explaining.kind === kind) return;
    explaining = { run, layer, kind };
    try {
      const explanation = await source.explain(run, layer, head, kind);
      if (store.state.shown?.record !== run || store.state.settings.attentionKind !== kind) return;
      store.set({ explanations: new Map(store.state.explanations).set(layer, explanation) });
    } catch (error) {
      if (store.state.shown?.record === run) store.set({ error: errorText(error) });
    } finally {
      if (explaining?.run === run && explaining.layer === layer) explaining = null;
    }
  }

  // The heads a new view, head or layer draws that the shown run does not
  // hold: fetched from the worker (no forward while it still keeps that run),
  // and they replace the held ones, so the page keeps only what it draws.
  let fetching = null; // { record, key } being fetched
  async function fetchMissing({ shown, settings }) {
    const { info } = shown.trained;
    const translation = shown.record.encoderDecoder; // its kind shown's heads (held-attention.js kindSizes)
    const wanted = wantedAttention(settings, translation ? kindSizes(info, settings.attentionKind) : info);
    const key = JSON.stringify(wanted);
    if (!lacks(shown, wanted) || (fetching?.record === shown.record && fetching.key === key)) return;
    const mine = { record: shown.record, key };
    fetching = mine;
    try {
      const fetched = await (translation ? source.translationWeights(shown.record, fetchedTranslationHeads(wanted, info, shown.record))
        : source.weights(shown.record.text, fetchedHeads(wanted, info, shown.record.n, shown.record.attentionQuantity)));
      const current = store.state.shown;
      if (fetched === null || current?.record !== mine.record) return;
      const { forward, ...attentionFields } = fetched;
      const record = { ...current.record, ...attentionFields, fetchedWithForward: forward };
      const { data, held } = runShown(record, store.state.settings);
      store.set({ shown: { ...current, record, data, held, model: attentionData(data) } });
    } catch (error) {
      if (store.state.shown?.record === mine.record) store.set({ error: errorText(error) });
    } finally {
      if (fetching === mine) fetching = null;
    }
  }

  // An encoder-decoder's other kind of attention: the same run, other data (its layers may be fewer).
  // A run that holds another kind only fetches the one chosen (held-attention.js heldTranslationData).
  function showKind({ shown, settings }) {
    if (shown.record.streaming) return; // rows of a translation under way (cross-stream.js): the run shows the kind chosen
    const { data, held } = runShown(shown.record, settings);
    const model = attentionData(data);
    const layers = held ? held.layers : model.layers;
    const layer = Math.min(settings.layer, layers - 1);
    store.set({ shown: { ...shown, data, held, model }, explanations: new Map(), ...(layer !== settings.layer ? { settings: { ...settings, layer } } : {}) });
    if (held) fetchMissing(store.state);
  }

  let before = store.state;
  store.subscribe((state, changed) => {
    const [engine, layer, view, kind, head] = ['engine', 'layer', 'view', 'attentionKind', 'head'].map((key) => state.settings[key] !== before.settings[key]);
    before = state;
    if (kind && state.shown?.from === 'model' && state.shown.record.encoderDecoder) {
      showKind(state);
      return;
    }
    if (changed.has('trained') || engine) showEngine(state);
    if (changed.has('shown') || changed.has('trained') || layer || view) showExtras(state, changed.has('shown'));
    else if (changed.has('predictions') && state.shown?.from === 'model') showPredictions(state.shown, state.predictions);
    const { shown, settings } = state;
    if (shown?.held && (changed.has('shown') || layer || view || head)) fetchMissing(state);
    if (settings.view === 'steps' && shown?.from === 'model' && !state.explanations.has(settings.layer)) explainLayer(shown.record, settings.layer);
  });

  function chooseEngine(engine) {
    setEngine(engine);
    if (engine === 'random' || store.state.trained) {
      store.set({ source: 'sentence' });
      computing.now();
    } else {
      openBuiltin(); // "A trained model" with none open yet: the one the page ships
    }
  }

  // Opens a built-in model (the default one unless named); should that ever fail, the page falls
  // back to random projections (the error stays on screen) rather than showing nothing.
  async function openBuiltin(name = builtinModelName) {
    const outcome = await panel.loadBuiltin(name);
    if (outcome === 'failed' && store.state.trained === null) {
      setEngine('random');
      computing.now();
    }
  }

  // A built-in model opens on its own example (a date for the translator) in place of another
  // model's example; text the reader typed or a link brought stays.
  const examples = [defaultSentence, ...builtinModelNames.map(builtinText)].filter(Boolean);
  function firstText(model, text) {
    if (model.source !== 'builtin' || !examples.includes(text)) return text;
    return builtinText(model.name) ?? defaultSentence;
  }

  function loaded(model) {
    const { settings, linked } = store.state;
    const name = model.url ?? model.name;
    // A built-in model opens on its telling head, if it has one; the model a link was made with
    // restores the view it showed, and the layer and head the link names (settings.js leaves
    // them out when they are the built-in model's own).
    const opening = model.source === 'builtin' ? builtinHead(model.name) ?? {} : {};
    const restored = linked && linked.model === name ? { ...opening, ...linked.picture } : opening;
    const text = firstText(model, settings.text);
    if (text !== settings.text) ui.sentence.value = text;
    store.set({ trained: model, linked: null, source: 'sentence', settings: { ...settings, text, model: name, engine: 'model', ...restored } });
    computing.now();
  }

  function wire() {
    const $ = (id) => document.getElementById(id);
    for (const radio of [ui.engineRandom, ui.engineModel]) {
      radio.addEventListener('change', () => {
        if (radio.checked) chooseEngine(radio.value);
      });
    }
    ui.layer.addEventListener('change', () => store.setSettings({ layer: Number(ui.layer.value) - 1 }));
    panel = createModelPanel({
      openModel: $('open-model'), openFolder: $('open-folder'), filesInput: $('model-files'), folderInput: $('model-folder'),
      urlForm: $('url-form'), urlInput: ui.modelUrl, cancel: $('cancel-load'),
      progress: $('model-progress'), progressBar: $('model-progress-bar'), progressText: $('model-progress-text'),
      info: $('model-info'), saved: $('saved-models'), savedList: $('saved-list'), readyList: $('ready-list'), dropTarget: document.body,
      builtinButtons: ui.builtinButtons, toggle: $('model-panel-toggle'),
    }, {
      client,
      onStart: () => store.set({ settings: { ...store.state.settings, engine: 'model' }, error: null }),
      onLoaded: loaded,
      onBuiltin: (name) => openBuiltin(name),
      onError: (message, error) => {
        store.set({ error: message });
        // The error line sits under the text; the ready models and the URL box that led here are far below it.
        ui.error.scrollIntoView({ block: 'nearest' });
        // A failed load that had to free the model the page showed.
        if (error?.modelLoaded === false && store.state.trained) computing.modelLost();
      },
    });
  }

  // What the page shows first. It opens on the built-in model (part of the page:
  // nothing is downloaded) unless the link says `engine=random`, or on the other
  // built-in one a link names (`model=tiny-translator`). A link made with
  // another trained model names it; the page never downloads one unasked, so it
  // shows random projections and offers the URL (or names the files to open).
  function openInitial() {
    const { settings } = store.state;
    const linked = settings.engine === 'model' ? settings.model : '';
    if (isBuiltinModel(linked)) {
      showEngine(store.state);
      openBuiltin(linked);
      return;
    }
    computing.now();
    if (!linked) return;
    showEngine(store.state);
    if (/^https?:\/\//.test(linked)) {
      ui.modelUrl.value = linked;
      store.set({ status: `This link was made with ${linked}: press “Load from URL” to download it and see the same numbers.` });
    } else {
      store.set({ status: `This link was made with the model “${linked}”: open its files to see the same numbers.` });
    }
  }

  return { wire, openInitial };
}
