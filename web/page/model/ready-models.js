// "Ready models": a short list of hub models that fit in a tab, beside the
// URL box. Choosing one is "Load from URL" with its hub name (the same
// download, progress, Cancel, errors and cache); a model saved in this
// browser says that it opens without a download. The list shows only the
// model_types the library reads, taken from its family list, so a family the
// library gains appears here without a second list to keep up to date.
import { FAMILIES } from '../../lib/model/families/index.js';

// Download sizes: the hub's file listing of each repository's weights
// (model.safetensors unless said otherwise), late 2026, rounded to the MB;
// approximate, for choosing, not checking: the download reports exact sizes.
// dtype is the stored one (config.json's torch_dtype), which sets what the
// weights take in WebAssembly memory.
export const READY_MODELS = Object.freeze([
  { repo: 'openai-community/gpt2', name: 'GPT-2', modelType: 'gpt2', bytes: 548e6, dtype: 'F32',
    shows: '12 layers × 12 heads, left to right: previous-token, first-token and induction heads' },
  { repo: 'distilbert/distilgpt2', name: 'DistilGPT-2', modelType: 'gpt2', bytes: 353e6, dtype: 'F32',
    shows: 'GPT-2 distilled into 6 layers: the same kinds of heads, fewer of them' },
  { repo: 'google-bert/bert-base-uncased', name: 'BERT base', modelType: 'bert', bytes: 440e6, dtype: 'F32',
    shows: 'an encoder, both directions: heads on [CLS], [SEP] and the next or previous word' },
  { repo: 'distilbert/distilbert-base-uncased', name: 'DistilBERT', modelType: 'distilbert', bytes: 268e6, dtype: 'F32',
    shows: 'BERT in 6 layers: bidirectional heads, many resting on [SEP]' },
  { repo: 'FacebookAI/roberta-base', name: 'RoBERTa base', modelType: 'roberta', bytes: 499e6, dtype: 'F32',
    shows: 'BERT trained longer, byte-level BPE: bidirectional heads on <s> and neighbours' },
  // GPT-NeoX files also hold each layer's causal-mask buffer: part of the download.
  { repo: 'EleutherAI/pythia-70m', name: 'Pythia-70M', modelType: 'gpt_neox', bytes: 166e6, dtype: 'F16',
    shows: '6 layers × 8 heads, rotary positions: a favourite of interpretability courses' },
  { repo: 'EleutherAI/pythia-160m', name: 'Pythia-160M', modelType: 'gpt_neox', bytes: 375e6, dtype: 'F16',
    shows: '12 layers × 12 heads, parallel residual: GPT-2 small\'s size, trained on the Pile' },
  // This repository holds pytorch_model.bin (291 MB), which the library reads when there is no safetensors file.
  { repo: 'roneneldan/TinyStories-33M', name: 'TinyStories-33M', modelType: 'gpt_neo', bytes: 291e6, dtype: 'F32',
    shows: '4 layers × 16 heads of children\'s stories; local and global layers alternate' },
  { repo: 'facebook/opt-125m', name: 'OPT-125M', modelType: 'opt', bytes: 251e6, dtype: 'F16',
    shows: 'Meta\'s GPT-2-sized decoder: heads that rest on the first token' },
  { repo: 'HuggingFaceTB/SmolLM2-135M', name: 'SmolLM2-135M', modelType: 'llama', bytes: 269e6, dtype: 'BF16',
    shows: 'Llama layout, 30 layers × 9 heads sharing 3 key/value heads' },
  // Encoder-decoders: the page translates the text (T5 reads a task prefix) and draws its cross-attention.
  // opus-mt's folder has no tokenizer.json: its source.spm, target.spm and vocab.json are read instead.
  // Its size: transformers' Marian notes give about 298 MB for every opus-mt model (74 M float32 parameters).
  { repo: 'Helsinki-NLP/opus-mt-en-de', name: 'opus-mt-en-de', modelType: 'marian', bytes: 298e6, dtype: 'F32',
    shows: 'a translator trained for one pair: type English, see which English words each German word reads' },
  { repo: 'google-t5/t5-small', name: 'T5-small', modelType: 't5', bytes: 242e6, dtype: 'F32',
    shows: 'an encoder-decoder: type "translate English to German: …" and see which source words each output word reads' },
  { repo: 'Qwen/Qwen2.5-0.5B', name: 'Qwen2.5-0.5B', modelType: 'qwen2', bytes: 988e6, dtype: 'BF16',
    shows: 'a current model\'s base: 24 layers × 14 heads sharing 2 key/value heads' },
]);

