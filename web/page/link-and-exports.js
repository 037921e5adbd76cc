// The share link (the page's settings in the URL hash, kept current from the
// store) and the export buttons: PNG/SVG of the current picture, CSV/JSON of
// its weights (on the Analysis tab: the rollout's picture, the head scores as
// CSV, scores and rollout as JSON), and "Copy share link". The file formats
// themselves are in export.js.
import { showsModel } from './compute.js';
import { errorText } from './error-text.js';
import { analysisJson, download, kindsJson, weightsCsv, weightsJson } from './export.js';
import { headTitle, layerValues } from './panels.js';
import { defaults, settingsToHash } from './settings.js';
import { attentionData, legendLabel, quantityTitle } from '../views/attention-data.js';
import { layerBlocks, scenePng } from '../views/export.js';
import { builtinHead } from './model/builtin-model.js';
import { awaitsHeads, fetchedHeads, heldData, heldTranslationData, lacks } from './model/held-attention.js';
import { heatmapScene } from '../views/heatmap.js';
import { renderSvg } from '../views/scene.js';

// The settings a link holds: the layer and the model only while a model's run is shown.
function linkSettings(state) {
  if (showsModel(state)) return { ...state.settings, engine: 'model', model: state.trained.url ?? state.trained.name };
  return { ...state.settings, engine: 'random', model: defaults.model, layer: 0, valueWeighted: false };
}

function currentLinkSettings(state) {
  const settings = linkSettings(state);
  if (state.source === 'matrices') settings.matrices = state.matrixText;
  return settings;
}

/** Keeps the share link current: after each new picture, and when a setting other than the text changes. */
export function createLink({ ui, store }) {
  // The share field shows the link at once; the address bar follows after the
  // next frame. history.replaceState is a synchronous round trip to the
  // browser process (2-16 ms in headless Chromium on the 2-core machine, see
  // tests/bench/typing.mjs), which would delay every heatmap drawn as you type.
  let addressBarHash = null; // waiting for the address bar
  function updateLink() {
    const state = store.state;
    const settings = linkSettings(state);
    const hash = settingsToHash(settings, builtinHead(settings.model) ?? undefined) + (state.source === 'matrices'
      ? `&m=${encodeURIComponent(state.matrixText)}` : '');
    ui.shareUrl.value = new URL(hash, location.href).href;
    if (addressBarHash === null) requestAnimationFrame(() => setTimeout(writeAddressBar));
    addressBarHash = hash;
  }

  function writeAddressBar() {
    history.replaceState(null, '', addressBarHash);
    addressBarHash = null;
  }

  // The text, the matrices and the model are linked with the picture they give
  // (what cannot be computed keeps the last link).
  let before = store.state;
  store.subscribe((state, changed) => {
    const { text, context, ...rest } = state.settings;
    const settingChanged = Object.keys(rest).some((key) => rest[key] !== before.settings[key]);
    before = state;
    if (settingChanged || changed.has('shown')) updateLink();
  });

  return { updateLink };
}

/**
 * Wires the export buttons and "Copy share link".
 * @param panels the view panels (panels.js): the current picture
 * @param link the share link (createLink)
 * @param analysis the Analysis tab (analysis-panel.js): its scores' CSV and its rollout's picture
 */
