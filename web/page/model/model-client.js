// The page's side of the model worker: promises over postMessage.
//
// The worker is started on first use, so a page that never opens a model
// never downloads it. Weights go to the worker as transferred ArrayBuffers
// (moved, not copied). Runs and analyses are coalesced: while the worker is
// busy, only the newest text of each waits, so fast typing never queues a
// backlog of forward passes; a waiting run goes before a waiting analysis,
// so the analysis tab delays the heatmap by at most one analysis.
//
// The import below is a Vite worker import. The static site gets a separate
// worker file; the one-file offline page (vite.config.js, mode 'offline')
// rewrites it to `?worker&inline`, a worker built from a Blob, which
// Chromium allows from file:// only for classic (not module) workers, hence
// the 'iife' worker format in vite.config.js.
import ModelWorker from './model-worker.js?worker';

export class ModelClient {
  constructor() {
    this.worker = null;
    this.nextId = 1;
    this.calls = new Map(); // id -> { resolve, reject, onProgress }
    // Per kind of coalesced request ('run', 'predictions', 'analyze', 'logitLens', ...): the newest one waiting, { payload, resolve, reject }.
    // A waiting run goes first: heads fetched for an older text would be dropped anyway.
    // Predictions come next: a run's are asked for once its attention is drawn.
    this.pending = { run: null, predictions: null, weights: null, translationWeights: null, translate: null, analyze: null, logitLens: null };
    this.running = false;
    this.stopFlag = null; // the running translation's shared stop flag (model-worker.js translate)
  }

  start() {
    if (this.worker) return this.worker;
    this.worker = new ModelWorker({ name: 'attnlens model' });
    this.worker.addEventListener('message', ({ data }) => this.receive(data));
    this.worker.addEventListener('error', (event) => {
      event.preventDefault?.();
      // The browser words it "Uncaught RangeError: ...": the sentence after the kind is what a person reads.
      const reason = event.message?.replace(/^Uncaught\s+/, '').replace(/^\w*Error:\s*/, '');
      const error = new Error(`The model worker stopped${reason ? `: ${reason}` : ''}. Open the model again.`);
      error.modelLoaded = false;
      this.fail(error);
    });
    return this.worker;
  }

  receive({ id, progress, ok, value, error }) {
    const call = this.calls.get(id);
    if (!call) return;
    if (progress) {
      call.onProgress?.(progress);
      return;
    }
    this.calls.delete(id);
    if (ok) call.resolve(value);
    else call.reject(rebuildError(error));
  }

  // A crashed worker (e.g. WebAssembly ran out of memory) loses its model:
  // every waiting call fails, and the next call starts a fresh worker.
  fail(error) {
    this.worker?.terminate();
    this.worker = null;
    for (const call of this.calls.values()) call.reject(error);
    this.calls.clear();
  }

