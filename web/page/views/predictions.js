// The model's top next-token predictions for the last position: a short
// ranked list with a bar per probability. The probabilities come from the
// model worker (softmax of the last row of the logits); this only draws them.
import { displayToken } from './token-strip.js';

function percent(probability) {
  if (probability === 1) return '100%';
  if (probability >= 0.9995) return '>99.9%'; // "100%" would claim certainty the model does not have
  if (probability >= 0.001) return `${(probability * 100).toFixed(1)}%`;
  return `${(probability * 100).toPrecision(2)}%`;
}

/**
 * @param {HTMLElement} container
 * @param {object} data { predictions: [{ id, token, probability }] | null, lastToken, position, architecture }
 */
export function renderPredictions(container, { predictions, lastToken, position, architecture }) {
  const heading = document.createElement('h3');
  const note = document.createElement('p');
  note.className = 'hint';
  if (!predictions) {
    heading.textContent = 'Next token';
    note.textContent = architecture === 'bert'
      ? 'BERT has no language-model head here (its encoder is read without the cls.* heads), so there is no next-token guess.'
      : 'This model has no language-model head.';
    container.replaceChildren(heading, note);
    return;
  }
  heading.textContent = `Next token after “${displayToken(lastToken)}” (token ${position}): the model's top ${predictions.length}`;
  const list = document.createElement('ol');
  list.className = 'prediction-list';
  for (const { id, token, probability } of predictions) {
    const item = document.createElement('li');
    const label = document.createElement('span');
    label.className = 'prediction-token';
    label.textContent = displayToken(token);
    label.title = `id ${id}`;
    const bar = document.createElement('span');
    bar.className = 'prediction-bar';
    const fill = document.createElement('span');
    fill.style.width = `${Math.max(0.5, probability * 100)}%`;
    bar.append(fill);
    const value = document.createElement('span');
    value.className = 'prediction-value';
    value.textContent = percent(probability);
    item.append(label, bar, value);
    list.append(item);
  }
  note.textContent = 'Softmax of the last row of the logits: what the model would write next.';
  container.replaceChildren(heading, list, note);
}
