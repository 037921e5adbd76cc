// The share link (the page's settings in the URL hash, kept current) and the
// export buttons: PNG/SVG of the current picture, CSV/JSON of its weights,
// and "Copy share link". The file formats themselves are in export.js.
import { download, weightsCsv, weightsJson } from './export.js';
import { defaults, settingsToHash } from './settings.js';
import { scenePng } from '../views/export.js';
import { heatmapScene } from '../views/heatmap.js';
import { renderSvg } from '../views/scene.js';

/**
 * @param ui the page's elements; state the page's state
 * @param trained the model controller (model/controller.js): a link names the model whose run is shown
 */
export function createLink({ ui, state, trained }) {
  // The settings a link holds: the layer and the model only while a model's run is shown.
  function linkSettings() {
    if (trained.active()) return { ...state.settings, engine: 'model', model: state.trained.url ?? state.trained.name };
    return { ...state.settings, engine: 'random', model: defaults.model, layer: 0 };
  }

  function currentLinkSettings() {
    const settings = linkSettings();
    if (state.source === 'matrices') settings.matrices = state.matrixText;
    return settings;
  }

  // The share field shows the link at once; the address bar follows after the
  // next frame. history.replaceState is a synchronous round trip to the
  // browser process (2-16 ms in headless Chromium on the 2-core machine, see
  // tests/bench/typing.mjs), which would delay every heatmap drawn as you type.
  let addressBarHash = null; // waiting for the address bar
  function updateLink() {
    const hash = settingsToHash(linkSettings()) + (state.source === 'matrices'
      ? `&m=${encodeURIComponent(state.matrixText)}` : '');
    ui.shareUrl.value = new URL(hash, location.href).href;
    if (addressBarHash === null) requestAnimationFrame(() => setTimeout(writeAddressBar));
    addressBarHash = hash;
  }

  function writeAddressBar() {
    history.replaceState(null, '', addressBarHash);
    addressBarHash = null;
  }

  return { currentLinkSettings, updateLink };
}

/**
 * Wires the export buttons and "Copy share link".
 * @param panels the view panels (panels.js): the current picture and its title
 * @param link the share link (createLink)
 */
export function wireExports({ ui, state, trained, panels, link }) {
  const $ = (id) => document.getElementById(id);

  const layerShown = () => (state.model.hasLayers ? state.settings.layer : 0);

  function fileStem() {
    const view = state.settings.view === 'steps' ? 'heatmap' : state.settings.view;
    const layer = trained.active() && view !== 'model' ? `-layer${state.settings.layer + 1}` : '';
    return `attnlens-${view}${layer}${view === 'heatmap' || view === 'lines' ? `-head${state.settings.head + 1}` : ''}`;
  }

  // PNG/SVG write the current picture, as the mounted view exports it; the
  // step view (no chart of its own) exports its head's heatmap.
  function headScene() {
    const head = state.settings.head;
    return heatmapScene({ queryTokens: state.model.queryTokens, keyTokens: state.model.keyTokens, values: state.headValues[head], title: panels.headTitle(head) }).scene;
  }

  $('export-png').addEventListener('click', async () => {
    if (!state.model) return;
    const chart = panels.chartExports();
    download(`${fileStem()}.png`, chart ? await chart.png() : await scenePng(headScene()));
  });
  $('export-svg').addEventListener('click', () => {
    if (!state.model) return;
    const chart = panels.chartExports();
    const svg = chart ? chart.svg() : renderSvg(headScene(), { title: `attnlens ${state.settings.view}` });
    download(`${fileStem()}.svg`, new Blob([svg], { type: 'image/svg+xml' }));
  });
  $('export-csv').addEventListener('click', () => {
    if (!state.model) return;
    const csv = weightsCsv(state.model, layerShown());
    download(trained.active() ? `attnlens-weights-layer${state.settings.layer + 1}.csv` : 'attnlens-weights.csv', new Blob([csv], { type: 'text/csv' }));
  });
  $('export-json').addEventListener('click', () => {
    if (!state.model) return;
    const model = trained.active() ? { name: state.trained.name, info: state.trained.info, ids: state.run.ids } : null;
    const json = weightsJson(state.model, layerShown(), { settings: link.currentLinkSettings(), version: state.lens.version, trained: model });
    download(trained.active() ? `attnlens-weights-layer${state.settings.layer + 1}.json` : 'attnlens-weights.json', new Blob([json], { type: 'application/json' }));
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
