// NormalizedText: a string being normalized, with where each piece came from.
//
// Normalizers and pre-tokenizers rewrite the input (lowercase, strip accents,
// spaces to "▁", characters to byte symbols), yet every token must report
// offsets into the *original* string. So each UTF-16 code unit of the current
// text carries the original [start, end) it stands for; a rewritten character
// passes its range to everything it becomes. A token's offsets are then the
// start of its first unit's range and the end of its last unit's range, which
// is how Hugging Face `tokenizers` aligns them too.

/** A piece of text plus, per code unit, the original [start, end) it came from. */
export class NormalizedText {
  /**
   * @param {string} text
   * @param {Int32Array} starts original start per code unit of `text`
   * @param {Int32Array} ends original end per code unit of `text`
   * @param {number} originalStart where this piece begins in the original (kept when the text is empty)
   * @param {number} originalEnd where it ends
   */
  constructor(text, starts, ends, originalStart, originalEnd) {
    this.text = text;
    this.starts = starts;
    this.ends = ends;
    this.originalStart = originalStart;
    this.originalEnd = originalEnd;
  }

  /** The untouched input: unit i stands for [i, i+1), a surrogate pair's two units for both. */
  static fromOriginal(text) {
    const starts = new Int32Array(text.length);
    const ends = new Int32Array(text.length);
    for (let i = 0; i < text.length;) {
      const width = text.codePointAt(i) > 0xFFFF ? 2 : 1;
      for (let k = 0; k < width; k++) {
        starts[i + k] = i;
        ends[i + k] = i + width;
      }
      i += width;
    }
    return new NormalizedText(text, starts, ends, 0, text.length);
  }

  get length() {
    return this.text.length;
  }

  /** The original [start, end) of current units [from, to). */
  originalRange(from, to) {
    if (from >= to) {
      const at = from < this.length ? this.starts[from] : this.originalEnd;
      return [at, at];
    }
    return [this.starts[from], this.ends[to - 1]];
  }

  /** Units [from, to) as a NormalizedText of their own (sharing the alignment arrays). */
  slice(from, to) {
    const [originalStart, originalEnd] = from < to ? this.originalRange(from, to)
      : this.originalRange(from, from);
    return new NormalizedText(this.text.slice(from, to), this.starts.subarray(from, to),
      this.ends.subarray(from, to), originalStart, originalEnd);
  }

  /**
   * Rewrites code point by code point: `rewrite(char, codePoint)` returns the
   * string that replaces it ('' drops it). Everything a character becomes
   * keeps that character's original range.
   */
  mapCharacters(rewrite) {
    // Unchanged characters are copied in runs; no builder at all when nothing changes.
    let builder = null;
    let unchangedFrom = 0;
    for (let i = 0; i < this.text.length;) {
      const codePoint = this.text.codePointAt(i);
      const width = codePoint > 0xFFFF ? 2 : 1;
      const char = width === 1 ? this.text[i] : this.text.slice(i, i + 2);
      const out = rewrite(char, codePoint);
      if (out !== char) {
        builder ??= new Builder(this);
        builder.pushUnits(this, unchangedFrom, i);
        builder.push(out, this.starts[i], this.ends[i + width - 1]);
        unchangedFrom = i + width;
      }
      i += width;
    }
    if (builder === null) return this;
    builder.pushUnits(this, unchangedFrom, this.length);
    return builder.finish();
  }

  /**
   * Rewrites the text from Hugging Face's list of (character, change) pairs
   * (its NormalizedString::transform), given as two arrays of the same
   * length: reading the current characters in
   * order, a change of 0 replaces the next one, -n replaces it and removes n
   * more, +1 inserts a character with the range of the one before. Characters
   * left unread at the end are dropped. Used where Hugging Face builds such a
   * list itself (Precompiled), so offsets come out as its do, quirks included.
   * @param {string[]} chars the new text, one character each
   * @param {number[]} changes
   */
  transform(chars, changes) {
    const builder = new Builder(this);
    let read = 0;
    let start = 0;
    let end = 0;
    for (let k = 0; k < chars.length; k++) {
      const change = changes[k];
      if (change <= 0 && read < this.length) {
        const width = this.text.codePointAt(read) > 0xFFFF ? 2 : 1;
        start = this.starts[read];
        end = this.ends[read + width - 1];
        read += width;
        for (let removed = 0; removed < -change && read < this.length; removed++) {
          read += this.text.codePointAt(read) > 0xFFFF ? 2 : 1;
        }
      }
      builder.push(chars[k], start, end);
    }
    return builder.finish();
  }

  /**
   * Puts `prefix` in front. It takes the first character's original range (as
   * Hugging Face does), so a token holding "▁Hello" still starts at "H". An
   * empty text stays empty: there is no character to attach the prefix to.
   */
  prepend(prefix) {
    if (this.length === 0 || prefix.length === 0) return this;
    const builder = new Builder(this);
    const width = this.text.codePointAt(0) > 0xFFFF ? 2 : 1;
    builder.push(prefix, this.starts[0], this.ends[width - 1]);
    builder.pushUnits(this, 0, this.length);
    return builder.finish();
  }

  /** Appends `suffix`, which takes the last character's range. */
  append(suffix) {
    if (this.length === 0 || suffix.length === 0) return this;
    const builder = new Builder(this);
    builder.pushUnits(this, 0, this.length);
    builder.push(suffix, this.starts[this.length - 1], this.ends[this.length - 1]);
    return builder.finish();
  }

