// The safetensors header as loadModel reads it: JSON.parse and a fatal UTF-8
// decoder in JavaScript, the structure checks beside them, the tensor table
// checked by the core (checkSafetensorsTable). Every malformed header is
// refused with a clear error naming the problem, nothing stays allocated,
// and the module keeps working.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { ensureWasmBuilt, load, repoRoot } from './helpers.mjs';

ensureWasmBuilt();
const { readSafetensors } = await import('../../web/lib/model/safetensors.js');
const { default: createModule } = await import('../../web/lib/wasm/attnlens-simd.mjs');
const module = await createModule({ wasmBinary: readFileSync(new URL('../../web/lib/wasm/attnlens-simd.wasm', import.meta.url)) });
const heapAtStart = module.heapBytesInUse();

// A safetensors file whose header is exactly `header` (text or bytes), over `dataBytes` zero bytes.
function fileWithHeader(header, dataBytes = 1000) {
  const bytes = typeof header === 'string' ? new TextEncoder().encode(header) : header;
  const file = new Uint8Array(8 + bytes.length + dataBytes);
  new DataView(file.buffer).setBigUint64(0, BigInt(bytes.length), true);
  file.set(bytes, 8);
  return file;
}

const read = (header, dataBytes) => readSafetensors(module, fileWithHeader(header, dataBytes), 'weights');

// The message `header` is refused with (after the common prefix).
function errorOf(header, dataBytes) {
  try {
    read(header, dataBytes);
  } catch (error) {
    assert.ok(error instanceof RangeError, error.message);
    const prefix = 'attnlens.loadModel: weights has a bad safetensors header: ';
    assert.ok(error.message.startsWith(prefix), error.message);
    return error.message.slice(prefix.length);
  }
  assert.fail(`accepted: ${header}`);
}

const tensor = (shape = '[2,3]', offsets = '[0,24]', dtype = '"F32"') =>
  `{"a":{"dtype":${dtype},"shape":${shape},"data_offsets":${offsets}}}`;

test('a valid header reads back its tensors, in order, and its metadata', () => {
  const header = '{"__metadata__":{"format":"pt","note":"caf\\u00e9 \\ud83d\\ude00 \\"q\\" \\\\ \\/","__proto__":"x"},' +
    '"wte.weight":{"dtype":"F32","shape":[3,48],"data_offsets":[0,576]},' +
    '"h.0.ln_1.bias" : { "shape" : [ 48 ] , "data_offsets" : [ 576 , 672 ] , "dtype" : "BF16" },\n' +
    '"empty":{"dtype":"I64","shape":[0, 7],"data_offsets":[672,672]},' +
    '"scalar":{"dtype":"U8","shape":[],"data_offsets":[672,673],"extra":[1,{"x":null,"x":2},true,-2.5e3]},' +
    '"\\u65e5\\u672c":{"dtype":"F16","shape":[2],"data_offsets":[673,677]}}    ';
  const { tensors, metadata } = read(header, 677);
  assert.deepEqual(tensors.map((t) => t.name), ['wte.weight', 'h.0.ln_1.bias', 'empty', 'scalar', '日本']);
  assert.deepEqual(tensors.map((t) => t.shape), [[3, 48], [48], [0, 7], [], [2]]);
  assert.deepEqual(tensors.map((t) => t.data.length), [576, 96, 0, 1, 4]);
  assert.equal(tensors[1].dtype, 'BF16');
  assert.equal(metadata.note, 'café 😀 "q" \\ /');
  assert.equal(Object.getPrototypeOf(metadata), null);
  assert.equal(metadata.__proto__, 'x'); // an ordinary key
});

