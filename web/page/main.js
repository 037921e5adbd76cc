// The attention page, made of parts around one store (store.js). Every number
// comes from the library (WASM); the parts only wire inputs, views and exports.
//   compute.js             picks the source of attention and puts its record in the store (`shown`)
//   sources.js             the sentence and the typed matrices (on this thread: a millisecond or two)
//   model/model-source.js  a trained model, in a worker (its forward pass can take seconds)
//   controls.js            the form -> the store's settings; asks compute.js to compute
//   matrices-editor.js     the matrices editor -> the store
//   panels.js              draws the shown record in the chosen view (attnlens/views), the steps and the table
//   summary.js             the status line, errors, token strip, head selector, window.attnlens
//   link-and-exports.js    the share link and the export buttons
//   model/controller.js    the Model choice, loading, the layer control, predictions, the model's steps
//   analysis-panel.js      the Analysis tab: every head's detector scores and the rollout (model.analyze in the worker)
//   neuron-panel.js        the neuron view under Step by step: one head's q, k, q ∘ k, q · k and softmax
// A part changes the store and draws itself from it; none calls another back.
import { load } from 'attnlens';
import { createAnalysisPanel } from './analysis-panel.js';
import { createComputing } from './compute.js';
import { showSettings, wireForm } from './controls.js';
import { createLink, wireExports } from './link-and-exports.js';
import { createMatricesEditor, matricesToJson, workedExample } from './matrices-editor.js';
import { errorText } from './error-text.js';
import { createModelController } from './model/controller.js';
import { createNeuronPanel } from './neuron-panel.js';
import { createTranslationPanel } from './model/translation-panel.js';
import { ModelClient } from './model/model-client.js';
import { modelSource } from './model/model-source.js';
import { createPanels } from './panels.js';
import { hashNames, settingsFromHash } from './settings.js';
import { createStore } from './store.js';
import { createSummary } from './summary.js';

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
  valueWeighted: $('value-weighted'), weightingControl: $('weighting-control'),
  tokens: $('tokens'), tokenStrip: $('token-strip'), predictions: $('predictions'), modelUrl: $('model-url'),
  sentenceLabel: $('sentence-label'), translation: $('translation'), translationText: $('translation-text'),
  translationStatus: $('translation-status'), translate: $('translate'), stopTranslation: $('stop-translation'),
  attentionKind: $('attention-kind'), attentionKindControl: $('attention-kind-control'),
  builtinButtons: [...document.querySelectorAll('[data-builtin]')],
};

const store = createStore({
  lens: null,
  settings: settingsFromHash(location.hash),
  source: 'sentence', // or 'matrices': what the random-projection pipeline computes
  matrixText: '',
  trained: null, // { info, name, url, source, simdLevel, threads } of the model the worker holds
  linked: null, // { model, picture: { view, layer?, head? } } of a link made with a trained model, until that model loads
  // What is shown: { from: 'sentence' | 'matrices' | 'model', record (an Explanation, or a model's run),
  // data (its data for attnlens/views), model (the views' model of it), trained (for a run) }, or null.
  shown: null,
  explanations: new Map(), // layer -> model.explain of the shown run (the model's steps)
  // A decoder run's next-token predictions, { text, trained, predictions }, which arrive after its attention is drawn.
  predictions: null,
  step: 0,
  tableShown: false,
  status: 'Loading the WebAssembly module…',
  error: null,
  matrixError: null,
  timings: null, // { wasmMs, drawMs } of the shown record
  // The Analysis tab's measures of the trained model: { trained, text, result (model.analyze) } of the
  // last analysed text, { trained, length, scores } of induction on repeated random tokens, or null.
  analysis: null,
  induction: null,
  analysisError: null,
  // An encoder-decoder's translation of the text: { text, tokens (so far), done, elapsedMs, maxTokens, generatedText? }.
  translation: null,
});

const client = new ModelClient(); // the worker starts on first use
const model = modelSource(client);
const computing = createComputing(store, { model });
const panels = createPanels({ ui, store });
createSummary({ ui, store });
const link = createLink({ ui, store });
const matrices = createMatricesEditor({ ui, store, computing });
const trained = createModelController({ ui, store, computing, client, source: model });
createTranslationPanel({ ui, store, computing, source: model });
const analysis = createAnalysisPanel({ ui, store, client });
createNeuronPanel({ store });

// The address's hash holds the page's settings (settings.js): following the skip link's #views would replace
// them, and a reload would lose the sentence. It moves the focus (and the page) to the views instead.
document.querySelector('.skip').addEventListener('click', (event) => {
  event.preventDefault();
  document.getElementById('views').focus();
});

async function start() {
  const { settings } = store.state;
  showSettings(ui, settings);
  // The layer and head only when the link names them: without them a built-in model opens on its own head.
  const named = (name) => (hashNames(location.hash, name) ? { [name]: settings[name] } : {});
  if (settings.model) store.set({ linked: { model: settings.model, picture: { view: settings.view, ...named('layer'), ...named('head') } } });
  const matrixText = new URLSearchParams(location.hash.slice(1)).get('m');
  ui.matrixEditor.value = matrixText ?? matricesToJson(workedExample);
  wireForm({ ui, store, computing });
  wireExports({ ui, store, panels, link, analysis, source: model });
  trained.wire();
  let lens;
  try {
    lens = await load();
  } catch (error) {
    store.set({ error: `The WebAssembly module could not start: ${errorText(error)}`, status: 'Not running.' });
    return;
  }
  store.set({ lens });
  if (matrixText !== null) {
    const { view } = store.state.settings;
    matrices.useMatrices(matrixText);
    store.setSettings({ view });
  } else {
    trained.openInitial(); // the built-in model, a linked one, or random projections
  }
}

start();
