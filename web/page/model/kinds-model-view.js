// The model view of an encoder-decoder, as BertViz's encoder-decoder model
// view shows it: the encoder's self-attention, the decoder's self-attention
// and the cross-attention side by side, each every layer × every head of one
// run (attnlens/views modelView three times, each over fromRun's kind).
// Mounted by panels.js in the model view's box in place of the one grid.
import { modelView } from '../../views/index.js';

export const attentionKindTitles = { encoder: 'Encoder self-attention', decoder: 'Decoder self-attention', cross: 'Cross-attention (target × source)' };

/**
 * @param {HTMLElement} box where the three grids go
 * @param {object} options the model view's options, plus kinds: [{ kind, data, gridSize, onSelect }]
 * @returns a view like the others: update(data, options), destroy(), toPNG/toSVG (the cross-attention grid's)
 */
function mount(box, _data, { kinds, ...options }) {
  const element = document.createElement('div');
  element.className = 'model-kinds';
  box.append(element);
  const views = kinds.map(({ kind, data, gridSize, onSelect }) => {
    const part = document.createElement('section');
    part.setAttribute('aria-label', attentionKindTitles[kind]);
    element.append(part);
    return { kind, view: modelView.mount(part, data, { ...options, title: attentionKindTitles[kind], gridSize, onSelect }) };
  });
  const cross = () => views.find(({ kind }) => kind === 'cross').view;
  return {
    element,
    get layout() { return null; },
    update(_next, { kinds: nextKinds, ...nextOptions }) {
      nextKinds.forEach(({ data, gridSize, onSelect }, index) => views[index].view.update(data, { ...nextOptions, title: attentionKindTitles[views[index].kind], gridSize, onSelect }));
    },
    destroy() {
      for (const { view } of views) view.destroy();
      element.remove();
    },
    toPNG: () => cross().toPNG(),
    toSVG: () => cross().toSVG(),
  };
}

export const kindsModelView = { mount };