test('empty, not an object, not UTF-8, truncated and trailing text are refused', () => {
  assert.equal(errorOf(''), 'the safetensors header is empty');
  assert.equal(errorOf('hello'), "the safetensors header is not a JSON object: expected '{' at byte 0");
  assert.match(errorOf('[1, 2]'), /not a JSON object/);
  assert.equal(errorOf('   '), "the safetensors header is not a JSON object: expected '{' at byte 3");
  assert.match(errorOf('\uFEFF{}'), /not a JSON object/); // a byte order mark is not whitespace
  const valid = tensor();
  assert.equal(read(valid).tensors.length, 1);
  for (let length = 1; length < valid.length; length++) {
    assert.match(errorOf(valid.slice(0, length)), /^the safetensors header is not valid JSON: /, valid.slice(0, length));
  }
  assert.match(errorOf(`${valid}x`), /not valid JSON/);
  assert.match(errorOf(`${valid}{}`), /not valid JSON/);
  for (const bytes of [[0xc3], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]]) {
    const header = new Uint8Array([...new TextEncoder().encode('{"'), ...bytes, ...new TextEncoder().encode('":{}}')]);
    assert.equal(errorOf(header), 'the safetensors header is not valid UTF-8', bytes.join(' '));
  }
});

test('malformed JSON is refused, as JSON.parse finds it', () => {
  const malformed = [
    tensor('[2,3,]'), tensor('[2,,3]'), tensor('[02,3]'), tensor('[2 3]'),
    '{"a":{"dtype":"F32",}}', '{"a" {}}', "{'a': {}}", '{"a":{"dtype":"F\u0001"}}', '{"a":{"dtype":"F\\x"}}',
    '{"a":{"dtype":"\\u12G4"}}', '{"a":{"x":tru}}', '{"a":{"x":-}}', '{"a":{"x":NaN}}', '{"a":{"x":"z',
  ];
  for (const header of malformed) assert.match(errorOf(header), /^the safetensors header is not valid JSON: \S/, header);
});

test('what JSON.parse lets through is refused too: repeated keys, lone surrogates, deep nesting', () => {
  const u8 = '{"dtype":"U8","shape":[1],"data_offsets":[0,1]}';
  assert.equal(errorOf(`{"a":${u8},"b":${u8},"a":${u8}}`), 'duplicate tensor name "a"');
  assert.equal(errorOf(`{"a":${u8},"\\u0061":${u8}}`), 'duplicate tensor name "a"'); // the same key, escaped
  assert.equal(errorOf('{"a":{"dtype":"F32","dtype":"F16","shape":[2,3],"data_offsets":[0,24]}}'),
    'tensor "a": duplicate key "dtype"');
  assert.equal(errorOf('{"__metadata__":{"k":"1","k":"2"}}'), '__metadata__ has the key "k" twice');
  assert.equal(errorOf('{"__metadata__":{},"__metadata__":{}}'), 'the safetensors header has __metadata__ twice');
  // Other keys are ignored, as safetensors does, and may repeat.
  assert.equal(read(`{"a":{"x":1,"x":2,"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`).tensors.length, 1);
  for (const text of ['\\ud83d', '\\ud83d\\u0041', '\\ude00']) {
    assert.match(errorOf(`{"${text}":{}}`), /a string holds an unpaired surrogate/, text);
    assert.match(errorOf(`{"__metadata__":{"k":"x${text}"}}`), /unpaired surrogate/, text);
  }
  const deep = `{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24],"x":${'['.repeat(100000)}${']'.repeat(100000)}}}`;
  assert.equal(errorOf(deep), 'nesting deeper than 8 levels');
  assert.equal(read('{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24],"x":[[[[[[1]]]]]]}}').tensors.length, 1);
  assert.equal(errorOf('{"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24],"x":[[[[[[[1]]]]]]]}}'),
    'nesting deeper than 8 levels');
});

