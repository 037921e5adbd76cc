// From the page's inputs to what it shows: picks the source of attention
// (the sentence, the typed matrices, or the trained model once one is loaded),
// asks it for its record, and puts the record in the store (`shown`) with its
// data for the views. The parts that draw subscribe to `shown`; the time they
// take is the "drawn in" of the status line.
//
// Parts that change an input ask for a computation: soon() while typing (a
// pause first, except with a trained model: its worker keeps only the newest
// text waiting, so starting at once costs no backlog, and the wait would be
// most of the keystroke-to-heatmap time, tests/bench/typing.mjs), now() otherwise.
import { attentionData, fromExplanation, fromRun, fromValueWeighted } from '../views/index.js';
import { markLibraryData } from '../views/attention-data.js';
import { engineName } from './engine-name.js';
import { errorText } from './error-text.js';
import { createCrossStream } from './model/cross-stream.js';
import { heldData, heldTranslationData, kindSizes, shownSizes, wantedAttention } from './model/held-attention.js';
import { runStatus } from './model/run-status.js';
import { endTally, startTally, timed } from './part-timing.js';
import { matricesSource, sentenceSource } from './sources.js';

/**
 * A model's run as the views' data: its weights or, with the switch on, its value-weighted attention (an
 * encoder-decoder's of the kind settings.attentionKind chooses). The worker's model.run (and model.analyze) checked
 * these weights; its brand does not survive postMessage, so the data is marked as the library's here.
 */
export function runData(run, settings) {
  return runShown(run, settings).data;
}

/**
 * runData's data and `held`: { layer, heads } when the run holds one layer's heads (held-attention.js), else null.
 */
export function runShown(run, settings) {
  // An encoder-decoder's of the kind shown; a decoder-only run has one kind, fromRun's default.
  const kind = run.encoderDecoder ? { kind: settings.attentionKind } : {};
  // Only a translation carries model.analyze's value-weighted attention, whole, besides its weights; a
  // decoder-only run's attention is value-weighted when its attentionQuantity says so (fromRun, heldData).
  if (run.valueWeighted) return { data: markLibraryData(fromValueWeighted(run, kind)), held: null };
  // A run may hold only what the page draws (held-attention.js).
  const held = run.encoderDecoder ? heldTranslationData(run, settings.attentionKind) : heldData(run);
  return held ?? { data: markLibraryData(fromRun(run, kind)), held: null };
}

/** True when the page shows a trained model's runs (not random projections, not typed matrices). */
export function showsModel(state) {
  return state.settings.engine === 'model' && state.trained !== null && state.source === 'sentence';
}

/**
 * The layers and heads the layer and head selectors offer: the shown record's; with none shown while the page
 * shows a trained model (its first run failed, e.g. on a text longer than its positions), its config's, so the
 * selectors are ready for the next run. Null otherwise.
 */
export function selectorSizes(state) {
  if (state.shown) return shownSizes(state.shown);
  if (!showsModel(state)) return null;
  const { info } = state.trained;
  return info.encoderDecoder ? kindSizes(info, state.settings.attentionKind) : { layers: info.layers, heads: info.heads, hasLayers: true };
}

// The status line of an Explanation: its size, the engine, and the time to compute and to draw it.
function explanationStatus(state, record, drawMs) {
  const matrices = state.source === 'matrices';
  const unit = matrices ? 'rows' : 'tokens';
  const tokens = record.crossAttention
    ? `${record.n} query ${unit} × ${record.nContext} context ${unit}`
    : `${record.n} ${record.n === 1 ? unit.slice(0, -1) : unit}`;
  return `${matrices ? 'your matrices: ' : ''}${tokens} · d_model ${record.dModel} · ${record.heads} head${record.heads > 1 ? 's' : ''} · `
    + `computed in ${record.elapsedMs.toFixed(2)} ms (${engineName(state.lens.simdLevel, state.lens.threads)}) · drawn in ${drawMs.toFixed(0)} ms`;
}

