// A minimal static file server on 127.0.0.1 for tests: correct MIME types
// (application/wasm matters for streaming compilation), no directory escape.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';

const mimeTypes = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json', '.wasm': 'application/wasm', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.map': 'application/json', '.txt': 'text/plain; charset=utf-8',
};

// Serves `root`; resolves to { url, close() } once listening on a free port.
// `headers` are added to every response (e.g. cross-origin isolation).
export function serveStatic(root, { headers = {} } = {}) {
  const base = resolve(root);
  const server = createServer((request, response) => {
    const pathname = decodeURIComponent(new URL(request.url, 'http://localhost').pathname);
    let file = normalize(join(base, pathname));
    if (file !== base && !file.startsWith(base + sep)) {
      response.writeHead(403, headers).end('forbidden');
      return;
    }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) {
      response.writeHead(404, headers).end('not found');
      return;
    }
    response.writeHead(200, {
      'content-type': mimeTypes[extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
      ...headers,
    });
    createReadStream(file).pipe(response);
  });
  return new Promise((resolveListen) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      // closeAllConnections: a browser may keep idle keep-alive sockets open,
      // which would otherwise hold close() for the keep-alive timeout.
      const close = () => new Promise((done) => {
        server.close(done);
        server.closeAllConnections();
      });
      resolveListen({ url: `http://127.0.0.1:${port}/`, close });
    });
  });
}
