// lens.loadModel: a Hugging Face checkpoint folder's files -> a Model.
//
//   config.json        -> config.js maps it onto the core's ModelConfig
//   *.safetensors      -> safetensors.js finds each tensor (pytorch_model.bin:
//                         pytorch/read-bin.js, the same list); tensor-names.js
//                         maps hub names onto the core's canonical names;
//                         every name, shape and dtype is checked against the
//                         core's list (ModelHandle.plan, the core's check of
//                         the config) before any is loaded
//   tokenizer files    -> tokenizers/ (optional)
//
// The core converts each tensor to float32 and packs it for its kernels as
// it arrives (ModelHandle.loadTensor), a run of rows at a time: JavaScript
// copies at most CHUNK_BYTES of the file into one heap buffer, the core packs
// those rows into place, and so on. WebAssembly memory never shrinks, so
// after loading it holds the weights plus that one small buffer (staging
// whole tensors made GPT-2's 147 MiB embedding the buffer's size).
// JavaScript only moves bytes.
import { Heap, now } from '../heap.js';
import { createTokenizer } from '../tokenizers/index.js';
import { availableMemory, describe, formatBytes, limitsOf, memoryLimitText } from '../validation.js';
import { inHubTerms, readModelConfig, usablePositions } from './config.js';
import { createModel } from './model.js';
import { generationRulesOf } from './seq2seq.js';
import { asBytes, readSafetensors } from './safetensors.js';
import { canonicalTensorName, holdsMaskedLmHead, hubTensorName } from './tensor-names.js';

const WHERE = 'attnlens.loadModel';
const LOAD_KEYS = ['config', 'weights', 'tokenizer', 'tokenizerConfig', 'onProgress', 'weightStorage'];
// How an F16/BF16 checkpoint's matrices are held: converted to float32
// (fastest), kept at 16 bits ('as-stored': half the memory, the same
// results), or 'auto': float32 when it fits, else 16 bits.
const WEIGHT_STORAGE = ['auto', 'float32', 'as-stored'];
// Give the page a chance to paint progress this often during a long load.
const YIELD_EVERY_MS = 30;
// File bytes staged in the heap at a time. Chunks are whole rows (shape[0]
// is the rows), a multiple of the module's panel width of them when a row is
// small enough: rows of an [out, in] tensor are columns of its packed
// panels, and chunks of whole panels are packed without a column-by-column
// edge. The core takes any split.
const CHUNK_BYTES = 8 * 1024 * 1024;

// torch.save's files (pytorch_model.bin) by their first bytes: a zip archive
// ("PK\x03\x04") or, refused by name there, the legacy format's pickle.
const isPytorchFile = (bytes) => bytes.length >= 4 &&
  [0x504b0304, 0x80028a0a].includes(new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0));

// Rows per chunk of a tensor: as many as fit in chunkBytes (at least one),
// a multiple of `rowAlign` when more than that many fit.
function chunkRows(tensor, chunkBytes, rowAlign) {
  const rows = tensor.shape.length ? tensor.shape[0] : 1;
  const rowBytes = tensor.data.length / Math.max(rows, 1);
  const fit = Math.max(1, Math.floor(chunkBytes / Math.max(rowBytes, 1)));
  const aligned = fit >= rowAlign ? fit - (fit % rowAlign) : fit;
  return { rows, rowBytes, perChunk: Math.min(rows, aligned) };
}

function checkOptions(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${WHERE}: expected an options object { from } or { config, weights, tokenizer }, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!LOAD_KEYS.includes(key)) {
      throw new TypeError(`${WHERE}: unknown option "${key}"; expected one of ${LOAD_KEYS.join(', ')} (or from)`);
    }
  }
  if (options.config === undefined || options.config === null) {
    throw new TypeError(`${WHERE}: config is required (the parsed config.json or its text)`);
  }
  if (options.weightStorage !== undefined && !WEIGHT_STORAGE.includes(options.weightStorage)) {
    throw new TypeError(`${WHERE}: weightStorage must be one of ${WEIGHT_STORAGE.map((name) => `'${name}'`).join(', ')}, ` +
      `got ${describe(options.weightStorage)}`);
  }
  if (options.weights === undefined || options.weights === null) {
    throw new TypeError(`${WHERE}: weights is required (the bytes of model.safetensors, or an array of shards)`);
  }
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') {
    throw new TypeError(`${WHERE}: onProgress must be a function, got ${describe(options.onProgress)}`);
  }
}

