// Node's side of loadModel({ from }): local folders, read in place, and the
// cache, a folder ($XDG_CACHE_HOME/attnlens, else ~/.cache/attnlens, or the
// path given as `cache`) with one sub-folder per model folder URL:
//   models/<host-and-path>-<hash>/<file>        each file, written whole then renamed
//   models/<host-and-path>-<hash>/.entry.json   written last: the model is complete
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeCacheApi } from './cache-api.js';
import { isHubName } from './source.js';

const ENTRY = '.entry.json';

function cacheFolder(cache) {
  if (typeof cache === 'string') return resolve(cache);
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'attnlens');
}

// Readable and unique: "huggingface.co-openai-community-gpt2-resolve-main-1a2b3c4d5e6f".
function folderName(url) {
  const readable = url.replace(/^https?:\/\//, '').replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80);
  return `${readable}-${createHash('sha256').update(url).digest('hex').slice(0, 12)}`;
}

const missing = (error) => error.code === 'ENOENT' || error.code === 'ENOTDIR';

async function writeWhole(path, bytes) {
  const partial = `${path}.${randomBytes(6).toString('hex')}.partial`;
  try {
    await writeFile(partial, bytes);
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

function folderStore(root) {
  const models = join(root, 'models');
  const modelDir = (url) => join(models, folderName(url));
  // File names come from the server (a shard index): kept inside the model's folder.
  const filePath = (url, name) => join(modelDir(url), encodeURIComponent(name));
  async function readEntry(dir) {
    try {
      return JSON.parse(await readFile(join(dir, ENTRY), 'utf8'));
    } catch {
      return null; // incomplete (or not a model folder)
    }
  }
  return {
    readEntry: (url) => readEntry(modelDir(url)).then((entry) => (entry?.url === url ? entry : null)),
    readFile: (url, name) => readFile(filePath(url, name)).then((buffer) => new Uint8Array(buffer.buffer,
      buffer.byteOffset, buffer.length), (error) => { if (missing(error)) return null; throw error; }),
    async writeFile(url, name, bytes) {
      await mkdir(modelDir(url), { recursive: true });
      await writeWhole(filePath(url, name), bytes);
    },
    async writeEntry(url, entry) {
      await mkdir(modelDir(url), { recursive: true });
      await writeWhole(join(modelDir(url), ENTRY), JSON.stringify(entry, null, 1));
    },
    async entries() {
      const names = await readdir(models).catch((error) => { if (missing(error)) return []; throw error; });
      const entries = await Promise.all(names.map((name) => readEntry(join(models, name))));
      return entries.filter(Boolean);
    },
    remove: (url) => rm(modelDir(url), { recursive: true, force: true }),
    async clear() {
      const count = (await this.entries()).length;
      await rm(models, { recursive: true, force: true });
      return count;
    },
  };
}

const openStore = async (cache) => (cache === false ? null : folderStore(cacheFolder(cache)));

// A local folder's files, read with the same names and the same failures as a server's.
function localReader(path) {
  const where = path.endsWith('/') ? path : `${path}/`;
  const notFound = (name, error) => Object.assign(new Error(`attnlens.loadModel: ${where}${name} was not found. ` +
    'A model folder holds config.json and the safetensors weights', { cause: error }), { reason: 'not-found', status: 404 });
  const read = (name, encoding) => readFile(join(path, name), encoding).catch((error) => {
    throw missing(error) ? notFound(name, error) : error;
  });
  return {
    where,
    text: (name, { optional = false } = {}) => read(name, 'utf8').catch((error) => {
      if (optional && error.status === 404) return null;
      throw error;
    }),
    size: (name) => stat(join(path, name)).then((info) => info.size, (error) => {
      throw missing(error) ? notFound(name, error) : error;
    }),
    async bytes(name, onBytes) {
      const buffer = await read(name);
      onBytes(buffer.length, buffer.length);
      return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
    },
  };
}

// A file: URL, a path that is a folder, or any absolute or ./ ../ ~ path.
// 'owner/name' is a hub name unless a folder of that name exists here, as in transformers.
async function localFolder(from, { revision }) {
  if (typeof from !== 'string' || from.trim() === '') return null;
  let path;
  if (from.startsWith('file:')) path = fileURLToPath(from);
  else if (/^[a-z][a-z0-9+.-]+:/i.test(from)) return null;
  else path = from.startsWith('~/') ? join(homedir(), from.slice(2)) : resolve(from);
  const isFolder = await stat(path).then((info) => info.isDirectory(), () => false);
  const pathLike = from.startsWith('file:') || /^(\/|\.{1,2}\/|~\/)/.test(from) || (!isHubName(from) && from.includes('/'));
  if (!isFolder && !pathLike) return null;
  if (!isFolder) {
    throw new Error(`attnlens.loadModel: ${path} is not a folder; from names a local folder holding config.json ` +
      'and the safetensors weights, a hub name such as \'openai-community/gpt2\' or a URL');
  }
  if (revision !== undefined) {
    throw new TypeError(`attnlens.loadModel: revision applies to hub models only, not to the local folder ${path}`);
  }
  return localReader(path);
}

export const platform = { localFolder, openStore, defaultEndpoint: () => process.env.HF_ENDPOINT || undefined };
export const { cachedModels, clearModelCache } = makeCacheApi(openStore);