export function wireExports({ ui, store, panels, link, analysis, source }) {
  const $ = (id) => document.getElementById(id);
  // The state when there is a picture to export, else null.
  const shown = () => (store.state.shown ? store.state : null);
  // The shown layer's every head, for CSV and JSON (export.js): a model's run that holds fewer (held-attention.js)
  // fetches them, so an export holds what it claims. Null when a newer run replaced the shown one meanwhile.
  async function shownLayer(state) {
    const { shown, settings } = state;
    if (!shown.held) {
      const { model } = shown;
      const layer = model.hasLayers ? settings.layer : 0;
      return { model, blocks: layerBlocks(model, layer), layer, layers: model.layers, hasLayers: model.hasLayers };
    }
    const { info } = shown.trained;
    // An encoder-decoder's translation: the kind shown's layer (held-attention.js heldTranslationData).
    const kind = shown.record.encoderDecoder ? settings.attentionKind : null;
    const wanted = { layer: settings.layer, heads: Array.from({ length: info.heads }, (_, head) => head), ...(kind ? { kind } : {}) };
    let { record } = shown;
    if (lacks(shown, wanted)) {
      let fetched;
      try {
        fetched = await (kind
          ? source.translationWeights(record, { kinds: [kind], layers: [settings.layer], heads: wanted.heads, pool: 1 }, { coalesce: false })
          : source.weights(record.text, fetchedHeads(wanted, info, record.n, record.attentionQuantity), { coalesce: false }));
      } catch (error) {
        ui.readout.textContent = `Nothing exported: the layer's heads could not be fetched. ${errorText(error)}`;
        return null;
      }
      if (store.state.shown?.record !== record) return null;
      const { forward, ...attentionFields } = fetched;
      record = { ...record, ...attentionFields };
    }
    const model = attentionData((kind ? heldTranslationData(record, kind) : heldData(record)).data);
    const blocks = layerBlocks(model, 0).map((block) => ({ ...block, layer: settings.layer }));
    return { model, blocks, layer: settings.layer, layers: kind ? shown.held.layers : info.layers, hasLayers: true };
  }
  const fromModel = (state) => state.shown.from === 'model';
  const onAnalysis = () => store.state.settings.view === 'analysis';
  // The Analysis tab before it has measured anything: a button that did nothing would look broken.
  function nothingMeasured(state) {
    ui.readout.textContent = fromModel(state)
      ? 'Nothing to export yet: the analysis of this text is still being measured.'
      : 'Nothing to export: analyses need a trained model (choose “A trained model” under Model).';
  }
  // The chart whose picture PNG/SVG write: on the Analysis tab its rollout (null until measured).
  const chartExports = () => (onAnalysis() ? analysis.chartExports() : panels.chartExports());

  function fileStem(state) {
    const view = state.settings.view === 'steps' ? 'heatmap' : state.settings.view;
    const layer = fromModel(state) && view !== 'model' ? `-layer${state.settings.layer + 1}` : '';
    return `attnlens-${view}${layer}${view === 'heatmap' || view === 'lines' ? `-head${state.settings.head + 1}` : ''}`;
  }

  // PNG/SVG write the current picture, as the mounted view exports it; the
  // step view (no chart of its own) exports its head's heatmap.
  function headScene(state) {
    const { head } = state.settings;
    const { queryTokens, keyTokens } = state.shown.model;
    const { model } = state.shown;
    const title = quantityTitle(model, headTitle(state, head));
    return heatmapScene({ queryTokens, keyTokens, values: layerValues(state).values, title, legend: legendLabel(model) }).scene;
  }

  $('export-png').addEventListener('click', async () => {
    const state = shown();
    if (!state || awaitsHeads(state.shown, state.settings)) return;
    const chart = chartExports();
    if (!chart && onAnalysis()) {
      nothingMeasured(state);
      return;
    }
    download(`${fileStem(state)}.png`, chart ? await chart.png() : await scenePng(headScene(state)));
  });
  $('export-svg').addEventListener('click', () => {
    const state = shown();
    if (!state || awaitsHeads(state.shown, state.settings)) return;
    const chart = chartExports();
    if (!chart && onAnalysis()) {
      nothingMeasured(state);
      return;
    }
    const svg = chart ? chart.svg() : renderSvg(headScene(state), { title: `attnlens ${state.settings.view}` });
    download(`${fileStem(state)}.svg`, new Blob([svg], { type: 'image/svg+xml' }));
  });
  const weightsFile = (state, extension) => {
    const what = state.shown.model.valueWeighted ? 'value-weighted' : 'weights';
    return fromModel(state) ? `attnlens-${what}-layer${state.settings.layer + 1}.${extension}` : `attnlens-${what}.${extension}`;
  };
  $('export-csv').addEventListener('click', async () => {
    const state = shown();
    if (!state) return;
    if (onAnalysis()) {
      const csv = analysis.scoresCsv();
      if (csv) download(`attnlens-head-scores.csv`, new Blob([csv], { type: 'text/csv' }));
      else nothingMeasured(state);
      return;
    }
    const kinds = chartExports()?.csv; // an encoder-decoder's model view: its three kinds, every layer
    if (kinds) {
      download(`${fileStem(state)}.csv`, new Blob([kinds()], { type: 'text/csv' }));
      return;
    }
    const layer = await shownLayer(state);
    if (layer) download(weightsFile(state, 'csv'), new Blob([weightsCsv(layer)], { type: 'text/csv' }));
  });
  $('export-json').addEventListener('click', async () => {
    const state = shown();
    if (!state) return;
    const { trained, record } = state.shown;
    const about = fromModel(state) ? { name: trained.name, info: trained.info, ids: record.ids } : null;
    if (onAnalysis()) {
      if (!about || state.analysis?.trained !== trained) {
        nothingMeasured(state);
        return;
      }
      const json = analysisJson(state, { settings: currentLinkSettings(state), version: state.lens.version, trained: about });
      download('attnlens-analysis.json', new Blob([json], { type: 'application/json' }));
      return;
    }
    const envelope = { settings: currentLinkSettings(state), version: state.lens.version, trained: about };
    const kinds = chartExports()?.json; // an encoder-decoder's model view: its three kinds, every layer
    if (kinds) {
      download(`${fileStem(state)}.json`, new Blob([kindsJson(kinds(), { ...envelope, targetIds: record.targetIds })], { type: 'application/json' }));
      return;
    }
    const layer = await shownLayer(state);
    if (!layer) return;
    download(weightsFile(state, 'json'), new Blob([weightsJson(layer, envelope)], { type: 'application/json' }));
  });
  $('copy-link').addEventListener('click', async () => {
    link.updateLink();
    try {
      await navigator.clipboard.writeText(ui.shareUrl.value);
      ui.readout.textContent = 'Link copied: it restores the sentence and every setting.';
    } catch {
      // No clipboard permission (e.g. file://): select the link for Ctrl+C instead.
      ui.shareUrl.focus();
      ui.shareUrl.select();
      ui.readout.textContent = 'Press Ctrl+C (⌘C) to copy the selected link.';
    }
  });
}
