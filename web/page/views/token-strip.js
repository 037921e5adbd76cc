// The token strip: every token the model reads, in order, as a chip with its
// position. Real tokenizers split text in surprising places (" café" is one
// GPT-2 token, "tired" may be two BERT pieces), and seeing the pieces
// explains the rows and columns of every chart. Text is set with
// textContent only: a token is never HTML.

import { displayToken } from '../../views/tokens.js';

export { displayToken };

// A new chip: its position, and a place for its text.
function tokenItem(index) {
  const item = document.createElement('li');
  const position = document.createElement('span');
  position.className = 'token-index';
  position.textContent = String(index);
  const text = document.createElement('span');
  text.className = 'token-text';
  item.append(position, text);
  return item;
}

/**
 * Shows `tokens` in `list`, reusing the chips it shows already: typing at the end of 1,024 tokens changes the
 * last chip or two, and rebuilding all 3,000 elements made the browser lay the whole strip out again (60 ms).
 * @param {HTMLElement} list  an <ol>
 * @param {string[]} tokens
 * @param {object} options { ids: number[] | null (shown on hover), maxShown }
 */
export function renderTokenStrip(list, tokens, { ids = null, maxShown = 1024 } = {}) {
  const count = Math.min(tokens.length, maxShown);
  for (const more of list.querySelectorAll(':scope > .token-more')) more.remove();
  const items = [...list.children];
  for (const extra of items.splice(count)) extra.remove();
  const added = document.createDocumentFragment();
  for (let index = 0; index < count; index += 1) {
    const item = items[index] ?? added.appendChild(tokenItem(index));
    const text = item.lastElementChild;
    const shown = displayToken(tokens[index]);
    if (text.textContent !== shown) text.textContent = shown;
    const title = ids ? `token ${index}: id ${ids[index]}` : `token ${index}`;
    if (item.title !== title) item.title = title;
  }
  if (tokens.length > maxShown) {
    const more = document.createElement('li');
    more.className = 'token-more';
    more.textContent = `… ${tokens.length - maxShown} more`;
    added.append(more);
  }
  list.append(added);
}
