// The Analysis tab: what each head of the trained model does on the shown
// text (model.analyze in the model worker: the head detectors, drawn by
// attnlens/views/analysis' headScores, and attention rollout, drawn by the
// heatmap, one layer at a time), and induction on repeated random tokens
// (model.inductionScores) on request. It asks the worker only while the tab
// is shown, after the run it describes has been drawn, so the keystroke-to-
// heatmap path never waits for it (model-client.js runs a waiting run first).
// The store holds what it measured (`analysis`, `induction`, `analysisError`).
// The logit lens (attnlens/views/analysis' logitLens) is asked for only while
// its section is open, a request of its own: it costs several forward passes.
import { headScores, logitLens } from '../views/analysis.js';
import { heatmap } from '../views/index.js';
import { errorText } from './error-text.js';
import { seq2seqInput } from './model/model-source.js';

const inductionSeed = 1;
const lensTopK = 5;
// The lens grid's most columns: a longer text shows its last positions (a
// wider grid is no longer read at a glance, and each column costs an LM-head
// product per layer, so the section asks the worker for these only).
const lensColumns = 32;
// model.inductionScores' default length, or half the model's positions when fewer.
const inductionLength = (info) => Math.min(50, Math.floor(info.maxPositions / 2));

/** The scores the tab shows: the text's five detectors, and induction on repeats once measured. */
export function shownScores({ analysis, induction }) {
  const { layers, heads, scores } = analysis.result;
  return { layers, heads, scores: induction ? { ...scores, inductionOnRepeats: induction.scores } : scores };
}

/** The rollout as the views' data: one "head" per layer, its rows summing to 1. */
export const rolloutData = ({ tokens, layers, rollout }) => ({ tokens, weights: rollout, layers, heads: 1 });

/**
 * @param ui the page's elements (readout, tooltip, engineModel)
 * @param store the page's store (settings.view / layer, shown, trained, analysis, induction, analysisError)
 * @param client the model worker's client (analyze, inductionScores)
 */
