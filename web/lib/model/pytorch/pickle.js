// A restricted reader of Python pickles: only the opcodes a torch.save state
// dict uses (protocol 2, as torch writes, and the framing and memo opcodes of
// protocols 4 and 5), and only the globals the caller allows. Nothing in the
// file is ever run: a global is a name the caller maps to a plain value or to
// a JavaScript function of its own, and any other opcode or global is refused
// by name. The machine is a loop over the bytes with an explicit stack (no
// recursion), so no file can overflow the JavaScript stack; marks (the
// nesting of tuples, lists and dicts being built) are capped.
//
// Python values become: str -> string, int -> number (safe integers only),
// float -> number, bool -> boolean, None -> null, tuple and list -> Array,
// dict -> Map. The caller's globals and persistent ids decide the rest.

export class PickleProblem extends Error {}

const MAX_PROTOCOL = 5;
const MAX_MARKS = 64;
// A GLOBAL's module or name (torch's are a few dozen characters).
const MAX_NAME = 256;

// Every opcode's name (Python's Lib/pickletools.py), so a refusal names it.
const OPCODE_NAMES = {
  0x28: 'MARK', 0x2e: 'STOP', 0x30: 'POP', 0x31: 'POP_MARK', 0x32: 'DUP', 0x46: 'FLOAT', 0x49: 'INT', 0x4a: 'BININT',
  0x4b: 'BININT1', 0x4c: 'LONG', 0x4d: 'BININT2', 0x4e: 'NONE', 0x50: 'PERSID', 0x51: 'BINPERSID', 0x52: 'REDUCE',
  0x53: 'STRING', 0x54: 'BINSTRING', 0x55: 'SHORT_BINSTRING', 0x56: 'UNICODE', 0x58: 'BINUNICODE', 0x61: 'APPEND',
  0x62: 'BUILD', 0x63: 'GLOBAL', 0x64: 'DICT', 0x7d: 'EMPTY_DICT', 0x65: 'APPENDS', 0x67: 'GET', 0x68: 'BINGET',
  0x69: 'INST', 0x6a: 'LONG_BINGET', 0x6c: 'LIST', 0x5d: 'EMPTY_LIST', 0x6f: 'OBJ', 0x70: 'PUT', 0x71: 'BINPUT',
  0x72: 'LONG_BINPUT', 0x73: 'SETITEM', 0x74: 'TUPLE', 0x29: 'EMPTY_TUPLE', 0x75: 'SETITEMS', 0x47: 'BINFLOAT',
  0x80: 'PROTO', 0x81: 'NEWOBJ', 0x82: 'EXT1', 0x83: 'EXT2', 0x84: 'EXT4', 0x85: 'TUPLE1', 0x86: 'TUPLE2',
  0x87: 'TUPLE3', 0x88: 'NEWTRUE', 0x89: 'NEWFALSE', 0x8a: 'LONG1', 0x8b: 'LONG4', 0x42: 'BINBYTES',
  0x43: 'SHORT_BINBYTES', 0x8c: 'SHORT_BINUNICODE', 0x8d: 'BINUNICODE8', 0x8e: 'BINBYTES8', 0x8f: 'EMPTY_SET',
  0x90: 'ADDITEMS', 0x91: 'FROZENSET', 0x92: 'NEWOBJ_EX', 0x93: 'STACK_GLOBAL', 0x94: 'MEMOIZE', 0x95: 'FRAME',
  0x96: 'BYTEARRAY8', 0x97: 'NEXT_BUFFER', 0x98: 'READONLY_BUFFER',
};
const opcodeName = (code) => `${OPCODE_NAMES[code] ?? 'an unknown opcode'} (0x${code.toString(16).padStart(2, '0')})`;

const text = new TextDecoder('utf-8', { fatal: true });

/** A global the caller allowed: `value` is what it stands for (its own object or function). */
export class Global {
  constructor(name, value) {
    this.name = name;
    this.value = value;
  }
}

