// The model-forward benchmark's checkpoint: a GPT-2 with seeded random
// weights in the layout of the Hugging Face hub's gpt2/model.safetensors
// (names without the `transformer.` prefix, Conv1D weights [in, out], the
// tied LM head absent, and the `h.{i}.attn.bias` causal-mask buffers the real
// file carries and loaders must skip), plus its config.json, the token ids a
// run uses and the forward's flop count. Browser-safe (no node: imports): the
// Chromium page imports the flop count from here.
//
// The file is built in one Uint8Array and every tensor is filled in place
// through a Float32Array view of it, so the ~550 MB of GPT-2 small exist
// once; the ONNX graph reuses the same views as its initializers.

// GPT-2 small (124M parameters, the hub's `gpt2`), and a tiny model of the
// same structure for checks against the float64 reference and for --quick.
export const GPT2_SMALL = { layers: 12, heads: 12, dModel: 768, vocab: 50257, positions: 1024 };
export const GPT2_TINY = { layers: 2, heads: 4, dModel: 32, vocab: 97, positions: 64 };

// `mlp` (optional) is the MLP width, n_inner (default 4 d_model).
export const mlpWidth = (dims) => dims.mlp ?? 4 * dims.dModel;

// config.json as the hub's gpt2 folder has it (the fields transformers reads).
export function gpt2Config({ layers, heads, dModel, vocab, positions, mlp = null }) {
  return {
    architectures: ['GPT2LMHeadModel'],
    model_type: 'gpt2',
    activation_function: 'gelu_new',
    n_layer: layers,
    n_head: heads,
    n_embd: dModel,
    n_inner: mlp,
    n_positions: positions,
    n_ctx: positions,
    vocab_size: vocab,
    layer_norm_epsilon: 1e-5,
    bos_token_id: vocab - 1,
    eos_token_id: vocab - 1,
  };
}

// Every tensor of the file in data order, with its shape and how it is
// drawn. Scales follow GPT-2's initialization (weights std 0.02, the two
// residual projections 0.02 / sqrt(2 layers)), with nonzero biases and norm
// gains off 1 so a graph that drops or swaps one cannot pass the checks.
export function gpt2Tensors(dims) {
  const { layers, dModel: d, vocab, positions } = dims;
  const I = mlpWidth(dims);
  const residual = 0.02 / Math.sqrt(2 * layers);
  const list = [
    { name: 'wte.weight', shape: [vocab, d], std: 0.02 },
    { name: 'wpe.weight', shape: [positions, d], std: 0.01 },
  ];
  for (let i = 0; i < layers; ++i) {
    const p = `h.${i}.`;
    list.push(
      { name: `${p}ln_1.weight`, shape: [d], mean: 1, std: 0.05 },
      { name: `${p}ln_1.bias`, shape: [d], std: 0.01 },
      { name: `${p}attn.bias`, shape: [1, 1, positions, positions], causalMask: true },
      { name: `${p}attn.c_attn.weight`, shape: [d, 3 * d], std: 0.02 },
      { name: `${p}attn.c_attn.bias`, shape: [3 * d], std: 0.01 },
      { name: `${p}attn.c_proj.weight`, shape: [d, d], std: residual },
      { name: `${p}attn.c_proj.bias`, shape: [d], std: 0.01 },
      { name: `${p}ln_2.weight`, shape: [d], mean: 1, std: 0.05 },
      { name: `${p}ln_2.bias`, shape: [d], std: 0.01 },
      { name: `${p}mlp.c_fc.weight`, shape: [d, I], std: 0.02 },
      { name: `${p}mlp.c_fc.bias`, shape: [I], std: 0.01 },
      { name: `${p}mlp.c_proj.weight`, shape: [I, d], std: residual },
      { name: `${p}mlp.c_proj.bias`, shape: [d], std: 0.01 },
    );
  }
  list.push({ name: 'ln_f.weight', shape: [d], mean: 1, std: 0.05 }, { name: 'ln_f.bias', shape: [d], std: 0.01 });
  return list;
}

const count = (shape) => shape.reduce((a, b) => a * b, 1);

