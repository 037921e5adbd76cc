// Text -> attention, keeping every step:
//   sentence -> tokens -> X = embedding + positional encoding
//   -> Q, K, V = X W_Q, X W_K, X W_V -> scores -> scaled scores -> weights
//   -> per-head outputs -> concatenation -> output = concat W_O
// With a context sentence, keys and values come from it (cross-attention).
// The projections are seeded random matrices, not learned ones: the patterns
// reflect token identity and position, which is what a tutorial needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../attention/multi_head.hpp"
#include "tokenizer.hpp"

namespace attnlens {

constexpr std::size_t kMaxSentenceTokens = 1024;
constexpr std::size_t kMaxSentenceModelWidth = 1024;

struct SentenceOptions {
    std::size_t model_width = 64;
    std::size_t heads = 4;
    std::uint32_t seed = 1;
    bool causal = false;
    float temperature = 1.0f;
    bool identity_projections = false;  // W = I: attention is pure similarity of X rows
};

struct SentenceAttention {
    std::vector<Token> tokens;          // the queries
    std::vector<Token> context_tokens;  // the keys/values (equal to tokens for self-attention)
    std::vector<float> x;               // tokens x d_model
    std::vector<float> context_x;       // context_tokens x d_model
    std::vector<float> wq, wk, wv, wo;  // d_model x d_model each
    MultiHeadTrace trace;               // Q, K, V, scores, scaled scores, weights, concatenation
    std::vector<float> output;          // tokens x d_model
};

// Empty when usable, otherwise a sentence naming the problem.
std::string validate(const SentenceOptions& options);

// Requires validate(options) to be empty; returns an error sentence (and
// leaves result untouched) when the text has no tokens or too many.
std::string sentence_attention(std::string_view text, std::string_view context_text, bool cross_attention,
                               const SentenceOptions& options, SentenceAttention& result);

}  // namespace attnlens
