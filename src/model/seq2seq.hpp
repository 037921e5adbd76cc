// An encoder-decoder's forward pass (BART, Marian, T5): the encoder once over
// the source, then the decoder over target tokens in as many steps as the
// caller likes, each step computing only its new tokens' rows.
//
//   source ids -> embeddings -> encoder layers (bidirectional self-attention,
//                 MLP) [-> T5's final norm] -> encoded (n x d)
//   target ids -> embeddings -> decoder layers (causal self-attention over
//                 the cached keys and values of the earlier target tokens,
//                 cross-attention over `encoded`, MLP) -> logits (+ bias)
//   T5's relative position bias (ModelConfig::relative_buckets) is computed
//   once per encoding and once per step, and added to every layer's
//   self-attention scores (AttentionOptions::score_bias).
//
// Cross-attention's keys and values of `encoded` are projected once, by the
// first step; self-attention's are appended to each layer's cache. A step of
// one token therefore costs O(layers x (d^2 + (past + n) d)), not a pass
// over the whole prefix. Layers are layer.hpp's sublayers, so every family
// knob (norm placement, activation, biases) means what it means in run().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "config.hpp"
#include "../attention/float_buffer.hpp"
#include "../attention/multi_head.hpp"
#include "weights.hpp"

namespace attnlens::model {

// What one decoder step writes (each null when not wanted). m: the target
// tokens before the step, k: the step's tokens, n: the source tokens.
struct DecodeOutputs {
    float* self_attention = nullptr;   // decoder_layers x H x k x (m + k)
    float* cross_attention = nullptr;  // decoder_layers x H x k x n
    float* logits = nullptr;           // (k - logits_from) x V
    std::size_t logits_from = 0;       // the first of the step's rows with logits
};

class Seq2SeqSession {
public:
    // Keeps references: the model must outlive the session.
    Seq2SeqSession(const ModelConfig& config, const ModelWeights& weights) : c_(config), w_(weights) {}

    // Runs the encoder over `count` source ids and makes room for up to
    // `max_target` target tokens. encoder_attention: null or layers x H x n x n.
    // "" or the problem (bad ids, too many tokens, memory); any earlier
    // encoding is dropped either way.
    std::string encode(const std::int32_t* ids, std::size_t count, std::size_t max_target, float* encoder_attention);
    // The decoder over `count` more target ids. "" or the problem (no
    // encoding, bad ids, more tokens than encode() made room for).
    std::string decode(const std::int32_t* ids, std::size_t count, const DecodeOutputs& outputs);

    std::size_t source_tokens() const { return n_; }
    std::size_t target_tokens() const { return m_; }

private:
    const ModelConfig& c_;
    const ModelWeights& w_;
    std::size_t n_ = 0, m_ = 0, capacity_ = 0;
    FloatBuffer encoded_;                     // n x d: the encoder's output
    FloatBuffer self_keys_, self_values_;     // per decoder layer: capacity x G*hd
    FloatBuffer cross_keys_, cross_values_;   // per decoder layer: n x G*hd
};

// Its memory before it runs: seq2seq_working_bytes (footprint.hpp).

}  // namespace attnlens::model
