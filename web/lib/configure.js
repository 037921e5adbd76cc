// configure({ wasmPath }): where load() finds web/lib/wasm/ (esbuild, a CDN).
// Kept small (every page loads it): fetching is in wasm-files.js.
import { describe } from './validation.js';

const CONFIGURE_KEYS = ['wasmPath'];

// track(load): configure refuses to move the files under a started load.
export function makeConfiguration(resolveFolder) {
  let base;
  let loading = 0;
  let loaded = false;
  function configure(options) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new TypeError(`attnlens.configure: expected an options object, got ${describe(options)}`);
    }
    const unknown = Object.keys(options).find((key) => !CONFIGURE_KEYS.includes(key));
    if (unknown !== undefined) {
      throw new TypeError(`attnlens.configure: unknown option "${unknown}"; expected ${CONFIGURE_KEYS.join(', ')}`);
    }
    const { wasmPath } = options;
    if (wasmPath !== undefined && (typeof wasmPath !== 'string' || wasmPath === '')) {
      throw new TypeError(`attnlens.configure: wasmPath must be a non-empty string (a folder), got ${describe(wasmPath)}`);
    }
    const folder = wasmPath === undefined ? undefined : resolveFolder(wasmPath.endsWith('/') ? wasmPath : `${wasmPath}/`);
    // The same setting again (hot reload) changes nothing.
    if (folder?.href === base?.href) return;
    if (loaded || loading > 0) {
      throw new Error('attnlens.configure: called after load() started; call it before the first load()');
    }
    base = folder;
  }
  function track(promise) {
    loading++;
    promise.then(() => { loaded = true; }, () => {}).finally(() => { loading--; });
    return promise;
  }
  return { configure, wasmBase: () => base, track };
}
