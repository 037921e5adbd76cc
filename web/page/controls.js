// The form: settings shown in and read back from the controls, and the
// inline error messages. No computing here.
import { defaults, headCounts, modelWidths } from './settings.js';

export function fillSelect(select, values, selected) {
  select.replaceChildren(...values.map((value) => {
    const option = document.createElement('option');
    option.value = String(value);
    option.textContent = String(value);
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
}

export function readSettings(ui, s) {
  s.text = ui.sentence.value;
  s.context = ui.context.value;
  s.dModel = Number(ui.dModel.value);
  // Keep heads a divisor of d_model: the select only offers those.
  fillSelect(ui.heads, headCounts.filter((h) => s.dModel % h === 0), Number(ui.heads.value));
  if (!ui.heads.value) ui.heads.value = '1';
  s.heads = Number(ui.heads.value);
  const seed = Number(ui.seed.value);
  s.seed = Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff ? seed : defaults.seed;
  const temperature = Number(ui.temperature.value);
  s.temperature = temperature > 0 ? temperature : defaults.temperature;
  s.causal = ui.causal.checked;
  s.identity = ui.identity.checked;
}

/** Shows `message` in `element`, or hides it when there is none. */
export function showError(element, message) {
  element.hidden = !message;
  element.textContent = message ?? '';
}
