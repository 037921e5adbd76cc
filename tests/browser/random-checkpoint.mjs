// A small GPT-2 checkpoint with random weights, written the way the hub
// stores one (safetensors, Conv1D [in, out], "transformer." names, tied LM
// head), for tests that need GPT-2's real 50,257-token vocabulary without a
// 500 MB download. Deterministic (xorshift), so every run sees the same model.

function xorshift(seed) {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x100000000 - 0.5;
  };
}

/** The bytes of a .safetensors file holding `tensors` ({ name: { shape, data: Float32Array } }), all F32. */
export function safetensorsBytes(tensors) {
  const header = {};
  let offset = 0;
  for (const [name, { shape, data }] of Object.entries(tensors)) {
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + data.byteLength] };
    offset += data.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8); // the format pads the header to 8 bytes
  const bytes = Buffer.alloc(8 + json.length + offset);
  bytes.writeBigUInt64LE(BigInt(json.length), 0);
  bytes.write(json, 8, 'latin1');
  let at = 8 + json.length;
  for (const { data } of Object.values(tensors)) {
    Buffer.from(data.buffer, data.byteOffset, data.byteLength).copy(bytes, at);
    at += data.byteLength;
  }
  return bytes;
}

/** config.json and model.safetensors of a random GPT-2: { config (object), weights (Buffer) }. */
export function randomGpt2({ vocab = 50257, positions = 64, width = 16, layers = 2, heads = 2, seed = 7 } = {}) {
  const random = xorshift(seed);
  const tensors = {};
  const add = (name, shape, scale = 0.2, offset = 0) => {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1)).map(() => offset + random() * scale);
    tensors[`transformer.${name}`] = { shape, data };
  };
  add('wte.weight', [vocab, width], 0.5);
  add('wpe.weight', [positions, width], 0.5);
  for (let i = 0; i < layers; i += 1) {
    add(`h.${i}.ln_1.weight`, [width], 0.1, 1);
    add(`h.${i}.ln_1.bias`, [width], 0.1);
    add(`h.${i}.attn.c_attn.weight`, [width, 3 * width], 1.2);
    add(`h.${i}.attn.c_attn.bias`, [3 * width], 0.1);
    add(`h.${i}.attn.c_proj.weight`, [width, width], 0.4);
    add(`h.${i}.attn.c_proj.bias`, [width], 0.1);
    add(`h.${i}.ln_2.weight`, [width], 0.1, 1);
    add(`h.${i}.ln_2.bias`, [width], 0.1);
    add(`h.${i}.mlp.c_fc.weight`, [width, 4 * width], 0.4);
    add(`h.${i}.mlp.c_fc.bias`, [4 * width], 0.1);
    add(`h.${i}.mlp.c_proj.weight`, [4 * width, width], 0.4);
    add(`h.${i}.mlp.c_proj.bias`, [width], 0.1);
  }
  add('ln_f.weight', [width], 0.1, 1);
  add('ln_f.bias', [width], 0.1);
  const config = {
    model_type: 'gpt2', architectures: ['GPT2LMHeadModel'], vocab_size: vocab, n_positions: positions, n_ctx: positions,
    n_embd: width, n_layer: layers, n_head: heads, activation_function: 'gelu_new', layer_norm_epsilon: 1e-5,
  };
  return { config, weights: safetensorsBytes(tensors) };
}
