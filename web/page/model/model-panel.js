// The "open a model" controls: file and folder pickers, drag and drop onto
// the page, and "Load from URL". Each way ends in the model worker
// (client.load): the files' bytes, or for a URL the folder the library
// downloads (lens.loadModel({ from }), through its cache), with progress
// shown for reading or downloading and for converting the weights. The page
// is told through onStart / onLoaded / onError; the model lives in the worker.
import { TOKENIZER_KINDS } from '../../lib/model/hub/model-files.js';
import { modelSource } from '../../lib/model/hub/source.js';
import { errorText } from '../error-text.js';
import { fetchBuiltinModel } from './builtin-model.js';
import { HubFilesError, modelName, pickHubFiles } from './hub-files.js';
import { createReadyModels } from './ready-models.js';
import { createSavedModels } from './saved-models.js';
import { droppedFiles, readFileBytes, readFileText } from './read-files.js';

// WebAssembly memory is at most 2 GiB and the weights live there as float32:
// a bigger file cannot fit whatever its dtype, so say so before reading it.
const wasmMemoryLimit = 2 ** 31;

export function formatBytes(bytes) {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(0)} kB`;
  return `${bytes} bytes`;
}

function formatCount(count) {
  if (count >= 1e9) return `${(count / 1e9).toFixed(2)} B`;
  if (count >= 1e6) return `${(count / 1e6).toFixed(1)} M`;
  if (count >= 1e3) return `${(count / 1e3).toFixed(1)} K`;
  return String(count);
}

// By the config's model_type (info.modelType), which names the family better than the layout it runs on.
const familyNames = {
  gpt2: 'GPT-2', bert: 'BERT', llama: 'Llama', distilbert: 'DistilBERT', roberta: 'RoBERTa', 'xlm-roberta': 'XLM-RoBERTa',
  qwen2: 'Qwen2', mistral: 'Mistral', gpt_neox: 'GPT-NeoX', gpt_neo: 'GPT-Neo', opt: 'OPT', gemma: 'Gemma', phi: 'Phi', electra: 'ELECTRA',
  bart: 'BART', marian: 'Marian', t5: 'T5',
};
const tokenizerNames = {
  'byte-level-bpe': 'byte-level BPE', wordpiece: 'WordPiece', 'word-level': 'word-level', 'sentencepiece-bpe': 'SentencePiece BPE', unigram: 'Unigram',
  marian: 'Marian (source and target SentencePiece)',
};

/** One line about a loaded model, e.g. "sort-gpt2: GPT-2, 3 layers × 3 heads, d_model 48, …". */
export function describeModel({ info, name }) {
  const heads = info.kvHeads && info.kvHeads !== info.heads ? `${info.heads} heads (${info.kvHeads} key/value heads)` : `${info.heads} heads`;
  const tokenizer = info.tokenizer ? `${tokenizerNames[info.tokenizer] ?? info.tokenizer} tokenizer` : 'no tokenizer (type token ids)';
  const layers = info.encoderDecoder ? `${info.layers} encoder + ${info.decoderLayers} decoder layers` : `${info.layers} layers`;
  return `${name}: ${familyNames[info.modelType] ?? info.modelType ?? info.architecture}, ${layers} × ${heads}, `
    + `d_model ${info.dModel}, ${formatCount(info.parameters)} parameters (${info.dtype}), ${tokenizer}, `
    + `${info.architecture === 'bert' ? 'no language-model head' : 'language-model head'}; loaded in ${Math.round(info.loadMs)} ms.`;
}

// The library's advice after a failed download (README, "Downloads") tells a program how to pass the
// files it downloaded; on this page the same files open with "Open a model…" or by dropping them.
// The page chooses by the failure's kind (error.reason), whatever its words.
const openHere = 'open them here with “Open a model…” (or drop them on this page)';
const pageAdvice = {
  'needs-login': ({ url, status }) => `${url} needs a login (HTTP ${status}): gated and private models cannot be downloaded `
    + `without one. Accept the model's terms on the hub, download its files, and ${openHere}.`,
  unreachable: ({ url }) => `Could not download ${url}: the request failed before any answer came back. Either this computer `
    + 'is offline or cannot reach the server, or the server does not let other web pages read its files (CORS). Check the '
    + `address and the connection; for a server without CORS, download the files and ${openHere}.`,
};

const loadFailureText = (error) => pageAdvice[error.reason]?.(error) ?? errorText(error);

