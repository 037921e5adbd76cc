// The test-side safetensors writer and reader: float16 / bfloat16 rounding
// checked exhaustively, round trips of every dtype, the header layout, and
// that every deliberately broken file is broken exactly the way it claims.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  bfloat16Bits, bfloat16Value, brokenKinds, brokenSafetensors, dtypeSizes,
  float16Bits, float16Value, readSafetensors, storedValue, writeSafetensors,
} from '../../support/safetensors.mjs';

const sortModel = new URL('../../../../shared/models/sort-gpt2/model.safetensors', import.meta.url);

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function float32FromBits(bits) {
  u32[0] = bits >>> 0;
  return f32[0];
}

// ---------------------------------------------------------------------------
// float16

test('float16: named values encode to their IEEE binary16 bits', () => {
  const cases = [
    [1, 0x3c00], [-2, 0xc000], [0.5, 0x3800], [0.1, 0x2e66], [1 / 3, 0x3555],
    [65504, 0x7bff], // the largest finite float16
    [65519.99, 0x7bff], // just under the halfway point to 65536 rounds down
    [65520, 0x7c00], // the halfway point ties to even, which is 65536: infinity
    [1e6, 0x7c00], [-1e6, 0xfc00],
    [2 ** -14, 0x0400], // the smallest normal, 6.103515625e-5
    [6.1e-5, 0x03ff], // just below it: the largest subnormal, 1023 * 2^-24
    [2 ** -24, 0x0001], // the smallest subnormal
    [2 ** -25, 0x0000], // half of it ties to even: zero
    [1.5 * 2 ** -25, 0x0001],
    [2 ** -26, 0x0000],
    [0, 0x0000], [-0, 0x8000],
    [Infinity, 0x7c00], [-Infinity, 0xfc00],
    [1 + 2 ** -11, 0x3c00], // halfway between 1 and 1 + 2^-10: ties to even (1)
    [1 + 3 * 2 ** -11, 0x3c02], // halfway between odd 0x3c01 and 0x3c02: up
    [2049, 0x6800], [2051, 0x6802], // integers past 2048 step by 2; ties to even
  ];
  for (const [value, bits] of cases) {
    assert.equal(float16Bits(value), bits, `${value} -> 0x${float16Bits(value).toString(16)}, want 0x${bits.toString(16)}`);
  }
  assert.ok(Object.is(float16Value(0x8000), -0));
  assert.equal(float16Value(0x03ff), 1023 * 2 ** -24);
  assert.equal(float16Value(0x7bff), 65504);
  assert.ok(Number.isNaN(float16Value(0x7e00)));
  assert.ok(Number.isNaN(float16Value(float16Bits(NaN))));
});

test('float16: rounds the exact float64 value, not a float32 rounding of it', () => {
  // 1 + 2^-11 + 2^-40 is above the tie; float32 would drop the 2^-40 first
  // and then tie to even (down).
  assert.equal(float16Bits(1 + 2 ** -11 + 2 ** -40), 0x3c01);
  assert.equal(float16Bits(Math.fround(1 + 2 ** -11 + 2 ** -40)), 0x3c00);
});

test('float16: every bit pattern decodes and encodes back to itself', () => {
  for (let bits = 0; bits < 0x10000; bits++) {
    const value = float16Value(bits);
    if (Number.isNaN(value)) {
      assert.equal((bits & 0x7c00), 0x7c00, `0x${bits.toString(16)} is NaN only with the exponent all ones`);
      continue;
    }
    assert.equal(float16Bits(value), bits, `0x${bits.toString(16)} = ${value}`);
  }
});

test('float16: between any two neighbours, below the midpoint goes down, above up, the midpoint to the even one', () => {
  for (const sign of [0, 0x8000]) {
    for (let bits = 0; bits < 0x7bff; bits++) {
      const a = float16Value(sign | bits);
      const b = float16Value(sign | (bits + 1));
      const mid = (a + b) / 2; // exact: one bit more than float16 has
      const nudge = (b - a) * 2 ** -20;
      const even = bits % 2 === 0 ? bits : bits + 1;
      assert.equal(float16Bits(mid), sign | even, `midpoint of 0x${bits.toString(16)}`);
      assert.equal(float16Bits(mid - nudge), sign | bits);
      assert.equal(float16Bits(mid + nudge), sign | (bits + 1));
    }
  }
});

