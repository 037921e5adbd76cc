// Vite config of the attention page. One `vite build --config web/page/vite.config.js`
// produces both outputs:
//   dist/page/                  the static site (base './': works from any path)
//   dist/attnlens-offline.html  one self-contained file, WASM inlined, for file://
// The page build runs first; a small plugin then runs the same config again in
// mode 'offline' (which alone is also `vite build --mode offline --config ...`).
// `vite preview --config web/page/vite.config.js` serves dist/page.
import { copyFileSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, defineConfig } from 'vite';
import { viteSingleFile } from 'vite-plugin-singlefile';

const configFile = fileURLToPath(import.meta.url);
const pageRoot = dirname(configFile);
const repoRoot = resolve(pageRoot, '..', '..');
const distRoot = join(repoRoot, 'dist');
const offlineFile = join(distRoot, 'attnlens-offline.html');
const offlineStaging = join(distRoot, '.offline-build');

// The page imports the library the way users do: `import { load } from 'attnlens'`.
const libraryAlias = { find: 'attnlens', replacement: join(repoRoot, 'web', 'lib', 'browser.js') };

// The model worker (model/model-worker.js) is one classic script: 'iife'
// with every dynamic import inlined. A module worker would do on http, but
// the offline file must build its worker from a Blob, and Chromium refuses
// blob: module workers in file:// pages (classic ones work).
const worker = { format: 'iife', rollupOptions: { output: { inlineDynamicImports: true } } };

// Sent by `npm start` (vite preview) and the dev server: see `preview` below.
const isolationHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

const shared = {
  root: pageRoot,
  base: './',
  publicDir: false,
  logLevel: 'warn',
  resolve: { alias: [libraryAlias] },
  worker,
  // The dev server must not pre-bundle the emscripten module, or its .wasm URL
  // points into .vite/deps and fetches index.html instead (TOOLCHAIN.md).
  optimizeDeps: { exclude: ['attnlens'] },
  // Cross-origin isolated (COOP + COEP), so the page gets SharedArrayBuffer
  // and load() the two-thread modules. Every resource the page loads is its
  // own, and a model fetched from a hub comes by CORS, which COEP allows.
  preview: { host: '127.0.0.1', port: 8080, strictPort: true, headers: isolationHeaders },
  server: { headers: isolationHeaders },
};

// The two-thread modules are loaded unbundled from beside the library code
// (web/lib/browser.js: a bundler must not bundle their pthread worker), and
// the library is bundled into assets/: copy them to assets/wasm/. Without
// them (or without isolation) the page runs the one-thread modules.
function copyThreadsModules() {
  const files = ['attnlens-relaxed-threads', 'attnlens-threads']
    .flatMap((name) => [`${name}.mjs`, `${name}.wasm`, `${name}.worker.js`]);
  return {
    name: 'attnlens-copy-threads-modules',
    apply: 'build',
    writeBundle(options) {
      const target = join(options.dir, 'assets', 'wasm');
      mkdirSync(target, { recursive: true });
      for (const file of files) copyFileSync(join(repoRoot, 'web', 'lib', 'wasm', file), join(target, file));
    },
  };
}

// After the static site is written, build the one-file page with the same config.
function alsoBuildOfflineFile() {
  return {
    name: 'attnlens-also-build-offline-file',
    apply: 'build',
    async closeBundle(error) {
      if (error) return;
      await build({ configFile, mode: 'offline' });
    },
  };
}

// vite-plugin-singlefile writes index.html into its outDir; the handout
// needs a telling name next to dist/page, so move it there.
function moveOfflineFile() {
  return {
    name: 'attnlens-move-offline-file',
    apply: 'build',
    closeBundle(error) {
      if (error) return;
      renameSync(join(offlineStaging, 'index.html'), offlineFile);
      rmSync(offlineStaging, { recursive: true, force: true });
      console.log(`[attnlens] wrote ${offlineFile}`);
    },
  };
}

export default defineConfig(({ mode }) => {
  if (mode === 'offline') {
    mkdirSync(distRoot, { recursive: true });
    return {
      ...shared,
      // The worker too goes inside the file (a Blob at run time), with its
      // own copy of the .wasm files as data: URLs.
      resolve: { alias: [libraryAlias, { find: /^(.*\/model-worker\.js)\?worker$/, replacement: '$1?worker&inline' }] },
      // Everything, including both .wasm files (emitted as data: URLs by the
      // huge inline limit the plugin sets), ends up inside one HTML file.
      plugins: [viteSingleFile(), moveOfflineFile()],
      build: { outDir: offlineStaging, emptyOutDir: true, target: 'es2022', reportCompressedSize: false },
    };
  }
  return {
    ...shared,
    plugins: [copyThreadsModules(), alsoBuildOfflineFile()],
    build: { outDir: join(distRoot, 'page'), emptyOutDir: true, target: 'es2022', reportCompressedSize: false },
  };
});
