// The WebAssembly SIMD ceiling of this machine, measured in the same process
// as the benchmark: a register-only loop of f32x4.mul and f32x4.add over
// `chains` independent accumulators (even ones multiply by 1, odd ones add a
// small constant: no dependency between a mul and an add, so the loop is
// bound by issue throughput, not latency; multiplying by 1 never drifts into
// denormals), no memory traffic.
// The module is assembled here byte by byte so no tool is needed to build it.
// Node 20 has no relaxed-SIMD FMA by default, so mul + add is the best a
// wasm kernel can issue: 8 flops per pair per f32x4. With `fma`, every
// operation is f32x4.relaxed_madd (acc * 1 + small constant, 8 flops each):
// the ceiling of engines that validate relaxed SIMD (the browser benchmark).

const F32X4_MUL = [0xfd, 0xe6, 0x01];
const F32X4_ADD = [0xfd, 0xe4, 0x01];
const F32X4_RELAXED_MADD = [0xfd, 0x85, 0x02];
const F32X4_EXTRACT_LANE_0 = [0xfd, 0x1f, 0x00];
const LOCAL_GET = 0x20, LOCAL_SET = 0x21, LOCAL_TEE = 0x22;

function uleb(value) {
  const bytes = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value) byte |= 0x80;
    bytes.push(byte);
  } while (value);
  return bytes;
}

const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes];
const vector = (items) => [...uleb(items.length), ...items.flat()];
const v128Splat = (value) => [0xfd, 0x0c, ...new Uint8Array(new Float32Array([value, value, value, value]).buffer)];

// export run(iterations: i32) -> f32; each iteration does chains * unroll
// f32x4 operations: half of them mul, half add (4 flops each), or with `fma`
// all relaxed_madd (8 flops each).
export function ceilingModuleBytes({ chains, unroll, fma = false }) {
  const iterations = 0, first = 1, multiplier = first + chains, addend = multiplier + 1;
  const body = [];
  for (let c = 0; c < chains; ++c) body.push(...v128Splat(0.5 + c / 64), LOCAL_SET, first + c);
  body.push(...v128Splat(1), LOCAL_SET, multiplier, ...v128Splat(0.001), LOCAL_SET, addend);
  body.push(0x03, 0x40); // loop (void)
  for (let u = 0; u < unroll; ++u)
    for (let c = 0; c < chains; ++c)
      body.push(LOCAL_GET, first + c, ...(fma ? [LOCAL_GET, multiplier, LOCAL_GET, addend, ...F32X4_RELAXED_MADD]
        : c % 2 === 0 ? [LOCAL_GET, multiplier, ...F32X4_MUL] : [LOCAL_GET, addend, ...F32X4_ADD]),
        LOCAL_SET, first + c);
  body.push(LOCAL_GET, iterations, 0x41, 1, 0x6b, LOCAL_TEE, iterations, 0x0d, 0, 0x0b); // i32.sub; br_if 0; end
  body.push(LOCAL_GET, first);
  for (let c = 1; c < chains; ++c) body.push(LOCAL_GET, first + c, ...F32X4_ADD);
  body.push(...F32X4_EXTRACT_LANE_0, 0x0b);
  const locals = [...uleb(1), ...uleb(chains + 2), 0x7b]; // one group of v128 locals
  const code = [...locals, ...body];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vector([[0x60, 1, 0x7f, 1, 0x7d]])),          // type (i32) -> f32
    ...section(3, vector([[0]])),                                // one function of type 0
    ...section(7, vector([[...uleb(3), ...new TextEncoder().encode('run'), 0x00, 0]])),
    ...section(10, vector([[...uleb(code.length), ...code]])),
  ]);
}

// Best GFLOP/s over a few accumulator counts (what fits 16 registers best
// depends on the engine's register allocator), each timed for ~budgetMs.
// `fma`: relaxed_madd instead of mul + add (validate it first).
export function measureCeiling({ budgetMs = 600, fma = false } = {}) {
  const results = [];
  for (const chains of [8, 10, 12, 14]) {
    const unroll = 4;
    const { run } = new WebAssembly.Instance(new WebAssembly.Module(ceilingModuleBytes({ chains, unroll, fma }))).exports;
    const flopsPerIteration = chains * unroll * (fma ? 8 : 4);
    let iterations = 1000;
    run(iterations); // tier up
    for (;;) {
      const start = performance.now();
      run(iterations);
      if (performance.now() - start > 20) break;
      iterations *= 2;
    }
    let best = 0;
    const end = performance.now() + budgetMs / 4;
    while (performance.now() < end) {
      const start = performance.now();
      const sink = run(iterations);
      const seconds = (performance.now() - start) / 1e3;
      if (!Number.isFinite(sink)) throw new Error('ceiling loop diverged');
      best = Math.max(best, (flopsPerIteration * iterations) / seconds / 1e9);
    }
    results.push({ chains, gflops: best });
  }
  return results.reduce((a, b) => (b.gflops > a.gflops ? b : a));
}

// The other half of a slow phase: memory. On this shared VM a neighbour can
// take the caches and memory bandwidth while the register-only loop above
// still reads its usual figure (S3 has run 3x slower with the ceiling
// unchanged). GB/s of copying `megabytes` of floats into an array reused
// every time (its pages already mapped, so no page faults), read plus
// written bytes, median of `repeats` copies. The arrays are kept between
// calls, so probing does not churn the garbage collector.
let copyArrays = null;
export function measureCopyBandwidth({ megabytes = 32, repeats = 5 } = {}) {
  const count = (megabytes * 2 ** 20) / 4;
  if (copyArrays?.source.length !== count) {
    copyArrays = { source: new Float32Array(count).fill(1), target: new Float32Array(count) };
    copyArrays.target.set(copyArrays.source);
  }
  const times = [];
  for (let i = 0; i < repeats; ++i) {
    const start = performance.now();
    copyArrays.target.set(copyArrays.source);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const ms = Math.max(times[times.length >> 1], 1e-3); // a coarse clock can read 0
  return (2 * count * 4) / (ms * 1e6);
}

// globalThis.process: the browser benchmark's page imports this file too.
if (import.meta.url === `file://${globalThis.process?.argv[1]}`) {
  console.log(measureCeiling({ budgetMs: 2000 }));
}