// ---------------------------------------------------------------------------
// bfloat16

test('bfloat16: named values', () => {
  const cases = [
    [1, 0x3f80], [-2, 0xc000], [Math.PI, 0x4049], [0.1, 0x3dcd],
    [65504, 0x4780], // float16's max is not a bfloat16: rounds up to 65536
    [3.4028234663852886e38, 0x7f80], // float32's max rounds up to infinity
    [Infinity, 0x7f80], [-Infinity, 0xff80], [0, 0], [-0, 0x8000],
    [2 ** -133, 0x0001], // the smallest bfloat16 subnormal
  ];
  for (const [value, bits] of cases) {
    assert.equal(bfloat16Bits(value), bits, `${value} -> 0x${bfloat16Bits(value).toString(16)}, want 0x${bits.toString(16)}`);
  }
  assert.equal(bfloat16Value(0x4049), 3.140625);
  assert.ok(Object.is(bfloat16Value(0x8000), -0));
  assert.equal(bfloat16Bits(NaN), 0x7fc0);
  assert.ok(Number.isNaN(bfloat16Value(0x7fc0)));
});

test('bfloat16: every bit pattern decodes and encodes back to itself', () => {
  for (let bits = 0; bits < 0x10000; bits++) {
    const value = bfloat16Value(bits);
    if (Number.isNaN(value)) continue;
    assert.equal(bfloat16Bits(value), bits, `0x${bits.toString(16)} = ${value}`);
  }
});

test('bfloat16: the dropped 16 bits round to nearest, ties to even', () => {
  for (const sign of [0, 0x8000]) {
    for (let bits = 0; bits < 0x7f7f; bits++) {
      const top = ((sign | bits) << 16) >>> 0;
      const even = bits % 2 === 0 ? bits : bits + 1;
      assert.equal(bfloat16Bits(float32FromBits(top | 0x7fff)), sign | bits);
      assert.equal(bfloat16Bits(float32FromBits(top | 0x8000)), sign | even);
      assert.equal(bfloat16Bits(float32FromBits(top | 0x8001)), sign | (bits + 1));
      // Exactly halfway in value too (the float32 pattern above is the midpoint).
      assert.equal(float32FromBits(top | 0x8000), (bfloat16Value(sign | bits) + bfloat16Value(sign | (bits + 1))) / 2);
    }
  }
});

// ---------------------------------------------------------------------------
// Writing and reading files

function rawHeader(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  const text = new TextDecoder().decode(bytes.subarray(8, 8 + headerLength));
  return { headerLength, text, dataBytes: bytes.length - 8 - headerLength };
}

