// Every model family loadModel reads, one declarative description each (as
// TransformerLens' architecture adapters and llama.cpp's tensor tables):
// config.js and tensor-names.js read any description, and the core runs the
// knobs it sets, so a family whose math the knobs already cover is one file.
//
// A description:
//   modelTypes  the config.json model_type values it reads
//   layout      the core's tensor layout its tensors map onto ('gpt2' | 'bert' | 'llama' | 'gpt_neox' | 'gpt_neo' | 'opt' | 'phi',
//               or 'bart' / 't5' for the encoder-decoders, whose decoderLayers is set)
//   config      ModelConfig field -> how config.json gives it, in reading order:
//               { count | number | index | flag: 'field', fallback } or
//               { choice: 'field', fallback, accepted: { spelling: ours }, why }.
//               A fallback is a value, a function of the fields read so far,
//               or another field spec; nullMeans: the value of an explicit
//               null; map(value, fields so far): what the core gets instead
//               (GPT-NeoX's rotary_pct becomes rotaryWidth); atMost: a
//               number's upper bound; { custom: 'field', read(config, fields
//               so far) } for a field no generic reader reads. tiedLmHead (and decoderStartId) is
//               loadModel's, not the core's.
//   refuse      settings the core does not compute, refused by name:
//               { field, unless: the one accepted value (or a function of
//               the fields read), what } or a choice spec
//   math        the core's knobs (ModelConfig): norm 'layer' | 'rms' | 'rms_plus_one',
//               position 'learned' | 'rotary' | 'sinusoidal' | 'relative', postNorm, causal, gatedMlp,
//               embeddingNorm, finalNorm, hasLmHead, attentionBias,
//               attentionOutputBias, mlpBias (and, from the config,
//               paddingIdx, positionOffset, window, windowLayers, attentionScale, embeddingScale,
//               rotaryWidth, parallelResidual, sharedNorm, lmHeadBias, embeddingWidth,
//               mlmActivation: the masked-LM head's, default 'gelu_erf')
//   tensors     { prefix (stripped when present), canonicalPrefix (the core's
//               names keep it), outsidePrefix (names never prefixed), skip
//               (buffers and heads not run), renames ([regex, replacement]),
//               modules ([hub template, layout template], {i} = layer),
//               headFrom (an encoder's: the canonical tensor whose presence
//               in the checkpoint gives the model its masked-LM head) }
import bart from './bart.js';
import bert from './bert.js';
import distilbert from './distilbert.js';
import electra from './electra.js';
import gpt2 from './gpt2.js';
import gemma from './gemma.js';
import gptNeo from './gpt-neo.js';
import gptNeox from './gpt-neox.js';
import llama from './llama.js';
import marian from './marian.js';
import mistral from './mistral.js';
import opt from './opt.js';
import phi from './phi.js';
import qwen2 from './qwen2.js';
import roberta from './roberta.js';
import t5 from './t5.js';

/** model_type -> its family description. */
export const FAMILIES = Object.freeze(Object.fromEntries(
  [gpt2, bert, llama, distilbert, roberta, qwen2, mistral, gptNeox, gptNeo, opt, gemma, phi, electra, bart, marian, t5].flatMap((family) => family.modelTypes.map((type) => [type, family])),
));
