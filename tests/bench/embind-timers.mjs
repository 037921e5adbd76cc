// Timers around a module's Embind functions, so a benchmark can split one
// library call into the time spent inside chosen WebAssembly entry points and
// the rest (copies, checks, JavaScript). web/lib calls the module's functions
// by property lookup at call time, so replacing the properties catches every
// call the library makes. Shared by phases.mjs (Node) and copy-out-measure.mjs
// (Node and the Chromium page: no node: imports here).
//
// buckets: { [functionName]: bucketName }; several functions may share a
// bucket. Returns
//   spent      { [bucketName]: ms } accumulated since the last reset()
//   reset()    sets every bucket back to 0
//   restore()  puts the original functions back
export function timeEmbindCalls(module, buckets) {
  const spent = {};
  const originals = {};
  for (const [name, bucket] of Object.entries(buckets)) {
    const original = module[name];
    if (typeof original !== 'function') throw new Error(`timeEmbindCalls: the module has no function ${name}`);
    originals[name] = original;
    spent[bucket] = 0;
    module[name] = (...values) => {
      const start = performance.now();
      try {
        return original(...values);
      } finally {
        // Counted even when the call throws: the time was spent all the same.
        spent[bucket] += performance.now() - start;
      }
    };
  }
  return {
    spent,
    reset() {
      for (const bucket of Object.keys(spent)) spent[bucket] = 0;
    },
    restore() {
      for (const [name, original] of Object.entries(originals)) module[name] = original;
    },
  };
}
