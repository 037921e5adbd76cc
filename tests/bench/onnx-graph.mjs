// The attention graphs onnxruntime-web runs in the benchmark, encoded as ONNX
// protobuf bytes by hand (the graphs are tiny; a protobuf library would be
// the bigger dependency). Only the fields these graphs use are written.
// Field numbers come from onnx.proto (ModelProto, GraphProto, NodeProto, ...).

const WIRE_VARINT = 0;
const WIRE_BYTES = 2;
const WIRE_FIXED32 = 5;
const FLOAT = 1;               // TensorProto.DataType.FLOAT
const ATTRIBUTE_FLOAT = 1;     // AttributeProto.AttributeType
const ATTRIBUTE_INT = 2;
const ATTRIBUTE_INTS = 7;

function varint(value) {
  const bytes = [];
  let rest = BigInt(value);
  if (rest < 0n) rest += 1n << 64n; // int64 fields: two's complement
  do {
    let byte = Number(rest & 0x7fn);
    rest >>= 7n;
    if (rest) byte |= 0x80;
    bytes.push(byte);
  } while (rest);
  return bytes;
}

const key = (field, wire) => varint((field << 3) | wire);
const intField = (field, value) => [...key(field, WIRE_VARINT), ...varint(value)];
const bytesField = (field, bytes) => [...key(field, WIRE_BYTES), ...varint(bytes.length), ...bytes];
const stringField = (field, text) => bytesField(field, [...new TextEncoder().encode(text)]);
function floatField(field, value) {
  const bytes = new Uint8Array(new Float32Array([value]).buffer);
  return [...key(field, WIRE_FIXED32), ...bytes];
}

function attribute(name, value) {
  if (Array.isArray(value)) {
    return [...stringField(1, name), ...value.flatMap((v) => intField(8, v)), ...intField(20, ATTRIBUTE_INTS)];
  }
  if (Number.isInteger(value.int)) return [...stringField(1, name), ...intField(3, value.int), ...intField(20, ATTRIBUTE_INT)];
  return [...stringField(1, name), ...floatField(2, value.float), ...intField(20, ATTRIBUTE_FLOAT)];
}

function node(opType, inputs, outputs, attributes = {}) {
  return [
    ...inputs.flatMap((name) => stringField(1, name)),
    ...outputs.flatMap((name) => stringField(2, name)),
    ...stringField(3, `${opType}_${outputs[0]}`),
    ...stringField(4, opType),
    ...Object.entries(attributes).flatMap(([name, value]) => bytesField(5, attribute(name, value))),
  ];
}

function valueInfo(name, dims) {
  const shape = dims.flatMap((d) => bytesField(1, intField(1, d)));
  const tensorType = [...intField(1, FLOAT), ...bytesField(2, shape)];
  return [...stringField(1, name), ...bytesField(2, bytesField(1, tensorType))];
}

function initializer(name, dims, values) {
  const raw = new Uint8Array(Float32Array.from(values).buffer);
  return [...dims.flatMap((d) => intField(1, d)), ...intField(2, FLOAT), ...stringField(8, name), ...bytesField(9, [...raw])];
}

function model({ nodes, inputs, outputs, initializers = [] }) {
  const graph = [
    ...nodes.flatMap((n) => bytesField(1, n)),
    ...stringField(2, 'attention'),
    ...initializers.flatMap((t) => bytesField(5, t)),
    ...inputs.flatMap(([name, dims]) => bytesField(11, valueInfo(name, dims))),
    ...outputs.flatMap(([name, dims]) => bytesField(12, valueInfo(name, dims))),
  ];
  return Uint8Array.from([
    ...intField(1, 8),                                   // ir_version 8
    ...stringField(2, 'attnlens-bench'),
    ...bytesField(7, graph),
    ...bytesField(8, [...stringField(1, ''), ...intField(2, 17)]), // opset 17
  ]);
}

// Scaled dot-product attention for `heads` independent heads:
// Q [h, m, d], K [h, n, d], V [h, n, dv] -> output [h, m, dv], weights [h, m, n].
export function attentionModel({ heads, m, n, d, dv = d }) {
  return model({
    nodes: [
      node('Transpose', ['k'], ['k_t'], { perm: [0, 2, 1] }),
      node('MatMul', ['q', 'k_t'], ['scores']),
      node('Mul', ['scores', 'scale'], ['scaled']),
      node('Softmax', ['scaled'], ['weights'], { axis: { int: -1 } }),
      node('MatMul', ['weights', 'v'], ['output']),
    ],
    initializers: [initializer('scale', [], [1 / Math.sqrt(d)])],
    inputs: [['q', [heads, m, d]], ['k', [heads, n, d]], ['v', [heads, n, dv]]],
    outputs: [['output', [heads, m, dv]], ['weights', [heads, m, n]]],
  });
}

// A full multi-head self-attention layer with the four projections (weights
// as graph inputs so every engine receives the same data per call):
// x [n, D] -> output [n, D], weights [heads, n, n].
export function multiHeadModel({ n, dModel, heads }) {
  const dk = dModel / heads;
  const split = (name) => [
    node('Reshape', [name, 'split_shape'], [`${name}_split`]),
    node('Transpose', [`${name}_split`], [`${name}_heads`], { perm: [1, 0, 2] }),
  ];
  return model({
    nodes: [
      node('MatMul', ['x', 'wq'], ['q_proj']), node('Add', ['q_proj', 'bq'], ['q']),
      node('MatMul', ['x', 'wk'], ['k_proj']), node('Add', ['k_proj', 'bk'], ['k']),
      node('MatMul', ['x', 'wv'], ['v_proj']), node('Add', ['v_proj', 'bv'], ['v']),
      ...split('q'), ...split('v'),
      node('Reshape', ['k', 'split_shape'], ['k_split']),
      node('Transpose', ['k_split'], ['k_t'], { perm: [1, 2, 0] }),
      node('MatMul', ['q_heads', 'k_t'], ['scores']),
      node('Mul', ['scores', 'scale'], ['scaled']),
      node('Softmax', ['scaled'], ['weights'], { axis: { int: -1 } }),
      node('MatMul', ['weights', 'v_heads'], ['heads_out']),
      node('Transpose', ['heads_out'], ['heads_t'], { perm: [1, 0, 2] }),
      node('Reshape', ['heads_t', 'merge_shape'], ['concatenated']),
      node('MatMul', ['concatenated', 'wo'], ['o_proj']), node('Add', ['o_proj', 'bo'], ['output']),
    ],
    initializers: [
      initializer('scale', [], [1 / Math.sqrt(dk)]),
      int64Initializer('split_shape', [n, heads, dk]),
      int64Initializer('merge_shape', [n, dModel]),
    ],
    inputs: [
      ['x', [n, dModel]],
      ...['wq', 'wk', 'wv', 'wo'].map((w) => [w, [dModel, dModel]]),
      ...['bq', 'bk', 'bv', 'bo'].map((b) => [b, [dModel]]),
    ],
    outputs: [['output', [n, dModel]], ['weights', [heads, n, n]]],
  });
}

function int64Initializer(name, values) {
  const INT64 = 7;
  const raw = new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer);
  return [...intField(1, values.length), ...intField(2, INT64), ...stringField(8, name), ...bytesField(9, [...raw])];
}
