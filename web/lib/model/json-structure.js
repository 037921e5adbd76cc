// What JSON.parse lets through and a safetensors header must not have: a
// key twice in one object (JSON.parse keeps the last, so two readers of one
// file could see different tensors), a lone surrogate (\ud800) in a string,
// and nesting deeper than the core's limit. Found by one walk over text that
// JSON.parse has already accepted, so every string is terminated and every
// bracket matched; strings are decoded by JSON.parse itself, so "a" and
// "\u0061" are the same key.

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
// Keys of a tensor's entry the format reads; other keys are ignored, as
// safetensors does, and may repeat.
const ENTRY_KEYS = new Set(['dtype', 'shape', 'data_offsets']);

const quoted = (text) => `"${text.slice(0, 200)}"`;

// The message for `key` read again in the innermost object, or '' where a
// repeat does not matter. `frames`: the open objects and arrays, outermost first.
function repeatProblem(frames, key) {
  const frame = frames.at(-1);
  if (frames.length === 1) {
    return key === '__metadata__' ? 'the safetensors header has __metadata__ twice' : `duplicate tensor name ${quoted(key)}`;
  }
  if (frames.length !== 2) return '';
  if (frame.owner === '__metadata__') return `__metadata__ has the key ${quoted(key)} twice`;
  return ENTRY_KEYS.has(key) ? `tensor ${quoted(frame.owner)}: duplicate key ${quoted(key)}` : '';
}

/**
 * The first problem of a safetensors header's JSON text (already accepted by
 * JSON.parse) that JSON.parse does not catch, or ''.
 * @param {string} text
 * @param {number} maxNesting the core's limit (module.limits())
 */
export function structureProblem(text, maxNesting) {
  // Per open object: its keys so far, the key whose value it is (owner),
  // and the key read last (the owner of a container that opens next).
  const frames = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{' || c === '[') {
      if (frames.length >= maxNesting) return `nesting deeper than ${maxNesting} levels`;
      const owner = frames.at(-1)?.keys ? frames.at(-1).lastKey : null;
      frames.push({ keys: c === '{' ? new Set() : null, owner, lastKey: null });
    } else if (c === '}' || c === ']') {
      frames.pop();
    } else if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const literal = text.slice(i, end + 1);
      i = end;
      const value = literal.includes('\\') ? JSON.parse(literal) : literal.slice(1, -1);
      if (!value.isWellFormed()) return `a string holds an unpaired surrogate: ${literal.slice(0, 60)}`;
      let next = i + 1;
      while (WHITESPACE.has(text[next])) next++;
      const frame = frames.at(-1);
      if (text[next] !== ':' || !frame?.keys) continue;  // a value, not a key
      if (frame.keys.has(value)) {
        const problem = repeatProblem(frames, value);
        if (problem) return problem;
      }
      frame.keys.add(value);
      frame.lastKey = value;
    }
  }
  return '';
}
