// The page's settings and their round trip through the URL hash, so a link
// restores the sentence and every control. Values read from a URL are
// checked and fall back to defaults: a hand-edited link never breaks the page.
// With a trained model the link holds the layer and the model's name or URL;
// the model itself is never in it (the page asks before downloading one).
// The page opens on the built-in trained model (tiny-english); `engine=random`
// in a link opens it on random projections instead.

export const defaultSentence = 'The animal didn\'t cross the street because it was too tired.';

export const defaults = Object.freeze({
  text: defaultSentence,
  context: '',
  dModel: 64,
  heads: 4,
  seed: 1,
  causal: false,
  temperature: 1,
  identity: false,
  view: 'heatmap',
  head: 0,
  layer: 0,
  engine: 'model', // 'model' (a trained model) or 'random' (random projections)
  model: 'tiny-english', // a trained model's URL, or its name (the built-in one, or one opened from files)
  valueWeighted: false, // a trained model's views draw value-weighted attention instead of its weights
  attentionKind: 'cross', // an encoder-decoder's: 'cross', 'encoder' or 'decoder' self-attention
});

export const attentionKinds = ['cross', 'encoder', 'decoder'];

export const modelWidths = [8, 16, 32, 64, 128, 256];
export const headCounts = [1, 2, 4, 8];
export const views = ['heatmap', 'multiples', 'lines', 'average', 'steps', 'model', 'analysis'];

// Large enough for any hub model's layers and heads; the model clamps them.
const maxModelIndex = 4096;

const keys = {
  text: 's', context: 'c', dModel: 'd', heads: 'h', seed: 'seed', causal: 'causal',
  temperature: 't', identity: 'id', view: 'view', head: 'head', layer: 'layer', engine: 'engine', model: 'model', valueWeighted: 'vw', attentionKind: 'ak',
};

/**
 * The link's hash: what differs from the defaults (short links). `opening`: the layer and
 * head (from 0) the page opens the linked model on when the link names neither, which a
 * built-in model chooses (its telling head): the link holds them when they differ from it.
 */
export function settingsToHash(settings, opening = { layer: defaults.layer, head: defaults.head }) {
  const params = new URLSearchParams();
  for (const [name, key] of Object.entries(keys)) {
    const value = settings[name];
    const implied = Object.hasOwn(opening, name) ? opening[name] : defaults[name];
    if (value === implied && name !== 'text') continue;
    const text = name === 'head' || name === 'layer' ? String(value + 1) : typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
    params.set(key, text);
  }
  return `#${params.toString()}`;
}

/** Whether the hash names the setting `name` (e.g. 'layer'), rather than leaving it to the defaults. */
export function hashNames(hash, name) {
  return new URLSearchParams(hash.replace(/^#/, '')).has(keys[name]);
}

/** The seed `text` names, a whole number from 0 to 2^32 - 1 (the generator's), or null. */
export function seedFrom(text) {
  if (text === null || text.trim() === '') return null;
  const value = Number(text);
  return Number.isInteger(value) && value >= 0 && value <= 0xffffffff ? value : null;
}

/** The temperature `text` names, above 0 and at most 100 (the page's field), or null. */
export function temperatureFrom(text) {
  if (text === null || text.trim() === '') return null;
  const value = Number(text);
  return value > 0 && value <= 100 ? value : null;
}

function integerIn(text, allowed, fallback) {
  if (text === null || text.trim() === '') return fallback;
  const value = Number(text);
  return Number.isInteger(value) && (allowed ? allowed.includes(value) : true) ? value : fallback;
}

export function settingsFromHash(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const read = (name) => params.get(keys[name]);
  const settings = { ...defaults };
  if (read('text') !== null) settings.text = read('text');
  if (read('context') !== null) settings.context = read('context');
  settings.dModel = integerIn(read('dModel'), modelWidths, defaults.dModel);
  settings.heads = integerIn(read('heads'), headCounts, defaults.heads);
  if (settings.dModel % settings.heads !== 0) settings.heads = 1;
  settings.seed = seedFrom(read('seed')) ?? defaults.seed;
  settings.causal = read('causal') === '1';
  settings.temperature = temperatureFrom(read('temperature')) ?? defaults.temperature;
  settings.identity = read('identity') === '1';
  settings.valueWeighted = read('valueWeighted') === '1';
  if (attentionKinds.includes(read('attentionKind'))) settings.attentionKind = read('attentionKind');
  settings.view = views.includes(read('view')) ? read('view') : defaults.view;
  settings.engine = read('engine') === 'random' ? 'random' : 'model';
  if (read('model') !== null) settings.model = read('model');
  const trained = settings.engine === 'model' && settings.model !== '';
  // Heads of a trained model are only known once it is loaded: keep any index until then.
  const headLimit = trained ? maxModelIndex : settings.heads;
  const head = integerIn(read('head'), null, 1) - 1; // 1-based in links, like the head selector
  settings.head = head >= 0 && head < headLimit ? head : 0;
  const layer = integerIn(read('layer'), null, 1) - 1;
  settings.layer = trained && layer >= 0 && layer < maxModelIndex ? layer : 0;
  return settings;
}
