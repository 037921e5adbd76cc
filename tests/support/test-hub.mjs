// A local stand-in for the Hugging Face hub, for tests without a network.
// It answers the hub's paths, /{owner}/{name}/resolve/{revision}/{file}, as
// the hub does: small files directly, weights (.safetensors, .bin) by a 302 redirect to
// a second server on another port (the hub sends LFS files to a CDN host),
// both with Content-Length and CORS headers, HEAD as GET without a body.
//
// serveTestHub({ repos }) -> { url, cdnUrl, requests, close() }
//   repos: 'owner/name' -> { revisions: { main: { file: text | bytes } }, ... }
//     and, instead of revisions, a behaviour for every file of the repo:
//     { status: 401 }      a gated repo (the hub answers 401 without a token)
//     { cors: false }      files served without Access-Control-Allow-Origin
//     { dropAfter: bytes } weights whose connection is destroyed after that many body bytes
//   Any other path answers 404, as a missing repo or file does on the hub.
//   requests: every request both servers saw, { method, path, server: 'hub' | 'cdn' }.
import { createServer } from 'node:http';

const encoder = new TextEncoder();
// The files the hub keeps in LFS and serves from its CDN.
const isWeights = (file) => /\.(safetensors|bin)$/.test(file);

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`)));
}

export async function serveTestHub({ repos }) {
  const requests = [];
  const find = (path) => {
    const match = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    if (!match) return null;
    const [, name, revision, file] = match.map(decodeURIComponent);
    const repo = repos[name];
    return repo && { repo, name, revision, file, content: repo.revisions?.[revision]?.[file] ?? repo.files?.[file] };
  };

  function answer(request, response, server) {
    const path = new URL(request.url, 'http://localhost').pathname;
    requests.push({ method: request.method, path, server });
    const found = find(path);
    const cors = found?.repo.cors === false ? {} : { 'access-control-allow-origin': '*' };
    if (found?.repo.status) {
      response.writeHead(found.repo.status, { ...cors, 'content-type': 'text/plain' }).end('Access to this model is restricted');
      return;
    }
    if (!found || found.content === undefined) {
      response.writeHead(404, { ...cors, 'content-type': 'text/plain' }).end('Entry not found');
      return;
    }
    if (server === 'hub' && isWeights(found.file)) {
      response.writeHead(302, { ...cors, location: `${cdnUrl}${path}` }).end();
      return;
    }
    const body = typeof found.content === 'string' ? encoder.encode(found.content) : found.content;
    response.writeHead(200, { ...cors, 'content-type': 'application/octet-stream', 'content-length': body.length });
    if (request.method === 'HEAD') {
      response.end();
      return;
    }
    if (found.repo.dropAfter !== undefined && isWeights(found.file)) {
      // Headers promise the whole file; the socket dies partway through the body.
      response.write(body.subarray(0, found.repo.dropAfter), () => setTimeout(() => response.socket?.destroy(), 20));
      return;
    }
    response.end(body);
  }

  const hub = createServer((request, response) => answer(request, response, 'hub'));
  const cdn = createServer((request, response) => answer(request, response, 'cdn'));
  const url = await listen(hub);
  const cdnUrl = await listen(cdn);
  return {
    url,
    cdnUrl,
    requests,
    close: () => Promise.all([hub, cdn].map((server) => new Promise((done) => {
      server.close(done);
      server.closeAllConnections();
    }))),
  };
}
