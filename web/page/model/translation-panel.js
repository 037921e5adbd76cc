// An encoder-decoder on the page (issue 23): the sentence box becomes the
// source, a Translate button and the tokens as the worker generates them
// (store.translation, set by compute.js), with their count and time, a Stop
// button while it runs, and the choice of which attention the views draw
// (settings.attentionKind: the encoder's, the decoder's, or cross-attention).
// Everything the model wrote is set as text, never as HTML.

import { attentionKindTitles } from './kinds-model-view.js';

// Cross-attention first: the page's default.
const kindNames = { cross: attentionKindTitles.cross, encoder: attentionKindTitles.encoder, decoder: attentionKindTitles.decoder };

/**
 * @param ui { sentenceLabel, translation, translationText, translationStatus, translate, stopTranslation, attentionKind, attentionKindControl }
 * @param store the page's store (trained, shown, translation, settings.attentionKind)
 * @param computing compute.js (Translate computes now)
 * @param source the model's source (model-source.js: stop())
 */
export function createTranslationPanel({ ui, store, computing, source }) {
  for (const [value, name] of Object.entries(kindNames)) ui.attentionKind.append(new Option(name, value));
  const plainLabel = ui.sentenceLabel.textContent;

  function showModel({ trained, settings }) {
    const on = settings.engine === 'model' && trained?.info.encoderDecoder === true;
    ui.translation.hidden = !on;
    ui.sentenceLabel.textContent = on ? 'Source' : plainLabel;
  }

  function showTranslation({ translation }) {
    const running = translation !== null && !translation.done;
    // Stopping needs the shared flag the worker reads per token, which only a cross-origin isolated page has.
    ui.stopTranslation.hidden = !running || !globalThis.crossOriginIsolated;
    if (translation === null) return;
    ui.translationText.textContent = translation.generatedText ?? translation.tokens.join(' ');
    const count = `${translation.tokens.length} token${translation.tokens.length === 1 ? '' : 's'}`;
    const of = running && translation.maxTokens ? ` of at most ${translation.maxTokens}` : '';
    const state = translation.failed ? 'stopped' : running ? 'translating…' : 'translated';
    ui.translationStatus.textContent = `${state} · ${count}${of} · ${translation.elapsedMs.toFixed(1)} ms`;
  }

  let before = store.state;
  store.subscribe((state, changed) => {
    if (changed.has('trained') || state.settings.engine !== before.settings.engine) showModel(state);
    if (changed.has('translation')) showTranslation(state);
    const shown = state.shown;
    ui.attentionKindControl.hidden = !(shown?.from === 'model' && shown.record.encoderDecoder);
    if (state.settings.attentionKind !== ui.attentionKind.value) ui.attentionKind.value = state.settings.attentionKind;
    before = state;
  });

  ui.translate.addEventListener('click', () => computing.now());
  ui.stopTranslation.addEventListener('click', () => source.stop());
  ui.attentionKind.addEventListener('change', () => store.setSettings({ attentionKind: ui.attentionKind.value }));
  showModel(store.state);
}