test('entries that break the format name the tensor', () => {
  const cases = [
    [tensor('[2,3]', '[0,2400]'), 'tensor "a": data_offsets [0, 2400] reach past the end of the data (1000 bytes)'],
    [tensor('[2,3]', '[24,0]'), 'tensor "a": data_offsets [24, 0] end before they begin'],
    [tensor('[2,3]', '[0,20]'), 'tensor "a": shape [2, 3] of F32 needs 24 bytes, but data_offsets [0, 20] hold 20'],
    [tensor('[2,3]', '[0,24]', '"F128"'), 'tensor "a": unknown dtype "F128" (safetensors dtypes: F64 F32 F16 BF16 I64 ' +
      'I32 I16 I8 U64 U32 U16 U8 BOOL F8_E4M3 F8_E5M2)'],
    [tensor('[2,3]', '[0,24]', '32'), 'tensor "a": dtype must be a string'],
    [tensor('[2,-3]'), 'tensor "a": shape dimension -3 is negative'],
    [tensor('[2,99999999999999999999999]'), 'tensor "a": shape dimension 9.9999999999999992e+22 is too large (at most 2^53 - 1)'],
    [tensor('[9007199254740993]'), 'tensor "a": shape dimension 9007199254740992 is too large (at most 2^53 - 1)'],
    [tensor('[4294967296,4294967296]'), 'tensor "a": shape [4294967296, 4294967296] is too large (its byte count overflows 64 bits)'],
    [tensor('[2.5,3]'), 'tensor "a": expected an integer, found 2.5'],
    [tensor('[2,"3"]'), 'tensor "a": shape dimension must be an integer'],
    [tensor('3'), 'tensor "a": shape must be an array of integers'],
    [tensor('[2,3]', '[0]'), 'tensor "a": data_offsets must hold exactly two integers [begin, end]'],
    [tensor('[2,3]', '[0,24,48]'), 'tensor "a": data_offsets must hold exactly two integers [begin, end]'],
    [tensor('[2,3]', '[-1,24]'), 'tensor "a": data offset -1 is negative'],
    [tensor('[2,3]', '{}'), 'tensor "a": data_offsets must be an array [begin, end]'],
    ['{"a":{"shape":[2,3],"data_offsets":[0,24]}}', 'tensor "a": the entry has no dtype'],
    ['{"a":{"dtype":"F32","data_offsets":[0,24]}}', 'tensor "a": the entry has no shape'],
    ['{"a":{"dtype":"F32","shape":[2,3]}}', 'tensor "a": the entry has no data_offsets'],
    ['{"a":[1]}', 'tensor "a": expected an object with dtype, shape and data_offsets'],
    [tensor(`[${Array(65).fill(1)}]`, '[0,4]'), 'tensor "a": shape has more than 64 dimensions'],
    ['{"__metadata__":{"k":1}}', '__metadata__ value of "k" must be a string'],
    ['{"__metadata__":[]}', '__metadata__ must be an object of strings'],
  ];
  for (const [header, message] of cases) assert.equal(errorOf(header), message, header);
  // A shape with a zero has no bytes, however large its other sizes; -0 is a zero.
  assert.equal(read(tensor('[0,4294967296,4294967296]', '[8,8]')).tensors[0].data.length, 0);
  assert.equal(read(tensor('[-0,3]', '[0,0]')).tensors.length, 1);
  // 2.0 is the number 2 to JSON.parse: a size written with a fraction of zero is read as that integer.
  assert.deepEqual(read(tensor('[2.0,3e0]')).tensors[0].shape, [2, 3]);
  assert.equal(read('{}').tensors.length, 0);
  assert.equal(read('{"__metadata__":{}}').tensors.length, 0);
});

test('after every refusal the module still loads and runs a model', async () => {
  const lens = await load();
  const folder = `${repoRoot}../shared/models/sort-gpt2`;
  const model = await lens.loadModel({
    config: JSON.parse(readFileSync(`${folder}/config.json`, 'utf8')),
    weights: readFileSync(`${folder}/model.safetensors`),
  });
  try {
    assert.equal(model.run({ ids: [2, 1, 0] }).n, 3);
  } finally {
    model.dispose();
  }
});

after(() => assert.equal(module.heapBytesInUse(), heapAtStart, 'reading headers left memory allocated'));
