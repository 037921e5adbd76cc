// The neuron view under Step by step (attnlens/views/analysis): for the
// chosen head of the record the steps show (the sentence's, the matrices', or
// the model's explained layer), the query vector, each key's vector, their
// product and dot product, scaled, beside the softmax weight. The query token
// is picked in the view itself (its token buttons) and kept while the text's
// length allows.
import { neuron } from '../views/analysis.js';
import { stepsRecord } from './panels.js';

export function createNeuronPanel({ store }) {
  const container = document.getElementById('neuron');
  const section = document.getElementById('neuron-section');
  let shown = null; // { view, record }

  function render(state) {
    const record = state.settings.view === 'steps' && section.open ? stepsRecord(state) : null;
    if (!record) {
      shown?.view.destroy();
      shown = null;
      return;
    }
    if (shown?.record === record && shown.head === state.settings.head) return;
    const options = { head: Math.min(state.settings.head, record.heads - 1) };
    if (shown) shown.view.update(record, options);
    else shown = { view: neuron.mount(container, record, options) };
    Object.assign(shown, { record, head: state.settings.head });
  }

  store.subscribe((state, changed) => {
    if (changed.has('shown') || changed.has('explanations') || changed.has('settings')) render(state);
  });
  section.addEventListener('toggle', () => render(store.state));
}
