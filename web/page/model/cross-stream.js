// Cross-attention drawn while a translation is generated (issue 23). Each
// token's message from the worker (model.generate's onToken) carries the
// cross-attention row of the decoder step that chose it ([layer][head][source]);
// the rows so far are shown as a partial run whose cross-attention has one
// target row per step, labelled with the decoder's input at that step (the
// start token, then each generated token): the same rows, in the same order,
// as the model.run that ends the translation.
//
// A token costs one row kept (no work that grows with the tokens before it);
// the picture is redrawn at most once per animation frame, however fast the
// tokens come, so typing and scrolling stay responsive while it decodes. Only
// the views of one kind of attention are fed (the encoder's and the decoder's
// self-attention, the three-grid model view and step by step wait for the run).
import { attentionData, markLibraryData } from '../../views/attention-data.js';
import { fromRun } from '../../views/records.js';

const streamedViews = new Set(['heatmap', 'lines', 'average', 'multiples']);

/**
 * @param store the page's store (settings.view, settings.attentionKind)
 * @param show puts a partial run in the store as compute.js shows a run: show({ from, record, trained, data, model }, elapsedMs)
 */
export function createCrossStream(store, show) {
  let stream = null; // the translation under way: { trained, text, rows, rowIds, rowTokens, source, frame }

  function stop() {
    if (stream?.frame) cancelAnimationFrame(stream.frame);
    stream = null;
  }

  /** A new translation of `text` by `trained`: the rows of an older one are dropped. */
  function start(trained, text) {
    stop();
    stream = { trained, text, rows: [], rowIds: [trained.info.decoderStartId], rowTokens: [], source: null, frame: 0 };
  }

  /** One token's message (model-worker.js translate): its row is kept, and a redraw asked for the next frame. */
  function add({ id, token, index, crossAttention, elapsedMs, sourceIds, sourceTokens, startToken }) {
    if (!stream || !crossAttention) return;
    if (index === 0) {
      stream.source = { ids: sourceIds, tokens: sourceTokens };
      stream.rowTokens.push(startToken);
    }
    if (!stream.source || index !== stream.rows.length) return; // a message of a stopped translation
    stream.rows.push(crossAttention);
    // This token is the decoder's input of the next row.
    stream.rowIds.push(id);
    stream.rowTokens.push(token);
    stream.elapsedMs = elapsedMs;
    stream.frame ||= requestAnimationFrame(draw);
  }

  function draw() {
    stream.frame = 0;
    const { settings } = store.state;
    if (settings.attentionKind !== 'cross' || !streamedViews.has(settings.view)) return;
    const { trained, rows, source } = stream;
    const m = rows.length, n = source.ids.length, blocks = rows[0].length / n;
    // [layer][head][target row][source], as model.run's crossAttention.
    const crossAttention = new Float32Array(blocks * m * n);
    rows.forEach((row, t) => {
      for (let block = 0; block < blocks; block += 1) crossAttention.set(row.subarray(block * n, (block + 1) * n), (block * m + t) * n);
    });
    const record = {
      encoderDecoder: true, streaming: true, text: stream.text, ids: source.ids, tokens: source.tokens, n,
      targetIds: stream.rowIds.slice(0, m), targetTokens: stream.rowTokens.slice(0, m), m,
      decoderLayers: trained.info.decoderLayers, layers: trained.info.layers, heads: trained.info.heads, causal: false,
      crossAttention, predictions: null, maskPredictions: null, valueWeighted: null,
    };
    // The worker's generate checked these weights (as compute.js runData marks a run's).
    const data = markLibraryData(fromRun(record, { kind: 'cross' }));
    show({ from: 'model', record, trained, data, model: attentionData(data) }, stream.elapsedMs);
  }

  return { start, add, stop };
}
