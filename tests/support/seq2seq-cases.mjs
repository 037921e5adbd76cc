// The encoder-decoders the explain and analyze tests run: tiny random BART,
// Marian and T5 (v1.0: ReLU and the tied head's d^-0.5; v1.1: gated GELU,
// its own head) with their float64 references, and what a record says of
// each family's math.
import { seq2seqCheckpoint, seq2seqReference } from './model-reference-seq2seq.mjs';
import { t5Checkpoint, t5Reference } from './model-reference-t5.mjs';

const bartLike = (family, seed) => ({
  name: family, architecture: 'bart', norm: 'layer', position: family === 'bart' ? 'learned' : 'sinusoidal', postNorm: true,
  checkpoint: () => seq2seqCheckpoint({ family, seed }),
  reference: ({ config, tensors }, ids, targetIds) => seq2seqReference(family, config, tensors, ids, targetIds),
});

const t5 = (version, seed) => ({
  name: `t5 v${version}`, architecture: 't5', norm: 'rms', position: 'relative', postNorm: false,
  checkpoint: () => t5Checkpoint({ version, seed }),
  reference: ({ config, tensors }, ids, targetIds) => t5Reference(config, tensors, ids, targetIds),
});

export const SEQ2SEQ_CASES = [bartLike('bart', 21), bartLike('marian', 22), t5('1.0', 23), t5('1.1', 24)];
