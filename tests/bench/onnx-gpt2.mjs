// GPT-2's forward pass as an ONNX graph, for onnxruntime-web to run the very
// weights attnlens loads, with every layer's attention weights as outputs.
//
// onnx-graph.mjs spreads bytes into JS arrays, fine for its tiny graphs but
// not for 500 MB of initializers. Here a protobuf message is a list of parts:
// small runs of header bytes, large byte arrays kept by reference (the
// checkpoint's Float32Array views), and finished sub-messages whose length
// is known when they are added. Lengths are thus computed bottom-up as the
// graph is built, and encoding copies each weight once into one Uint8Array
// of the final size: GPT-2 small encodes in 0.4-2.5 s (mostly the first
// touch of the new 495 MB buffer's pages).
// Field numbers come from onnx.proto (ModelProto, GraphProto, NodeProto, ...).
// Browser-safe: the Chromium page does not build the graph (Node writes it to
// a file), but nothing here needs Node.

const WIRE_VARINT = 0;
const WIRE_FIXED32 = 5;
const WIRE_BYTES = 2;
const DATA_TYPE = { FLOAT: 1, INT32: 6, INT64: 7 };   // TensorProto.DataType
const ATTRIBUTE_TYPE = { FLOAT: 1, INT: 2, INTS: 7 }; // AttributeProto.AttributeType
// Byte arrays up to this size are copied into the header runs; larger ones
// are kept by reference until encode().
const INLINE_BYTES = 256;

const textEncoder = new TextEncoder();

// The bytes of a protobuf varint. Non-negative values up to 2^53 take the
// fast path; negative int64 values (axis -1, Reshape's -1) are written as
// ten-byte two's complement, as protobuf does.
function varintBytes(value, out = []) {
  if (value < 0) {
    let rest = BigInt.asUintN(64, BigInt(value));
    while (rest >= 0x80n) {
      out.push(Number(rest & 0x7fn) | 0x80);
      rest >>= 7n;
    }
    out.push(Number(rest));
    return out;
  }
  while (value >= 0x80) {
    out.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  out.push(value);
  return out;
}

export class ProtoMessage {
  constructor() {
    this.parts = [];   // Uint8Array | ProtoMessage, in order
    this.pending = []; // header bytes not yet moved into a part
    this.size = 0;
    this.sealed = false;
  }

  #push(bytes) {
    if (this.sealed) throw new Error('ProtoMessage: already added to a parent (its length is fixed)');
    for (const b of bytes) this.pending.push(b);
    this.size += bytes.length;
  }

  #flush() {
    if (this.pending.length) this.parts.push(Uint8Array.from(this.pending));
    this.pending = [];
  }

  #key(field, wire) {
    this.#push(varintBytes(field * 8 + wire));
  }

  int(field, value) {
    this.#key(field, WIRE_VARINT);
    this.#push(varintBytes(value));
    return this;
  }

  float(field, value) {
    this.#key(field, WIRE_FIXED32);
    this.#push(new Uint8Array(Float32Array.of(value).buffer));
    return this;
  }

  // Any typed array (its bytes, in this machine's order: little-endian, as
  // ONNX's raw_data wants, on every platform this runs on).
  bytes(field, data) {
    const view = data instanceof Uint8Array ? data : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    this.#key(field, WIRE_BYTES);
    this.#push(varintBytes(view.length));
    if (view.length <= INLINE_BYTES) {
      this.#push(view);
    } else {
      this.#flush();
      this.parts.push(view);
      this.size += view.length;
    }
    return this;
  }

  string(field, text) {
    return this.bytes(field, textEncoder.encode(text));
  }

  // Embeds a finished message; it cannot change afterwards.
  message(field, child) {
    child.#flush();
    child.sealed = true;
    this.#key(field, WIRE_BYTES);
    this.#push(varintBytes(child.size));
    this.#flush();
    this.parts.push(child);
    this.size += child.size;
    return this;
  }

  // The whole message as one Uint8Array.
  encode() {
    this.#flush();
    const out = new Uint8Array(this.size);
    const end = writeParts(this, out, 0);
    if (end !== out.length) throw new Error(`ProtoMessage: wrote ${end} bytes, expected ${out.length}`);
    return out;
  }
}

function writeParts(message, out, offset) {
  for (const part of message.parts) {
    if (part instanceof ProtoMessage) {
      offset = writeParts(part, out, offset);
    } else {
      out.set(part, offset);
      offset += part.length;
    }
  }
  return offset;
}

// ---- ONNX messages ------------------------------------------------------------

function attribute(name, value) {
  const a = new ProtoMessage().string(1, name);
  if (Array.isArray(value)) {
    for (const v of value) a.int(8, v);
    return a.int(20, ATTRIBUTE_TYPE.INTS);
  }
  if (typeof value === 'object' && 'float' in value) return a.float(2, value.float).int(20, ATTRIBUTE_TYPE.FLOAT);
  return a.int(3, value).int(20, ATTRIBUTE_TYPE.INT);
}

