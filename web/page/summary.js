// What the page says about the record it shows: the status line, the inline
// errors, the token strip, the head selector, and window.attnlens (the last
// result and its timings, for scripts and tests). Drawn from the store.
import { selectorSizes } from './compute.js';
import { fillSelect, showError } from './controls.js';
import { shownSizes } from './model/held-attention.js';
import { shownPredictions } from './model/predictions.js';
import { timed } from './part-timing.js';
import { renderTokenStrip } from './views/token-strip.js';

window.attnlens = { last: null, lens: null, timings: null };

// The shown record as plain data: its tokens and weights (a model's, with its ids and predictions: every
// layer, or when its run holds what the page draws only (model/held-attention.js), the layer and heads
// attentionLayers and attentionHeads name, pooled by attentionPool for the model view of a long text).
function lastOf({ shown, settings, predictions }) {
  if (!shown) return null;
  const { model } = shown;
  if (shown.from !== 'model') return { tokens: model.queryTokens, keyTokens: model.keyTokens, layers: 1, heads: model.heads, weights: model.weights, model: null };
  const run = shown.record;
  // What the views draw: the run's weights, or with the switch on its value-weighted attention.
  // An encoder-decoder's: the kind drawn (cross-attention: target tokens as rows, source tokens as keys) and what it generated.
  const encoderDecoder = run.encoderDecoder === true;
  return {
    tokens: model.queryTokens, keyTokens: model.keyTokens, layers: shownSizes(shown).layers, heads: run.heads, weights: model.weights,
    ...(run.attentionLayers ? { attentionLayers: run.attentionLayers, attentionHeads: run.attentionHeads, attentionPool: run.attentionPool ?? 1 } : {}),
    fetchedWithForward: run.fetchedWithForward ?? null,
    // Whether the worker ran the model again for the predictions shown (a decoder's come after its run), or null.
    predictedWithForward: run.predictionsPending && shownPredictions(shown, predictions) !== null ? predictions.forward ?? null : null,
    worker: { reusedPositions: run.reusedPositions, cacheBytes: run.cacheBytes, heapBytesInUse: run.heapBytesInUse },
    quantity: model.valueWeighted ? 'valueWeighted' : 'weights',
    model: shown.trained.info, layer: settings.layer, ids: run.ids, predictions: shownPredictions(shown, predictions),
    maskPredictions: run.maskPredictions ?? null,
    ...(encoderDecoder ? { attentionKind: settings.attentionKind, targetIds: run.targetIds, generated: run.generated, attentionKinds: run.attentionKinds ?? null } : {}),
  };
}

// The ids of the strip's tokens: an encoder-decoder's rows are the decoder's inputs unless its encoder is drawn.
function stripIds({ record }, settings) {
  return record.encoderDecoder && settings.attentionKind !== 'encoder' ? record.targetIds : record.ids;
}

export function createSummary({ ui, store }) {
  let before = store.state;
  store.subscribe((state, changed) => {
    const { shown, settings } = state;
    if (changed.has('lens')) window.attnlens.lens = state.lens;
    if (changed.has('status')) ui.status.textContent = state.status;
    if (changed.has('error')) showError(ui.error, state.error);
    if (changed.has('matrixError')) showError(ui.matrixError, state.matrixError);
    if (changed.has('timings')) window.attnlens.timings = state.timings;
    if (changed.has('shown')) {
      // The token strip: what the sentence or the model read (typed matrices have no tokens).
      const tokens = shown && shown.from !== 'matrices' ? shown.model.queryTokens : null;
      ui.tokens.hidden = tokens === null;
      if (tokens) timed('tokens', () => renderTokenStrip(ui.tokenStrip, tokens, { ids: shown.from === 'model' ? stripIds(shown, settings) : null }));
    }
    if (changed.has('shown') || changed.has('trained')) {
      // The head selector is refilled only when the number of heads changes, not for each record shown while typing.
      const heads = selectorSizes(state)?.heads;
      if (heads && ui.head.options.length !== heads) fillSelect(ui.head, Array.from({ length: heads }, (_, h) => h + 1), settings.head + 1);
      else if (heads) ui.head.value = String(settings.head + 1);
    } else if (settings.head !== before.settings.head) {
      ui.head.value = String(settings.head + 1);
    }
    if (changed.has('shown') || changed.has('predictions') || settings.layer !== before.settings.layer ||
      settings.attentionKind !== before.settings.attentionKind) {
      window.attnlens.last = lastOf(state);
    }
    before = state;
  });
}
