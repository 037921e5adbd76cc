// The engines the benchmark compares. Each `prepare(shape, inputs)` returns
// { run(): result | Promise<result>, collect(result): { output, weights } },
// where run() takes the inputs as JS Float32Arrays and returns the output and
// the attention weights as JS Float32Arrays (copies in and out included, as a
// web page would pay them), and collect() lays a result out like
// workloads.reference() for checking.
// With `{ reuseOutputs: true }`, prepareAttnlens and prepareOnnx allocate the
// output and weights arrays once and hand the same two arrays to every call
// (attnlens' `into`, onnxruntime-web's pre-allocated fetches), as a page that
// recomputes on every keystroke would; the prepared object then also carries
// them as `into`, so a caller can check that the call filled them.
// No static node: imports: the browser benchmark (browser.mjs) imports
// prepareAttnlens and prepareOnnx from this file into its page.
import { attentionModel, multiHeadModel } from './onnx-graph.mjs';

const nodeModules = decodeURIComponent(new URL('../../node_modules/', import.meta.url).pathname);

// The result arrays of one call of a workload, with their dimensions (as
// onnxruntime-web's graphs in onnx-graph.mjs lay them out).
function outputShapes(shape) {
  if (shape.kind === 'attention') {
    const { heads, m, n, d } = shape;
    return { output: [heads, m, d], weights: [heads, m, n] };
  }
  const { n, dModel, heads } = shape;
  return { output: [n, dModel], weights: [heads, n, n] };
}

function allocateOutputs(shape) {
  const dims = outputShapes(shape);
  const sizeOf = (name) => dims[name].reduce((a, b) => a * b, 1);
  return { output: new Float32Array(sizeOf('output')), weights: new Float32Array(sizeOf('weights')) };
}

// attnlens' calls for one workload on any lens (Node or browser, any module).
export function prepareAttnlens(lens, shape, inputs, { reuseOutputs = false } = {}) {
  const into = reuseOutputs ? allocateOutputs(shape) : null;
  const reuse = into ? { into } : {};
  if (shape.kind === 'attention') {
    // All heads in one call (the `heads` option), as onnxruntime-web runs
    // them in one graph; the inputs are already stacked [head][row][col].
    const { heads, m, n, d } = shape;
    const options = { q: inputs.q, k: inputs.k, v: inputs.v, m, n, dk: d, dv: d, heads, ...reuse };
    return { run: () => lens.attention(options), collect: (r) => r, into };
  }
  const options = { ...inputs, n: shape.n, dModel: shape.dModel, heads: shape.heads, ...reuse };
  return { run: () => lens.multiHeadAttention(options), collect: (r) => r, into };
}

export const ONNX_SESSION_OPTIONS = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };

// onnxruntime-web's session and call for one workload, for an `ort` module
// already configured (Node or browser, any thread count). With reuseOutputs
// the call passes pre-allocated CPU tensors as its fetches
// (`session.run(feeds, fetches)`). onnxruntime-web 1.30 accepts them and
// returns them, but does not write them: it copies each into a temporary
// WebAssembly buffer, runs into that and frees it (ort.mjs, `run`,
// `preAllocatedOutputs`). The arrays come back as they went in, so whoever
// uses this checks them (browser.mjs does) before trusting the results.
export async function prepareOnnx(ort, shape, inputs, { reuseOutputs = false, sessionOptions = {} } = {}) {
  const options = { ...ONNX_SESSION_OPTIONS, ...sessionOptions };
  const tensor = (data, dims) => new ort.Tensor('float32', data, dims);
  const dims = outputShapes(shape);
  const into = reuseOutputs ? allocateOutputs(shape) : null;
  const fetches = into ? { output: tensor(into.output, dims.output), weights: tensor(into.weights, dims.weights) } : undefined;
  let session, feeds;
  if (shape.kind === 'attention') {
    const { heads, m, n, d } = shape;
    session = await ort.InferenceSession.create(attentionModel({ heads, m, n, d }), options);
    // Tensors are rebuilt every call, as a caller with new inputs would.
    feeds = () => ({ q: tensor(inputs.q, [heads, m, d]), k: tensor(inputs.k, [heads, n, d]), v: tensor(inputs.v, [heads, n, d]) });
  } else {
    const { n, dModel, heads } = shape;
    session = await ort.InferenceSession.create(multiHeadModel({ n, dModel, heads }), options);
    feeds = () => {
      const all = { x: tensor(inputs.x, [n, dModel]) };
      for (const w of ['wq', 'wk', 'wv', 'wo']) all[w] = tensor(inputs[w], [dModel, dModel]);
      for (const b of ['bq', 'bk', 'bv', 'bo']) all[b] = tensor(inputs[b], [dModel]);
      return all;
    };
  }
  return {
    async run() {
      const result = await (fetches ? session.run(feeds(), fetches) : session.run(feeds()));
      return { output: result.output.data, weights: result.weights.data };
    },
    collect: (r) => r,
    into,
    release: () => session.release(),
  };
}