function tensorProto(name, dims, dataType, data) {
  const t = new ProtoMessage();
  for (const d of dims) t.int(1, d);
  return t.int(2, dataType).string(8, name).bytes(9, data);
}

// dims: numbers, or strings for symbolic dimensions.
function valueInfo(name, dataType, dims) {
  const shape = new ProtoMessage();
  for (const d of dims) {
    const dim = new ProtoMessage();
    if (typeof d === 'string') dim.string(2, d);
    else dim.int(1, d);
    shape.message(1, dim);
  }
  const tensorType = new ProtoMessage().int(1, dataType).message(2, shape);
  const type = new ProtoMessage().message(1, tensorType);
  return new ProtoMessage().string(1, name).message(2, type);
}

// Collects nodes, initializers, inputs and outputs; model() encodes them.
// Attribute values: a number (INT), an array (INTS) or { float }.
export class OnnxGraph {
  constructor(name) {
    this.graph = new ProtoMessage();
    this.name = name;
    this.inputs = [];
    this.outputs = [];
    this.nodeCount = 0;
  }

  node(opType, inputs, outputs, attributes = {}) {
    const n = new ProtoMessage();
    for (const name of inputs) n.string(1, name);
    for (const name of outputs) n.string(2, name);
    n.string(3, `${opType}_${this.nodeCount++}`).string(4, opType);
    for (const [name, value] of Object.entries(attributes)) n.message(5, attribute(name, value));
    this.graph.message(1, n);
    return outputs.length === 1 ? outputs[0] : outputs;
  }

  floats(name, dims, values) {
    const data = values instanceof Float32Array ? values : Float32Array.from(values);
    this.graph.message(5, tensorProto(name, dims, DATA_TYPE.FLOAT, data));
    return name;
  }

  int64s(name, dims, values) {
    this.graph.message(5, tensorProto(name, dims, DATA_TYPE.INT64, BigInt64Array.from(values, BigInt)));
    return name;
  }

  input(name, dataType, dims) {
    this.inputs.push(valueInfo(name, dataType, dims));
  }

  output(name, dataType, dims) {
    this.outputs.push(valueInfo(name, dataType, dims));
  }

  // ir_version 8, opset 17 (the first with LayerNormalization).
  model() {
    this.graph.string(2, this.name);
    for (const v of this.inputs) this.graph.message(11, v);
    for (const v of this.outputs) this.graph.message(12, v);
    const opset = new ProtoMessage().string(1, '').int(2, 17);
    return new ProtoMessage()
      .int(1, 8)
      .string(2, 'attnlens-bench')
      .message(7, this.graph)
      .message(8, opset)
      .encode();
  }
}

// ---- GPT-2 --------------------------------------------------------------------

// The additive causal mask's value above the diagonal. -Infinity makes the
// masked weights exactly 0 in any softmax that subtracts the row maximum
// (exp(-inf) = 0), as Hugging Face's masked softmax (float32's lowest value
// in place of the scores) gives. onnxruntime-web 1.30's softmax gives exact
// zeros with -Infinity, -1e9 and float32's lowest alike (tried on the tiny
// model); the benchmark checks every masked weight is 0 before timing.
export const MASK_VALUE = -Infinity;

