#include "sentence_attention.hpp"

#include <cmath>

#include "embedding.hpp"

namespace attnlens {

namespace {

// Stream numbers keep the four projections of one seed independent.
enum ProjectionStream : std::uint32_t { kQuery = 1, kKey = 2, kValue = 3, kOutput = 4 };

std::string check_token_count(const std::vector<Token>& tokens, const char* which) {
    if (tokens.empty()) return std::string(which) + " has no tokens: type at least one word";
    if (tokens.size() > kMaxSentenceTokens)
        return std::string(which) + " has " + std::to_string(tokens.size()) + " tokens; the limit is " +
               std::to_string(kMaxSentenceTokens);
    return {};
}

std::vector<float> embed_with_positions(const std::vector<Token>& tokens, std::size_t width) {
    std::vector<float> x = embed_tokens(tokens, width);
    add_positional_encoding(x.data(), tokens.size(), width);
    return x;
}

}  // namespace

std::string validate(const SentenceOptions& options) {
    if (options.model_width == 0 || options.model_width > kMaxSentenceModelWidth)
        return "dModel must be between 1 and " + std::to_string(kMaxSentenceModelWidth);
    if (options.heads == 0) return "heads must be at least 1";
    if (options.model_width % options.heads != 0)
        return "dModel (" + std::to_string(options.model_width) + ") must be divisible by heads (" +
               std::to_string(options.heads) + ")";
    if (!(options.temperature > 0.0f) || !std::isfinite(options.temperature))
        return "temperature must be a finite number greater than 0";
    return {};
}

std::string sentence_attention(std::string_view text, std::string_view context_text, bool cross_attention,
                               const SentenceOptions& options, MultiHeadTrace& record) {
    const std::vector<Token> tokens = tokenize(text);
    if (auto error = check_token_count(tokens, "the sentence"); !error.empty()) return error;
    const std::vector<Token> context_tokens = cross_attention ? tokenize(context_text) : tokens;
    if (auto error = check_token_count(context_tokens, "the context sentence"); !error.empty()) return error;

    const std::size_t d = options.model_width;
    const std::vector<float> x = embed_with_positions(tokens, d);
    const std::vector<float> context_x = cross_attention ? embed_with_positions(context_tokens, d)
                                                         : std::vector<float>();
    std::vector<float> w[4];
    if (options.identity_projections) {
        for (auto& matrix : w) matrix = identity_matrix(d);
    } else {
        for (std::uint32_t stream : {kQuery, kKey, kValue, kOutput})
            w[stream - kQuery] = seeded_matrix(d, d, options.seed, stream);
    }

    MultiHeadInput input{x.data(), tokens.size(), nullptr, 0};
    if (cross_attention) input.context = context_x.data(), input.context_tokens = context_tokens.size();
    MultiHeadWeights weights;
    weights.model_width = d;
    weights.heads = options.heads;
    weights.wq = w[0].data(), weights.wk = w[1].data(), weights.wv = w[2].data(), weights.wo = w[3].data();
    AttentionOptions attention_options;
    attention_options.causal = options.causal;
    attention_options.temperature = options.temperature;
    if (auto error = multi_head_attention(input, weights, attention_options, nullptr, nullptr, &record);
        !error.empty())
        return error;
    record.tokens.clear();
    for (const Token& token : tokens) record.tokens.push_back(token.text);
    record.context_tokens.clear();
    for (const Token& token : context_tokens) record.context_tokens.push_back(token.text);
    return {};
}

std::uint64_t sentence_bytes(std::size_t n, std::size_t n_context, bool cross_attention,
                             const SentenceOptions& options) {
    const std::uint64_t d = options.model_width;
    const std::uint64_t floats = (n + (cross_attention ? n_context : 0)) * d + 4 * d * d;
    return floats * sizeof(float) + multi_head_bytes(n, n_context, d, options.heads, false, true);
}

}  // namespace attnlens