// ---- attnlens, through the public API (web/lib/node.js) ----------------------
export async function attnlensEngine() {
  const { load } = await import('../../web/lib/node.js');
  const lens = await load();
  if (!lens.simd) throw new Error('attnlens loaded its scalar module; the benchmark wants the SIMD one');
  return {
    name: 'attnlens',
    detail: `attnlens ${lens.version} (WASM SIMD, public API)`,
    lens,
    prepare: (shape, inputs) => prepareAttnlens(lens, shape, inputs),
  };
}

// ---- onnxruntime-web, wasm backend, one thread, SIMD -------------------------
export async function onnxEngine() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.wasmPaths = `${nodeModules}onnxruntime-web/dist/`;
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.simd = true;
  ort.env.logLevel = 'error';
  return {
    name: 'onnxruntime-web',
    detail: `onnxruntime-web ${ort.env.versions?.web ?? ''} (wasm backend, 1 thread, SIMD)`,
    prepare: (shape, inputs) => prepareOnnx(ort, shape, inputs),
  };
}

// ---- tfjs-backend-wasm, one thread ---------------------------------------------
export async function tfjsEngine() {
  const tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  wasm.setWasmPaths(`${nodeModules}@tensorflow/tfjs-backend-wasm/dist/`);
  wasm.setThreadsCount(1);
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs could not start its wasm backend');
  await tf.ready();
  const simd = tf.env().getBool('WASM_HAS_SIMD_SUPPORT');
  const dataOf = (tensors) => {
    const [output, weights] = tensors.map((t) => t.dataSync());
    tf.dispose(tensors);
    return { output, weights };
  };
  return {
    name: 'tfjs-wasm',
    detail: `tfjs-backend-wasm ${wasm.version_wasm ?? ''} (1 thread, SIMD ${simd ? 'on' : 'off'})`,
    prepare(shape, inputs) {
      if (shape.kind === 'attention') {
        const { heads, m, n, d } = shape;
        const scale = 1 / Math.sqrt(d);
        return {
          run: () => dataOf(tf.tidy(() => {
            const q = tf.tensor3d(inputs.q, [heads, m, d]);
            const k = tf.tensor3d(inputs.k, [heads, n, d]);
            const v = tf.tensor3d(inputs.v, [heads, n, d]);
            const weights = tf.softmax(tf.mul(tf.matMul(q, k, false, true), tf.scalar(scale)));
            return [tf.matMul(weights, v), weights];
          })),
          collect: (r) => r,
        };
      }
      const { n, dModel, heads } = shape;
      const dk = dModel / heads;
      return {
        run: () => dataOf(tf.tidy(() => {
          const x = tf.tensor2d(inputs.x, [n, dModel]);
          const project = (w, b) => tf.add(tf.matMul(x, tf.tensor2d(inputs[w], [dModel, dModel])), tf.tensor1d(inputs[b]));
          const split = (t) => tf.transpose(tf.reshape(t, [n, heads, dk]), [1, 0, 2]);
          const q = split(project('wq', 'bq')), k = split(project('wk', 'bk')), v = split(project('wv', 'bv'));
          const weights = tf.softmax(tf.mul(tf.matMul(q, k, false, true), tf.scalar(1 / Math.sqrt(dk))));
          const concatenated = tf.reshape(tf.transpose(tf.matMul(weights, v), [1, 0, 2]), [n, dModel]);
          const output = tf.add(tf.matMul(concatenated, tf.tensor2d(inputs.wo, [dModel, dModel])), tf.tensor1d(inputs.bo));
          return [output, weights];
        })),
        collect: (r) => r,
      };
    },
  };
}

