// Reading an element's attributes: numbers, flags and the view's name, with
// errors that name the element, the attribute and what it held.

/** The views an element can draw, by the names the `view` attribute takes. */
export const viewNames = ['heatmap', 'allHeads', 'modelView', 'lines', 'headAverage', 'table', 'steps'];

// "all-heads", "allheads" and "allHeads" all name the same view: attribute
// values are often typed in kebab case, or lower-cased by templating tools.
const byLooseName = new Map(viewNames.map((name) => [name.toLowerCase(), name]));

/** Thrown for an attribute that cannot be used; the message names it. */
export class AttributeError extends Error {
  constructor(element, message) {
    super(`<${element.localName}> ${message}`);
    this.name = 'AttributeError';
  }
}

/** The attribute as a number, `fallback` when absent or empty. */
export function numberAttribute(element, name, fallback) {
  const text = element.getAttribute(name);
  if (text === null || text.trim() === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value)) throw new AttributeError(element, `${name} must be a number, got "${text}"`);
  return value;
}

/** An index attribute (layer, head, step, token): a whole number >= 0. */
export function indexAttribute(element, name, fallback) {
  const value = numberAttribute(element, name, fallback);
  if (value !== fallback && !(Number.isInteger(value) && value >= 0)) {
    throw new AttributeError(element, `${name} must be a whole number from 0 (they count from 0), got "${element.getAttribute(name)}"`);
  }
  return value;
}

// A boolean attribute is on when present, as in HTML (`causal`, `causal=""`);
// `causal="false"` is off too, since templating tools often write it that way.
export function flagAttribute(element, name) {
  const text = element.getAttribute(name);
  return text !== null && text.trim().toLowerCase() !== 'false';
}

export function viewAttribute(element, fallback) {
  const text = element.getAttribute('view');
  if (text === null || text.trim() === '') return fallback;
  const view = byLooseName.get(text.trim().toLowerCase().replaceAll('-', ''));
  if (!view) throw new AttributeError(element, `view must be one of ${viewNames.join(', ')}, got "${text}"`);
  return view;
}
