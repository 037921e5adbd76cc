// The built page with a tiny random encoder-decoder opened through its file input, and the
// library's translation of the same source ids in this Node process as the reference: generate
// (as many tokens as the page asks for), then run over the source and the generated tokens.
import { load } from '../../web/lib/node.js';
import { openPageAroundTests, openPageWithSeq2seq } from './page-fixture.mjs';

/**
 * @param checkpoint { files } of a tiny encoder-decoder (tests/support/model-reference-seq2seq.mjs)
 * @param sourceIds the source the reference translates
 * @param initScript run in the page before its own scripts (e.g. to slow its worker's messages)
 * @returns { reference: { generated, run, info }, session, page, close() }
 */
export async function openSeq2seqPage(checkpoint, sourceIds, { initScript = null } = {}) {
  const lens = await load();
  const model = await lens.loadModel({ config: checkpoint.files['config.json'], weights: checkpoint.files['model.safetensors'] });
  let reference;
  try {
    const maxTokens = Math.min(32, model.info.maxPositions - 1); // what the page asks for
    const generated = model.generate({ ids: sourceIds, maxTokens });
    const run = model.run({ ids: sourceIds, targetIds: [model.info.decoderStartId, ...generated.ids] });
    reference = { generated, run, info: { ...model.info } };
  } finally {
    model.dispose();
  }
  return { reference, ...(await openPageWithSeq2seq(checkpoint, { initScript })) };
}

/** The page's window.attnlens.last as plain data: its weights as an array, without the model's info. */
export const lastShown = (page) => page.evaluate(() => {
  const last = window.attnlens.last;
  return { ...last, weights: Array.from(last.weights), model: null };
});

/**
 * openSeq2seqPage before the file's tests, closed after them: the object returned gets its
 * { reference, session, page } once they start.
 */
export function seq2seqPageForTests(checkpoint, sourceIds, options) {
  const opened = {};
  openPageAroundTests((session) => Object.assign(opened, session), { open: () => openSeq2seqPage(checkpoint, sourceIds, options) });
  return opened;
}
