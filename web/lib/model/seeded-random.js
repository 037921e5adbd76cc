// One seeded random generator for the library (model.inductionScores' token
// sequences) and the project's scripts and tests (tests/ and web/models/train/
// import it from here), so that a seed gives the same numbers everywhere.

/**
 * mulberry32: a small, well-mixed 32-bit generator.
 * @param {number} seed  any number; its low 32 bits are the state
 * @returns {() => number} a function returning the next number, uniform in [0, 1)
 */
export function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