// The tensors each shard holds (names, shapes, dtypes and where their bytes are), with its label.
function readTensorLists(module, files, readPytorchBin) {
  return files.map((file, index) => {
    const label = files.length > 1 ? `weights[${index}]` : 'weights';
    const { tensors } = isPytorchFile(file) ? readPytorchBin(file, label) : readSafetensors(module, file, label);
    return { label, tensors };
  });
}

// Every tensor of every shard, by canonical name, checked against the core's list.
function matchTensors(module, modelType, specs, tiedLmHead, lists) {
  const { weightDtypes } = limitsOf(module);
  const byName = new Map();
  const ignored = [];
  for (const { label, tensors } of lists) {
    for (const tensor of tensors) {
      const name = canonicalTensorName(modelType, tensor.name);
      if (name === null) {
        ignored.push(tensor.name);
        continue;
      }
      if (byName.has(name)) {
        throw new RangeError(`${WHERE}: tensor "${hubTensorName(modelType, name)}" appears twice (as "${byName.get(name).hubName}" and ` +
          `"${tensor.name}"${lists.length > 1 ? ', in the shards' : ''})`);
      }
      byName.set(name, { ...tensor, hubName: tensor.name, label });
    }
  }
  const known = new Set(specs.map((spec) => spec.name));
  const matched = [];
  const missing = [];
  for (const spec of specs) {
    const tensor = byName.get(spec.name);
    // A tied LM head reuses the embeddings, whatever the file holds (as
    // transformers does); a checkpoint without lm_head.weight is tied too.
    if (spec.name === 'lm_head.weight' && tiedLmHead) {
      if (tensor) ignored.push(tensor.hubName);
      continue;
    }
    if (!tensor) {
      // An absent optional tensor (the LM head) falls back in the core (to the embeddings).
      if (!spec.optional) missing.push(hubTensorName(modelType, spec.name));
      continue;
    }
    const shape = Array.from(spec.shape);
    if (tensor.shape.length !== shape.length || tensor.shape.some((size, i) => size !== shape[i])) {
      throw new RangeError(`${WHERE}: tensor "${tensor.hubName}" has shape [${tensor.shape.join(', ')}], but the config ` +
        `needs [${shape.join(', ')}]`);
    }
    if (!weightDtypes.includes(tensor.dtype)) {
      throw new RangeError(`${WHERE}: tensor "${tensor.hubName}" has dtype ${tensor.dtype}; attnlens reads ` +
        `${weightDtypes.slice(0, -1).join(', ')} and ${weightDtypes.at(-1)} weights`);
    }
    matched.push({ ...tensor, name: spec.name, count: shape.reduce((a, b) => a * b, 1) });
  }
  if (missing.length) {
    const shown = missing.slice(0, 5).map((name) => `"${name}"`).join(', ');
    throw new RangeError(`${WHERE}: the checkpoint lacks ${missing.length} tensor${missing.length > 1 ? 's' : ''} the ` +
      `config needs: ${shown}${missing.length > 5 ? ', ...' : ''}`);
  }
  for (const [name, tensor] of byName) if (!known.has(name)) ignored.push(tensor.hubName);
  return { matched, ignored };
}

// The dtype most of the weights are stored in (a file may mix, e.g. F32 norms).
function dominantDtype(tensors) {
  const elements = new Map();
  for (const tensor of tensors) elements.set(tensor.dtype, (elements.get(tensor.dtype) ?? 0) + tensor.count);
  return [...elements].sort((a, b) => b[1] - a[1])[0][0];
}

