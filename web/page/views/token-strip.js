// The token strip: every token the model reads, in order, as a chip with its
// position. Real tokenizers split text in surprising places (" café" is one
// GPT-2 token, "tired" may be two BERT pieces), and seeing the pieces
// explains the rows and columns of every chart. Text is set with
// textContent only: a token is never HTML.

import { displayToken } from '../../views/tokens.js';

export { displayToken };

/**
 * @param {HTMLElement} list  an <ol>
 * @param {string[]} tokens
 * @param {object} options { ids: number[] | null (shown on hover), maxShown }
 */
export function renderTokenStrip(list, tokens, { ids = null, maxShown = 1024 } = {}) {
  const shown = tokens.slice(0, maxShown).map((token, index) => {
    const item = document.createElement('li');
    const position = document.createElement('span');
    position.className = 'token-index';
    position.textContent = String(index);
    const text = document.createElement('span');
    text.className = 'token-text';
    text.textContent = displayToken(token);
    item.title = ids ? `token ${index}: id ${ids[index]}` : `token ${index}`;
    item.append(position, text);
    return item;
  });
  if (tokens.length > maxShown) {
    const more = document.createElement('li');
    more.className = 'token-more';
    more.textContent = `… ${tokens.length - maxShown} more`;
    shown.push(more);
  }
  list.replaceChildren(...shown);
}
