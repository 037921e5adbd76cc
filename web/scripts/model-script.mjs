// Writes a Hugging Face model folder as one classic script that registers it
// for the custom elements: `globalThis.attnlensModels[name] = { config,
// tokenizer, weights }`, the weights as base64. A tutorial opened from file://
// cannot fetch a folder (Chromium blocks fetch on file: URLs) but can load a
// <script src>, so `<attnlens-model src="tiny-english">` works offline.
//   node web/scripts/model-script.mjs FOLDER NAME OUT.js
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function modelScript(folder, name) {
  const config = JSON.parse(readFileSync(join(folder, 'config.json'), 'utf8'));
  const tokenizer = readFileSync(join(folder, 'tokenizer.json'), 'utf8');
  const weights = readFileSync(join(folder, 'model.safetensors')).toString('base64');
  // JSON.stringify of each part is a valid JS literal; U+2028/2029 are escaped so
  // the script parses in every engine.
  const literal = (value) => JSON.stringify(value).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
  return `/* attnlens model "${name}": config.json, tokenizer.json and model.safetensors (base64) of ${name}. */\n`
    + '(function () {\n'
    + '  var models = globalThis.attnlensModels || (globalThis.attnlensModels = {});\n'
    + `  models[${literal(name)}] = {\n`
    + `    config: ${literal(config)},\n`
    + `    tokenizer: ${literal(tokenizer)},\n`
    + `    weights: ${literal(weights)}\n`
    + '  };\n'
    + '})();\n';
}

export function writeModelScript(folder, name, outFile) {
  writeFileSync(outFile, modelScript(folder, name));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [folder, name, outFile] = process.argv.slice(2);
  if (!folder || !name || !outFile) {
    console.error('usage: node web/scripts/model-script.mjs FOLDER NAME OUT.js');
    process.exit(2);
  }
  writeModelScript(folder, name, outFile);
}
