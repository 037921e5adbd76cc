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

// Empty when usable, otherwise a sentence naming the problem.
std::string validate(const SentenceOptions& options);

// The tokens of one call: the sentence's (the queries) and the keys' (the
// context sentence's for cross-attention, else the same).
struct SentenceTokens {
    std::vector<Token> queries, keys;
    bool cross_attention = false;
};

SentenceTokens tokenize_sentence(std::string_view text, std::string_view context_text, bool cross_attention);

// Whether both token counts are within 1 .. kMaxSentenceTokens; if not, the
// first that is not (the sentence's, then the context's) and its count.
struct TokenCountCheck {
    bool fits = true;
    bool context = false;
    std::size_t count = 0;
};
TokenCountCheck check_token_counts(const SentenceTokens& tokens);
// "" when it fits, else a sentence naming the text and its count.
std::string token_count_error(const TokenCountCheck& check);

// The record of the sentence's multi-head layer (its tokens, x, the seeded
// W_Q, W_K, W_V, W_O, every step and the output): the pipeline is a model
// whose weights are the seeded projections, run by multi_head_attention.
// Requires validate(options) to be empty and the token counts to fit;
// returns "" or an out-of-memory sentence.
std::string sentence_attention(const SentenceTokens& tokens, const SentenceOptions& options, MultiHeadTrace& record);
// The same from text: tokenizes, then returns token_count_error() when the
// counts do not fit.
std::string sentence_attention(std::string_view text, std::string_view context_text, bool cross_attention,
                               const SentenceOptions& options, MultiHeadTrace& record);

// Bytes sentence_attention allocates for n tokens and n_context context
// tokens (embeddings, the four matrices, multi_head_attention's).
std::uint64_t sentence_bytes(std::size_t n, std::size_t n_context, bool cross_attention,
                             const SentenceOptions& options);

}  // namespace attnlens