// tokenizer_config.json matters for Llama-family tokenizers: its
// add_bos_token / add_eos_token decide the special tokens around the text.
function readTokenizer(spec, tokenizerConfig) {
  if (spec === undefined || spec === null) {
    if (tokenizerConfig !== undefined && tokenizerConfig !== null) {
      throw new TypeError(`${WHERE}: tokenizerConfig was given without tokenizer; pass tokenizer.json too`);
    }
    return null;
  }
  try {
    let config = tokenizerConfig ?? undefined;
    if (typeof config === 'string') {
      try {
        config = JSON.parse(config);
      } catch (error) {
        throw new SyntaxError(`tokenizerConfig is not valid JSON: ${error.message}`);
      }
    }
    return createTokenizer(spec, config);
  } catch (error) {
    error.message = `${WHERE}: tokenizer: ${error.message}`;
    throw error;
  }
}

// Float32, or 16-bit matrices (weightStorage), told to the handle before
// any tensor loads; refuses a model that fits neither way.
function chooseStorage(module, handle, storage, matched, scratchBytes) {
  const available = availableMemory(module);
  // As the core will hold them (16-bit: its packed matrices of an F16/BF16 file).
  const tensors = matched.map(({ name, dtype }) => ({ name, dtype }));
  const float32Bytes = handle.storedBytes(tensors, false);
  const sixteenBitBytes = handle.storedBytes(tensors, true);
  const keep16Bit = storage === 'as-stored' ||
    (storage === 'auto' && float32Bytes + scratchBytes > available && sixteenBitBytes < float32Bytes);
  const weightBytes = keep16Bit ? sixteenBitBytes : float32Bytes;
  if (weightBytes + scratchBytes > available) {
    const how = keep16Bit ? 'with its F16/BF16 matrices kept at 16 bits' : 'as float32';
    throw new RangeError(`${WHERE}: the model needs about ${formatBytes(weightBytes + scratchBytes)} of WebAssembly ` +
      `memory ${how}, more than the ${formatBytes(available)} available ${memoryLimitText(module)}`);
  }
  const refused = handle.setWeightStorage(keep16Bit);
  if (refused) throw new RangeError(`${WHERE}: ${refused}`);
  return { keep16Bit, sixteenBitBytes, float32Bytes };
}

// Copies each tensor into the heap a chunk of rows at a time for the core to
// convert and pack, yielding now and then so a page can paint progress.
async function loadWeights(module, handle, matched, chunks, scratchBytes, progress) {
  const heap = new Heap(module, WHERE);
  try {
    const scratch = heap.allocate(scratchBytes);
    let lastYield = now();
    for (let i = 0; i < matched.length; i++) {
      const tensor = matched[i];
      const { rows, rowBytes, perChunk } = chunks[i];
      const valuesPerRow = tensor.count / Math.max(rows, 1);
      for (let firstRow = 0; ; firstRow += perChunk) {
        const count = Math.min(perChunk, rows - firstRow);
        module.HEAPU8.set(tensor.data.subarray(firstRow * rowBytes, (firstRow + count) * rowBytes), scratch);
        const failure = handle.loadTensor({
          name: tensor.name, dtype: tensor.dtype, data: scratch, count: count * valuesPerRow, firstRow, rows: count,
        });
        if (failure) throw new RangeError(`${WHERE}: tensor "${tensor.hubName}": ${failure}`);
        const last = firstRow + count >= rows;
        if (last) progress({ phase: 'weights', done: i + 1, total: matched.length });
        if (now() - lastYield > YIELD_EVERY_MS) {
          await new Promise((resolve) => setTimeout(resolve, 0));
          lastYield = now();
        }
        if (last) break;
      }
    }
    const unfinished = handle.finish();
    if (unfinished) throw new RangeError(`${WHERE}: ${unfinished}`);
  } finally {
    heap.release();
  }
}

/**
 * Loads a checkpoint into the module's memory.
 * @param {object} module the Embind module
 * @param {object} options { config, weights, tokenizer?, onProgress? }
 * @param {object} [internal] { chunkBytes }: file bytes staged at a time (tests
 *   use a small size to split tiny tensors; not part of the public API);
 *   { hub }: imports the platform's hub/browser.js or hub/node.js
 */