  call(type, payload, { transfer = [], onProgress, signal } = {}) {
    const worker = this.start();
    const id = this.nextId;
    this.nextId += 1;
    signal?.addEventListener('abort', () => worker.postMessage({ cancel: id }), { once: true });
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject, onProgress });
      worker.postMessage({ id, type, payload }, transfer);
    });
  }

  /**
   * @param {{ from: string } | { config: string, weights: ArrayBuffer[], tokenizer?: object }} files
   *   a folder URL for the library to download (through its cache), or the files' bytes
   * @param {(progress: { phase, done, total } | { phase: 'download', file, index, count, loadedBytes, totalBytes }) => void} onProgress
   * @param {AbortSignal} [signal] cancels a download
   * @returns {Promise<{ info, simd, version }>}
   */
  load(files, onProgress, signal) {
    return this.call('load', files, { transfer: files.weights ?? [], onProgress, signal });
  }

  /**
   * Resolves to the run, or to null when a newer run replaced this one before it started.
   * `valueWeighted`: the attention it carries is value-weighted (an encoder-decoder's: model.analyze's, besides its weights).
   * `attention`: the weights it carries, 'all' or { layer, heads } (held-attention.js).
   */
  run(text, { valueWeighted = false, attention = 'all' } = {}) {
    return this.latest('run', { text, valueWeighted, attention });
  }

  /**
   * The next-token predictions of the last run of `text` (a run answered `predictionsPending`): resolves to
   * { text, predictions, predictionsMs, forward } (forward: whether the worker ran the model again for them), with
   * predictions null when the worker ran another text since, or to null when predictions for a newer text were
   * asked for before these were computed.
   */
  predictions(text) {
    return this.latest('predictions', { text });
  }

  /**
   * More heads ({ layers, heads }: the layers' every head listed) of the last run of `text` (model-worker.js
   * weights; `valueWeighted`: theirs value-weighted): resolves to { text, attention, attentionLayers,
   * attentionHeads, attentionPool, attentionQuantity, forward }, or to null when newer heads were asked for before these were fetched (never with
   * `coalesce: false`).
   */
  weights(text, { layers, heads, pool = 1, valueWeighted = false }, { coalesce = true } = {}) {
    const asked = { text, layers, heads, pool, valueWeighted };
    return coalesce ? this.latest('weights', asked) : this.call('weights', asked);
  }

  /**
   * An encoder-decoder's translation of the text (model-worker.js translate): resolves to its run with all three
   * kinds of attention and what it generated, or to null when a newer translation replaced it. `onToken` sees
   * each token as the worker chooses it ({ token, index, maxTokens, elapsedMs }). A newer text stops the
   * running translation where the page is cross-origin isolated (a shared flag the worker reads per token).
   */
  translate(text, { maxTokens = 32, onToken, valueWeighted = false, attention = 'all' } = {}) {
    this.stopTranslation();
    return this.latest('translate', { text, maxTokens, valueWeighted, attention }, onToken);
  }

  /**
   * More of a translation's attention ({ kinds, layers?, heads, pool }: each kind's layers, every one when absent)
   * of its run (`run`: { text, ids, targetIds }; model-worker.js translationWeights): resolves to { text,
   * attention, decoderAttention, crossAttention, attentionKinds, attentionLayers, attentionHeads, attentionPool,
   * forward }, or to null when newer heads were asked for first (never with `coalesce: false`).
   */
  translationWeights(run, { kinds, layers, heads, pool = 1 }, { coalesce = true } = {}) {
    const asked = { ...run, kinds, layers, heads, pool };
    return coalesce ? this.latest('translationWeights', asked) : this.call('translationWeights', asked);
  }

  /** Stops the translation under way (it fails with an AbortError); one waiting to start is not affected. */
  stopTranslation() {
    if (this.stopFlag) Atomics.store(this.stopFlag, 0, 1);
  }

  /**
   * Resolves to model.analyze of the text (scores, rollout), or to null when a newer analysis replaced it.
   * `seq2seq`: an encoder-decoder's run's { ids, targetIds, kind } (model-source.js seq2seqInput), else {}.
   */
  analyze(text, seq2seq = {}) {
    return this.latest('analyze', { text, ...seq2seq });
  }

  /**
   * Resolves to the logit lens of the text's last `columns` positions ({ tokens, n, layers, logitLens: { ids, probs,
   * positions }, labels: { id: text } }), or to null when a newer one replaced it.
   */
  logitLens(text, topK, columns, seq2seq = {}) {
    return this.latest('logitLens', { text, topK, columns, ...seq2seq });
  }

  latest(type, payload, onProgress) {
    return new Promise((resolve, reject) => {
      this.pending[type]?.resolve(null);
      this.pending[type] = { payload, resolve, reject, onProgress };
      this.drain();
    });
  }

  async drain() {
    const type = Object.keys(this.pending).find((kind) => this.pending[kind] !== null);
    if (this.running || !type) return;
    const { payload, resolve, reject, onProgress } = this.pending[type];
    this.pending[type] = null;
    this.running = true;
    const stop = type === 'translate' && globalThis.crossOriginIsolated ? new Int32Array(new SharedArrayBuffer(4)) : null;
    this.stopFlag = stop;
    try {
      resolve(await this.call(type, stop ? { ...payload, stop } : payload, { onProgress }));
    } catch (error) {
      reject(error);
    } finally {
      this.running = false;
      this.stopFlag = null;
      this.drain();
    }
  }

  explain(text, layer, head, seq2seq = {}) {
    return this.call('explain', { text, layer, head, ...seq2seq });
  }

  /** model.inductionScores: Float32Array(layers × heads). */
  inductionScores(length, seed) {
    return this.call('inductionScores', { length, seed });
  }
}

// Errors cross the worker boundary as { name, message }: keep the kind
// (RangeError, TypeError) so messages read as the library wrote them.
// `modelLoaded` says whether the worker still holds a model after the failure; a failed
// download keeps the library's reason, status and url.
function rebuildError({ name, message, modelLoaded, reason, status, url }) {
  const kinds = { RangeError, TypeError, SyntaxError };
  const error = new (kinds[name] ?? Error)(message);
  if (!kinds[name]) error.name = name;
  Object.assign(error, { modelLoaded }, reason === undefined ? {} : { reason, status, url });
  return error;
}