export function createAnalysisPanel({ ui, store, client }) {
  const $ = (id) => document.getElementById(id);
  const parts = {
    needsModel: $('analysis-needs-model'), body: $('analysis-body'), status: $('analysis-status'), error: $('analysis-error'),
    scores: $('head-scores'), rollout: $('rollout'), measure: $('measure-induction'), length: $('induction-length'),
    lensSection: $('logit-lens-section'), lens: $('logit-lens'), lensStatus: $('logit-lens-status'),
  };
  let scoresView = null;
  let rolloutView = null;
  let lensView = null;
  let lensAsked = null; // { trained, text } of the logit lens asked for last
  let asked = null; // { trained, text } of the analysis asked for last

  const shownRun = ({ shown }) => (shown?.from === 'model' ? shown : null);
  const current = (state, measured) => measured !== null && measured.trained === state.trained;
  // What an analysis is of: the text, and an encoder-decoder's kind (its encoder's or its decoder's heads).
  const keyOf = (record) => (record.encoderDecoder ? `${record.text}\n${store.state.settings.attentionKind === 'encoder'}` : record.text);

  async function analyze({ trained, record }) {
    asked = { trained, text: keyOf(record) };
    try {
      const result = await client.analyze(record.text, seq2seqInput(record, store.state.settings.attentionKind));
      if (result === null || store.state.trained !== trained) return;
      store.set({ analysis: { trained, text: asked.text, result }, analysisError: null });
    } catch (error) {
      // Not asked again for the same text and model: the error stays until either changes.
      if (store.state.trained === trained) store.set({ analysisError: `The analysis could not run on this text: ${errorText(error)}` });
    }
  }

  async function measureInduction() {
    const { trained } = store.state;
    if (!trained) return;
    const length = inductionLength(trained.info);
    parts.measure.disabled = true;
    parts.status.textContent = `Running ${trained.name} on ${length} random tokens, twice…`;
    try {
      const scores = await client.inductionScores(length, inductionSeed);
      if (store.state.trained === trained) store.set({ induction: { trained, length, seed: inductionSeed, scores }, analysisError: null });
    } catch (error) {
      if (store.state.trained === trained) store.set({ analysisError: `Induction could not be measured: ${errorText(error)}` });
    } finally {
      parts.measure.disabled = false;
    }
  }

  // The lens of the shown text, when its section is open and it is not the one drawn or asked for.
  async function showLens(state) {
    const run = shownRun(state);
    if (!parts.lensSection.open || state.settings.view !== 'analysis' || !run) return;
    if (lensAsked?.trained === run.trained && lensAsked.text === run.record.text) return;
    const asking = { trained: run.trained, text: run.record.text };
    lensAsked = asking;
    parts.lensStatus.textContent = `Running ${run.trained.name} once per layer's prediction…`;
    try {
      const lens = await client.logitLens(asking.text, lensTopK, lensColumns, seq2seqInput(run.record));
      if (lens === null || lensAsked !== asking) return;
      const options = { tokenLabel: (id) => lens.labels[id] ?? `#${id}` };
      if (lensView) lensView.update(lens, options);
      else lensView = logitLens.mount(parts.lens, lens, options);
      const shown = lens.logitLens.positions.length;
      const columns = shown === lens.n ? `${lens.n} positions` : `the last ${shown} of ${lens.n} positions`;
      parts.lensStatus.textContent = `${lens.layers} layers × ${columns}; the top ${lensTopK} next tokens of each cell on hover or focus.`;
      window.attnlens.logitLens = lens;
    } catch (error) {
      if (lensAsked === asking) parts.lensStatus.textContent = `The logit lens could not run on this text: ${errorText(error)}`;
    }
  }

  function destroyViews() {
    scoresView?.destroy();
    rolloutView?.destroy();
    lensView?.destroy();
    scoresView = null;
    rolloutView = null;
    lensView = null;
    lensAsked = null;
  }

  function render(state) {
    const run = shownRun(state);
    parts.needsModel.hidden = run !== null;
    parts.body.hidden = run === null;
    parts.error.hidden = !state.analysisError;
    parts.error.textContent = state.analysisError ?? '';
    if (!run) {
      destroyViews();
      return;
    }
    parts.length.textContent = String(inductionLength(run.trained.info));
    const { analysis } = state;
    if (!current(state, analysis)) {
      destroyViews();
      parts.status.textContent = `Measuring every head of ${run.trained.name}…`;
      return;
    }
    const { result } = analysis;
    const fresh = analysis.text === keyOf(run.record) ? '' : ' (the sentence shown above is newer: measuring it…)';
    parts.status.textContent = `${result.layers} ${result.kind ? `${result.kind} ` : ''}layers × ${result.heads} heads of ${run.trained.name} on ${result.n} tokens${fresh}.`;
    const scores = shownScores({ analysis, induction: current(state, state.induction) ? state.induction : null });
    if (scoresView) scoresView.update(scores);
    else scoresView = headScores.mount(parts.scores, scores);
    const layer = Math.min(state.settings.layer, result.layers - 1);
    const options = { layer, head: 0, title: `Rollout after layer ${layer + 1} of ${result.layers}`, readout: ui.readout, tooltip: ui.tooltip };
    if (rolloutView) rolloutView.update(rolloutView.data === result ? undefined : rolloutData(result), options);
    else rolloutView = heatmap.mount(parts.rollout, rolloutData(result), options);
    rolloutView.data = result;
    window.attnlens.analysis = { ...result, induction: scores.scores.inductionOnRepeats ?? null };
  }

  let before = store.state;
  store.subscribe((state, changed) => {
    const previous = before;
    before = state;
    if (changed.has('trained')) store.set({ analysis: null, induction: null, analysisError: null });
    const showing = state.settings.view === 'analysis';
    const run = shownRun(state);
    if (showing && run && (asked?.trained !== run.trained || asked.text !== keyOf(run.record))) analyze(run);
    const redraw = ['shown', 'analysis', 'induction', 'analysisError'].some((key) => changed.has(key))
      || state.settings.view !== previous.settings.view || state.settings.layer !== previous.settings.layer;
    if (showing && redraw) render(state);
    else if (!showing && previous.settings.view === 'analysis') destroyViews();
    if (showing && (changed.has('shown') || changed.has('trained') || previous.settings.view !== 'analysis')) showLens(state);
  });

  parts.lensSection.addEventListener('toggle', () => showLens(store.state));

  parts.measure.addEventListener('click', measureInduction);
  $('analysis-use-model').addEventListener('click', () => {
    ui.engineModel.checked = true;
    ui.engineModel.dispatchEvent(new Event('change'));
    // The button hides with its note: the focus goes to the tab it belongs to, not to the page.
    document.querySelector('[data-view="analysis"]').focus();
  });

  return {
    /** The scores as CSV (the headScores view's, in its table's order), or null when none is shown. */
    scoresCsv: () => scoresView?.toCSV() ?? null,
    /** PNG/SVG of the rollout heatmap, or null. */
    chartExports: () => (rolloutView ? { png: () => rolloutView.toPNG(), svg: () => rolloutView.toSVG() } : null),
  };
}
