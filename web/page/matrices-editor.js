// The custom-matrices editor: the worked example, matrices written as
// readable JSON, and its buttons. What is typed is read by views/input.js
// (readMatrices, shared with <attnlens-matrices>) and computed by the
// matrices source (sources.js).
import { readMatrices } from '../views/input.js';
import { errorText } from './error-text.js';
import { defaults } from './settings.js';

// The worked example of issue 2: 3 tokens, d = 4, one head, W_O = identity.
export const workedExample = Object.freeze({
  x: [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]],
  wq: [[0.1, 0.2, 0, 0], [0, 0.1, 0.3, 0], [0.1, 0, 0, 0.2], [0, 0, 0.2, 0.3]],
  wk: [[0.2, 0, 0.1, 0], [0, 0.1, 0, 0.3], [0.1, 0, 0.2, 0], [0, 0.2, 0, 0.1]],
  wv: [[0, 0.1, 0, 0.2], [0.2, 0, 0.2, 0], [0, 0.3, 0.1, 0], [0.1, 0, 0, 0.3]],
});

// JSON with one matrix row per line: readable in the editor.
export function matricesToJson(matrices) {
  const entries = Object.entries(matrices).map(([name, value]) => {
    if (!Array.isArray(value)) return `  "${name}": ${JSON.stringify(value)}`;
    const rows = value.map((row) => `    ${JSON.stringify(row)}`).join(',\n');
    return `  "${name}": [\n${rows}\n  ]`;
  });
  return `{\n${entries.join(',\n')}\n}`;
}

/**
 * Wires "Compute these matrices", the worked example and "Back to the sentence".
 * @param store the page's store (source, matrixText, matrixError); computing compute.js
 * @returns useMatrices(text): shows `text`'s matrices (an inline error when they cannot be read)
 */
export function createMatricesEditor({ ui, store, computing }) {
  const $ = (id) => document.getElementById(id);

  function useMatrices(text) {
    ui.matrixEditor.value = text;
    try {
      readMatrices(text); // inline error before touching the views
    } catch (error) {
      store.set({ matrixText: text, matrixError: errorText(error) });
      return false;
    }
    store.set({ matrixText: text, source: 'matrices', step: 0, settings: { ...store.state.settings, head: 0 } });
    computing.now();
    return store.state.matrixError === null;
  }

  $('compute-matrices').addEventListener('click', () => useMatrices(ui.matrixEditor.value));
  for (const id of ['load-example', 'load-example-editor']) {
    $(id).addEventListener('click', () => {
      // The example's published numbers assume no mask and temperature 1:
      // reset those two, or a reader checking by hand would see other values.
      store.setSettings({ causal: false, temperature: defaults.temperature });
      ui.causal.checked = false;
      ui.temperature.value = String(defaults.temperature);
      if (useMatrices(matricesToJson(workedExample))) store.setSettings({ view: 'steps' });
      ui.step.focus();
    });
  }
  $('back-to-sentence').addEventListener('click', () => {
    store.set({ source: 'sentence' });
    computing.now();
    ui.sentence.focus();
  });
  return { useMatrices };
}
