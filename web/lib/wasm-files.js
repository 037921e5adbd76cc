// Fetching the module files from a configure({ wasmPath }) folder, and the
// error that names a file that could not be loaded. Imported on use only.

// The glue and its .wasm (and pthread worker) from the configured folder.
// The .wasm is fetched here rather than by the glue, whose failure says
// neither the URL nor the status; the compiled module goes to the glue
// through instantiateWasm (and from there to the pthread workers).
export async function instantiateFrom(base, name) {
  const glueUrl = new URL(`${name}.mjs`, base).href;
  const wasmUrl = new URL(`${name}.wasm`, base).href;
  const [createModule, wasmModule] = await Promise.all([
    import(/* @vite-ignore */ glueUrl).then((glue) => glue.default, (error) => { throw filesError(glueUrl, error.message); }),
    compileFrom(wasmUrl),
  ]);
  return createModule({
    locateFile: (path) => new URL(path, base).href,
    instantiateWasm(imports, receiveInstance) {
      WebAssembly.instantiate(wasmModule, imports).then((instance) => receiveInstance(instance, wasmModule));
      return {};
    },
  });
}

async function compileFrom(url) {
  let response;
  try {
    response = await fetch(url, { credentials: 'same-origin' });
  } catch (error) {
    throw filesError(url, `network error: ${error.message}`);
  }
  if (!response.ok) throw filesError(url, `HTTP ${response.status}`);
  try {
    return await WebAssembly.compile(await response.arrayBuffer());
  } catch (error) {
    throw filesError(url, `not a WebAssembly module: ${error.message}`);
  }
}

/** The Error load() rejects with when a module file cannot be fetched: the URL, the cause, the fix. */
export function filesError(url, cause) {
  return new Error(`attnlens.load: could not load ${url} (${cause}). The package's module files (web/lib/wasm/ ` +
    'in the attnlens package) must be served there: copy that folder to your site and call ' +
    "configure({ wasmPath: '<its URL>/' }) from 'attnlens' before load(), or fix the wasmPath given to configure");
}
