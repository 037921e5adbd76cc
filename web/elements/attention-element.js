// What every attnlens element shares: reactive attributes (any number of
// changes in one task recompute once, in a microtask), drawing the chosen view
// with attnlens/views, and errors shown as text inside the element and sent as
// an `error` event. Subclasses only compute: `compute(view, options)` returns
// the view's data. The view is drawn in the element itself (no shadow root),
// so the page's CSS custom properties (--attnlens-*) and fonts reach it.
import { views } from '../views/index.js';
import { AttributeError, indexAttribute, viewAttribute } from './attributes.js';

// Outside a browser (a server render importing the package) there is no
// HTMLElement: the classes still load, and nothing is registered.
const ElementBase = globalThis.HTMLElement ?? class {};

export class AttentionElement extends ElementBase {
  /** Attributes every element reads; subclasses add theirs in `ownAttributes`. */
  static commonAttributes = ['view', 'layer', 'head', 'step', 'token'];
  static ownAttributes = [];
  static defaultView = 'heatmap';
  /** The views the element can draw, by name (attnlens/views'; <attnlens-head-scores> has its own). */
  static views = views;

  static get observedAttributes() {
    return [...this.commonAttributes, ...this.ownAttributes];
  }

  #mounted = null; // the mounted view ({ update, destroy, ... }) and its name
  #mountedName = null;
  #message = null; // the <p> with an error or a status line
  #queued = false;
  #generation = 0; // increases per computation: a late answer to older attributes is dropped

  /** What the last computation returned (an Explanation, or a model's run), or null. */
  result = null;
  /** The last error, or null once a computation succeeds. */
  error = null;

  /** The mounted view (see attnlens/views), or null while there is none. */
  get view() {
    return this.#mounted;
  }

  connectedCallback() {
    this.refresh();
  }

  disconnectedCallback() {
    this.#generation += 1;
    this.#clear();
  }

  attributeChangedCallback(name, before, after) {
    if (before !== after) this.refresh();
  }

  /** Recomputes and redraws, once, in a microtask: setting five attributes in a row computes once. */
  refresh() {
    if (this.#queued) return;
    this.#queued = true;
    queueMicrotask(() => {
      this.#queued = false;
      if (this.isConnected) this.#run();
    });
  }

  /** The view to draw and its options, read from the attributes; an element with another kind of view overrides it. */
  viewChoice() {
    const view = viewAttribute(this, this.constructor.defaultView);
    // Without a `step` attribute the steps view keeps the step the reader went to.
    const kept = this.#mountedName === 'steps' ? this.#mounted.step : 0;
    const options = view === 'steps'
      ? { head: indexAttribute(this, 'head', undefined), step: indexAttribute(this, 'step', kept) }
      : { layer: indexAttribute(this, 'layer', 0), head: indexAttribute(this, 'head', 0), token: indexAttribute(this, 'token', null) };
    return { view, options };
  }

  /** Subclasses: resolves to { data, result } for `view` (a name of attnlens/views), or null to wait. */
  async compute() {
    throw new Error(`<${this.localName}> does not compute anything`);
  }

  /** A line of text in the element while something slow runs (loading a model); null removes it. */
  showStatus(text) {
    this.#say(text, 'status');
  }

  async #run() {
    const generation = ++this.#generation;
    try {
      const { view, options } = this.viewChoice();
      const computed = await this.compute(view, options);
      if (generation !== this.#generation || computed === null) return; // null: not ready yet, it will refresh
      this.#show(view, computed.data, options);
      this.result = computed.result;
      this.error = null;
      this.#say(null);
      this.dispatchEvent(new CustomEvent('ready', { detail: { view, result: computed.result } }));
    } catch (error) {
      if (generation !== this.#generation) return;
      this.#clear();
      this.error = error;
      const message = error instanceof AttributeError ? error.message : `<${this.localName}> ${error.message}`;
      this.#say(message, 'alert');
      this.dispatchEvent(new CustomEvent('error', { detail: { error, message } }));
    }
  }

  #show(name, data, options) {
    if (this.#mountedName === name) {
      this.#mounted.update(data, options);
      return;
    }
    this.#clear();
    this.#mounted = this.constructor.views[name].mount(this, data, options);
    this.#mountedName = name;
  }

  #clear() {
    this.#mounted?.destroy();
    this.#mounted = null;
    this.#mountedName = null;
  }

  // Text only (textContent): a message may quote an attribute the page's author typed.
  #say(text, role) {
    if (text === null) {
      this.#message?.remove();
      this.#message = null;
      return;
    }
    this.#message ??= this.ownerDocument.createElement('p');
    this.#message.className = `attnlens-${role === 'alert' ? 'error' : 'status'}`;
    this.#message.setAttribute('role', role);
    this.#message.textContent = text;
    if (!this.#message.isConnected) this.append(this.#message);
  }
}
