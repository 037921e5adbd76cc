// The models shipped with the page, trained by this project (web/models/train):
// tiny-english, the small GPT-2 the page opens by itself (its previous-token head
// is what the tutorial teaches with); tiny-english-2, its successor with whole
// words for tokens (web/docs/tiny-english-2.md); and tiny-translator, a BART that
// turns dates written by people into ISO dates (its cross-attention shows which
// source words each digit reads). Their files are ordinary Vite
// assets, fetched only when chosen: files beside the static site, and data:
// URLs inside the one-file offline page, so they open with no network and from file://.
import englishConfig from '../../models/tiny-english/config.json?url';
import englishWeights from '../../models/tiny-english/model.safetensors?url';
import englishTokenizer from '../../models/tiny-english/tokenizer.json?url';
import english2Config from '../../models/tiny-english-2/config.json?url';
import english2Weights from '../../models/tiny-english-2/model.safetensors?url';
import english2Tokenizer from '../../models/tiny-english-2/tokenizer.json?url';
import translatorConfig from '../../models/tiny-translator/config.json?url';
import translatorWeights from '../../models/tiny-translator/model.safetensors?url';
import translatorTokenizer from '../../models/tiny-translator/tokenizer.json?url';

/** The one the page opens on. */
export const builtinModelName = 'tiny-english';

// By name: the files; the text the page offers when the model opens on another model's example;
// and the head it opens on (tiny-translator's alignment head, web/docs/tiny-translator.md), or null.
const builtins = {
  'tiny-english': { config: englishConfig, weights: englishWeights, tokenizer: englishTokenizer, text: null, head: null },
  // Its shape (layers, heads) is read from its config.json when it loads, like any model's: it may be retrained.
  'tiny-english-2': { config: english2Config, weights: english2Weights, tokenizer: english2Tokenizer, text: null, head: null },
  'tiny-translator': {
    config: translatorConfig, weights: translatorWeights, tokenizer: translatorTokenizer,
    text: 'the third of March, 2021', head: { layer: 1, head: 1 },
  },
};

export const builtinModelNames = Object.keys(builtins);
export const isBuiltinModel = (name) => Object.hasOwn(builtins, name);

/** The text a built-in model reads first (null: the page's default sentence). */
export const builtinText = (name) => builtins[name]?.text ?? null;

/** The { layer, head } (from 0) a built-in model opens on, or null to keep the page's. */
export const builtinHead = (name) => builtins[name]?.head ?? null;

async function fetchOk(url, what, signal) {
  const response = await fetch(url, { signal });
  if (!response.ok) throw new Error(`The built-in model's ${what} could not be read (HTTP ${response.status}).`);
  return response;
}

/** A built-in model's files in the shape the model panel hands to the worker. */
export async function fetchBuiltinModel(name, signal) {
  const urls = builtins[name];
  const [config, tokenizer, weights] = await Promise.all([
    fetchOk(urls.config, 'config.json', signal).then((response) => response.text()),
    fetchOk(urls.tokenizer, 'tokenizer.json', signal).then((response) => response.text()),
    fetchOk(urls.weights, 'model.safetensors', signal).then((response) => response.arrayBuffer()),
  ]);
  return { config, tokenizer: { kind: 'tokenizer.json', source: tokenizer }, weights: [weights], folder: name, source: 'builtin' };
}
