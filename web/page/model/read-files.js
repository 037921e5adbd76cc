// Reading the user's files: File -> bytes with progress, and the files of a
// dropped folder. Everything stays in this browser tab.
import { errorText } from '../error-text.js';

// Reads in chunks (File.stream) so a 500 MB checkpoint reports progress and
// the page stays responsive; one ArrayBuffer of the file's size is filled.
export async function readFileBytes(file, onBytes = () => {}) {
  try {
    if (typeof file.stream !== 'function') return await file.arrayBuffer();
    const bytes = new Uint8Array(file.size);
    const reader = file.stream().getReader();
    let offset = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes.set(value, offset);
      offset += value.length;
      onBytes(offset);
    }
    return bytes.buffer;
  } catch (error) {
    throw new Error(`Could not read ${file.name}: ${errorText(error)}`);
  }
}

export async function readFileText(file) {
  try {
    return await file.text();
  } catch (error) {
    throw new Error(`Could not read ${file.name}: ${errorText(error)}`);
  }
}

// A dropped folder arrives as a FileSystemDirectoryEntry: walk it (readEntries
// returns at most 100 entries per call, so call it until it returns none).
function entryFiles(entry, path) {
  if (entry.isFile) {
    return new Promise((resolve, reject) => entry.file((file) => {
      resolve([Object.assign(file, { path: `${path}${file.name}` })]);
    }, reject));
  }
  const reader = entry.createReader();
  return new Promise((resolve, reject) => {
    const files = [];
    const more = () => reader.readEntries(async (entries) => {
      if (entries.length === 0) {
        resolve(files);
        return;
      }
      for (const child of entries) files.push(...await entryFiles(child, `${path}${entry.name}/`));
      more();
    }, reject);
    more();
  });
}

/** The files of a drop: dropped folders are walked, plain files are taken as they are. */
export async function droppedFiles(dataTransfer) {
  const entries = Array.from(dataTransfer.items ?? [], (item) => (item.kind === 'file' ? item.webkitGetAsEntry?.() : null));
  if (entries.length === 0 || entries.some((entry) => !entry)) return Array.from(dataTransfer.files ?? []);
  const nested = await Promise.all(entries.map((entry) => entryFiles(entry, '')));
  return nested.flat();
}
