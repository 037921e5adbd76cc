// Vite config of dist/attnlens-elements.js: attnlens/elements as ONE classic
// script, for a teacher to put next to an HTML file and open from file://:
//   <script src="attnlens-elements.js"></script>
// Classic, not a module: Chromium refuses module scripts from file:// (CORS,
// origin "null"), while a classic <script src> loads. Library mode in the
// 'iife' format, every dynamic import (the WebAssembly glue, the model
// loader) inlined, and every asset (the .wasm files) inlined as a data: URL.
// Built by `node web/scripts/build.mjs page` (or `vite build --config web/elements/vite.config.js`).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const elementsDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(elementsDir, '..', '..');

export default defineConfig({
  root: elementsDir,
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: join(repoRoot, 'dist'),
    emptyOutDir: false, // dist/ also holds the page and the offline page
    target: 'es2022',
    reportCompressedSize: false,
    assetsInlineLimit: () => true,
    lib: {
      entry: join(elementsDir, 'index.js'),
      name: 'attnlensElements',
      formats: ['iife'],
      fileName: () => 'attnlens-elements.js',
    },
    rollupOptions: { output: { inlineDynamicImports: true } },
  },
});
