// configure({ wasmPath }): where load() finds the package's module files
// (web/lib/wasm/: the .mjs glue, the .wasm and the pthread .worker.js), for
// apps whose bundler does not copy them (esbuild, Rollup) or that serve them
// from elsewhere (a CDN). Shared by both entry points; each says how a
// wasmPath is resolved (a URL in browsers, a folder in Node).
import { describe } from './validation.js';

const CONFIGURE_KEYS = ['wasmPath'];

/**
 * Returns { configure, wasmBase, track }: configure validates and stores the
 * folder (resolveFolder turns the wasmPath string into a URL ending in '/');
 * wasmBase() is that URL or undefined; track(promise) marks a load in
 * progress, so that configure can refuse to change the folder under it.
 */
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
    // The same setting again (e.g. a module re-run by hot reload) changes nothing.
    if (folder?.href === base?.href) return;
    if (loaded || loading > 0) {
      throw new Error('attnlens.configure: called after load() started; the module files are fetched once, ' +
        'so call configure({ wasmPath }) before the first load() (and before the elements are on the page)');
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

/** The Error load() rejects with when a module file cannot be fetched: the URL, the cause, the fix. */
export function filesError(url, cause) {
  return new Error(`attnlens.load: could not load ${url} (${cause}). The package's module files (web/lib/wasm/ ` +
    'in the attnlens package) must be served there: copy that folder to your site and call ' +
    "configure({ wasmPath: '<its URL>/' }) from 'attnlens' before load(), or fix the wasmPath given to configure");
}