// ---- naive JavaScript: the textbook loops ------------------------------------
function naiveHead(q, qOff, qStride, k, v, kvOff, kvStride, m, n, d, out, outOff, outStride, weights, wOff) {
  const scale = 1 / Math.sqrt(d);
  for (let i = 0; i < m; ++i) {
    const row = wOff + i * n;
    let max = -Infinity;
    for (let j = 0; j < n; ++j) {
      let sum = 0;
      for (let p = 0; p < d; ++p) sum += q[qOff + i * qStride + p] * k[kvOff + j * kvStride + p];
      weights[row + j] = sum * scale;
      if (weights[row + j] > max) max = weights[row + j];
    }
    let total = 0;
    for (let j = 0; j < n; ++j) total += weights[row + j] = Math.exp(weights[row + j] - max);
    for (let j = 0; j < n; ++j) weights[row + j] /= total;
    for (let p = 0; p < d; ++p) {
      let sum = 0;
      for (let j = 0; j < n; ++j) sum += weights[row + j] * v[kvOff + j * kvStride + p];
      out[outOff + i * outStride + p] = sum;
    }
  }
}

function naiveMatmul(a, b, rows, inner, cols, bias) {
  const c = new Float32Array(rows * cols);
  for (let i = 0; i < rows; ++i)
    for (let j = 0; j < cols; ++j) {
      let sum = bias[j];
      for (let p = 0; p < inner; ++p) sum += a[i * inner + p] * b[p * cols + j];
      c[i * cols + j] = sum;
    }
  return c;
}

export async function naiveEngine() {
  return {
    name: 'naive JS',
    detail: 'naive JavaScript (textbook loops over Float32Arrays)',
    prepare(shape, inputs) {
      if (shape.kind === 'attention') {
        const { heads, m, n, d } = shape;
        return {
          run() {
            const output = new Float32Array(heads * m * d), weights = new Float32Array(heads * m * n);
            for (let h = 0; h < heads; ++h) {
              naiveHead(inputs.q, h * m * d, d, inputs.k, inputs.v, h * n * d, d, m, n, d, output, h * m * d, d,
                weights, h * m * n);
            }
            return { output, weights };
          },
          collect: (r) => r,
        };
      }
      const { n, dModel, heads } = shape;
      const dk = dModel / heads;
      return {
        run() {
          const q = naiveMatmul(inputs.x, inputs.wq, n, dModel, dModel, inputs.bq);
          const k = naiveMatmul(inputs.x, inputs.wk, n, dModel, dModel, inputs.bk);
          const v = naiveMatmul(inputs.x, inputs.wv, n, dModel, dModel, inputs.bv);
          const concatenated = new Float32Array(n * dModel), weights = new Float32Array(heads * n * n);
          for (let h = 0; h < heads; ++h) {
            naiveHead(q, h * dk, dModel, k, v, h * dk, dModel, n, n, dk, concatenated, h * dk, dModel, weights, h * n * n);
          }
          return { output: naiveMatmul(concatenated, inputs.wo, n, dModel, dModel, inputs.bo), weights };
        },
        collect: (r) => r,
      };
    },
  };
}
