// The browser's side of loadModel({ from }): the cache is Cache Storage
// (the cache named 'attnlens-models', or the name given as `cache`), each
// file under its own URL, and the model's entry under the folder URL plus
// ENTRY, put last. Pages without Cache Storage (insecure origins, some
// file:// pages) load without a cache.
import { makeCacheApi } from './cache-api.js';

const DEFAULT_NAME = 'attnlens-models';
const ENTRY = '?attnlens-entry';

async function openStore(cache) {
  if (cache === false || typeof caches === 'undefined') return null;
  const name = typeof cache === 'string' ? cache : DEFAULT_NAME;
  let storage;
  try {
    storage = await caches.open(name);
  } catch {
    return null; // refused (an opaque origin)
  }
  const response = (bytes, type) => new Response(bytes, {
    headers: { 'content-type': type, 'content-length': String(bytes.length ?? bytes.size) },
  });
  return {
    async readEntry(url) {
      const found = await storage.match(`${url}${ENTRY}`);
      return found ? found.json() : null;
    },
    async readFile(url, name) {
      const found = await storage.match(`${url}${name}`);
      return found ? new Uint8Array(await found.arrayBuffer()) : null;
    },
    // Put only once the whole body is here (the caller has every byte).
    writeFile: (url, name, bytes) => storage.put(`${url}${name}`, response(bytes, 'application/octet-stream')),
    writeEntry: (url, entry) => storage.put(`${url}${ENTRY}`, response(new Blob([JSON.stringify(entry)]), 'application/json')),
    async entries() {
      const keys = (await storage.keys()).filter((request) => request.url.endsWith(ENTRY));
      return Promise.all(keys.map(async (request) => (await storage.match(request)).json()));
    },
    async remove(url) {
      for (const request of await storage.keys()) {
        if (request.url.startsWith(url) && !request.url.slice(url.length).includes('/')) await storage.delete(request);
      }
    },
    async clear() {
      const count = (await this.entries()).length;
      await caches.delete(name);
      return count;
    },
  };
}

export const platform = { openStore };
export const { cachedModels, clearModelCache } = makeCacheApi(openStore);