/**
 * @param store the page's store
 * @param model the trained model's source (model/model-source.js); the sentence's and the
 *   matrices' (sources.js) are made once the WebAssembly module is loaded (the store's `lens`)
 */
export function createComputing(store, { model }) {
  // Each source: compute(settings) -> the library's record.
  let sources = { model };
  store.subscribe((state, changed) => {
    if (changed.has('lens')) sources = { sentence: sentenceSource(state.lens), matrices: matricesSource(state.lens), model };
  });
  // An encoder-decoder's cross-attention rows, drawn as they are generated (the status line keeps saying it runs).
  const crossStream = createCrossStream(store, (shown, elapsedMs) => show(shown, () => store.state.status, elapsedMs));
  let generation = 0; // increases per requested computation: a late model answer older than the one shown is dropped
  let shownGeneration = 0;
  let timer = 0;

  // Shows `shown` (null: nothing), then says how long the parts took to draw it.
  function show(shown, statusOf, wasmMs) {
    const { settings } = store.state;
    const started = performance.now();
    const sizes = shown && shownSizes(shown);
    const fixed = shown && {
      layer: sizes.hasLayers ? Math.min(settings.layer, sizes.layers - 1) : settings.layer,
      head: settings.head < sizes.heads ? settings.head : 0,
    };
    store.set({
      shown, error: null, matrixError: null, ...(shown?.from === 'model' ? { explanations: new Map() } : {}),
      ...(fixed && (fixed.layer !== settings.layer || fixed.head !== settings.head) ? { settings: { ...settings, ...fixed } } : {}),
    });
    const drawMs = performance.now() - started;
    store.set({ timings: { wasmMs, drawMs }, status: statusOf(drawMs) });
    return drawMs;
  }

  function computeHere(state) {
    const matrices = state.source === 'matrices';
    let record;
    try {
      record = (matrices ? sources.matrices : sources.sentence).compute({ ...state.settings, matrixText: state.matrixText });
    } catch (error) {
      // Bad input keeps the last good picture and says what is wrong, inline.
      const message = errorText(error);
      store.set(matrices ? { matrixError: message } : { error: message });
      return;
    }
    const data = fromExplanation(record);
    show({ from: state.source, record, data, model: attentionData(data) }, (drawMs) => explanationStatus(store.state, record, drawMs), record.elapsedMs);
  }

  // Runs the model in its worker. Typing fast starts many runs; the source keeps
  // only the newest waiting (a replaced one answers null). An answer that arrives
  // after newer keys is still drawn unless a newer answer has been: while keys come
  // faster than the model runs, the picture follows the typing one run behind.
  async function computeWithModel(state, mine) {
    const { trained } = state;
    // Say so only when it takes long enough to notice (a small model answers within a frame).
    const busy = setTimeout(() => store.set({ status: `Running ${trained.name}…` }), 150);
    const requestedAt = performance.now();
    const { encoderDecoder } = trained.info;
    const { text } = state.settings;
    // An encoder-decoder's tokens appear as they are generated (translation-panel.js draws `translation`).
    if (encoderDecoder) {
      store.set({ translation: { text, tokens: [], done: false, elapsedMs: 0, maxTokens: null } });
      crossStream.start(trained, text);
    }
    const onToken = (event) => {
      if (mine !== generation) return;
      const { token, maxTokens, elapsedMs } = event;
      const { translation } = store.state;
      store.set({ translation: { ...translation, tokens: [...translation.tokens, token], maxTokens, elapsedMs } });
      crossStream.add(event);
    };
    let run;
    try {
      const sizes = encoderDecoder ? kindSizes(trained.info, state.settings.attentionKind) : trained.info;
      run = await sources.model.compute(state.settings, { encoderDecoder, onToken, attention: wantedAttention(state.settings, sizes) });
    } catch (error) {
      if (mine !== generation) return;
      if (encoderDecoder) store.set({ translation: { ...store.state.translation, done: true, failed: true } });
      store.set({ error: errorText(error) });
      if (error.modelLoaded === false) {
        modelLost();
      } else if (store.state.shown?.trained !== trained) {
        // A model just loaded whose first run failed (e.g. more tokens than it has positions):
        // the old picture belongs to another model, so show none rather than a wrong one.
        store.set({ shown: null, status: `${trained.name} is loaded; it could not run this text (see below).` });
      }
      return;
    } finally {
      clearTimeout(busy);
      if (mine === generation) crossStream.stop(); // the run (or the error) replaces the rows drawn so far
    }
    if (run === null || mine < shownGeneration || store.state.trained !== trained || !showsModel(store.state)) return;
    shownGeneration = mine;
    const arrivedAt = performance.now();
    if (encoderDecoder) {
      const { tokens, text: generatedText, elapsedMs } = run.generated;
      store.set({ translation: { text, tokens, generatedText, done: true, elapsedMs, maxTokens: store.state.translation?.maxTokens ?? null } });
    }
    startTally();
    const { data, held, model } = timed('data', () => {
      const runShownData = runShown(run, store.state.settings);
      return { ...runShownData, model: attentionData(runShownData.data) };
    });
    const { simdLevel, threads } = trained;
    const drawMs = show({ from: 'model', record: run, trained, data, held, model },
      (ms) => runStatus({ name: trained.name, run, simdLevel, threads, drawMs: ms }), run.elapsedMs);
    markDrawn(run, { requestedAt, arrivedAt, simdLevel, threads, drawMs, parts: endTally() });
  }

  function compute() {
    const state = store.state;
    if (!state.lens) return;
    generation += 1; // an answer still on its way from the model worker is stale now
    crossStream.stop(); // and so are the rows of a translation under way
    // An emptied box is a sentence not typed yet: say so in the page's words (the library's error
    // names its own function) and keep the last picture, as for any text that cannot run.
    if (state.source === 'sentence' && state.settings.text === '') {
      // A page opened on an empty text has no picture for its status line to describe (it said "Loading…").
      const status = state.shown ? {} : { status: 'Ready: nothing computed yet.' };
      store.set({ error: 'The sentence is empty: type a few words to see where each head looks.', ...status });
      return;
    }
    if (showsModel(state)) computeWithModel(state, generation);
    else computeHere(state);
  }

  function now() {
    clearTimeout(timer);
    compute();
  }

  // The worker lost its model (it crashed, or a failed load had to free it): random projections draw the
  // text now, and the error that says why stays (drawing clears errors).
  function modelLost() {
    const { error } = store.state;
    store.set({ trained: null, settings: { ...store.state.settings, model: '' } });
    now();
    store.set({ error });
  }

  // An encoder-decoder's translation is many decoder steps: it waits for a pause in the typing too.
  function soon() {
    clearTimeout(timer);
    if (showsModel(store.state) && !store.state.trained.info.encoderDecoder) compute();
    else timer = setTimeout(compute, 200);
  }

  return { now, soon, modelLost };
}

// A user-timing mark once a run's text is on screen: when it was asked for,
// when the worker took it up and answered, when it arrived and was drawn
// (all on this page's performance.now() clock), and where the worker's time
// went, and the page's (parts: the ms of the parts that time themselves, part-timing.js).
// tests/bench/typing.mjs measures keystroke to heatmap with it.
function markDrawn(run, { requestedAt, arrivedAt, simdLevel, threads, drawMs, parts }) {
  const { timing } = run;
  const local = (epochMs) => epochMs - performance.timeOrigin;
  performance.mark('attnlens:model-drawn', {
    detail: {
      text: run.text, n: run.n, simdLevel, threads,
      requestedAt, startedAt: local(timing.startedAt), postedAt: local(timing.postedAt), arrivedAt, drawnAt: performance.now(),
      runMs: timing.runMs, forwardMs: timing.forwardMs, predictionsMs: timing.predictionsMs, drawMs, parts,
      reusedPositions: run.reusedPositions ?? null, // the positions the model took from its last run (issue 24)
    },
  });
}
