// Where an <attnlens-model> element's model comes from, loaded once per page
// and shared by every element that names it:
//   - a model registered by a script: globalThis.attnlensModels[name] =
//     { config, weights (Uint8Array, ArrayBuffer or base64 text), tokenizer?, tokenizerConfig? },
//     which works from file:// (nothing is fetched);
//   - otherwise a folder URL, relative to the page: config.json, model.safetensors
//     and, when present, tokenizer.json and tokenizer_config.json.
import { load } from '../lib/browser.js';

const loaded = new Map(); // registry entry or folder URL -> Promise<Model>

function fromBase64(text) {
  const binary = atob(text.replace(/\s+/g, ''));
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

const bytesOf = (weights) => (typeof weights === 'string' ? fromBase64(weights) : weights);

async function fetchFile(url, { optional = false } = {}) {
  let response;
  try {
    response = await fetch(url);
  } catch (error) {
    const hint = url.protocol === 'file:' ? ' (a page opened from file:// cannot fetch files: serve the folder over http, '
      + 'or register the model in a script as globalThis.attnlensModels[name] and use src="name")' : '';
    throw new Error(`could not fetch ${url.href}: ${error.message}${hint}`);
  }
  if (response.ok) return response;
  if (optional && response.status === 404) return null;
  throw new Error(`could not fetch ${url.href}: HTTP ${response.status}`);
}

async function loadFolder(folder) {
  const file = (name) => new URL(name, folder);
  const [config, weights, tokenizer, tokenizerConfig] = await Promise.all([
    fetchFile(file('config.json')).then((response) => response.text()),
    fetchFile(file('model.safetensors')).then((response) => response.arrayBuffer()),
    fetchFile(file('tokenizer.json'), { optional: true }).then((response) => response?.text()),
    fetchFile(file('tokenizer_config.json'), { optional: true }).then((response) => response?.text()),
  ]);
  const lens = await load();
  return lens.loadModel({ config, weights, tokenizer, tokenizerConfig });
}

async function loadRegistered(entry) {
  const lens = await load();
  const { config, weights, tokenizer, tokenizerConfig } = entry;
  return lens.loadModel({ config, weights: Array.isArray(weights) ? weights.map(bytesOf) : bytesOf(weights), tokenizer, tokenizerConfig });
}

/** The registered model `src` names, or the folder it names relative to `base`: { key, name, registered, load }. */
export function modelSource(src, base) {
  const entry = Object.hasOwn(globalThis.attnlensModels ?? {}, src) ? globalThis.attnlensModels[src] : null;
  if (entry) return { key: entry, name: src, registered: true, load: () => loadRegistered(entry) };
  const folder = new URL(src.endsWith('/') ? src : `${src}/`, base);
  return { key: folder.href, name: folder.href, registered: false, load: () => loadFolder(folder) };
}

export const isLoaded = (source) => loaded.has(source.key);

/** The model of `source`, loaded on first use; a failed load is tried again next time. */
export function modelOf(source) {
  if (!loaded.has(source.key)) {
    const model = source.load();
    model.catch(() => loaded.delete(source.key));
    loaded.set(source.key, model);
  }
  return loaded.get(source.key);
}
