// Measures every head of the exported model with attnlens (head-scores.mjs) and writes the
// table between the "heads-table" markers of web/docs/tiny-model.md.
//   node web/models/train/measure-heads.mjs [model folder] [guide]
import { readFileSync, writeFileSync } from 'node:fs';
import { headScores, readSample, scoresTable } from './head-scores.mjs';

const root = new URL('../../../', import.meta.url).pathname;
const folder = process.argv[2] ?? `${root}web/models/tiny-english`;
const guide = process.argv[3] ?? `${root}web/docs/tiny-model.md`;
const lens = await (await import(`${root}web/lib/node.js`)).load();
const model = await lens.loadModel({
  config: readFileSync(`${folder}/config.json`, 'utf8'),
  weights: readFileSync(`${folder}/model.safetensors`),
  tokenizer: readFileSync(`${folder}/tokenizer.json`, 'utf8'),
});
const table = scoresTable(headScores(model, readSample(readFileSync(`${folder}/heldout-sample.txt`, 'utf8'))));
model.dispose();
console.log(table);
const start = '<!-- heads-table:start -->', end = '<!-- heads-table:end -->';
let text;
try { text = readFileSync(guide, 'utf8'); } catch { text = null; }
if (text && text.includes(start) && text.includes(end)) {
  writeFileSync(guide, `${text.slice(0, text.indexOf(start) + start.length)}\n${table}\n${text.slice(text.indexOf(end))}`);
  console.log(`wrote the table into ${guide}`);
}
