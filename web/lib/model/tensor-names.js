// Hub tensor names <-> the core's canonical names (src/model/tensors.cpp),
// by the `tensors` part of each family's description (families/).
//
// The same weights are saved under several spellings: with or without the
// base model's prefix (GPT2LMHeadModel's `transformer.`, BertFor*'s
// `bert.`, LlamaForCausalLM's `model.`), with TensorFlow-era renames
// (BERT's `LayerNorm.gamma/beta`), or in a family's own words mapped onto
// the layout the core names (DistilBERT's `q_lin` is BERT's `query`).
// Buffers that are not weights and heads attnlens does not run are skipped.
import { FAMILIES } from './families/index.js';

// [hub template, layout template] -> a function from a module name to the
// other side's, or null. `{i}` is a layer index.
function templateMatcher(from, to) {
  const pattern = new RegExp(`^${from.replace(/[.]/g, '\\.').replace('{i}', '(\\d+)')}$`);
  return (module) => {
    const match = pattern.exec(module);
    return match ? to.replace('{i}', match[1] ?? '') : null;
  };
}

// Applies the first template that matches the name's module (the name less
// its .weight/.bias), or returns the name unchanged.
function mapModules(matchers, name) {
  const dot = name.lastIndexOf('.');
  if (dot < 0) return name;
  for (const match of matchers) {
    const mapped = match(name.slice(0, dot));
    if (mapped !== null) return mapped + name.slice(dot);
  }
  return name;
}

// Per model_type: the compiled naming of its description.
const namings = new Map(Object.entries(FAMILIES).map(([type, family]) => {
  const { prefix = '', canonicalPrefix = false, outsidePrefix = [], skip = [], renames = [], modules = [], headFrom = null } = family.tensors;
  return [type, {
    prefix, canonicalPrefix, outsidePrefix, skip, renames, headFrom,
    toLayout: modules.map(([hub, layout]) => templateMatcher(hub, layout)),
    toHub: modules.map(([hub, layout]) => templateMatcher(layout, hub)),
  }];
}));

/** The canonical name of a hub tensor for `modelType`, or null when it is skipped. */
export function canonicalTensorName(modelType, hubName) {
  const naming = namings.get(modelType);
  let bare = naming.prefix && hubName.startsWith(naming.prefix) ? hubName.slice(naming.prefix.length) : hubName;
  if (naming.skip.some((pattern) => pattern.test(bare))) return null;
  for (const [pattern, replacement] of naming.renames) bare = bare.replace(pattern, replacement);
  bare = mapModules(naming.toLayout, bare);
  return naming.canonicalPrefix && !naming.outsidePrefix.includes(bare) ? naming.prefix + bare : bare;
}

/** A canonical name as `modelType`'s files spell it (without an optional prefix), for messages. */
export function hubTensorName(modelType, canonical) {
  return mapModules(namings.get(modelType).toHub, canonical);
}

/**
 * True when `modelType` is an encoder whose checkpoint (its hub tensor names)
 * holds the masked-LM head, so that the model runs it (hasLmHead).
 */
export function holdsMaskedLmHead(modelType, hubNames) {
  const { headFrom } = namings.get(modelType);
  return headFrom !== null && hubNames.some((name) => canonicalTensorName(modelType, name) === headFrom);
}
