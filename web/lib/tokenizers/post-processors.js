// Post-processors: the special tokens a model expects around the text, from
// tokenizer.json's "post_processor" (BERT's [CLS] ... [SEP], Llama's <s>
// BOS), plus ByteLevel/Roberta offset trimming. Only single sequences are
// encoded here, so only the "single" template is used.
//
// Each is a function (encoding) -> encoding over { ids, values, offsets, text }:
// ids and vocabulary strings of the tokens, their [start, end] offsets, and
// the text they index.
// Inserted tokens are not in the text, so their offsets are [0, 0].
import { trimOffsets } from './byte-level.js';
import {
  describeType, describeValue, readBoolean, requireId, requireObject,
} from './spec.js';

function insert(encoding, before, after) {
  return {
    ids: [...before.map((t) => t.id), ...encoding.ids, ...after.map((t) => t.id)],
    values: [...before.map((t) => t.value), ...encoding.values, ...after.map((t) => t.value)],
    offsets: [...before.map(() => [0, 0]), ...encoding.offsets, ...after.map(() => [0, 0])],
    text: encoding.text,
  };
}

// ["[SEP]", 102] as { value, id }.
function readPair(spec, key, where) {
  const pair = spec[key];
  if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string') {
    throw new TypeError(`${where} "${key}" must be [token, id], got ${describeValue(pair)}`);
  }
  return { value: pair[0], id: requireId(pair[1], `${where} "${key}" id`) };
}

function bertProcessing(spec) {
  const cls = readPair(spec, 'cls', 'BertProcessing');
  const sep = readPair(spec, 'sep', 'BertProcessing');
  return (encoding) => insert(encoding, [cls], [sep]);
}

function robertaProcessing(spec) {
  const cls = readPair(spec, 'cls', 'RobertaProcessing');
  const sep = readPair(spec, 'sep', 'RobertaProcessing');
  const trim = readBoolean(spec, 'trim_offsets', true, 'RobertaProcessing');
  const addPrefixSpace = readBoolean(spec, 'add_prefix_space', true, 'RobertaProcessing');
  return (encoding) => {
    if (trim) trimOffsets(encoding.values, encoding.offsets, addPrefixSpace, encoding.text);
    return insert(encoding, [cls], [sep]);
  };
}

function byteLevelProcessing(spec) {
  const trim = readBoolean(spec, 'trim_offsets', true, 'ByteLevel post-processor');
  const addPrefixSpace = readBoolean(spec, 'add_prefix_space', true, 'ByteLevel post-processor');
  return (encoding) => {
    if (trim) trimOffsets(encoding.values, encoding.offsets, addPrefixSpace, encoding.text);
    return encoding;
  };
}

// A template piece: { Sequence: { id: "A" } } / { SpecialToken: { id: "[CLS]" } },
// or the string forms "$A", "$0", "[CLS]", "[CLS]:0".
function readTemplatePiece(piece, where) {
  if (typeof piece === 'string') {
    const name = piece.replace(/:\d+$/, '');
    if (/^\$(A|0|)$/.test(name)) return { sequence: 'A' };
    if (/^\$(B|1)$/.test(name)) return { sequence: 'B' };
    return { special: name };
  }
  if (piece && typeof piece === 'object' && piece.Sequence && typeof piece.Sequence === 'object') {
    return { sequence: piece.Sequence.id === 'B' ? 'B' : 'A' };
  }
  if (piece && typeof piece === 'object' && piece.SpecialToken && typeof piece.SpecialToken.id === 'string') {
    return { special: piece.SpecialToken.id };
  }
  throw new Error(`${where} has a template piece it cannot read: ${describeValue(piece)}`);
}

function templateProcessing(spec) {
  const where = 'TemplateProcessing';
  let single = spec.single;
  if (typeof single === 'string') single = single.split(/\s+/).filter(Boolean);
  if (!Array.isArray(single)) throw new TypeError(`${where} "single" must be a template, got ${describeValue(single)}`);
  const specialTokens = spec.special_tokens ?? {};
  requireObject(specialTokens, `${where} "special_tokens"`);
  const before = [];
  const after = [];
  let seenSequence = false;
  for (const piece of single.map((p) => readTemplatePiece(p, where))) {
    if (piece.sequence === 'B') throw new Error(`${where} "single" template uses the second sequence $B`);
    if (piece.sequence === 'A') {
      if (seenSequence) throw new Error(`${where} "single" template uses $A twice`);
      seenSequence = true;
      continue;
    }
    const entry = specialTokens[piece.special];
    if (!entry || !Array.isArray(entry.ids) || !Array.isArray(entry.tokens) || entry.ids.length !== entry.tokens.length) {
      throw new Error(`${where} uses the special token ${JSON.stringify(piece.special)} but "special_tokens" `
        + 'has no { ids, tokens } entry for it');
    }
    const target = seenSequence ? after : before;
    entry.ids.forEach((id, k) => target.push({
      id: requireId(id, `${where} special token ${JSON.stringify(piece.special)} id`),
      value: String(entry.tokens[k]),
    }));
  }
  if (!seenSequence) throw new Error(`${where} "single" template has no $A`);
  return (encoding) => insert(encoding, before, after);
}

function sequence(spec) {
  if (!Array.isArray(spec.processors)) throw new Error('Sequence post-processor needs a "processors" array');
  const steps = spec.processors.map((step) => createPostProcessor(step));
  return (encoding) => steps.reduce((out, step) => step(out), encoding);
}

/**
 * The post-processor a tokenizer.json "post_processor" entry describes, as a
 * function over { ids, values, offsets }; null for none.
 * @throws {Error} for a type this library does not implement, naming it
 */
export function createPostProcessor(spec) {
  if (spec === null || spec === undefined) return null;
  requireObject(spec, 'post_processor');
  switch (spec.type) {
    case 'TemplateProcessing': return templateProcessing(spec);
    case 'BertProcessing': return bertProcessing(spec);
    case 'RobertaProcessing': return robertaProcessing(spec);
    case 'ByteLevel': return byteLevelProcessing(spec);
    case 'Sequence': return sequence(spec);
    default:
      throw new Error(`unsupported post_processor ${describeType(spec.type)}: this library implements `
        + 'TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel and Sequence');
  }
}
