// A tiny opus-mt folder as the hub holds one: a random Marian checkpoint
// (model-reference-seq2seq.mjs) sized to the tokenizer files of
// tests/fixtures/marian (source.spm, target.spm, vocab.json; no tokenizer.json),
// with opus-mt's special ids: </s> 0 ends generation, decoding starts from <pad>, the last id,
// which bad_words_ids bars from the output.
import { marianFiles } from '../fixtures/marian/fixture.mjs';
import { seq2seqCheckpoint } from './model-reference-seq2seq.mjs';

/** @returns {{ checkpoint, files: Record<string, string | Uint8Array>, vocab: Record<string, number>, pad: number }} */
export function tinyMarianFolder({ seed = 11 } = {}) {
  const tokenizer = marianFiles();
  const vocab = JSON.parse(tokenizer.vocabJson);
  const pad = vocab['<pad>'];
  const checkpoint = seq2seqCheckpoint({
    family: 'marian', seed, vocab_size: pad + 1, max_position_embeddings: 64,
    eos_token_id: vocab['</s>'], bos_token_id: vocab['</s>'], pad_token_id: pad, decoder_start_token_id: pad, bad_words_ids: [[pad]],
  });
  const files = {
    'config.json': checkpoint.files['config.json'], 'model.safetensors': checkpoint.files['model.safetensors'],
    'source.spm': tokenizer.sourceSpm, 'target.spm': tokenizer.targetSpm, 'vocab.json': tokenizer.vocabJson,
    'tokenizer_config.json': JSON.stringify({ source_lang: 'en', target_lang: 'de', model_max_length: 512 }),
  };
  return { checkpoint, files, vocab, pad };
}
