// The form: settings shown in and read back from the controls, the inline
// error messages, and wireForm: what typing and the controls change in the
// store, and when they ask for a computation.
import { headCounts, modelWidths, seedFrom, temperatureFrom } from './settings.js';

export function fillSelect(select, values, selected, label = String) {
  select.replaceChildren(...values.map((value) => {
    const option = document.createElement('option');
    option.value = String(value);
    option.textContent = label(value);
    option.selected = value === selected;
    return option;
  }));
}

export function showSettings(ui, s) {
  ui.sentence.value = s.text;
  ui.context.value = s.context;
  fillSelect(ui.dModel, modelWidths, s.dModel);
  fillSelect(ui.heads, headCounts.filter((h) => s.dModel % h === 0), s.heads);
  ui.seed.value = String(s.seed);
  ui.temperature.value = String(s.temperature);
  ui.causal.checked = s.causal;
  ui.identity.checked = s.identity;
  ui.valueWeighted.checked = s.valueWeighted;
}

/** The form's settings (a new object): `settings` with what the controls hold. */
export function readSettings(ui, settings) {
  const dModel = Number(ui.dModel.value);
  // Keep heads a divisor of d_model: the select only offers those. Refilled only when
  // d_model changes, not on every keystroke in the sentence.
  if (dModel !== settings.dModel) fillSelect(ui.heads, headCounts.filter((h) => dModel % h === 0), Number(ui.heads.value));
  if (!ui.heads.value) ui.heads.value = '1';
  return {
    ...settings,
    text: ui.sentence.value,
    context: ui.context.value,
    dModel,
    heads: Number(ui.heads.value),
    // A value out of range keeps the last good one (wireForm puts it back in its field and says why).
    seed: seedFrom(ui.seed.value) ?? settings.seed,
    temperature: temperatureFrom(ui.temperature.value) ?? settings.temperature,
    causal: ui.causal.checked,
    identity: ui.identity.checked,
  };
}

const ranges = {
  seed: { read: seedFrom, range: 'a whole number from 0 to 4294967295' },
  temperature: { read: temperatureFrom, range: 'a number above 0, at most 100' },
};

// A seed or temperature out of range goes back to the one the picture has, and the message says why.
function restoreOutOfRange(ui, settings, name) {
  const typed = ui[name].value.trim();
  if (ranges[name].read(typed) !== null) return null;
  ui[name].value = String(settings[name]);
  return `${name} must be ${ranges[name].range}${typed === '' ? '' : `, got ${typed}`}: it stays ${settings[name]}.`;
}

/** Shows `message` in `element`, or hides it when there is none. */
export function showError(element, message) {
  element.hidden = !message;
  element.textContent = message ?? '';
}

/**
 * Wires the sentence, the settings, the head and view choices, the table toggle and the step buttons.
 * @param store the page's store; computing compute.js (soon() while typing, now() otherwise)
 */
export function wireForm({ ui, store, computing }) {
  const fromSentence = () => store.set({ source: 'sentence', settings: readSettings(ui, store.state.settings) });
  for (const field of [ui.sentence, ui.context]) {
    field.addEventListener('input', () => {
      fromSentence();
      computing.soon();
    });
    field.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey) {
        event.preventDefault(); // a sentence has no line breaks; Enter means "compute now"
        fromSentence();
        computing.now();
      }
    });
  }
  // Causal mask and temperature apply to typed matrices too; the others only
  // shape the sentence pipeline, so touching them returns to the sentence.
  for (const control of [ui.dModel, ui.heads, ui.seed, ui.identity, ui.temperature, ui.causal]) {
    control.addEventListener('change', () => {
      const name = control === ui.seed ? 'seed' : control === ui.temperature ? 'temperature' : null;
      const problem = name && restoreOutOfRange(ui, store.state.settings, name);
      if (problem) {
        store.set({ error: problem });
        return;
      }
      if (control !== ui.temperature && control !== ui.causal) store.set({ source: 'sentence' });
      store.set({ settings: readSettings(ui, store.state.settings) });
      computing.now();
    });
  }
  ui.head.addEventListener('change', () => store.setSettings({ head: Number(ui.head.value) - 1 }));
  // Weights or value-weighted attention: the worker computes the latter only while this is on.
  ui.valueWeighted.addEventListener('change', () => {
    store.setSettings({ valueWeighted: ui.valueWeighted.checked });
    computing.now();
  });
  for (const button of document.querySelectorAll('[data-view]')) {
    button.addEventListener('click', () => store.setSettings({ view: button.dataset.view }));
  }
  ui.toggleTable.addEventListener('click', () => store.set({ tableShown: !store.state.tableShown }));
  const moveStep = (delta) => store.set({ step: Math.max(0, store.state.step + delta) });
  ui.stepPrev.addEventListener('click', () => moveStep(-1));
  ui.stepNext.addEventListener('click', () => moveStep(1));
  document.getElementById('panel-steps').addEventListener('keydown', (event) => {
    if (event.target.closest('input, textarea, select')) return;
    if (event.key === 'ArrowRight' || event.key === 'PageDown') moveStep(1);
    else if (event.key === 'ArrowLeft' || event.key === 'PageUp') moveStep(-1);
    else return;
    event.preventDefault();
  });
}