  /**
   * Replaces every match of `pattern` (a global RegExp) with `content`. The
   * replacement takes the original range of the last character it replaced,
   * as in Hugging Face (so "\n    " -> " " points at the last space).
   */
  replaceAll(pattern, content) {
    const builder = new Builder(this);
    let last = 0;
    for (const match of this.text.matchAll(pattern)) {
      const start = match.index;
      const end = start + match[0].length;
      if (end === start) continue; // an empty match replaces nothing
      builder.pushUnits(this, last, start);
      builder.push(content, this.starts[end - 1], this.ends[end - 1]);
      last = end;
    }
    if (last === 0) return this;
    builder.pushUnits(this, last, this.length);
    return builder.finish();
  }

  /**
   * Unicode normalization (NFC, NFD, NFKC, NFKD), aligned as Hugging Face
   * aligns it: every output character keeps the range of the input character
   * it comes from, and a composed character ("e" + U+0301 -> "é") the range of
   * its base character. The text is normalized in clusters (a character and
   * the combining marks after it); if that ever gave a different text from
   * normalizing the whole string (a composition across clusters, which real
   * text hardly has), the whole string is normalized at once and every output
   * character gets the whole range: the text is always exact, only offsets
   * get coarser.
   */
  normalizeUnicode(form) {
    const whole = this.text.normalize(form);
    if (whole === this.text) return this;
    const decomposeForm = form === 'NFKC' || form === 'NFKD' ? 'NFKD' : 'NFD';
    const text = this.text;
    const builder = new Builder(this);
    let unchangedFrom = 0;
    for (let i = 0; i < text.length;) {
      // A cluster: a character and the combining marks / jamo after it.
      let end = i + (text.codePointAt(i) > 0xFFFF ? 2 : 1);
      while (end < text.length && joinsPrevious(text.codePointAt(end))) {
        end += text.codePointAt(end) > 0xFFFF ? 2 : 1;
      }
      // ASCII alone is the same in every form; skip it without making strings.
      if (end === i + 1 && text.charCodeAt(i) < 0x80) {
        i = end;
        continue;
      }
      const cluster = text.slice(i, end);
      const normalized = cluster.normalize(form);
      if (normalized !== cluster) {
        builder.pushUnits(this, unchangedFrom, i);
        this.pushNormalizedCluster(builder, i, end, normalized, decomposeForm);
        unchangedFrom = end;
      }
      i = end;
    }
    builder.pushUnits(this, unchangedFrom, text.length);
    const result = builder.finish();
    if (result.text !== whole) {
      const coarse = new Builder(this);
      coarse.push(whole, this.originalStart, this.originalEnd);
      return coarse.finish();
    }
    return result;
  }

  // Finds where each character of a normalized cluster came from: the input
  // characters are decomposed (remembering their source), and each output
  // character claims the first unclaimed decomposed pieces it is made of.
  pushNormalizedCluster(builder, from, to, normalized, decomposeForm) {
    const stream = [];
    for (let i = from; i < to;) {
      const width = this.text.codePointAt(i) > 0xFFFF ? 2 : 1;
      for (const piece of this.text.slice(i, i + width).normalize(decomposeForm)) {
        stream.push({ piece, start: this.starts[i], end: this.ends[i + width - 1], used: false });
      }
      i += width;
    }
    const claim = (piece) => {
      const entry = stream.find((candidate) => !candidate.used && candidate.piece === piece);
      if (entry) entry.used = true;
      return entry;
    };
    for (const char of normalized) {
      const [base, ...rest] = char.normalize(decomposeForm);
      const origin = claim(base);
      for (const piece of rest) claim(piece);
      if (origin) builder.push(char, origin.start, origin.end);
      else builder.push(char, this.starts[from], this.ends[to - 1]);
    }
  }
}

// True for a character that normalizes together with the one before it:
// combining marks, and Hangul vowel / trailing consonant jamo.
function joinsPrevious(codePoint) {
  if (codePoint < 0x300) return false;
  if ((codePoint >= 0x1160 && codePoint <= 0x11FF) || (codePoint >= 0xD7B0 && codePoint <= 0xD7FF)) return true;
  return COMBINING.test(String.fromCodePoint(codePoint));
}

const COMBINING = /\p{M}/u;

// Accumulates a new text and its alignment, in typed arrays that grow by
// doubling (a megabyte of input makes no per-character garbage).
class Builder {
  constructor(source) {
    this.source = source;
    this.parts = [];
    this.length = 0;
    this.starts = new Int32Array(Math.max(16, source.length + 8));
    this.ends = new Int32Array(this.starts.length);
  }

  reserve(extra) {
    if (this.length + extra <= this.starts.length) return;
    const size = Math.max(this.length + extra, this.starts.length * 2);
    const starts = new Int32Array(size);
    const ends = new Int32Array(size);
    starts.set(this.starts.subarray(0, this.length));
    ends.set(this.ends.subarray(0, this.length));
    this.starts = starts;
    this.ends = ends;
  }

  push(piece, start, end) {
    if (piece.length === 0) return;
    this.reserve(piece.length);
    this.parts.push(piece);
    this.starts.fill(start, this.length, this.length + piece.length);
    this.ends.fill(end, this.length, this.length + piece.length);
    this.length += piece.length;
  }

  pushUnits(from, begin, end) {
    if (end <= begin) return;
    this.reserve(end - begin);
    this.parts.push(from.text.slice(begin, end));
    this.starts.set(from.starts.subarray(begin, end), this.length);
    this.ends.set(from.ends.subarray(begin, end), this.length);
    this.length += end - begin;
  }

  finish() {
    return new NormalizedText(this.parts.join(''), this.starts.subarray(0, this.length),
      this.ends.subarray(0, this.length), this.source.originalStart, this.source.originalEnd);
  }
}
