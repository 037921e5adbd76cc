// What each head of a GPT-2 does, measured with attnlens' own forward (model.run):
//   previous  mean attention from token i to token i-1 (i >= 1) on held-out documents
//   first     mean attention from token i to token 0 (i >= 1) on the same documents
//   induction on <|endoftext|> + R + R, with R a random token sequence, the mean attention
//             from each token of the second copy to the token after its earlier copy
// Used by measure-heads.mjs (writes the table of web/docs/tiny-model.md) and by
// tests/wasm/tiny-model.test.mjs (checks the table against the forward).
import { seededRandom } from '../../lib/model/seeded-random.js';

export const INDUCTION = { length: 30, sequences: 8, seed: 20261123 };

/** The held-out sample file: documents separated by a line holding only "%". */
export function readSample(text) {
  return text.replace(/\n$/, '').split('\n%\n');
}

/** The induction inputs: <|endoftext|>, then R twice; R drawn from the merged tokens (256 .. V-2). */
export function inductionInputs(vocabSize, { length, sequences, seed } = INDUCTION) {
  const random = seededRandom(seed); // the same sequences everywhere
  const endOfText = vocabSize - 1;
  return Array.from({ length: sequences }, () => {
    const r = Array.from({ length }, () => 256 + Math.floor(random() * (vocabSize - 257)));
    return [endOfText, ...r, ...r];
  });
}

/**
 * scores[layer][head] = { previous, first, induction } for a loaded model.
 * documents: held-out texts, each at most maxPositions tokens.
 */
export function headScores(model, documents) {
  const { layers, heads, vocabSize } = model.info;
  const sums = Array.from({ length: layers * heads }, () => ({ previous: 0, first: 0, induction: 0 }));
  let positions = 0, inductionPositions = 0;
  const weight = (attention, n, layer, head, query, key) => attention[((layer * heads + head) * n + query) * n + key];
  for (const text of documents) {
    const { attention, n } = model.run({ text });
    for (let lh = 0; lh < layers * heads; lh++) {
      const layer = Math.floor(lh / heads), head = lh % heads;
      for (let i = 1; i < n; i++) {
        sums[lh].previous += weight(attention, n, layer, head, i, i - 1);
        sums[lh].first += weight(attention, n, layer, head, i, 0);
      }
    }
    positions += n - 1;
  }
  for (const ids of inductionInputs(vocabSize)) {
    const { attention, n } = model.run({ ids });
    const length = (n - 1) / 2;
    for (let lh = 0; lh < layers * heads; lh++) {
      const layer = Math.floor(lh / heads), head = lh % heads;
      // Query i in the second copy; its earlier copy is i - length; the token after it, i - length + 1.
      for (let i = length + 1; i < n; i++) sums[lh].induction += weight(attention, n, layer, head, i, i - length + 1);
    }
    inductionPositions += length;
  }
  return Array.from({ length: layers }, (_, layer) => Array.from({ length: heads }, (_, head) => {
    const s = sums[layer * heads + head];
    return { previous: s.previous / positions, first: s.first / positions, induction: s.induction / inductionPositions };
  }));
}

/** A head's role, from its scores (the thresholds of the guide). */
export function role({ previous, first, induction }) {
  const roles = [];
  if (previous > 0.5) roles.push('previous token');
  if (induction > 0.3) roles.push('induction');
  if (first > 0.5) roles.push('first token (rests there)');
  return roles.length ? roles.join(', ') : 'mixed';
}

/** The markdown table of the guide. */
export function scoresTable(scores) {
  const rows = ['| layer | head | previous token | first token | induction | role |', '|---|---|---|---|---|---|'];
  scores.forEach((heads, layer) => heads.forEach((s, head) => {
    rows.push(`| ${layer} | ${head} | ${s.previous.toFixed(3)} | ${s.first.toFixed(3)} | ${s.induction.toFixed(3)} | ${role(s)} |`);
  }));
  return rows.join('\n');
}

/** The table read back from the guide: [{ layer, head, previous, first, induction }]. */
export function parseScoresTable(markdown) {
  return [...markdown.matchAll(/^\| (\d+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|/gm)].map((m) => ({
    layer: Number(m[1]), head: Number(m[2]), previous: Number(m[3]), first: Number(m[4]), induction: Number(m[5]),
  }));
}