// GPT-2's forward over n tokens (n fixed when the graph is built):
//   input  ids [n] int32
//   output attention.{i} [heads, n, n] for every layer i, hidden [n, d]
//          (after ln_f, as Hugging Face's last_hidden_state), logits [n, vocab]
// `dims` as gpt2-checkpoint.mjs (layers, heads, dModel, vocab, mlp?);
// `tensors` maps the hub names to Float32Arrays, which become the graph's
// initializers as they are (Conv1D weights are [in, out], what MatMul wants;
// the LM head is wte itself through Gemm's transB: as fast as a MatMul with a
// transposed copy in onnxruntime-web, measured, and no second 154 MB).
export function gpt2Graph(dims, tensors, n, { maskValue = MASK_VALUE, epsilon = 1e-5 } = {}) {
  const { layers, heads, dModel: d, vocab } = dims;
  const headWidth = d / heads;
  const mlp = dims.mlp ?? 4 * d;
  const g = new OnnxGraph('gpt2');
  const weight = (name) => {
    const values = tensors[name];
    if (!values) throw new Error(`gpt2Graph: missing tensor ${name}`);
    return values;
  };
  const initializer = (name, shape) => g.floats(name, shape, weight(name));

  g.input('ids', DATA_TYPE.INT32, [n]);
  const wte = initializer('wte.weight', [vocab, d]);
  // Only the n rows of wpe a run reads: the graph is built for n tokens.
  g.floats('wpe.rows', [n, d], weight('wpe.weight').subarray(0, n * d));
  g.floats('scale', [], [1 / Math.sqrt(headWidth)]);
  const mask = new Float32Array(n * n);
  for (let i = 0; i < n; ++i) mask.fill(maskValue, i * n + i + 1, (i + 1) * n);
  g.floats('causal_mask', [n, n], mask);
  g.int64s('heads_shape', [3], [n, heads, headWidth]);
  g.int64s('merge_shape', [2], [n, d]);
  g.floats('half', [], [0.5]);
  g.floats('one', [], [1]);
  g.floats('gelu_cubic', [], [0.044715]);
  g.floats('gelu_scale', [], [Math.sqrt(2 / Math.PI)]);

  const layerNorm = (x, prefix, out) => g.node('LayerNormalization',
    [x, initializer(`${prefix}.weight`, [d]), initializer(`${prefix}.bias`, [d])], [out], { axis: -1, epsilon: { float: epsilon } });
  // Conv1D: x W + b with W [in, out].
  const conv1d = (x, prefix, inWidth, outWidth, out) => g.node('Add', [
    g.node('MatMul', [x, initializer(`${prefix}.weight`, [inWidth, outWidth])], [`${out}.product`]),
    initializer(`${prefix}.bias`, [outWidth]),
  ], [out]);

  let x = g.node('Add', [g.node('Gather', [wte, 'ids'], ['tokens'], { axis: 0 }), 'wpe.rows'], ['x.embedded']);
  for (let i = 0; i < layers; ++i) {
    const p = `h.${i}`;
    const a = layerNorm(x, `${p}.ln_1`, `${p}.a`);
    const qkv = conv1d(a, `${p}.attn.c_attn`, d, 3 * d, `${p}.qkv`);
    // q, k, v are the column blocks [0, d), [d, 2d), [2d, 3d) (Split's equal parts).
    const [q, k, v] = g.node('Split', [qkv], [`${p}.q`, `${p}.k`, `${p}.v`], { axis: 1 });
    const byHead = (t, perm) => g.node('Transpose', [g.node('Reshape', [t, 'heads_shape'], [`${t}.split`])], [`${t}.heads`], { perm });
    const qHeads = byHead(q, [1, 0, 2]);  // [heads, n, hd]
    const kT = byHead(k, [1, 2, 0]);      // [heads, hd, n]
    const vHeads = byHead(v, [1, 0, 2]);  // [heads, n, hd]
    const scores = g.node('MatMul', [qHeads, kT], [`${p}.scores`]);
    const scaled = g.node('Mul', [scores, 'scale'], [`${p}.scaled`]);
    const masked = g.node('Add', [scaled, 'causal_mask'], [`${p}.masked`]);
    const weights = g.node('Softmax', [masked], [`attention.${i}`], { axis: -1 });
    const perHead = g.node('MatMul', [weights, vHeads], [`${p}.heads_out`]);
    const merged = g.node('Reshape', [g.node('Transpose', [perHead], [`${p}.heads_t`], { perm: [1, 0, 2] }), 'merge_shape'],
      [`${p}.merged`]);
    x = g.node('Add', [x, conv1d(merged, `${p}.attn.c_proj`, d, d, `${p}.attn_out`)], [`${p}.x_attn`]);

    const m = layerNorm(x, `${p}.ln_2`, `${p}.m`);
    const f = conv1d(m, `${p}.mlp.c_fc`, d, mlp, `${p}.fc`);
    // gelu_new(f) = 0.5 f (1 + tanh(sqrt(2/pi) (f + 0.044715 f^3)))
    const cube = g.node('Mul', [g.node('Mul', [f, f], [`${p}.f2`]), f], [`${p}.f3`]);
    const inner = g.node('Add', [f, g.node('Mul', [cube, 'gelu_cubic'], [`${p}.f3c`])], [`${p}.inner`]);
    const tanh = g.node('Tanh', [g.node('Mul', [inner, 'gelu_scale'], [`${p}.inner_scaled`])], [`${p}.tanh`]);
    const gelu = g.node('Mul', [g.node('Mul', [f, 'half'], [`${p}.half_f`]), g.node('Add', [tanh, 'one'], [`${p}.one_plus`])],
      [`${p}.gelu`]);
    x = g.node('Add', [x, conv1d(gelu, `${p}.mlp.c_proj`, mlp, d, `${p}.mlp_out`)], [`${p}.x_out`]);
    g.output(`attention.${i}`, DATA_TYPE.FLOAT, [heads, n, n]);
  }
  const hidden = layerNorm(x, 'ln_f', 'hidden');
  // logits = hidden wte^T: Gemm's transB reads wte [vocab, d] as it is.
  g.node('Gemm', [hidden, wte], ['logits'], { transB: 1 });
  g.output('hidden', DATA_TYPE.FLOAT, [n, d]);
  g.output('logits', DATA_TYPE.FLOAT, [n, vocab]);
  return g.model();
}
