// Assembles the worked tutorial into dist/tutorial/: its page, stylesheet and
// controls script, the one-file elements build (dist/attnlens-elements.js,
// made by the page step before this runs) and the tiny-english and
// tiny-translator models as classic scripts. Every file sits beside index.html and loads with a plain
// <script src>, so the folder opens from file:// with no server.
//   node web/tutorial/build.mjs   (after `node web/scripts/build.mjs page`)
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeModelScript } from '../scripts/model-script.mjs';

const tutorialDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(tutorialDir, '..', '..');

export const tutorialOutDir = join(repoRoot, 'dist', 'tutorial');
const elementsBuild = join(repoRoot, 'dist', 'attnlens-elements.js');
const pageFiles = ['index.html', 'tutorial.css', 'controls.js', 'raw-weights.js', 'alignment.js'];

export function buildTutorial({ outDir = tutorialOutDir } = {}) {
  if (!existsSync(elementsBuild)) {
    throw new Error(`the tutorial needs ${elementsBuild}: run \`node web/scripts/build.mjs page\` first`);
  }
  mkdirSync(outDir, { recursive: true });
  for (const name of pageFiles) copyFileSync(join(tutorialDir, name), join(outDir, name));
  copyFileSync(elementsBuild, join(outDir, 'attnlens-elements.js'));
  for (const name of ['tiny-english', 'tiny-translator']) {
    writeModelScript(join(repoRoot, 'web', 'models', name), name, join(outDir, `attnlens-${name}.js`));
  }
  return outDir;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(`[attnlens] tutorial written to ${buildTutorial()}`);
  } catch (error) {
    console.error(`[attnlens] tutorial build failed: ${error.message}`);
    process.exit(1);
  }
}
