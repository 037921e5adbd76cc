// A model folder read through the cache: each file from the cache when it is
// there, else from the network (and then kept). A model saved whole (its
// entry lists every file it has, and so every file it lacks) loads with no
// request at all, offline too. A file is stored only once its whole body
// has arrived, so a broken download is never taken for a complete one.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function notFound(where, name) {
  const error = new Error(`attnlens.loadModel: ${where}${name} was not found (HTTP 404)`);
  error.reason = 'not-found';
  error.status = 404;
  return error;
}

/**
 * @param store  the platform's cache (browser.js, node.js): readFile, writeFile, readEntry, writeEntry
 * @param source   source.js's modelSource: { url (the folder URL, the cache's key), name, revision }
 * @param network  http-folder.js's reader of the same folder
 */
export async function cachedFolder(store, source, network) {
  const { url } = source;
  const entry = await store.readEntry(url);
  const listed = entry && new Map(entry.files.map((file) => [file.name, file.bytes]));
  const absent = (name) => listed !== null && !listed.has(name);
  const files = new Map(); // name -> bytes, every file this load used
  let downloaded = false;
  // Caching is a convenience: a full disk or a refused quota must not fail the load.
  const keep = async (name, bytes) => {
    files.set(name, bytes.length);
    downloaded = true;
    try {
      await store.writeFile(url, name, bytes);
    } catch {
      // the next load downloads it again
    }
  };
  const cached = async (name) => {
    const bytes = await store.readFile(url, name).catch(() => null);
    if (bytes) files.set(name, bytes.length);
    return bytes;
  };
  return {
    where: url,
    async text(name, { optional = false } = {}) {
      if (absent(name) && optional) return null;
      const bytes = await cached(name);
      if (bytes) return decoder.decode(bytes);
      const text = await network.text(name, { optional });
      if (text !== null) await keep(name, encoder.encode(text));
      return text;
    },
    async size(name) {
      if (absent(name)) throw notFound(url, name);
      return listed?.get(name) ?? network.size(name);
    },
    async bytes(name, onBytes) {
      // A saved model that lacks the file: no request (an optional tokenizer file, offline too).
      if (absent(name)) throw notFound(url, name);
      const saved = await cached(name);
      if (saved) {
        onBytes(saved.length, saved.length, true);
        return saved;
      }
      const bytes = await network.bytes(name, onBytes);
      await keep(name, bytes);
      return bytes;
    },
    /** Records the model as complete: called once every file it needs is in hand. */
    async save() {
      if (entry && !downloaded) return;
      const list = [...files].map(([name, bytes]) => ({ name, bytes }));
      try {
        await store.writeEntry(url, {
          from: source.name ?? url, name: source.name, url, revision: source.revision, files: list,
          bytes: list.reduce((sum, file) => sum + file.bytes, 0), savedAt: new Date().toISOString(),
        });
      } catch {
        // as in keep()
      }
    },
  };
}
