// Oniguruma patterns (what tokenizer.json's "Regex" fields are written in) as
// JavaScript RegExps, and the "pattern" fields ({ String } or { Regex }) that hold them.
//
// Hugging Face compiles these with Oniguruma. Most of the syntax means the same
// in a JavaScript /u RegExp; the differences that matter for the patterns real
// tokenizers ship (GPT-2, Llama 3, Qwen, ...) are translated here:
//   \s \S          Unicode White_Space (JS \s differs on U+0085 and U+FEFF)
//   \d \w \h \b    Unicode digits, Unicode word characters, hex digits, word boundary
//   (?i: ... )     inline case-insensitive groups (JavaScript has no inline flags in Node 20):
//                  letters become [xX] classes
//   \p{Han} \p{^L} script names and negated properties
//   \' \" ...      escaped punctuation that JavaScript's /u mode rejects
//   \A \z \Z       anchors
// What JavaScript cannot express (possessive quantifiers, atomic groups, other
// inline flags, nested classes) is refused with an Error naming it.
import { requireObject } from './spec.js';

/**
 * The pattern of a Replace normalizer or decoder, or of a Split pre-tokenizer:
 * `{ String: "..." }` (literal) or `{ Regex: "..." }` (Oniguruma syntax), as a
 * global JavaScript RegExp.
 */
