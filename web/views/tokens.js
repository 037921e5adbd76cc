// Token labels. A token is always text: views set it with textContent, canvas
// fillText or an escaped SVG text node, never as HTML.

const visibleWhitespace = { ' ': '␣', '\n': '↵', '\r': '␍', '\t': '⇥' };

/** A label that shows the whitespace a token carries (" the" -> "␣the"); the token itself is unchanged. */
export function displayToken(token) {
  if (token === '') return '∅';
  return token.replace(/[ \n\r\t]/g, (space) => visibleWhitespace[space]);
}

/** At most `max` characters, with an ellipsis when cut. */
export function shortLabel(token, max) {
  const text = displayToken(token);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A CSV field: quoted when it holds a comma, quote or line break, or starts or ends with a space (tokens often do). */
export function csvField(text) {
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
