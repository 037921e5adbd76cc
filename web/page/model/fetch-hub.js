// "Load from URL": the files of a Hugging Face model folder fetched straight
// into this tab (config.json, the tokenizer, the safetensors weights or their
// shards), with download progress and messages that say what went wrong.
// Nothing is uploaded: these are plain GET requests for public files.

export class FetchHubError extends Error {}

const example = 'https://huggingface.co/openai-community/gpt2/resolve/main/';

/**
 * The folder URL (ending in "/") the files are fetched from. Accepts a hub
 * folder URL (".../resolve/main/"), a repository page ("huggingface.co/org/name",
 * ".../tree/main"), a file in it (".../blob/main/config.json"), "org/name",
 * or any other http(s) folder holding the same files.
 */
export function hubFolderUrl(input) {
  let text = String(input).trim();
  if (text === '') throw new FetchHubError(`Type the URL of a model folder, e.g. ${example}`);
  if (/^[\w.-]+\/[\w.-]+$/.test(text)) text = `https://huggingface.co/${text}`;
  else if (/^(huggingface\.co|hf\.co)\//.test(text)) text = `https://${text}`;
  let url;
  try {
    url = new URL(text);
  } catch {
    throw new FetchHubError(`"${text}" is not a URL. Type the URL of a model folder, e.g. ${example}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new FetchHubError(`Only http(s) URLs can be fetched, got ${url.protocol}; for files on this computer use “Open a model…”.`);
  }
  url.search = '';
  url.hash = '';
  const parts = url.pathname.split('/').filter(Boolean);
  if (url.hostname === 'huggingface.co' || url.hostname === 'hf.co') {
    if (parts.length < 2) throw new FetchHubError(`That is not a model on the hub; a model's URL looks like ${example}`);
    const [owner, name, kind, revision = 'main', ...rest] = parts;
    let folder = ['tree', 'blob', 'resolve'].includes(kind) ? rest : [];
    if (kind === 'blob' || (kind === 'resolve' && folder.at(-1)?.includes('.'))) folder = folder.slice(0, -1);
    const ref = ['tree', 'blob', 'resolve'].includes(kind) ? revision : 'main';
    return `https://huggingface.co/${[owner, name, 'resolve', ref, ...folder].join('/')}/`;
  }
  // Elsewhere: a folder, or a file inside it (".../config.json").
  if (parts.at(-1)?.includes('.')) parts.pop();
  url.pathname = `/${parts.join('/')}${parts.length ? '/' : ''}`;
  return url.href;
}

function explainStatus(url, status) {
  if (status === 404) return `${url} was not found (HTTP 404). Is this a model folder? Its URL looks like ${example}`;
  if (status === 401 || status === 403) {
    return `${url} needs a login (HTTP ${status}): gated and private models cannot be fetched by this page. Accept the `
      + 'model\'s terms on the hub, download its files, and open them with “Open a model…”.';
  }
  return `${url} could not be downloaded: the server answered HTTP ${status}.`;
}

async function request(url, signal) {
  let response;
  try {
    response = await fetch(url, { signal, credentials: 'omit' });
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    // fetch() gives no details on purpose: a CORS refusal and no network look the same.
    throw new FetchHubError(`Could not download ${url}: the request failed before any answer came back. Either this `
      + 'computer is offline, or the server does not let other web pages read its files (CORS). Download the folder\'s '
      + 'files instead and open them with “Open a model…”.');
  }
  if (!response.ok) {
    const error = new FetchHubError(explainStatus(url, response.status));
    error.status = response.status;
    throw error;
  }
  return response;
}

// The body as one ArrayBuffer, reporting bytes as they arrive. With a
// Content-Length the buffer is allocated once (a 500 MB file is not held
// twice); a body that outgrows it (a compressed transfer) falls back to chunks.
async function readBody(response, onBytes) {
  const expected = Number(response.headers.get('content-length')) || 0;
  if (!response.body) return response.arrayBuffer();
  const reader = response.body.getReader();
  let buffer = expected ? new Uint8Array(expected) : null;
  let chunks = buffer ? null : [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (buffer && received + value.length > buffer.length) {
      chunks = [buffer.subarray(0, received)];
      buffer = null;
    }
    if (buffer) buffer.set(value, received);
    else chunks.push(value);
    received += value.length;
    onBytes(received, Math.max(expected, received));
  }
  if (buffer) return received === buffer.length ? buffer.buffer : buffer.slice(0, received).buffer;
  const bytes = new Uint8Array(received);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes.buffer;
}

async function fetchText(url, signal, { optional = false } = {}) {
  try {
    return await (await request(url, signal)).text();
  } catch (error) {
    if (optional && error.status === 404) return null;
    throw error;
  }
}

// The tokenizer, in the order transformers looks for one; none is fine (ids only).
async function fetchTokenizer(base, signal) {
  const json = await fetchText(`${base}tokenizer.json`, signal, { optional: true });
  if (json !== null) return { kind: 'tokenizer.json', source: json };
  const vocabJson = await fetchText(`${base}vocab.json`, signal, { optional: true });
  const mergesTxt = vocabJson === null ? null : await fetchText(`${base}merges.txt`, signal, { optional: true });
  if (vocabJson !== null && mergesTxt !== null) return { kind: 'vocab.json + merges.txt', source: { vocabJson, mergesTxt } };
  const vocabTxt = await fetchText(`${base}vocab.txt`, signal, { optional: true });
  if (vocabTxt !== null) return { kind: 'vocab.txt', source: { vocabTxt } };
  return null;
}

// model.safetensors, or the shards its index names.
async function weightFiles(base, signal) {
  try {
    return { names: ['model.safetensors'], first: await request(`${base}model.safetensors`, signal) };
  } catch (error) {
    if (error.status !== 404) throw error;
  }
  const indexText = await fetchText(`${base}model.safetensors.index.json`, signal, { optional: true });
  if (indexText === null) {
    throw new FetchHubError(`${base} has neither model.safetensors nor model.safetensors.index.json (HTTP 404). This page `
      + 'reads safetensors weights only; most hub models have them.');
  }
  let index;
  try {
    index = JSON.parse(indexText);
  } catch (error) {
    throw new FetchHubError(`${base}model.safetensors.index.json is not valid JSON: ${error.message}`);
  }
  const names = [...new Set(Object.values(index?.weight_map ?? {}))].sort();
  if (names.length === 0) throw new FetchHubError(`${base}model.safetensors.index.json lists no shards in its weight_map.`);
  return { names, first: null };
}

/**
 * Fetches a model folder.
 * @param {string} base folder URL ending in "/" (see hubFolderUrl)
 * @param {{ onProgress?: (p: { file, index, count, loaded, total }) => void, signal?: AbortSignal }} options
 * @returns {Promise<{ config: string, tokenizer: { kind, source } | null, weights: ArrayBuffer[], names: string[] }>}
 */
export async function fetchHubFolder(base, { onProgress = () => {}, signal } = {}) {
  const config = await fetchText(`${base}config.json`, signal);
  const tokenizer = await fetchTokenizer(base, signal);
  const { names, first } = await weightFiles(base, signal);
  const weights = [];
  for (const [index, name] of names.entries()) {
    const response = index === 0 && first ? first : await request(`${base}${name}`, signal);
    weights.push(await readBody(response, (loaded, total) => onProgress({ file: name, index, count: names.length, loaded, total })));
  }
  return { config, tokenizer, weights, names };
}
