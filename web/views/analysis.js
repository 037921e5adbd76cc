// attnlens/views/analysis: views of what model.analyze measures, apart from
// attnlens/views so that pages that only plot attention do not download
// them (the views' size budget, tests/browser/views.test.mjs).
//
//   import { headScores } from 'attnlens/views/analysis';
//   const view = headScores.mount(element, model.analyze({ text }), { sortBy: 'previousToken' });
import { mountHeadScores } from './view-head-scores.js';
import { mountLogitLens } from './view-logit-lens.js';
import { mountNeuron } from './view-neuron.js';

export { headScoresData, scoreRows } from './head-scores.js';
export { lensCell, logitLensData } from './logit-lens.js';
export { neuronOf, neuronRecord } from './neuron.js';

/** Every head of every layer scored by each detector (model.analyze's scores): a small grid per score, and a table that sorts by any. */
export const headScores = Object.freeze({ mount: mountHeadScores });

/** The logit lens (model.analyze's logitLens): layers × positions, each cell the token that layer would predict next and its probability. */
export const logitLens = Object.freeze({ mount: mountLogitLens });

/** BertViz's neuron view of an Explanation (model.explain): one head's query vector, each key vector, their product, the dot product scaled, and the softmax. */
export const neuron = Object.freeze({ mount: mountNeuron });
