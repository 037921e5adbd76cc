// The model's top next-token predictions for the last position, or a
// masked-LM head's at each mask token: short ranked lists with a bar per
// probability. The probabilities come from the model worker (softmax of a
// row of the logits); this only draws them.
import { displayToken } from './token-strip.js';

function percent(probability) {
  if (probability === 1) return '100%';
  if (probability >= 0.9995) return '>99.9%'; // "100%" would claim certainty the model does not have
  if (probability >= 0.001) return `${(probability * 100).toFixed(1)}%`;
  return `${(probability * 100).toPrecision(2)}%`;
}

// One ranked list with a bar per probability.
function predictionList(predictions) {
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
  return list;
}

// A masked-LM head (BERT-family checkpoints that carry it): its guesses at
// each mask token typed in the sentence, or how to ask for them.
function renderMaskPredictions(container, maskPredictions, tokens) {
  const heading = document.createElement('h3');
  const note = document.createElement('p');
  note.className = 'hint';
  if (maskPredictions.length === 0) {
    heading.textContent = 'Masked token';
    note.textContent = 'No mask token in the sentence: type [MASK] (<mask> for RoBERTa) where a word should be, ' +
      'and the masked-language-model head guesses it.';
    container.replaceChildren(heading, note);
    return;
  }
  heading.textContent = `Masked token${maskPredictions.length > 1 ? 's' : ''}: the model's top ${maskPredictions[0].predictions.length}`;
  const parts = [heading];
  for (const { position, predictions } of maskPredictions) {
    const label = document.createElement('p');
    label.className = 'prediction-position';
    label.textContent = `“${displayToken(tokens[position])}” (token ${position})`;
    parts.push(label, predictionList(predictions));
  }
  note.textContent = 'Softmax of the masked-LM head\'s row at each mask: what the model would put there, reading both sides.';
  container.replaceChildren(...parts, note);
}

/**
 * @param {HTMLElement} container
 * @param {object} data { predictions: [{ id, token, probability }] | null, lastToken, position, architecture,
 *   maskPredictions: [{ position, predictions }] | null (a masked-LM head's), tokens }
 */
export function renderPredictions(container, { predictions, lastToken, position, architecture, maskPredictions = null, tokens = [] }) {
  if (maskPredictions) {
    renderMaskPredictions(container, maskPredictions, tokens);
    return;
  }
  const heading = document.createElement('h3');
  const note = document.createElement('p');
  note.className = 'hint';
  if (!predictions) {
    heading.textContent = 'Next token';
    note.textContent = architecture === 'bert'
      ? 'This checkpoint has no masked-language-model head (its encoder was saved without it), so there is no guess to show.'
      : 'This model has no language-model head.';
    container.replaceChildren(heading, note);
    return;
  }
  heading.textContent = `Next token after “${displayToken(lastToken)}” (token ${position}): the model's top ${predictions.length}`;
  note.textContent = 'Softmax of the last row of the logits: what the model would write next.';
  container.replaceChildren(heading, predictionList(predictions), note);
}