async function readTokenizer(picked) {
  if (!picked) return null;
  const binary = TOKENIZER_KINDS.find((entry) => entry.kind === picked.kind)?.binary ?? [];
  const texts = {};
  for (const [key, file] of Object.entries(picked.files)) {
    texts[key] = binary.includes(key) ? await readFileBytes(file) : await readFileText(file);
  }
  return { kind: picked.kind, source: picked.kind === 'tokenizer.json' ? texts.json : texts };
}

function configObject(text) {
  try {
    return JSON.parse(text);
  } catch {
    return {}; // the library reports a broken config.json precisely
  }
}

/**
 * @param {object} ui  elements: openModel, openFolder, filesInput, folderInput, urlForm, urlInput, cancel,
 *                     progress, progressBar, progressText, info, saved, savedList, readyList, dropTarget,
 *                     builtinButtons (one per built-in model, its name in data-builtin), toggle (folds the
 *                     panel away on narrow screens once a model is loaded, styles.css)
 * @param {object} options { client, onStart(), onLoaded({ info, name, source, url, simd }), onError(message, error),
 *                     onBuiltin(name) (a built-in model's button was pressed) }
 */
export function createModelPanel(ui, { client, onStart, onLoaded, onError, onBuiltin }) {
  let loading = null; // the load under way: { controller (its AbortController), replaceable }

  // The folder picker exists where the browser has one (Chromium, Firefox, Safari).
  if ('webkitdirectory' in HTMLInputElement.prototype) ui.openFolder.hidden = false;

  function showProgress(text, done, total) {
    ui.progress.hidden = false;
    ui.progressText.textContent = text;
    if (total > 0) {
      ui.progressBar.max = total;
      ui.progressBar.value = Math.min(done, total);
    } else {
      ui.progressBar.removeAttribute('value'); // indeterminate
    }
  }

  // A control disabled while a model loads drops the focus to the page (a keyboard user's place is lost):
  // the one that had it takes it back once the load is over, without scrolling (an error may be in view).
  let focusedBeforeLoad = null;
  function setBusy(busy) {
    if (busy) focusedBeforeLoad ??= document.activeElement; // a load that replaces another keeps the first one
    for (const control of [ui.openModel, ui.openFolder, ui.urlInput, ...ui.builtinButtons]) control.disabled = busy;
    ui.urlForm.querySelector('[type="submit"]').disabled = busy;
    ui.cancel.hidden = !busy;
    ready.setBusy(busy);
    if (busy) return;
    ui.progress.hidden = true;
    if (document.activeElement === document.body && focusedBeforeLoad?.isConnected) focusedBeforeLoad.focus({ preventScroll: true });
    focusedBeforeLoad = null;
  }

  // `gather(signal)` reads the files, { config, tokenizer, weights, folder, source }, or names the
  // folder to download, { from, url, source }.
  // Resolves to 'loaded', 'failed' or 'superseded'. A replaceable load (the built-in
  // model opening by itself) gives way to one the user asks for.
  async function load(gather, { replaceable = false } = {}) {
    if (loading && !loading.replaceable) {
      onError('A model is still loading: wait for it to finish, or press Cancel.');
      return 'failed';
    }
    loading?.controller.abort();
    const current = { controller: new AbortController(), replaceable };
    loading = current;
    const { signal } = current.controller;
    setBusy(true);
    onStart();
    try {
      const files = await gather(signal);
      if (signal.aborted) throw new DOMException('cancelled', 'AbortError');
      if (!files.from) showProgress('Converting the weights to float32 for the SIMD kernels…', 0, 0);
      const request = files.from
        ? { from: files.from } : { config: files.config, weights: files.weights, tokenizer: files.tokenizer?.source ?? null };
      const loaded = await client.load(request, (progress) => {
        if (loading === current) showLoadProgress(progress);
      }, signal);
      // The worker loads one model after another: a newer load's model replaces this one, and it reports.
      if (loading !== current) return 'superseded';
      const name = modelName({ folder: files.folder, url: files.url, config: files.config ? configObject(files.config) : {} });
      if (files.from) saved.remember(files.url);
      ui.info.textContent = describeModel({ info: loaded.info, name });
      onLoaded({ ...loaded, name, source: files.source, url: files.url ?? null, tokenizerFiles: files.tokenizer?.kind ?? null });
      return 'loaded';
    } catch (error) {
      if (loading !== current) return 'superseded';
      onError(error.name === 'AbortError' ? 'Loading was cancelled.' : `The model could not be loaded. ${loadFailureText(error)}`, error);
      return 'failed';
    } finally {
      if (loading === current) {
        loading = null;
        setBusy(false);
      }
    }
  }

  function loadFiles(fileList) {
    return load(async (signal) => {
      const picked = pickHubFiles(fileList);
      const total = picked.weights.reduce((sum, file) => sum + file.size, 0);
      if (total > wasmMemoryLimit) {
        throw new HubFilesError(`The weights are ${formatBytes(total)}; attnlens computes in float32 inside at most `
          + '2 GiB of WebAssembly memory, so this model does not fit. Models up to about 1.8 GB of F32 weights '
          + '(0.9 GB of F16 or BF16) do.');
      }
      const config = await readFileText(picked.config);
      const tokenizer = await readTokenizer(picked.tokenizer);
      const weights = [];
      let before = 0;
      for (const file of picked.weights) {
        if (signal.aborted) break;
        weights.push(await readFileBytes(file, (bytes) => {
          showProgress(`Reading ${file.name}: ${formatBytes(before + bytes)} of ${formatBytes(total)}`, before + bytes, total);
        }));
        before += file.size;
      }
      return { config, tokenizer, weights, folder: picked.folder, source: 'files' };
    });
  }

  // The worker's progress: downloading (the library's 'download' phase), then converting.
  function showLoadProgress({ phase, done, total, file, index, count, loadedBytes, totalBytes, cached }) {
    if (phase === 'download') {
      const shard = count > 1 ? ` (file ${index + 1} of ${count})` : '';
      const verb = cached ? 'Reading the saved copy of' : 'Downloading';
      showProgress(`${verb} ${file}${shard}: ${formatBytes(loadedBytes)} of ${formatBytes(totalBytes)}`, loadedBytes, totalBytes);
    } else if (phase === 'weights') {
      showProgress(`Converting the weights: ${done} of ${total} tensors`, done, total);
    }
  }

  function loadUrl(text) {
    return load(async () => {
      const { url } = modelSource(text, { where: 'Load from URL' });
      ui.urlInput.value = url;
      showProgress(`Downloading ${url}config.json…`, 0, 0);
      return { from: url, url, source: 'url' };
    });
  }

  // A model shipped with the page (no network: its files are part of the page).
  function loadBuiltin(name) {
    return load(async (signal) => {
      showProgress(`Opening the built-in model ${name}…`, 0, 0);
      return fetchBuiltinModel(name, signal);
    }, { replaceable: true });
  }

  // Models Load from URL downloaded before: open again from the cache, or remove.
  // The ready models load by hub name, as Load from URL would, and show which are saved.
  const ready = createReadyModels(ui, { open: (name) => loadUrl(name), formatBytes, memoryLimit: wasmMemoryLimit });
  const saved = createSavedModels(ui, { open: (url) => loadUrl(url), formatBytes, onError, onList: ready.setSaved });
  saved.refresh();

  for (const button of ui.builtinButtons) button.addEventListener('click', () => onBuiltin(button.dataset.builtin));
  ui.toggle.addEventListener('click', () => ui.toggle.setAttribute('aria-expanded', String(ui.toggle.getAttribute('aria-expanded') !== 'true')));
  ui.openModel.addEventListener('click', () => ui.filesInput.click());
  ui.openFolder.addEventListener('click', () => ui.folderInput.click());
  for (const input of [ui.filesInput, ui.folderInput]) {
    input.addEventListener('change', () => {
      const files = Array.from(input.files ?? []);
      input.value = ''; // choosing the same files again must fire "change" again
      if (files.length) loadFiles(files);
    });
  }
  ui.urlForm.addEventListener('submit', (event) => {
    event.preventDefault();
    loadUrl(ui.urlInput.value);
  });
  ui.cancel.addEventListener('click', () => loading?.controller.abort());

  // Drag and drop: anywhere on the page, files or a whole folder.
  const hasFiles = (event) => Array.from(event.dataTransfer?.types ?? []).includes('Files');
  ui.dropTarget.addEventListener('dragover', (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
    ui.dropTarget.classList.add('dropping');
  });
  ui.dropTarget.addEventListener('dragleave', (event) => {
    if (event.relatedTarget === null) ui.dropTarget.classList.remove('dropping');
  });
  ui.dropTarget.addEventListener('drop', async (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    ui.dropTarget.classList.remove('dropping');
    let files;
    try {
      files = await droppedFiles(event.dataTransfer);
    } catch (error) {
      onError(`The dropped files could not be read: ${errorText(error)}`, error);
      return;
    }
    if (files.length) loadFiles(files);
  });

  return { loadFiles, loadUrl, loadBuiltin };
}
