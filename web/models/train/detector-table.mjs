// Every head of a GPT-2 scored by attnlens' own head detectors, the numbers a guide reports:
//   previous, first, current, duplicate, induction (in text)
//             model.analyze's scores (TransformerLens' detect_head), averaged over the
//             held-out documents of the folder's heldout-sample.txt
//   induction (random)
//             model.inductionScores(RANDOM): a random token sequence repeated twice, the
//             measure of issue 25's bar (>= 0.3)
// Used by tests/wasm/tiny-english-2.test.mjs (recomputes the guide's table) and, run alone,
// writes the table between the "detectors-table" markers of a guide:
//   node web/models/train/detector-table.mjs <model folder> <guide.md>
import { readFileSync, writeFileSync } from 'node:fs';
import { readSample } from './head-scores.mjs';

export const RANDOM = { length: 50, seed: 1 };
const TEXT_DETECTORS = ['previousToken', 'firstToken', 'currentToken', 'duplicateToken', 'induction'];
const COLUMNS = [...TEXT_DETECTORS, 'inductionRandom'];
const HEADINGS = ['previous token', 'first token', 'current token', 'duplicate token', 'induction (text)',
  'induction (random tokens)'];
// The thresholds of the role column (issue 25's bars for previous-token and induction heads).
const ROLES = [['previousToken', 0.5, 'previous token'], ['inductionRandom', 0.3, 'induction'],
  ['firstToken', 0.5, 'first token'], ['currentToken', 0.5, 'current token'], ['duplicateToken', 0.5, 'duplicate token']];

/** scores[layer][head] = { previousToken, ..., induction, inductionRandom } for a loaded model. */
export function detectorScores(model, documents) {
  const { layers, heads } = model.info;
  const sums = Object.fromEntries(TEXT_DETECTORS.map((name) => [name, new Float64Array(layers * heads)]));
  for (const text of documents) {
    const { scores } = model.analyze({ text, valueWeighted: false, logitLens: false });
    for (const name of TEXT_DETECTORS) scores[name].forEach((v, i) => { sums[name][i] += v; });
  }
  const random = model.inductionScores(RANDOM);
  return Array.from({ length: layers }, (_, layer) => Array.from({ length: heads }, (_, head) => {
    const i = layer * heads + head;
    const row = Object.fromEntries(TEXT_DETECTORS.map((name) => [name, sums[name][i] / documents.length]));
    return { ...row, inductionRandom: random[i] };
  }));
}

export function role(scores) {
  const roles = ROLES.filter(([name, threshold]) => scores[name] >= threshold).map(([, , label]) => label);
  return roles.length ? roles.join(', ') : 'mixed';
}

export function detectorTable(scores) {
  const rows = [`| layer | head | ${HEADINGS.join(' | ')} | role |`, `|${'---|'.repeat(HEADINGS.length + 3)}`];
  scores.forEach((heads, layer) => heads.forEach((s, head) => {
    rows.push(`| ${layer} | ${head} | ${COLUMNS.map((name) => s[name].toFixed(3)).join(' | ')} | ${role(s)} |`);
  }));
  return rows.join('\n');
}

/** The table read back from a guide: [{ layer, head, previousToken, ..., inductionRandom, role }]. */
export function parseDetectorTable(markdown) {
  const number = ' ([\\d.]+) \\|'.repeat(COLUMNS.length);
  return [...markdown.matchAll(new RegExp(`^\\| (\\d+) \\| (\\d+) \\|${number} ([^|]+) \\|$`, 'gm'))].map((m) => ({
    layer: Number(m[1]), head: Number(m[2]),
    ...Object.fromEntries(COLUMNS.map((name, k) => [name, Number(m[3 + k])])), role: m[3 + COLUMNS.length].trim(),
  }));
}

/** The folder's model files, for lens.loadModel. */
export function modelFiles(folder) {
  return {
    config: readFileSync(`${folder}/config.json`, 'utf8'),
    weights: readFileSync(`${folder}/model.safetensors`),
    tokenizer: readFileSync(`${folder}/tokenizer.json`, 'utf8'),
  };
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const [folder, guide] = process.argv.slice(2);
  const lens = await (await import('../../lib/node.js')).load();
  const model = await lens.loadModel(modelFiles(folder));
  const table = detectorTable(detectorScores(model, readSample(readFileSync(`${folder}/heldout-sample.txt`, 'utf8'))));
  model.dispose();
  console.log(table);
  const start = '<!-- detectors-table:start -->', end = '<!-- detectors-table:end -->';
  const text = guide ? readFileSync(guide, 'utf8') : '';
  if (text.includes(start) && text.includes(end)) {
    writeFileSync(guide, `${text.slice(0, text.indexOf(start) + start.length)}\n${table}\n${text.slice(text.indexOf(end))}`);
    console.log(`wrote the table into ${guide}`);
  }
}
