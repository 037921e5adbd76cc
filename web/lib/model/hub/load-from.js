// lens.loadModel({ from }): a model by hub name, hub URL, folder URL or (in
// Node) local folder -> its files (model-files.js finds them; http-folder.js
// downloads them; cached-folder.js keeps them) -> load-model.js, as if the
// caller had passed { config, weights, tokenizer, tokenizerConfig }.
//
// Progress: { phase: 'download', file, index, count, loaded, total,
// loadedBytes, totalBytes, cached } per chunk of each weight file, then
// load-model.js's 'weights' and 'done'.
import { describe } from '../../validation.js';
import { loadModel } from '../load-model.js';
import { cachedFolder } from './cached-folder.js';
import { abortError, httpFolder } from './http-folder.js';
import { findModelFiles, tokenizerSource } from './model-files.js';
import { modelSource } from './source.js';

const WHERE = 'attnlens.loadModel';
const FROM_KEYS = ['from', 'revision', 'endpoint', 'signal', 'onProgress', 'cache', 'weightStorage'];
const FILE_KEYS = ['config', 'weights', 'tokenizer', 'tokenizerConfig'];

function checkOptions(options) {
  const given = FILE_KEYS.filter((key) => options[key] !== undefined);
  if (given.length) {
    throw new TypeError(`${WHERE}: from cannot be combined with ${given.join(', ')}: from finds and downloads the ` +
      'files itself; pass either { from } or { config, weights, tokenizer }');
  }
  for (const key of Object.keys(options)) {
    if (!FROM_KEYS.includes(key)) {
      throw new TypeError(`${WHERE}: unknown option "${key}"; with from, expected one of ${FROM_KEYS.join(', ')}`);
    }
  }
  const { signal, onProgress, cache } = options;
  if (signal !== undefined && (signal === null || typeof signal.aborted !== 'boolean' ||
      typeof signal.addEventListener !== 'function')) {
    throw new TypeError(`${WHERE}: signal must be an AbortSignal (new AbortController().signal), got ${describe(signal)}`);
  }
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new TypeError(`${WHERE}: onProgress must be a function, got ${describe(onProgress)}`);
  }
  checkCacheOption(WHERE, cache);
}

/** cache: true/undefined (the default place), false (off), or a folder (Node) / Cache Storage name (browsers). */
export function checkCacheOption(where, cache, { allowOff = true } = {}) {
  const off = allowOff && cache === false;
  if (cache !== undefined && cache !== true && !off && (typeof cache !== 'string' || cache === '')) {
    throw new TypeError(`${where}: cache must be ${allowOff ? 'true, false' : 'true'} or a non-empty string (a folder ` +
      `in Node, a Cache Storage name in browsers), got ${describe(cache)}`);
  }
}

// Reports each weight file's bytes as they come, and the sum over all of them.
function downloadProgress(weights, report) {
  const loaded = weights.map(() => 0);
  const sizes = weights.map((file) => file.bytes ?? 0);
  return (index) => (bytes, total, cached = false) => {
    loaded[index] = bytes;
    sizes[index] = Math.max(sizes[index], total);
    report({
      phase: 'download', file: weights[index].name, index, count: weights.length, loaded: bytes, total: sizes[index],
      loadedBytes: loaded.reduce((a, b) => a + b, 0), totalBytes: sizes.reduce((a, b) => a + b, 0), cached,
    });
  };
}

/**
 * @param module the Embind module
 * @param options { from, revision?, endpoint?, signal?, onProgress?, cache?, weightStorage? }
 * @param internal load-model.js's internal options, plus `hub`: imports hub/browser.js or hub/node.js
 */
export async function loadFrom(module, options, internal) {
  checkOptions(options);
  const { from, revision, endpoint, signal, cache, weightStorage } = options;
  const report = options.onProgress ?? (() => {});
  const { hub, ...loadInternal } = internal;
  if (signal?.aborted) throw abortError();
  const platform = (await hub()).platform;
  // Node: a local folder is read in place (and not cached).
  let folder = await platform.localFolder?.(from, { revision, endpoint });
  if (!folder) {
    const source = modelSource(from, { revision, endpoint: endpoint ?? platform.defaultEndpoint?.() });
    const network = httpFolder(source.url, signal);
    const store = await platform.openStore(cache);
    folder = store ? await cachedFolder(store, source, network) : network;
  }
  const { texts, tokenizer, weights } = await findModelFiles(folder, signal);
  const progress = downloadProgress(weights, report);
  const bytes = [];
  for (const [index, { name }] of weights.entries()) {
    bytes.push(await folder.bytes(name, progress(index)));
    if (signal?.aborted) throw abortError();
  }
  await folder.save?.();
  const tokenizerConfig = texts['tokenizer_config.json'];
  return loadModel(module, {
    config: texts['config.json'],
    weights: bytes,
    ...(tokenizer === null ? {} : { tokenizer: tokenizerSource(tokenizer, texts) }),
    ...(tokenizerConfig === undefined ? {} : { tokenizerConfig }),
    ...(weightStorage === undefined ? {} : { weightStorage }),
    // The weights phase ends at a tensor whose progress finds the signal aborted:
    // load-model.js frees what it allocated, as for any failure.
    onProgress: (event) => {
      if (signal?.aborted) throw abortError();
      report(event);
    },
  }, loadInternal);
}
