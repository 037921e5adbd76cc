// `npm start`: install what is missing, build what is stale, serve the page on
// http://127.0.0.1:8080 (override with PORT=...). Ctrl+C stops the server.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { buildPage, buildWasm } from './build.mjs';
import { ensureNodeModules, repoRoot } from './toolchain.mjs';

const host = '127.0.0.1';
const port = Number(process.env.PORT ?? 8080);

try {
  ensureNodeModules();
  buildWasm();
  buildPage();
} catch (error) {
  console.error(`\n[attnlens] could not build the page: ${error.message}`);
  process.exit(1);
}

const vite = join(repoRoot, 'node_modules', '.bin', 'vite');
const server = spawn(vite, ['preview', '--config', 'web/page/vite.config.js', '--host', host, '--port', String(port), '--strictPort'],
  { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
server.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
});
server.on('exit', (code) => {
  if (code) console.error(`[attnlens] the server stopped (exit ${code}); is port ${port} taken? Try PORT=8081 npm start`);
  process.exit(code ?? 0);
});
console.log(`\n[attnlens] serving the page at http://${host}:${port}/  (offline single file: dist/attnlens-offline.html)\n`);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