test('round trip of every dtype the writer encodes: values, shapes, metadata', () => {
  const floats = [0, -0, 1, -1.5, 0.1, 1 / 3, 65504, 6.1e-5, 2 ** -24, 1e-30, 123456.789, -Infinity];
  const tensors = [
    { name: 'f64', dtype: 'F64', shape: [3, 4], values: floats },
    { name: 'f32', dtype: 'F32', shape: [2, 6], values: floats },
    { name: 'f16', dtype: 'F16', shape: [12], values: floats },
    { name: 'bf16', dtype: 'BF16', shape: [4, 3], values: floats },
    { name: 'i64', dtype: 'I64', shape: [1, 5], values: [0, 1, -1, 2 ** 40, -(2 ** 53) + 1] },
    { name: 'i32', dtype: 'I32', shape: [3], values: [-(2 ** 31), 7, 2 ** 31 - 1] },
    { name: 'i16', dtype: 'I16', shape: [2], values: [-32768, 32767] },
    { name: 'i8', dtype: 'I8', shape: [2], values: [-128, 127] },
    { name: 'u8', dtype: 'U8', shape: [2], values: [0, 255] },
    { name: 'bool', dtype: 'BOOL', shape: [3], values: [1, 0, 1] },
    { name: 'scalar', dtype: 'F32', shape: [], values: [-1e4] },
    { name: 'empty', dtype: 'F16', shape: [0, 5], values: [] },
  ];
  const metadata = { format: 'pt', note: 'written by the test' };
  const bytes = writeSafetensors(tensors, { metadata });
  const read = readSafetensors(bytes);
  assert.deepEqual(read.metadata, metadata);
  assert.deepEqual(Object.keys(read.tensors), tensors.map((t) => t.name));
  for (const { name, dtype, shape, values } of tensors) {
    const got = read.tensors[name];
    assert.equal(got.dtype, dtype);
    assert.deepEqual(got.shape, shape);
    assert.ok(got.values instanceof Float64Array);
    const want = ['F64', 'F32', 'F16', 'BF16'].includes(dtype) ? values.map((v) => storedValue(dtype, v)) : values;
    assert.equal(got.values.length, want.length, name);
    for (let i = 0; i < want.length; i++) assert.ok(Object.is(got.values[i], want[i]), `${name}[${i}]: ${got.values[i]} vs ${want[i]}`);
    assert.equal(got.dataOffsets[1] - got.dataOffsets[0], values.length * dtypeSizes[dtype]);
  }
  // F16 and BF16 really rounded: 0.1 is not stored exactly, 65504 overflows BF16's steps.
  assert.equal(read.tensors.f16.values[4], 0.0999755859375);
  assert.equal(read.tensors.bf16.values[6], 65536);
  assert.equal(read.tensors.f32.values[4], Math.fround(0.1));
});

test('the object form and the array form write the same file', () => {
  const asArray = [
    { name: 'a', dtype: 'F32', shape: [2], values: [1, 2] },
    { name: 'b', dtype: 'F16', shape: [1], values: [3] },
  ];
  const asObject = { a: { dtype: 'F32', shape: [2], values: [1, 2] }, b: { dtype: 'F16', shape: [1], values: [3] } };
  assert.deepEqual(writeSafetensors(asObject), writeSafetensors(asArray));
});

test('header: little-endian u64 length, padded with spaces to a multiple of 8, data aligned', () => {
  for (let extra = 0; extra < 9; extra++) {
    // Names of different lengths move the header length through every remainder.
    const bytes = writeSafetensors([{ name: `t${'x'.repeat(extra)}`, dtype: 'F32', shape: [1], values: [1] }]);
    const { headerLength, text, dataBytes } = rawHeader(bytes);
    assert.equal(headerLength % 8, 0);
    assert.equal((8 + headerLength) % 8, 0);
    assert.equal(text[0], '{');
    assert.match(text, /^\{.*\} *$/);
    assert.ok(text.length - text.trimEnd().length < 8);
    assert.equal(dataBytes, 4);
    // Unpadded: the header is exactly the JSON.
    const unpadded = writeSafetensors([{ name: `t${'x'.repeat(extra)}`, dtype: 'F32', shape: [1], values: [1] }], { padTo8: false });
    const raw = rawHeader(unpadded);
    assert.equal(raw.text, raw.text.trimEnd());
    assert.equal(raw.headerLength, text.trimEnd().length);
    assert.deepEqual(readSafetensors(unpadded).tensors, readSafetensors(bytes).tensors);
  }
});

