// A model folder on an http(s) server (the hub or any other): its files by
// name, with messages that say what went wrong and what to do. Plain GET and
// HEAD requests without credentials: public files only.
const WHERE = 'attnlens.loadModel';
const decoder = new TextDecoder();

/** The error an aborted load rejects with, whatever the signal's reason. */
export function abortError() {
  return new DOMException(`${WHERE}: the load was aborted`, 'AbortError');
}

// `reason` says what kind of failure it is, for programs that act on it without reading the message
// (README, "Downloads"): 'not-found', 'needs-login', 'http-error', 'unreachable' or 'broken-off'.
function failure(message, { reason, status, url, cause }) {
  const error = new Error(`${WHERE}: ${message}`, cause ? { cause } : undefined);
  error.reason = reason;
  if (status !== undefined) error.status = status;
  if (url !== undefined) error.url = url;
  return error;
}

function statusFailure(url, status) {
  if (status === 404) {
    return failure(`${url} was not found (HTTP 404). Check the model's name and revision; a model folder holds ` +
      'config.json and the safetensors weights', { reason: 'not-found', status, url });
  }
  if (status === 401 || status === 403) {
    return failure(`${url} needs a login (HTTP ${status}): gated and private models cannot be downloaded without ` +
      'one. Accept the model\'s terms on the hub, download its files, and load them from a folder (Node) or as ' +
      '{ config, weights, tokenizer }', { reason: 'needs-login', status, url });
  }
  return failure(`${url} could not be downloaded: the server answered HTTP ${status}`, { reason: 'http-error', status, url });
}

async function request(url, signal, method = 'GET') {
  let response;
  try {
    response = await fetch(url, { method, signal, credentials: 'omit' });
  } catch (error) {
    if (signal?.aborted) throw abortError();
    // fetch() gives no details on purpose: a CORS refusal and no network look the same.
    throw failure(`could not download ${url}: the request failed before any answer came back. Either this ` +
      'computer is offline or cannot reach the server, or the server does not let other web pages read its files ' +
      '(CORS). Check the address and the connection; for a server without CORS, download the files and load them ' +
      'as { config, weights, tokenizer }', { reason: 'unreachable', url, cause: error });
  }
  if (!response.ok) throw statusFailure(url, response.status);
  return response;
}

const dropped = (url, received, expected, cause) => failure(`the download of ${url} broke off after ${received} ` +
  `${expected ? `of ${expected} ` : ''}bytes (the connection was closed). Try again; files already complete are ` +
  'kept in the cache', { reason: 'broken-off', url, cause });

// The body as one Uint8Array, reporting bytes as they arrive. With a
// Content-Length the buffer is allocated once (a 500 MB file is not held
// twice); a body that outgrows it (a compressed transfer) falls back to chunks.
async function readBody(url, response, onBytes, signal) {
  // Content-Length counts the bytes on the wire: compressed ones, if compressed.
  const encoded = response.headers.get('content-encoding');
  const expected = encoded && encoded !== 'identity' ? 0 : Number(response.headers.get('content-length')) || 0;
  const reader = response.body.getReader();
  let buffer = expected ? new Uint8Array(expected) : null;
  let chunks = buffer ? null : [];
  let received = 0;
  for (;;) {
    let next;
    try {
      next = await reader.read();
    } catch (error) {
      if (signal?.aborted) throw abortError();
      throw dropped(url, received, expected, error);
    }
    if (next.done) break;
    const { value } = next;
    if (buffer && received + value.length > buffer.length) {
      chunks = [buffer.subarray(0, received)];
      buffer = null;
    }
    if (buffer) buffer.set(value, received);
    else chunks.push(value);
    received += value.length;
    onBytes(received, Math.max(expected, received));
  }
  if (expected && received < expected) throw dropped(url, received, expected);
  if (buffer) return buffer;
  const bytes = new Uint8Array(received);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

/** The files of the folder at `base` (ending in "/"), read over http(s). */
export function httpFolder(base, signal) {
  return {
    where: base,
    /** The file's text; null for a missing optional file. */
    async text(name, { optional = false } = {}) {
      const url = `${base}${name}`;
      try {
        return decoder.decode(await readBody(url, await request(url, signal), () => {}, signal));
      } catch (error) {
        if (optional && error.status === 404) return null;
        throw error;
      }
    },
    /**
     * The file's size from a HEAD request, or null when the server does not say (or does not
     * answer HEAD); throws for a missing file, a gated one, or no answer at all.
     */
    async size(name) {
      let response;
      try {
        response = await request(`${base}${name}`, signal, 'HEAD');
      } catch (error) {
        if (error.status === undefined || [401, 403, 404].includes(error.status)) throw error;
        return null;
      }
      return Number(response.headers.get('content-length')) || null;
    },
    async bytes(name, onBytes) {
      const url = `${base}${name}`;
      return readBody(url, await request(url, signal), onBytes, signal);
    },
  };
}
