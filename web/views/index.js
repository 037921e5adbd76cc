// attnlens/views: the page's attention views as components you mount in any
// element, fed with plain data from anywhere (attnlens, onnxruntime-web,
// transformers.js, a JSON file). No WebAssembly, no dependencies.
//
//   import { heatmap } from 'attnlens/views';
//   const view = heatmap.mount(element, { tokens, weights, heads }, { head: 0 });
//   view.update(undefined, { head: 1 });  view.toCSV();  view.destroy();
//   steps.mount(element, lens.explainSentence({ text }), { head: 0, step: 6 });
//
// Each view draws a scene (a pure function of data and options: heatmap.js,
// lines.js, model-grid.js) and adds the interactions: exact values on hover
// and with the arrow keys, selection (a `select` event), token highlighting,
// a width that follows its container, exports and theming. What they share is
// view-core.js; each kind is a module of its own: view-heatmap.js (heatmap,
// headAverage), view-lines.js, view-grid.js (allHeads, modelView),
// view-table.js, steps.js. The library's results become their data through
// records.js (fromExplanation, fromRun, fromValueWeighted).
import { mountSteps } from './steps.js';
import { mountView } from './view-core.js';
import { allHeadsKind, modelViewKind } from './view-grid.js';
import { headAverageKind, heatmapKind } from './view-heatmap.js';
import { linesKind } from './view-lines.js';
import { tableKind } from './view-table.js';

export { AttentionDataError, attentionData, fromLayers } from './attention-data.js';
export { fromExplanation, fromRun, fromValueWeighted } from './records.js';
export { headRoles } from './head-roles.js';
export { weightLut, weightCss } from './colors.js';
export { stepsOf } from './steps.js';
export { darkTheme, lightTheme } from './theme.js';

function defineView(kind) {
  return Object.freeze({ mount: (element, data, options) => mountView(kind, element, data, options) });
}

/** One head's weights: queries down, keys across, viridis, a legend; hover or arrow keys read exact values. */
export const heatmap = defineView(heatmapKind);
/** Every head of one layer as small multiples on one colour scale; click (or Enter) selects a head. */
export const allHeads = defineView(allHeadsKind);
/** Every layer x every head (BertViz's model view); click (or Enter) selects one. */
export const modelView = defineView(modelViewKind);
/** BertViz's head view: queries left, keys right, one line per pair with the weight as opacity. */
export const lines = defineView(linesKind);
/** The cell-by-cell mean of one layer's heads, as a heatmap. */
export const headAverage = defineView(headAverageKind);
/** The weights as an HTML table: the text alternative of every chart. */
export const table = defineView(tableKind);

/** One head's path from X to the output, a step at a time; its data is an Explanation (explainSentence, explainMatrices, model.explain). */
export const steps = Object.freeze({ mount: mountSteps });

export const views = Object.freeze({ heatmap, allHeads, modelView, lines, headAverage, table, steps });

/** `mount(element, data, { view: 'heatmap', ...options })`: any view by name. */
export function mount(element, data, { view = 'heatmap', ...options } = {}) {
  if (!Object.hasOwn(views, view)) throw new TypeError(`attnlens/views: unknown view "${view}"; one of ${Object.keys(views).join(', ')}`);
  return views[view].mount(element, data, options);
}