// A little-endian signed integer of 1..8 bytes (LONG1), as a safe JavaScript number.
function signedInteger(bytes) {
  let value = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) value = (value << 8n) | BigInt(bytes[i]);
  if (bytes.length && bytes[bytes.length - 1] & 0x80) value -= 1n << BigInt(8 * bytes.length);
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new PickleProblem(`it holds the integer ${value}, beyond what attnlens reads (2^53)`);
  }
  return Number(value);
}

/**
 * Runs a pickle.
 * @param {Uint8Array} bytes the pickle
 * @param {object} hooks
 *   globals: Map 'module.name' -> value (anything else is refused)
 *   call(global, args): the result of REDUCE on an allowed global (throws to refuse)
 *   build(object, state): BUILD (throws to refuse)
 *   persistent(pid): the object a persistent id stands for
 * @returns the unpickled value
 */
export function unpickle(bytes, { globals, call, build, persistent }) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let stack = [];
  const marks = [];
  const memo = new Map();
  let at = 0;

  const need = (count) => {
    if (at + count > bytes.length) throw new PickleProblem(`it ends inside an opcode at byte ${at} (truncated?)`);
    const start = at;
    at += count;
    return start;
  };
  const pop = () => {
    if (stack.length === 0) throw new PickleProblem(`it pops an empty stack at byte ${at}`);
    return stack.pop();
  };
  const top = () => {
    if (stack.length === 0) throw new PickleProblem(`it uses an empty stack at byte ${at}`);
    return stack[stack.length - 1];
  };
  const popMark = () => {
    if (marks.length === 0) throw new PickleProblem(`it closes a mark that was never set, at byte ${at}`);
    const items = stack;
    stack = marks.pop();
    return items;
  };
  const string = (length) => {
    const start = need(length);
    try {
      return text.decode(bytes.subarray(start, start + length));
    } catch {
      throw new PickleProblem(`it holds a string that is not valid UTF-8 at byte ${start}`);
    }
  };
  const lookUp = (name) => {
    if (!globals.has(name)) throw new PickleProblem(`it names the global ${name}, which attnlens refuses (it reads tensors only)`);
    return new Global(name, globals.get(name));
  };
  const dict = (object, what) => {
    if (!(object instanceof Map)) throw new PickleProblem(`${what} on something that is not a dict, at byte ${at}`);
    return object;
  };
  const setItems = (target, items) => {
    if (items.length % 2) throw new PickleProblem(`SETITEMS with an odd number of items, at byte ${at}`);
    for (let i = 0; i < items.length; i += 2) dict(target, 'SETITEMS').set(items[i], items[i + 1]);
  };
  const list = (object) => {
    if (!Array.isArray(object)) throw new PickleProblem(`APPEND on something that is not a list, at byte ${at}`);
    return object;
  };
  const put = (index) => memo.set(index, top());
  const get = (index) => {
    if (!memo.has(index)) throw new PickleProblem(`it reads memo entry ${index}, which was never stored`);
    stack.push(memo.get(index));
  };

  for (;;) {
    const code = bytes[need(1)];
    switch (code) {
      case 0x80: { // PROTO
        const protocol = bytes[need(1)];
        if (protocol > MAX_PROTOCOL) throw new PickleProblem(`it is pickle protocol ${protocol}; attnlens reads 2 to ${MAX_PROTOCOL}`);
        break;
      }
      case 0x95: need(8); break; // FRAME: a length hint; the opcodes inside follow as usual
      case 0x2e: // STOP
        if (stack.length !== 1 || marks.length) throw new PickleProblem('it stops with a stack that does not hold exactly one value');
        return stack[0];
      case 0x28: // MARK
        if (marks.length >= MAX_MARKS) throw new PickleProblem(`it nests deeper than ${MAX_MARKS} levels`);
        marks.push(stack);
        stack = [];
        break;
      case 0x29: stack.push([]); break; // EMPTY_TUPLE
      case 0x5d: stack.push([]); break; // EMPTY_LIST
      case 0x7d: stack.push(new Map()); break; // EMPTY_DICT
      case 0x85: stack.push([pop()]); break; // TUPLE1
      case 0x86: { const b = pop(); stack.push([pop(), b]); break; } // TUPLE2
      case 0x87: { const c = pop(); const b = pop(); stack.push([pop(), b, c]); break; } // TUPLE3
      case 0x74: case 0x6c: { const items = popMark(); stack.push(items); break; } // TUPLE, LIST
      case 0x64: { const items = popMark(); const map = new Map(); setItems(map, items); stack.push(map); break; } // DICT
      case 0x61: { const value = pop(); list(top()).push(value); break; } // APPEND
      case 0x65: { const items = popMark(); const target = list(top()); for (const item of items) target.push(item); break; } // APPENDS
      case 0x73: { const value = pop(); const key = pop(); dict(top(), 'SETITEM').set(key, value); break; } // SETITEM
      case 0x75: { const items = popMark(); setItems(top(), items); break; } // SETITEMS
      case 0x4e: stack.push(null); break; // NONE
      case 0x88: stack.push(true); break; // NEWTRUE
      case 0x89: stack.push(false); break; // NEWFALSE
      case 0x4b: stack.push(bytes[need(1)]); break; // BININT1
      case 0x4d: stack.push(view.getUint16(need(2), true)); break; // BININT2
      case 0x4a: stack.push(view.getInt32(need(4), true)); break; // BININT
      case 0x8a: { const length = bytes[need(1)]; const start = need(length); stack.push(signedInteger(bytes.subarray(start, start + length))); break; } // LONG1
      case 0x47: stack.push(view.getFloat64(need(8), false)); break; // BINFLOAT (big-endian)
      case 0x58: stack.push(string(view.getUint32(need(4), true))); break; // BINUNICODE
      case 0x8c: stack.push(string(bytes[need(1)])); break; // SHORT_BINUNICODE
      case 0x71: put(bytes[need(1)]); break; // BINPUT
      case 0x72: put(view.getUint32(need(4), true)); break; // LONG_BINPUT
      case 0x94: put(memo.size); break; // MEMOIZE
      case 0x68: get(bytes[need(1)]); break; // BINGET
      case 0x6a: get(view.getUint32(need(4), true)); break; // LONG_BINGET
      case 0x63: { // GLOBAL: "module\nname\n"
        const lineEnd = (from) => {
          const found = bytes.subarray(from, from + MAX_NAME + 1).indexOf(0x0a);
          if (found >= 0) return from + found;
          if (from + MAX_NAME + 1 > bytes.length) throw new PickleProblem(`it ends inside a GLOBAL name at byte ${from} (truncated?)`);
          throw new PickleProblem(`it has a GLOBAL name longer than ${MAX_NAME} bytes at byte ${from}`);
        };
        const moduleEnd = lineEnd(at);
        const nameEnd = lineEnd(moduleEnd + 1);
        const module = string(moduleEnd - at);
        need(1);
        const name = string(nameEnd - at);
        need(1);
        stack.push(lookUp(`${module}.${name}`));
        break;
      }
      case 0x93: { // STACK_GLOBAL
        const name = pop();
        const module = pop();
        if (typeof module !== 'string' || typeof name !== 'string') throw new PickleProblem('STACK_GLOBAL without a module and a name');
        stack.push(lookUp(`${module}.${name}`));
        break;
      }
      case 0x52: { // REDUCE
        const args = pop();
        const callable = pop();
        if (!(callable instanceof Global)) throw new PickleProblem(`REDUCE calls something that is not an allowed global, at byte ${at}`);
        if (!Array.isArray(args)) throw new PickleProblem(`REDUCE of ${callable.name} without an argument tuple`);
        stack.push(call(callable, args));
        break;
      }
      case 0x62: { const state = pop(); build(top(), state); break; } // BUILD
      case 0x51: stack.push(persistent(pop())); break; // BINPERSID
      default:
        throw new PickleProblem(`it uses the pickle opcode ${opcodeName(code)} at byte ${at - 1}, which attnlens refuses ` +
          '(it reads tensors only)');
    }
  }
}
