// Where the page's time goes when a model's run arrives: compute.js opens a
// tally, the parts that draw it time themselves into it (timed), and the
// tally goes into the run's 'attnlens:model-drawn' mark, from which
// tests/bench/typing.mjs splits its "page" phase. Outside a tally, timed()
// only calls its function.
let tally = null;

/** Starts a tally: { part: ms } of what timed() calls until endTally(). */
export function startTally() {
  tally = {};
}

/** The tally so far ({ part: ms }); none is kept afterwards. */
export function endTally() {
  const parts = tally ?? {};
  tally = null;
  return parts;
}

/** draw(), its time added to `part` of the open tally. */
export function timed(part, draw) {
  if (!tally) return draw();
  const open = tally;
  const started = performance.now();
  try {
    return draw();
  } finally {
    open[part] = (open[part] ?? 0) + performance.now() - started;
  }
}