/** The ready models whose model_type the library reads. */
export function supportedReadyModels(families = FAMILIES) {
  return READY_MODELS.filter((model) => Object.hasOwn(families, model.modelType));
}

/**
 * Why a model would not fit in this tab, or null. `memoryLimit`: WebAssembly's
 * bytes; `deviceMemory`: navigator.deviceMemory (GB, Chromium's rough figure),
 * when known. The weights take float32 in WebAssembly memory, or the file's
 * 16 bits when float32 would not fit (loadModel's weightStorage 'auto'); while
 * they convert, the downloaded file is held too. A tab gets about half the
 * device's memory, so a load that needs more says so before downloading.
 */
export function memoryProblem({ bytes, dtype }, { memoryLimit, deviceMemory, formatBytes }) {
  const float32 = dtype === 'F32' ? bytes : bytes * 2;
  const inWasm = float32 <= memoryLimit ? float32 : bytes;
  if (inWasm > memoryLimit) return `too large: its weights do not fit in WebAssembly's ${formatBytes(memoryLimit)}`;
  const whileLoading = inWasm + bytes;
  if (deviceMemory > 0 && whileLoading > (deviceMemory * 2 ** 30) / 2) {
    return `too large for this device: loading needs about ${formatBytes(whileLoading)} of memory, `
      + `and this device reports ${deviceMemory} GB`;
  }
  return null;
}

// The sizes are rounded: "548 MB", not "548.0 MB".
function roughSize(bytes) {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${Math.round(bytes / 1e6)} MB`;
}

/**
 * @param ui { readyList (the <ul>) }
 * @param options { open(hubName), formatBytes(bytes), memoryLimit (bytes) }
 * @returns {{ setSaved(models), setBusy(busy) }}
 */
export function createReadyModels(ui, { open, formatBytes, memoryLimit }) {
  const deviceMemory = globalThis.navigator?.deviceMemory;
  const entries = supportedReadyModels().map((model) => {
    const id = `ready-${model.repo.replace(/[^A-Za-z0-9]+/g, '-')}`;
    const problem = memoryProblem(model, { memoryLimit, deviceMemory, formatBytes });
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = model.name;
    button.title = model.repo;
    button.setAttribute('aria-describedby', `${id}-about`);
    button.addEventListener('click', () => open(model.repo));
    const size = document.createElement('span');
    size.className = 'ready-size';
    const about = document.createElement('span');
    about.className = 'hint ready-about';
    about.id = `${id}-about`;
    about.textContent = problem ? `${model.shows}. Not offered here: ${problem}.` : model.shows;
    const li = document.createElement('li');
    li.append(button, ' ', size, ' ', about);
    return { model, problem, button, size, saved: false };
  });

  // Saved ones open from Cache Storage: their size is not a download.
  function show(entry) {
    const { model, saved, button, size } = entry;
    size.textContent = saved ? `${roughSize(model.bytes)}, saved: no download` : roughSize(model.bytes);
    button.setAttribute('aria-label', saved
      ? `${model.name} (saved in this browser, opens without a download)`
      : `${model.name} (${roughSize(model.bytes)} download)`);
  }

  let busy = false;
  function setBusy(value) {
    busy = value;
    for (const entry of entries) entry.button.disabled = busy || entry.problem !== null;
  }

  /** The models cachedModels() lists ({ from: hub name }). */
  function setSaved(models) {
    const names = new Set(models.map((model) => model.from));
    for (const entry of entries) {
      entry.saved = names.has(entry.model.repo);
      show(entry);
    }
  }

  ui.readyList.replaceChildren(...entries.map((entry) => entry.button.parentElement));
  setSaved([]);
  setBusy(busy);
  return { setSaved, setBusy };
}
