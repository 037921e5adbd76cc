// The model the page opens by itself: tiny-english, the small GPT-2 this
// project trained on WordNet's definitions and Debian's fortunes (web/models/train)
// and ships in web/models/tiny-english/. Its three files are ordinary Vite
// assets: files beside the static site, and data: URLs inside the one-file
// offline page, so it opens with no network and from file://.
import configUrl from '../../models/tiny-english/config.json?url';
import weightsUrl from '../../models/tiny-english/model.safetensors?url';
import tokenizerUrl from '../../models/tiny-english/tokenizer.json?url';

export const builtinModelName = 'tiny-english';

async function fetchOk(url, what, signal) {
  const response = await fetch(url, { signal });
  if (!response.ok) throw new Error(`The built-in model's ${what} could not be read (HTTP ${response.status}).`);
  return response;
}

/** The built-in model's files in the shape the model panel hands to the worker. */
export async function fetchBuiltinModel(signal) {
  const [config, tokenizer, weights] = await Promise.all([
    fetchOk(configUrl, 'config.json', signal).then((response) => response.text()),
    fetchOk(tokenizerUrl, 'tokenizer.json', signal).then((response) => response.text()),
    fetchOk(weightsUrl, 'model.safetensors', signal).then((response) => response.arrayBuffer()),
  ]);
  return { config, tokenizer: { kind: 'tokenizer.json', source: tokenizer }, weights: [weights], folder: builtinModelName, source: 'builtin' };
}
