// Reading tokenizer.json fields with errors that say which field is wrong.
//
// tokenizer.json files come from users' disks and from the network, so every
// field is checked where it is read; a message names the component and the
// field ("WordPiece "max_input_chars_per_word" must be a positive integer,
// got -1") instead of failing later with an undefined somewhere.

/** How a value looks in a message: short, typed. */
export function describeValue(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  return String(value);
}

/** A component "type" for a message: "Unigram", or "(missing)". */
export function describeType(type) {
  if (type === undefined) return '(no "type" field)';
  return typeof type === 'string' ? `"${type}"` : describeValue(type);
}

/** `value` if it is a plain object, else a TypeError naming `what`. */
export function requireObject(value, what) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`${what} must be an object, got ${describeValue(value)}`);
  }
  return value;
}

/** A boolean field; absent or null gives `fallback`. */
export function readBoolean(spec, key, fallback, where) {
  const value = spec[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') {
    throw new TypeError(`${where} "${key}" must be true or false, got ${describeValue(value)}`);
  }
  return value;
}

/** A string field that must be present. */
export function readString(spec, key, where) {
  const value = spec[key];
  if (typeof value !== 'string') throw new TypeError(`${where} "${key}" must be a string, got ${describeValue(value)}`);
  return value;
}

/** A string field that may be absent or null (then `fallback`). */
export function readOptionalString(spec, key, fallback, where) {
  const value = spec[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') throw new TypeError(`${where} "${key}" must be a string, got ${describeValue(value)}`);
  return value;
}

/** A non-negative integer field; absent or null gives `fallback`. */
export function readCount(spec, key, fallback, where) {
  const value = spec[key];
  if (value === undefined || value === null) return fallback;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${where} "${key}" must be a non-negative integer, got ${describeValue(value)}`);
  }
  return value;
}

/** Checks a token id read from a file: a non-negative safe integer. */
export function requireId(value, what) {
  if (!Number.isSafeInteger(value) || value < 0 || value > 0x7FFFFFFF) {
    throw new RangeError(`${what} must be a non-negative integer id, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * A vocabulary object { token: id } as a Map, with its reverse. Ids must be
 * integers. Two tokens sharing an id are accepted (Hugging Face accepts them);
 * decoding that id gives the first of them.
 */
export function readVocab(vocab, where) {
  if (vocab === null || typeof vocab !== 'object' || Array.isArray(vocab)) {
    throw new TypeError(`${where} "vocab" must be an object mapping tokens to ids, got ${describeValue(vocab)}`);
  }
  const tokenToId = new Map();
  const idToToken = new Map();
  for (const [token, id] of Object.entries(vocab)) {
    requireId(id, `${where} vocab entry ${JSON.stringify(token)}`);
    tokenToId.set(token, id);
    if (!idToToken.has(id)) idToToken.set(id, token);
  }
  return { tokenToId, idToToken };
}
