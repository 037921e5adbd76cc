// attnlens/elements: importing it registers five custom elements that compute
// attention live in the page (one shared WebAssembly module) and draw it with
// attnlens/views. For people who write HTML, not JavaScript:
//   <attnlens-sentence text="The cat sat on the mat." heads="4" view="heatmap"></attnlens-sentence>
//   <attnlens-matrices view="steps"><script type="application/json">{"X": ..., "W_Q": ...}</script></attnlens-matrices>
//   <attnlens-model src="./my-model/" text="The cat sat" view="modelView"></attnlens-model>
//   <attnlens-head-scores src="./my-model/" text="The cat sat" sort-by="previousToken"></attnlens-head-scores>
//   <attnlens-neuron src="./my-model/" text="The cat sat" layer="0" head="1"></attnlens-neuron>
// Every attribute is listed in README.md beside this file.
import { AttnlensHeadScores } from './head-scores-element.js';
import { AttnlensMatrices } from './matrices-element.js';
import { AttnlensModel } from './model-element.js';
import { AttnlensNeuron } from './neuron-element.js';
import { AttnlensSentence } from './sentence-element.js';

export { AttentionElement } from './attention-element.js';
export { AttributeError, viewNames } from './attributes.js';
export { AttnlensHeadScores, AttnlensMatrices, AttnlensModel, AttnlensNeuron, AttnlensSentence };

export const elements = Object.freeze({
  'attnlens-sentence': AttnlensSentence,
  'attnlens-matrices': AttnlensMatrices,
  'attnlens-model': AttnlensModel,
  'attnlens-head-scores': AttnlensHeadScores,
  'attnlens-neuron': AttnlensNeuron,
});

// Block boxes by default (custom elements are inline), at zero specificity so
// any rule of the page wins; the error line in a colour of its own.
const css = ':where(attnlens-sentence,attnlens-matrices,attnlens-model,attnlens-head-scores,attnlens-neuron){display:block}'
  + ':where(.attnlens-error){color:var(--attnlens-error,#b00020);white-space:pre-wrap}'
  + ':where(.attnlens-status){color:var(--attnlens-muted,#555)}';

if (globalThis.customElements && globalThis.document) {
  if (!document.querySelector('style[data-attnlens="elements"]')) {
    const style = document.createElement('style');
    style.dataset.attnlens = 'elements';
    style.textContent = css;
    document.head.prepend(style);
  }
  // Importing twice (two bundles on one page) must not throw.
  for (const [name, element] of Object.entries(elements)) {
    if (!customElements.get(name)) customElements.define(name, element);
  }
}
