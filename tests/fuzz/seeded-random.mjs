// The JavaScript fuzzers' random numbers: a seeded xorshift, so a failure
// names its seed and input and reproduces.

/** { random: () => [0, 1), pick: (list) => one of it } from `seed`. */
export function seededRandom(seed) {
  let state = seed >>> 0;
  function random() {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return state / 2 ** 32;
  }
  return { random, pick: (list) => list[Math.floor(random() * list.length)] };
}