export async function loadModel(module, options, internal = {}) {
  // { from }: hub/ finds and downloads the files (imported on first use), then loads them here.
  if (options?.from !== undefined) return (await import('./hub/load-from.js')).loadFrom(module, options, internal);
  const { chunkBytes = CHUNK_BYTES } = internal;
  checkOptions(options);
  const started = now();
  const progress = options.onProgress ?? (() => {});
  const { architecture, core, tiedLmHead, decoderStartId, hub } = readModelConfig(options.config);
  const generation = generationRulesOf(hub, core.vocabSize);
  const storage = options.weightStorage ?? 'auto';
  const files = (Array.isArray(options.weights) ? options.weights : [options.weights])
    .map((file, index, all) => asBytes(file, all.length > 1 ? `weights[${index}]` : 'weights'));
  if (files.length === 0) throw new RangeError(`${WHERE}: weights is an empty array; pass at least one .safetensors file`);
  // pytorch_model.bin (torch.save's formats): pytorch/read-bin.js, imported only for such files.
  const readBin = files.some(isPytorchFile) ? (await import('./pytorch/read-bin.js')).readPytorchBin : null;
  // Read before the core sees the config: an encoder runs its masked-LM head when the checkpoint has one.
  const lists = readTensorLists(module, files, readBin);
  if (holdsMaskedLmHead(hub.model_type, lists.flatMap(({ tensors }) => tensors.map((tensor) => tensor.name)))) {
    core.hasLmHead = true;
  }
  // The core checks the config once, here, as it may be stored: a model too
  // large for float32 can still be loaded at 16 bits ('auto' decides once
  // the dtypes are known, and the handle checks only that choice again).
  const handle = new module.ModelHandle({ ...core, keep16Bit: storage !== 'float32' });
  let loaded;
  try {
    const plan = handle.plan();
    if (plan.error) throw new RangeError(`${WHERE}: ${inHubTerms(hub.model_type, plan.error)}`);
    const tokenizer = readTokenizer(options.tokenizer, options.tokenizerConfig);
    const { matched, ignored } = matchTensors(module, hub.model_type, plan.tensors, tiedLmHead, lists);
    const chunks = matched.map((tensor) => chunkRows(tensor, chunkBytes, limitsOf(module).panelWidth));
    const scratchBytes = Math.max(...chunks.map(({ rowBytes, perChunk }) => rowBytes * perChunk));
    const stored = chooseStorage(module, handle, storage, matched, scratchBytes);
    await loadWeights(module, handle, matched, chunks, scratchBytes, progress);
    loaded = { tokenizer, matched, ignored, causal: plan.causal, windows: plan.windows, ...stored };
  } catch (failure) {
    handle.delete();
    throw failure;
  }
  const { tokenizer, matched, ignored, causal, windows, keep16Bit, sixteenBitBytes, float32Bytes } = loaded;

  const info = Object.freeze({
    architecture,
    causal, // decided by the core (ModelHandle.plan)
    windows: Object.freeze(windows), // each layer's sliding window, 0: none (the core's, ModelHandle.plan)
    layers: core.layers,
    // An encoder-decoder (BART, Marian): layers counts the encoder's.
    encoderDecoder: core.decoderLayers > 0,
    decoderLayers: core.decoderLayers,
    decoderStartId,
    heads: core.heads,
    kvHeads: core.kvHeads,
    dModel: core.modelWidth,
    headWidth: core.headWidth,
    vocabSize: core.vocabSize,
    maxPositions: usablePositions(core),
    parameters: matched.reduce((sum, tensor) => sum + tensor.count, 0),
    dtype: dominantDtype(matched),
    weightStorage: keep16Bit && sixteenBitBytes < float32Bytes ? '16-bit' : 'float32',
    weightBytes: handle.weightBytes(),
    // A decoder's head predicts the next token; an encoder's masked-LM head the token at each position.
    lmHead: core.hasLmHead ? (causal ? 'next-token' : 'masked') : null,
    tiedLmHead: core.hasLmHead && !matched.some((tensor) => tensor.name === 'lm_head.weight'),
    tokenizer: tokenizer?.kind ?? null,
    ignoredTensors: Object.freeze(ignored),
    loadMs: now() - started,
    modelType: hub.model_type,
  });
  progress({ phase: 'done', done: matched.length, total: matched.length });
  return createModel(module, handle, info, core, tokenizer, generation);
}