// Uniform in [mean - std*sqrt(3), mean + std*sqrt(3)) (that std), xorshift32,
// written into `out`. ~2 ns a value: GPT-2 small fills in well under a second.
function fillUniform(out, seed, mean, std) {
  const half = std * Math.sqrt(3);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < out.length; ++i) {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    out[i] = mean + (state / 2 ** 32 * 2 - 1) * half;
  }
}

// -> { bytes: the .safetensors file, tensors: { name: Float32Array view into
// bytes } (the buffers included), parameters: the model's weights (buffers
// not counted) }. Deterministic for a given config and seed.
export function writeGpt2Checkpoint(dims, { seed = 1 } = {}) {
  return writeCheckpoint(gpt2Tensors(dims), { seed });
}

// bfloat16 bits of float32 bits `u`, rounded to nearest even (torch's .bfloat16()).
const bfloat16Of = (u) => ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;

// Any checkpoint from a list of { name, shape, std, mean?, causalMask? }, in
// `dtype` 'F32' or 'BF16' (drawn in float32, then rounded as torch's
// .bfloat16() does). -> { bytes, tensors (F32 only: views into bytes), parameters }.
export function writeCheckpoint(list, { seed = 1, dtype = 'F32' } = {}) {
  const size = dtype === 'BF16' ? 2 : 4;
  const header = {};
  let offset = 0;
  for (const tensor of list) {
    const bytes = size * count(tensor.shape);
    header[tensor.name] = { dtype, shape: tensor.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  header.__metadata__ = { format: 'pt' };
  // Pad the JSON with spaces so the data starts 8-byte aligned (as the
  // safetensors writer does); every tensor then starts 4-byte aligned and
  // can be viewed as a Float32Array in place.
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const dataStart = 8 + headerBytes.length;
  const bytes = new Uint8Array(dataStart + offset);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  bytes.set(headerBytes, 8);

  const tensors = {};
  let parameters = 0;
  // BF16: each tensor drawn into float32 scratch (a row of blocks at a time), then rounded.
  const block = dtype === 'BF16' ? new Float32Array(1 << 20) : null;
  list.forEach((tensor, index) => {
    const begin = dataStart + header[tensor.name].data_offsets[0];
    const length = count(tensor.shape);
    if (block) {
      const out = new Uint16Array(bytes.buffer, begin, length);
      const bits = new Uint32Array(block.buffer);
      for (let start = 0; start < length; start += block.length) {
        const part = block.subarray(0, Math.min(block.length, length - start));
        fillUniform(part, seed * 1000003 + index * 7919 + start, tensor.mean ?? 0, tensor.std);
        for (let i = 0; i < part.length; ++i) out[start + i] = bfloat16Of(bits[i]);
      }
      parameters += length;
      return;
    }
    const values = new Float32Array(bytes.buffer, begin, length);
    if (tensor.causalMask) {
      // The buffer HF registers: lower triangle (key <= query) of ones.
      const side = tensor.shape[3];
      for (let i = 0; i < side; ++i) values.fill(1, i * side, i * side + i + 1);
    } else {
      fillUniform(values, seed * 1000003 + index * 7919, tensor.mean ?? 0, tensor.std);
      parameters += values.length;
    }
    tensors[tensor.name] = values;
  });
  return { bytes, tensors, parameters };
}

// `n` token ids, seeded, spread over the whole vocabulary.
export function tokenIds(n, vocab, seed = 7) {
  const ids = new Int32Array(n);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < n; ++i) {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    ids[i] = state % vocab;
  }
  return ids;
}

// Flops of one forward over n tokens, a multiply-add counted as 2 (as the S
// workloads count them); norms, softmax, GELU, biases and residual adds are
// not counted. Attention counts the full n x n scores and weights x V, as
// both engines' kernels are free to skip the masked half but the
// convention (and S4) counts it.
export function forwardFlops(dims, n) {
  const { layers, dModel: d, vocab } = dims;
  const projections = 2 * n * d * 3 * d + 2 * n * d * d; // c_attn, attn.c_proj
  const attention = 2 * 2 * n * n * d;                    // Q K^T and weights V, all heads
  const mlp = 2 * 2 * n * d * mlpWidth(dims);             // c_fc, mlp.c_proj
  const lmHead = 2 * n * d * vocab;
  return {
    projections: layers * projections,
    attention: layers * attention,
    mlp: layers * mlp,
    lmHead,
    total: layers * (projections + attention + mlp) + lmHead,
  };
}