test('order lays the data out in the given order; offsets are contiguous from 0', () => {
  const tensors = { a: { dtype: 'F32', shape: [2], values: [1, 2] }, b: { dtype: 'F16', shape: [3], values: [1, 2, 3] }, c: { dtype: 'BF16', shape: [1], values: [4] } };
  const read = readSafetensors(writeSafetensors(tensors, { order: ['c', 'a', 'b'] }));
  assert.deepEqual(read.tensors.c.dataOffsets, [0, 2]);
  assert.deepEqual(read.tensors.a.dataOffsets, [2, 10]);
  assert.deepEqual(read.tensors.b.dataOffsets, [10, 16]);
  assert.deepEqual(Array.from(read.tensors.b.values), [1, 2, 3]);
  assert.throws(() => writeSafetensors(tensors, { order: ['a', 'zz'] }), /unknown tensor zz/);
  assert.throws(() => writeSafetensors({ a: { dtype: 'F32', shape: [3], values: [1, 2] } }), /2 values for shape \[3\]/);
});

test('the real sort-gpt2 file reads, and rewriting it keeps every tensor and data byte', () => {
  const original = new Uint8Array(readFileSync(sortModel));
  const read = readSafetensors(original);
  assert.equal(Object.keys(read.tensors).length, 41);
  assert.deepEqual(read.tensors['transformer.h.0.attn.c_attn.weight'].shape, [48, 144]);
  assert.equal(read.metadata.format, 'pt');
  // Same data order as the original (by offset).
  const order = Object.keys(read.tensors).sort((a, b) => read.tensors[a].dataOffsets[0] - read.tensors[b].dataOffsets[0]);
  const rewritten = writeSafetensors(
    order.map((name) => ({ name, ...read.tensors[name] })),
    { metadata: read.metadata },
  );
  const before = rawHeader(original);
  const after = rawHeader(rewritten);
  assert.deepEqual(rewritten.subarray(8 + after.headerLength), original.subarray(8 + before.headerLength));
  const reread = readSafetensors(rewritten);
  for (const name of order) assert.deepEqual(reread.tensors[name].values, read.tensors[name].values);
});

// ---------------------------------------------------------------------------
// Broken files

test('brokenKinds lists exactly the kinds brokenSafetensors makes', () => {
  const kinds = brokenKinds.map((k) => k.kind);
  for (const required of ['empty', 'truncated', 'header-past-end', 'header-not-json', 'offsets-outside-data',
    'shape-mismatch', 'unknown-dtype', 'negative-shape']) {
    assert.ok(kinds.includes(required), required);
  }
  for (const kind of kinds) assert.ok(brokenSafetensors(kind) instanceof Uint8Array);
  assert.throws(() => brokenSafetensors('nonsense'), /unknown kind/);
});

// Parses as far as the kind allows, then checks the one defect.
const defectChecks = {
  empty(bytes) {
    assert.equal(bytes.length, 0);
  },
  truncated(bytes) {
    assert.ok(bytes.length > 0 && bytes.length < 8);
    assert.deepEqual(bytes, writeDefault().subarray(0, bytes.length), 'the start of a valid file');
  },
  'header-past-end'(bytes) {
    const claimed = new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true);
    assert.ok(claimed > BigInt(bytes.length - 8), `claims ${claimed} bytes, ${bytes.length - 8} follow`);
    assert.equal(claimed, BigInt(bytes.length - 8 + 1));
  },
  'header-not-json'(bytes) {
    const { headerLength, text } = rawHeader(bytes);
    assert.ok(8 + headerLength <= bytes.length, 'the length itself is fine');
    assert.throws(() => JSON.parse(text), SyntaxError);
  },
  'offsets-outside-data'(bytes, target) {
    const { header, dataBytes } = parsed(bytes);
    const [begin, end] = header[target].data_offsets;
    assert.ok(begin <= end);
    assert.ok(end > dataBytes, `ends at ${end}, data has ${dataBytes}`);
    assert.equal(end - begin, count(header[target].shape) * dtypeSizes[header[target].dtype], 'its shape matches its length');
  },
  'shape-mismatch'(bytes, target) {
    const { header, dataBytes } = parsed(bytes);
    const [begin, end] = header[target].data_offsets;
    assert.ok(begin <= end && end <= dataBytes, 'offsets are inside the data');
    assert.ok(header[target].shape.every((s) => s >= 0));
    assert.notEqual(end - begin, count(header[target].shape) * dtypeSizes[header[target].dtype]);
  },
  'unknown-dtype'(bytes, target) {
    const { header, dataBytes } = parsed(bytes);
    assert.ok(!(header[target].dtype in dtypeSizes), header[target].dtype);
    assert.ok(header[target].data_offsets[1] <= dataBytes);
  },
  'negative-shape'(bytes, target) {
    const { header, dataBytes } = parsed(bytes);
    const { shape, dtype, data_offsets: [begin, end] } = header[target];
    assert.ok(shape.some((s) => s < 0), `shape [${shape}]`);
    // The product alone would pass: only the sign check catches it.
    assert.equal(end - begin, count(shape) * dtypeSizes[dtype]);
    assert.ok(end <= dataBytes);
  },
  'offsets-reversed'(bytes, target) {
    const { header } = parsed(bytes);
    const [begin, end] = header[target].data_offsets;
    assert.ok(begin > end);
  },
  'missing-offsets'(bytes, target) {
    const { header } = parsed(bytes);
    assert.ok(header[target].dtype && header[target].shape);
    assert.equal(header[target].data_offsets, undefined);
  },
};

