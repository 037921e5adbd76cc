// The small-multiples views: allHeads (every head of one layer) and
// modelView (every layer x every head, BertViz's model view), on one colour
// scale with its legend beside them. Each small heatmap is a button: a click
// or Enter selects that head (a `select` event) and shows it as current.
import { legendLabel } from './attention-data.js';
import { headRoles } from './head-roles.js';
import { legendScene } from './heatmap.js';
import { anyHidden, modelGridScene, multipleSize, multiplesScene, renderModelGrid } from './model-grid.js';
import { renderCanvas } from './scene.js';
import { layerBlocks } from './export.js';

const legendWidth = 72; // the legend beside the small multiples, and its gap

function createGrid(view, modelView) {
  const surface = view.make('div', 'attnlens-grid');
  surface.setAttribute('role', 'group');
  const legend = view.make('canvas', 'attnlens-legend');
  legend.setAttribute('role', 'img');
  view.scroll.classList.add('attnlens-with-legend');
  view.scroll.append(surface, legend);

  const heads = () => view.model.heads;
  // The page's size rule, less each multiple's 2 px padding on both sides.
  const modelGrid = () => view.options.gridSize ?? multipleSize(view.available() - 4 * heads() - 4 - legendWidth, heads());
  const columns = () => Math.max(1, Math.min(heads(), view.options.columns ?? Math.floor((view.available() - legendWidth) / 150)));
  const allHeadsGrid = () => view.options.gridSize ?? Math.max(36, Math.min(220, Math.floor((view.available() - legendWidth) / columns()) - 28));
  const gridData = () => ({
    ...view.tokens(),
    layers: modelView ? view.model.layers : 1,
    legend: legendLabel(view.model),
    heads: heads(),
    pool: view.model.pool,
    weightsOf: (layer, head) => view.headValues(modelView ? layer : view.options.layer, head),
    hiddenOf: (layer) => view.hidden(modelView ? layer : view.options.layer),
    current: { layer: modelView ? view.options.layer : 0, head: view.options.head },
  });
  // modelView with `roles`: each head's measured role (self-attention only), once per data.
  let rolesCache = null;
  function roles() {
    const { model } = view;
    // Pooled weights (blocks' maxima) cannot measure a head's mean weight on the previous or first token.
    if (!view.options.roles || model.queryTokens !== model.keyTokens || model.pool > 1) return null;
    if (rolesCache?.model !== model) rolesCache = { model, roles: headRoles(model.weights, model) };
    return rolesCache.roles;
  }

  return {
    surface,
    scene() {
      const { options } = view;
      if (modelView) return { scene: modelGridScene(gridData(), { maxGrid: modelGrid(), token: options.token, title: view.title() }) };
      const headValues = Array.from({ length: heads() }, (_, h) => view.headValues(options.layer, h));
      return { scene: multiplesScene({ ...view.tokens(), headValues, pool: view.model.pool, legend: legendLabel(view.model), hidden: view.hidden() }, { maxGrid: allHeadsGrid(), columns: columns(), token: options.token }) };
    },
    render(theme) {
      const label = legendLabel(view.model);
      legend.setAttribute('aria-label', `Colour scale: viridis, ${label} 0 (dark purple) to 1 (yellow)`);
      renderCanvas(legend, legendScene(120, { label, hidden: anyHidden(gridData()) }), { theme });
      renderModelGrid(surface, gridData(), {
        maxGrid: modelView ? modelGrid() : allHeadsGrid(),
        layerLabels: modelView, titles: !modelView, token: view.options.token, theme,
        columns: modelView ? heads() : columns(), roles: modelView ? roles() : null,
        onOpen: (layer, head) => {
          view.setOptions({ head, ...(modelView ? { layer } : {}) });
          surface.querySelector(`button[data-layer="${modelView ? layer : 0}"][data-head="${head}"]`)?.focus();
          view.emit('select', { view: view.name, layer: modelView ? layer : view.options.layer, head });
        },
      });
    },
    blocks() {
      const { model, options } = view;
      const layers = modelView ? Array.from({ length: model.layers }, (_, l) => l) : [options.layer];
      return layers.flatMap((layer) => layerBlocks(model, layer));
    },
    json(matrices) {
      const { model, options } = view;
      if (!modelView) return { layer: options.layer, shape: [model.heads, model.n, model.nKeys], weights: matrices };
      return { shape: [model.layers, model.heads, model.n, model.nKeys], weights: Array.from({ length: model.layers }, (_, l) => matrices.slice(l * model.heads, (l + 1) * model.heads)) };
    },
  };
}

export const allHeadsKind = {
  name: 'allHeads',
  drawsPooled: true,
  create: (view) => createGrid(view, false),
  title: ({ model, options }) => (model.hasLayers ? `Layer ${options.layer + 1} of ${model.layers}` : undefined),
};
export const modelViewKind = { name: 'modelView', drawsPooled: true, create: (view) => createGrid(view, true), title: () => undefined };
