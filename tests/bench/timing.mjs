// Interleaved timing: the contestants take turns in slices of ~sliceMs, so a
// slow phase of the machine (another process, thermal limits) hits all of
// them alike instead of whichever happened to run then.
// `pauseMs` leaves the page idle after every slice, so that threads an engine
// keeps busy after its calls (onnxruntime-web's intra-op pool spins while it
// waits for work) have gone to sleep before the next contestant starts: each
// engine is then timed with its own default configuration and both cores to
// itself. The pause is not timed. SETTLE_MS is the pause the browser
// benchmarks use on two threads: onnxruntime-web's spinning ends well within
// it (web/docs/performance.md, "Two threads, measured").
export const SETTLE_MS = 50;

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function slice(contestant, sliceMs, samples, pauseMs) {
  const end = performance.now() + sliceMs;
  do {
    const start = performance.now();
    await contestant.run();
    const elapsed = performance.now() - start;
    samples?.push(elapsed);
    contestant.spentMs += elapsed;
  } while (performance.now() < end);
  if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
}

// contestants: [{ name, run }]. Returns { [name]: { medianMs, samples } }.
export async function timeInterleaved(contestants, { warmupMs = 1000, budgetMs = 2000, minSamples = 5, sliceMs = 100, pauseMs = 0 } = {}) {
  const state = contestants.map((c) => ({ ...c, spentMs: 0, samples: [] }));
  for (let round = 0; state.some((c) => c.spentMs < warmupMs); ++round) {
    for (let i = 0; i < state.length; ++i) {
      const contestant = state[(i + round) % state.length];
      if (contestant.spentMs < warmupMs) await slice(contestant, sliceMs, null, pauseMs);
    }
  }
  for (const c of state) c.spentMs = 0;
  const unfinished = (c) => c.spentMs < budgetMs || c.samples.length < minSamples;
  for (let round = 0; state.some(unfinished); ++round) {
    for (let i = 0; i < state.length; ++i) {
      const contestant = state[(i + round) % state.length];
      if (unfinished(contestant)) await slice(contestant, sliceMs, contestant.samples, pauseMs);
    }
  }
  return Object.fromEntries(state.map((c) => [c.name, { medianMs: median(c.samples), samples: c.samples.length }]));
}
