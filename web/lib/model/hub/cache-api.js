// clearModelCache(from?, { cache }?) and cachedModels({ cache }?) over a
// platform's store (browser.js: Cache Storage; node.js: a folder).
import { describe } from '../../validation.js';
import { checkCacheOption } from './load-from.js';
import { modelSource } from './source.js';

function readOptions(where, options) {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${where}: expected an options object { cache }, got ${describe(options)}`);
  }
  const unknown = Object.keys(options).find((key) => key !== 'cache');
  if (unknown !== undefined) throw new TypeError(`${where}: unknown option "${unknown}"; expected cache`);
  checkCacheOption(where, options.cache, { allowOff: false });
  return options.cache;
}

// Which entries `from` names: a hub model's every revision (on any hub
// endpoint), or the one revision its URL names; another server's folder.
function matcher(where, from) {
  if (from === undefined) return () => true;
  const source = modelSource(from, { where });
  if (source.name === null) return (entry) => entry.url === source.url;
  const oneRevision = /\/(resolve|tree|blob)\//.test(from);
  return (entry) => entry.name === source.name && (!oneRevision || entry.revision === source.revision);
}

const listed = (entry) => Object.freeze({
  from: entry.from, name: entry.name ?? null, url: entry.url, revision: entry.revision ?? null,
  files: Object.freeze(entry.files.map((file) => file.name)), bytes: entry.bytes, savedAt: new Date(entry.savedAt),
});

export function makeCacheApi(openStore) {
  return {
    /** Every model saved whole in the cache: { from, name, url, revision, files, bytes, savedAt }. */
    async cachedModels(options) {
      const where = 'attnlens.cachedModels';
      const store = await openStore(readOptions(where, options));
      if (!store) return [];
      return (await store.entries()).map(listed).sort((a, b) => a.url.localeCompare(b.url));
    },
    /** Removes every cached model, or those `from` names; resolves to how many were removed. */
    async clearModelCache(from, options) {
      const where = 'attnlens.clearModelCache';
      const matches = matcher(where, from);
      const store = await openStore(readOptions(where, options));
      if (!store) return 0;
      if (from === undefined) return store.clear();
      const chosen = (await store.entries()).filter(matches);
      for (const entry of chosen) await store.remove(entry.url);
      return chosen.length;
    },
  };
}
