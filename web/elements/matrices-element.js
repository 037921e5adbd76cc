// <attnlens-matrices view="steps"> with X and the weight matrices as JSON in a
// <script type="application/json"> child (read by views/input.js), or in a shared
// one named by id (matrices="#worked-example": one example, several figures):
// multi-head attention on the reader's own numbers (lens.explainMatrices), live.
// The heads, causal and temperature attributes override the JSON's.
import { load } from '../lib/browser.js';
import { AttributeError, flagAttribute, numberAttribute } from './attributes.js';
import { AttentionElement } from './attention-element.js';
import { readMatrices } from '../views/input.js';
import { fromExplanation } from '../views/records.js';

const jsonChild = ':scope > script[type="application/json"]';

export class AttnlensMatrices extends AttentionElement {
  static ownAttributes = ['matrices', 'heads', 'causal', 'temperature'];

  #matrices = null;
  // The shared script named by the `matrices` attribute, watched while it is the source.
  #shared = null;
  #sharedObserver = new MutationObserver(() => this.refresh());
  // Editing the JSON child (a tutorial's own editor, or devtools) recomputes;
  // the views' own elements, added inside this element too, do not.
  #observer = new MutationObserver((records) => {
    const touchesJson = (node) => node?.nodeName === 'SCRIPT' || node?.parentNode?.nodeName === 'SCRIPT';
    if (records.some((record) => touchesJson(record.target) || [...record.addedNodes, ...record.removedNodes].some(touchesJson))) this.refresh();
  });

  /** The matrices as an object (the JSON's shape, parsed); set it to use them instead of the JSON (shared or child), null to go back. */
  get matrices() {
    return this.#matrices;
  }

  set matrices(value) {
    this.#matrices = value;
    this.refresh();
  }

  connectedCallback() {
    this.#observer.observe(this, { childList: true, subtree: true, characterData: true });
    super.connectedCallback();
  }

  disconnectedCallback() {
    this.#observer.disconnect();
    this.#watchShared(null);
    super.disconnectedCallback();
  }

  async compute(view) {
    // Connected as the parser reads the opening tag, before the JSON inside it:
    // read it once the document is parsed.
    if (this.#matrices === null && this.ownerDocument.readyState === 'loading') {
      this.ownerDocument.addEventListener('DOMContentLoaded', () => this.refresh(), { once: true });
      return null;
    }
    const { options, tokens, contextTokens } = this.#read();
    if (this.hasAttribute('heads')) options.heads = numberAttribute(this, 'heads');
    if (this.hasAttribute('causal')) options.causal = flagAttribute(this, 'causal');
    if (this.hasAttribute('temperature')) options.temperature = numberAttribute(this, 'temperature');
    const lens = await load();
    // The JSON's row labels, where the library has none for matrices.
    const explanation = { ...lens.explainMatrices(options), tokens, contextTokens };
    return { data: view === 'steps' ? explanation : fromExplanation(explanation), result: explanation };
  }

  #read() {
    if (this.#matrices !== null) {
      this.#watchShared(null);
      return this.readJson(this.#matrices, 'auto');
    }
    if (this.hasAttribute('matrices')) return this.#readShared(this.getAttribute('matrices'));
    this.#watchShared(null);
    const script = this.querySelector(jsonChild);
    if (!script) throw new TypeError('needs its matrices as JSON: in a child <script type="application/json">{"X": [[...]], "W_Q": [[...]], "W_K": [[...]], "W_V": [[...]]}</script>, or in one elsewhere named by matrices="#its-id"');
    return this.readJson(script.textContent);
  }

  /** The matrices of a JSON text or object (views/input.js readMatrices); <attnlens-neuron> reads more shapes. */
  readJson(json, format = 'json') {
    return readMatrices(json, { format });
  }

  // matrices="#id": the JSON of the <script type="application/json" id="id"> in this element's document.
  #readShared(selector) {
    const id = /^#([^\s#.]+)$/.exec(selector.trim())?.[1];
    if (!id) {
      this.#watchShared(null);
      throw new AttributeError(this, `matrices must name a <script type="application/json"> by its id, like matrices="#worked-example", got "${selector}"`);
    }
    const root = this.getRootNode();
    const script = (root.getElementById ? root : this.ownerDocument).getElementById(id);
    this.#watchShared(script);
    if (!script) throw new AttributeError(this, `matrices="${selector}": there is no element with id "${id}" in the document`);
    if (script.localName !== 'script' || script.type !== 'application/json') {
      throw new AttributeError(this, `matrices="${selector}" must name a <script type="application/json">, not a <${script.localName}${script.type ? ` type="${script.type}"` : ''}>`);
    }
    try {
      return this.readJson(script.textContent);
    } catch (error) {
      error.message = error.message.replace(/^JSON/, `JSON of matrices="${selector}"`);
      throw error;
    }
  }

  // Editing the shared script's text (a tutorial's editor) recomputes every element using it.
  #watchShared(script) {
    if (script === this.#shared) return;
    this.#sharedObserver.disconnect();
    this.#shared = script;
    if (script) this.#sharedObserver.observe(script, { childList: true, subtree: true, characterData: true });
  }
}