function writeDefault() {
  return writeSafetensors([
    { name: 'ok.bias', dtype: 'F32', shape: [4], values: [0.5, -0.25, 1, 2] },
    { name: 'broken.weight', dtype: 'F32', shape: [2, 4], values: [1, 2, 3, 4, 5, 6, 7, 8] },
  ]);
}

function parsed(bytes) {
  const { text, dataBytes } = rawHeader(bytes);
  return { header: JSON.parse(text), dataBytes };
}

function count(shape) {
  return shape.reduce((a, b) => a * b, 1);
}

// What readSafetensors says for each kind: the problem, and the tensor when there is one.
const readerErrors = {
  empty: /shorter than its 8-byte header length/,
  truncated: /shorter than its 8-byte header length/,
  'header-past-end': /header length \d+ runs past the end/,
  'header-not-json': /header is not JSON/,
  'offsets-outside-data': /broken\.weight: data_offsets .* outside the \d+ data bytes/,
  'shape-mismatch': /broken\.weight: shape \[2,4,2\] of F32 needs 64 bytes but data_offsets give 32/,
  'unknown-dtype': /broken\.weight: unknown dtype F24/,
  'negative-shape': /broken\.weight: shape \[-1,-8\] has a negative/,
  'offsets-reversed': /broken\.weight: data_offsets .* are reversed/,
  'missing-offsets': /broken\.weight: data_offsets missing/,
};

for (const { kind, tensor } of brokenKinds) {
  test(`broken file "${kind}" has exactly that defect, and the reader refuses it`, () => {
    const bytes = brokenSafetensors(kind);
    defectChecks[kind](bytes, tensor);
    assert.throws(() => readSafetensors(bytes), readerErrors[kind]);
    if (tensor) {
      // Only the target is broken: the other tensor's entry is intact.
      const { header } = parsed(bytes);
      assert.deepEqual(header['ok.bias'], { dtype: 'F32', shape: [4], data_offsets: [0, 16] });
      assert.equal(rawHeader(bytes).headerLength % 8, 0, 'still aligned, so alignment is not the defect');
    }
  });
}

test('brokenSafetensors breaks a chosen tensor of a given file', () => {
  const tensors = [
    { name: 'wte.weight', dtype: 'F16', shape: [3, 2], values: [1, 2, 3, 4, 5, 6] },
    { name: 'ln_f.bias', dtype: 'F16', shape: [2], values: [0, 1] },
  ];
  for (const kind of ['offsets-outside-data', 'shape-mismatch', 'unknown-dtype', 'negative-shape', 'offsets-reversed', 'missing-offsets']) {
    const bytes = brokenSafetensors(kind, { tensors, target: 'wte.weight' });
    defectChecks[kind](bytes, 'wte.weight');
    assert.throws(() => readSafetensors(bytes), /wte\.weight/);
  }
  assert.equal(brokenSafetensors('truncated', { tensors }).length, 5);
});