export function readPattern(spec, where) {
  const pattern = requireObject(spec.pattern, `${where} "pattern"`);
  if (typeof pattern.String === 'string') {
    if (pattern.String.length === 0) throw new Error(`${where} has an empty String pattern`);
    return new RegExp(pattern.String.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gu');
  }
  if (typeof pattern.Regex === 'string') return translateOnigurumaPattern(pattern.Regex, where);
  throw new Error(`${where} "pattern" must be { "String": ... } or { "Regex": ... }`);
}

const WORD_CLASS = '\\p{L}\\p{M}\\p{N}\\p{Pc}';
const SYNTAX_CHARACTERS = new Set('^$\\.*+?()[]{}|/');

/**
 * A global JavaScript RegExp equivalent to the Oniguruma `pattern`.
 * @param {string} pattern Oniguruma syntax
 * @param {string} where the component it belongs to, for messages
 * @throws {Error} naming the construct when the pattern cannot be translated
 */
export function translateOnigurumaPattern(pattern, where) {
  let source;
  try {
    source = new Translator(pattern).run();
  } catch (error) {
    throw new Error(`${where} regex ${JSON.stringify(pattern)} cannot be used: ${error.message}`);
  }
  try {
    return new RegExp(source, 'gu');
  } catch (error) {
    throw new Error(`${where} regex ${JSON.stringify(pattern)} is not valid here (as ${source}): ${error.message}`);
  }
}

function swapCase(char) {
  const lower = char.toLowerCase();
  const upper = char.toUpperCase();
  const forms = new Set([char]);
  if ([...lower].length === 1) forms.add(lower);
  if ([...upper].length === 1) forms.add(upper);
  return [...forms];
}

function escapeForClass(char) {
  return '\\^-[]'.includes(char) ? `\\${char}` : char;
}

class Translator {
  constructor(pattern) {
    this.pattern = pattern;
    this.at = 0;
    this.out = '';
    this.groups = []; // per open group: was case-insensitivity switched inside it
    this.ignoreCase = false;
    this.inClass = false;
  }

  run() {
    const p = this.pattern;
    while (this.at < p.length) {
      const char = String.fromCodePoint(p.codePointAt(this.at));
      this.at += char.length;
      if (this.inClass) this.classCharacter(char);
      else this.character(char);
    }
    if (this.inClass) throw new Error('unterminated character class');
    return this.out;
  }

  character(char) {
    const p = this.pattern;
    switch (char) {
      case '\\': this.out += this.escape(false); return;
      case '[':
        this.inClass = true;
        this.out += '[';
        if (p[this.at] === '^') {
          this.out += '^';
          this.at += 1;
        }
        if (p[this.at] === ']') { // a leading ] is a literal in Oniguruma
          this.out += '\\]';
          this.at += 1;
        }
        return;
      case '(': this.openGroup(); return;
      case ')': {
        const previous = this.groups.pop();
        if (previous !== undefined) this.ignoreCase = previous;
        this.out += ')';
        return;
      }
      case '*': case '+': case '?': case '}':
        this.out += char;
        if (p[this.at] === '+') {
          throw new Error('possessive quantifiers (*+, ++, ?+) have no JavaScript equivalent');
        }
        return;
      default:
        if (this.ignoreCase) {
          const forms = swapCase(char);
          this.out += forms.length > 1 ? `[${forms.map(escapeForClass).join('')}]` : char;
        } else {
          this.out += char;
        }
    }
  }

  openGroup() {
    const p = this.pattern;
    if (p[this.at] !== '?') {
      this.groups.push(this.ignoreCase);
      this.out += '(';
      return;
    }
    const rest = p.slice(this.at + 1);
    for (const plain of [':', '=', '!', '<=', '<!']) {
      if (rest.startsWith(plain)) {
        this.groups.push(this.ignoreCase);
        this.out += `(?${plain}`;
        this.at += 1 + plain.length;
        return;
      }
    }
    const named = /^<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
    if (named) {
      this.groups.push(this.ignoreCase);
      this.out += `(?<${named[1]}>`;
      this.at += 1 + named[0].length;
      return;
    }
    const flags = /^(-?)i(:|\))/.exec(rest);
    if (flags) {
      const on = flags[1] !== '-';
      this.at += 1 + flags[0].length;
      if (flags[2] === ':') {
        this.groups.push(this.ignoreCase);
        this.ignoreCase = on;
        this.out += '(?:';
      } else {
        this.ignoreCase = on; // (?i) switches until the enclosing group ends
      }
      return;
    }
    if (rest.startsWith('>')) throw new Error('atomic groups (?>...) have no JavaScript equivalent');
    throw new Error(`the group syntax "(?${rest.slice(0, 3)}" is not supported`);
  }

  classCharacter(char) {
    const p = this.pattern;
    if (char === ']') {
      this.inClass = false;
      this.out += ']';
      return;
    }
    if (char === '[') throw new Error('nested character classes are not supported');
    if (char === '&' && p[this.at] === '&') throw new Error('class intersections (&&) are not supported');
    if (char === '\\') {
      this.out += this.escape(true);
      return;
    }
    if (char === '-') {
      this.out += '-';
      return;
    }
    const startsRange = p[this.at] === '-' && p[this.at + 1] !== undefined && p[this.at + 1] !== ']';
    const endsRange = this.out.endsWith('-') && !/(\\-|\[-|\[\^-)$/.test(this.out);
    if (this.ignoreCase && !startsRange && !endsRange) {
      this.out += swapCase(char).map(escapeForClass).join('');
      return;
    }
    if (this.ignoreCase && /\p{L}/u.test(char)) {
      throw new Error('letter ranges inside case-insensitive groups are not supported');
    }
    this.out += escapeForClass(char);
  }

  // Translates the escape after a backslash; `inClass` says whether we are in [...].
  escape(inClass) {
    const p = this.pattern;
    const char = p[this.at];
    if (char === undefined) throw new Error('the pattern ends with a lone backslash');
    this.at += 1;
    const wrap = (body) => (inClass ? body : `[${body}]`);
    switch (char) {
      case 's': return '\\p{White_Space}';
      case 'S': return '\\P{White_Space}';
      case 'd': return '\\p{Nd}';
      case 'D': return '\\P{Nd}';
      case 'w': return wrap(WORD_CLASS);
      case 'W':
        if (inClass) throw new Error('\\W inside a character class is not supported');
        return `[^${WORD_CLASS}]`;
      case 'h': return wrap('0-9A-Fa-f');
      case 'H':
        if (inClass) throw new Error('\\H inside a character class is not supported');
        return '[^0-9A-Fa-f]';
      case 'b':
        if (inClass) return '\\x08';
        return `(?:(?<=[${WORD_CLASS}])(?![${WORD_CLASS}])|(?<![${WORD_CLASS}])(?=[${WORD_CLASS}]))`;
      case 'B':
        return `(?:(?<=[${WORD_CLASS}])(?=[${WORD_CLASS}])|(?<![${WORD_CLASS}])(?![${WORD_CLASS}]))`;
      case 'A': return '^';
      case 'z': return '$';
      case 'Z': return '(?=\\n?$)';
      case 'p': case 'P': return this.property(char === 'P');
      case 'x': return this.hexEscape();
      case 'n': case 'r': case 't': case 'f': case 'v': case '0': return `\\${char}`;
      case 'u': {
        const hex = p.slice(this.at, this.at + 4);
        if (!/^[0-9A-Fa-f]{4}$/.test(hex)) throw new Error('\\u needs four hex digits');
        this.at += 4;
        return `\\u${hex}`;
      }
      default:
        if (/[A-Za-z0-9]/.test(char)) throw new Error(`the escape \\${char} is not supported`);
        if (inClass) return escapeForClass(char);
        return SYNTAX_CHARACTERS.has(char) ? `\\${char}` : char;
    }
  }

  property(negated) {
    const p = this.pattern;
    if (p[this.at] !== '{') throw new Error('\\p needs a {Name}');
    const close = p.indexOf('}', this.at);
    if (close < 0) throw new Error('unterminated \\p{...}');
    let name = p.slice(this.at + 1, close);
    this.at = close + 1;
    let not = negated;
    if (name.startsWith('^')) {
      not = !not;
      name = name.slice(1);
    }
    const letter = not ? 'P' : 'p';
    for (const candidate of [name, `Script=${name}`]) {
      try {
        new RegExp(`\\p{${candidate}}`, 'u'); // eslint-disable-line no-new
        return `\\${letter}{${candidate}}`;
      } catch { /* try the next spelling */ }
    }
    throw new Error(`the property \\p{${name}} is unknown here`);
  }

  hexEscape() {
    const p = this.pattern;
    if (p[this.at] === '{') {
      const close = p.indexOf('}', this.at);
      const hex = close < 0 ? '' : p.slice(this.at + 1, close);
      if (!/^[0-9A-Fa-f]{1,6}$/.test(hex)) throw new Error('\\x{...} needs hex digits');
      this.at = close + 1;
      return `\\u{${hex}}`;
    }
    const hex = p.slice(this.at, this.at + 2);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new Error('\\x needs two hex digits');
    this.at += 2;
    return `\\x${hex}`;
  }
}
