// "Saved in this browser": the models "Load from URL" downloaded, which the
// library keeps in Cache Storage (cachedModels), each with Open (read from
// the cache, no download) and Remove (clearModelCache). The model opened
// last comes first, so a new visit offers it again.
import { cachedModels, clearModelCache } from 'attnlens';
import { errorText } from '../error-text.js';
import { modelName } from './hub-files.js';

const LAST = 'attnlens:last-model';

// localStorage may be refused (privacy settings, file:// in some browsers): remembering is optional.
function lastOpened() {
  try {
    return globalThis.localStorage?.getItem(LAST) ?? null;
  } catch {
    return null;
  }
}

/**
 * @param ui { saved (the section), savedList (its <ul>) }
 * @param options { open(url), formatBytes(bytes), onError(message, error), onList(models): told each refresh }
 */
export function createSavedModels(ui, { open, formatBytes, onError, onList = () => {} }) {
  function item(model, last) {
    const name = model.name ?? modelName({ url: model.url });
    const li = document.createElement('li');
    const label = document.createElement('span');
    label.className = 'saved-name';
    label.textContent = name;
    label.title = model.url;
    const about = document.createElement('span');
    about.className = 'hint';
    about.textContent = `${formatBytes(model.bytes)}${last ? ' · opened last time' : ''}`;
    const openButton = document.createElement('button');
    openButton.type = 'button';
    openButton.textContent = 'Open';
    openButton.setAttribute('aria-label', `Open ${name} (saved, no download)`);
    openButton.addEventListener('click', () => open(model.url));
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.textContent = 'Remove';
    remove.setAttribute('aria-label', `Remove ${name} from this browser`);
    remove.addEventListener('click', async () => {
      try {
        await clearModelCache(model.url);
      } catch (error) {
        onError(`The saved model could not be removed: ${errorText(error)}`, error);
      }
      refresh();
    });
    li.append(label, ' ', about, ' ', openButton, ' ', remove);
    return li;
  }

  async function refresh() {
    let models = [];
    try {
      models = await cachedModels();
    } catch {
      // No Cache Storage here (an opaque origin): nothing is saved.
    }
    const last = lastOpened();
    models.sort((a, b) => (b.url === last) - (a.url === last));
    ui.savedList.replaceChildren(...models.map((model) => item(model, model.url === last)));
    ui.saved.hidden = models.length === 0;
    onList(models);
  }

  /** After a URL model loaded: it is the one to offer next time. */
  function remember(url) {
    try {
      globalThis.localStorage?.setItem(LAST, url);
    } catch {
      // see lastOpened()
    }
    return refresh();
  }

  return { refresh, remember };
}
