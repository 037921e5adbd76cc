// Fetching the module files from a folder URL (a configure({ wasmPath })
// folder, or the threads modules beside browser.js), and the error that
// names a file that could not be loaded. Imported on use only.

// The glue and its .wasm (and pthread worker) from a folder: the configured
// one, or for the threads modules the package's own. The .wasm is fetched
// here rather than by the glue, whose failure says neither the URL nor the
// status; the compiled module goes to the glue through instantiateWasm (and
// from there to the pthread workers). The import is left to the browser
// (webpackIgnore, @vite-ignore): the URL is known only at run time.
export async function instantiateFrom(base, name) {
  const glueUrl = new URL(`${name}.mjs`, base).href;
  const [createModule, wasmModule, workerUrl] = await Promise.all([
    import(/* webpackIgnore: true */ /* @vite-ignore */ glueUrl)
      .then((glue) => glue.default, (error) => { throw filesError(glueUrl, error.message); }),
    fetchFrom(new URL(`${name}.wasm`, base)).then(compile),
    name.endsWith('-threads') ? startableWorker(new URL(`${name}.worker.js`, base)) : undefined,
  ]);
  return createModule({
    // The pthread worker imports the glue from here, not from beside itself (a blob has no folder).
    mainScriptUrlOrBlob: glueUrl,
    locateFile: (path) => (path.endsWith('.worker.js') ? workerUrl : new URL(path, base).href),
    instantiateWasm(imports, receiveInstance) {
      WebAssembly.instantiate(wasmModule, imports).then((instance) => receiveInstance(instance, wasmModule));
      return {};
    },
  });
}

// Browsers start no Worker from another origin (a CDN): its script is then
// fetched (CORS, as the glue is imported) and started from a blob: URL,
// kept for the workers emscripten may start later.
async function startableWorker(url) {
  if (url.origin === globalThis.location?.origin) return url.href;
  const script = await (await fetchFrom(url)).text();
  return URL.createObjectURL(new Blob([script], { type: 'text/javascript' }));
}

async function fetchFrom(url) {
  let response;
  try {
    response = await fetch(url, { credentials: 'same-origin' });
  } catch (error) {
    throw filesError(url.href, `network error: ${error.message}`);
  }
  if (!response.ok) throw filesError(url.href, `HTTP ${response.status}`);
  return response;
}

// Compiled while it downloads when the server labels it application/wasm
// (compileStreaming refuses any other type), else once it has arrived.
async function compile(response) {
  try {
    if (response.headers.get('content-type')?.startsWith('application/wasm')) return await WebAssembly.compileStreaming(response);
    return await WebAssembly.compile(await response.arrayBuffer());
  } catch (error) {
    throw filesError(response.url, `not a WebAssembly module: ${error.message}`);
  }
}

/** The Error load() rejects with when a module file cannot be fetched: the URL, the cause, the fix. */
export function filesError(url, cause) {
  return new Error(`attnlens.load: could not load ${url} (${cause}). The package's module files (web/lib/wasm/ ` +
    'in the attnlens package) must be served there: copy that folder to your site and call ' +
    "configure({ wasmPath: '<its URL>/' }) from 'attnlens' before load(), or fix the wasmPath given to configure");
}
