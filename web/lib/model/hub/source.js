// Where a model named by `from` lives: a hub repository ('owner/name', a hub
// URL in any of the forms a browser shows), any other http(s) folder, or (in
// Node, decided by the caller) a local folder. Pure, so the page can show the
// folder it will download before it asks the worker to.
import { describe } from '../../validation.js';

export const DEFAULT_ENDPOINT = 'https://huggingface.co';
const EXAMPLE = "'openai-community/gpt2'";
const HUB_NAME = /^[\w.-]+\/[\w.-]+$/;
// The hub's own hosts (also reached as the default endpoint).
const HUB_HOSTS = ['huggingface.co', 'hf.co'];
const FOLDER_KINDS = ['tree', 'blob', 'resolve'];

/** 'owner/name' (the hub's repository id form), not a path or a URL. */
export const isHubName = (text) => HUB_NAME.test(text) && !text.startsWith('.');

function checkRevision(where, revision) {
  if (revision === undefined) return undefined;
  // A branch, a tag or a commit; 'refs/pr/1' travels URL-encoded in one path segment.
  if (typeof revision !== 'string' || revision === '' || /\s|\.\./.test(revision)) {
    throw new TypeError(`${where}: revision must be a branch, tag or commit name such as 'main', got ${describe(revision)}`);
  }
  return revision;
}

/** The endpoint option as an origin-like base URL without a trailing slash. */
export function readEndpoint(where, endpoint) {
  if (endpoint === undefined) return DEFAULT_ENDPOINT;
  let url = null;
  try {
    url = typeof endpoint === 'string' ? new URL(endpoint) : null;
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new TypeError(`${where}: endpoint must be the hub's http(s) base URL such as '${DEFAULT_ENDPOINT}', ` +
      `got ${describe(endpoint)}`);
  }
  return url.href.replace(/\/+$/, '');
}

function hubFolder(endpoint, name, revision, folder = []) {
  return `${endpoint}/${name}/resolve/${encodeURIComponent(revision)}/${folder.map((part) => `${encodeURIComponent(part)}/`).join('')}`;
}

/**
 * The folder `from` names.
 * @returns {{ url: string, name: string | null, revision: string | null }}
 *   url: the folder URL, ending in "/" (the cache's key); name: 'owner/name' on
 *   the hub; revision: the hub revision (null for other servers)
 */
export function modelSource(from, { revision, endpoint, where = 'attnlens.loadModel' } = {}) {
  const base = readEndpoint(where, endpoint);
  const wanted = checkRevision(where, revision);
  if (typeof from !== 'string' || from.trim() === '') {
    throw new TypeError(`${where}: from must be a hub model name such as ${EXAMPLE}, a hub URL or a folder URL, ` +
      `got ${describe(from)}`);
  }
  let text = from.trim();
  if (isHubName(text)) return { url: hubFolder(base, text, wanted ?? 'main'), name: text, revision: wanted ?? 'main' };
  if (/^(huggingface\.co|hf\.co)\//.test(text)) text = `https://${text}`;
  let url;
  try {
    url = new URL(text);
  } catch {
    throw new TypeError(`${where}: from "${text}" is neither a hub model name such as ${EXAMPLE} nor a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`${where}: from must be an http(s) URL here, got ${url.protocol} ("${text}")`);
  }
  url.search = '';
  url.hash = '';
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const onHub = HUB_HOSTS.includes(url.hostname) || url.origin === new URL(base).origin;
  if (!onHub) {
    if (wanted !== undefined) {
      throw new TypeError(`${where}: revision applies to hub models only; ${url.origin} is not the hub (${base}). ` +
        'Put the revision in the URL, or pass endpoint for your own hub');
    }
    // A folder, or a file inside it (".../config.json").
    if (parts.at(-1)?.includes('.')) parts.pop();
    url.pathname = `/${parts.map(encodeURIComponent).join('/')}${parts.length ? '/' : ''}`;
    return { url: url.href, name: null, revision: null };
  }
  const prefix = HUB_HOSTS.includes(url.hostname) ? DEFAULT_ENDPOINT : base;
  const skip = new URL(prefix).pathname.split('/').filter(Boolean).length;
  const [owner, name, kind, inUrl, ...rest] = parts.slice(skip);
  if (!owner || !name) {
    throw new TypeError(`${where}: ${url.href} is not a model on the hub; a model's URL looks like ` +
      `${hubFolder(base, 'openai-community/gpt2', 'main')}`);
  }
  let folder = FOLDER_KINDS.includes(kind) ? rest : [];
  if (kind === 'blob' || (kind === 'resolve' && folder.at(-1)?.includes('.'))) folder = folder.slice(0, -1);
  const fromUrl = FOLDER_KINDS.includes(kind) ? inUrl : undefined;
  if (fromUrl !== undefined && wanted !== undefined && fromUrl !== wanted) {
    throw new TypeError(`${where}: the URL names revision '${fromUrl}' but revision is '${wanted}'; give one of them`);
  }
  const chosen = fromUrl ?? wanted ?? 'main';
  return { url: hubFolder(prefix, `${owner}/${name}`, chosen, folder), name: `${owner}/${name}`, revision: chosen };
}
