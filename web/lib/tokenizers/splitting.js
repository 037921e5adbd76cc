// Splitting a NormalizedText into pieces: what every pre-tokenizer is made of.
//
// A pattern finds "matches" (a regex's matches, or single characters passing a
// test); the text becomes a list of [start, end, isMatch] runs covering it, and
// a behaviour says what happens to the matches, with Hugging Face's names:
//   Removed             matches dropped (whitespace splitting)
//   Isolated            each match is a piece of its own (punctuation)
//   MergedWithPrevious  a match joins the piece before it
//   MergedWithNext      a match joins the piece after it (Metaspace: "▁" starts a word)
//   Contiguous          adjacent runs of one kind form one piece (Digits)
// Empty pieces are dropped, as Hugging Face drops them.

/** Hugging Face's split behaviour names. */
export const BEHAVIORS = ['Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous'];

/** Runs [start, end, isMatch] of a global RegExp over `text`; empty matches are ignored. */
export function regexRuns(text, regex, invert = false) {
  const runs = [];
  let last = 0;
  for (const match of text.matchAll(regex)) {
    const start = match.index;
    const end = start + match[0].length;
    if (end === start) continue;
    if (last < start) runs.push([last, start, invert]);
    runs.push([start, end, !invert]);
    last = end;
  }
  if (last < text.length) runs.push([last, text.length, invert]);
  return runs;
}

/** Runs where each character passing `test(char)` is a match of its own. */
export function characterRuns(text, test) {
  const runs = [];
  let last = 0;
  for (let i = 0; i < text.length;) {
    const width = text.codePointAt(i) > 0xFFFF ? 2 : 1;
    const char = width === 1 ? text[i] : text.slice(i, i + 2);
    if (test(char)) {
      if (last < i) runs.push([last, i, false]);
      runs.push([i, i + width, true]);
      last = i + width;
    }
    i += width;
  }
  if (last < text.length) runs.push([last, text.length, false]);
  return runs;
}

// Applies a behaviour: returns [start, end] pieces to keep.
function piecesOf(runs, behavior) {
  const pieces = [];
  switch (behavior) {
    case 'Removed':
      for (const [start, end, isMatch] of runs) if (!isMatch) pieces.push([start, end]);
      return pieces;
    case 'Isolated':
      for (const [start, end] of runs) pieces.push([start, end]);
      return pieces;
    case 'MergedWithPrevious': {
      let previousMatch = false;
      for (const [start, end, isMatch] of runs) {
        if (isMatch && !previousMatch && pieces.length > 0) pieces[pieces.length - 1][1] = end;
        else pieces.push([start, end]);
        previousMatch = isMatch;
      }
      return pieces;
    }
    case 'MergedWithNext': {
      let nextMatch = false;
      for (let r = runs.length - 1; r >= 0; r--) {
        const [start, end, isMatch] = runs[r];
        if (isMatch && !nextMatch && pieces.length > 0) pieces[pieces.length - 1][0] = start;
        else pieces.push([start, end]);
        nextMatch = isMatch;
      }
      return pieces.reverse();
    }
    case 'Contiguous': {
      // Neighbouring runs of the same kind join (with invert, the non-matches
      // can be neighbours too).
      let previousMatch = false;
      for (const [start, end, isMatch] of runs) {
        if (isMatch === previousMatch && pieces.length > 0) pieces[pieces.length - 1][1] = end;
        else pieces.push([start, end]);
        previousMatch = isMatch;
      }
      return pieces;
    }
    default:
      throw new Error(`unknown split behavior ${JSON.stringify(behavior)}`);
  }
}

/** Splits `text` (a NormalizedText) by `runs` with `behavior`; returns the non-empty pieces. */
export function splitText(text, runs, behavior) {
  return piecesOf(runs, behavior).filter(([start, end]) => end > start)
    .map(([start, end]) => (start === 0 && end === text.length ? text : text.slice(start, end)));
}
