#include "sentence_attention.hpp"

#include <cmath>

#include "embedding.hpp"

namespace attnlens {

namespace {

// Stream numbers keep the four projections of one seed independent.
enum ProjectionStream : std::uint32_t { kQuery = 1, kKey = 2, kValue = 3, kOutput = 4 };

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

SentenceTokens tokenize_sentence(std::string_view text, std::string_view context_text, bool cross_attention) {
    SentenceTokens tokens;
    tokens.queries = tokenize(text);
    tokens.keys = cross_attention ? tokenize(context_text) : tokens.queries;
    tokens.cross_attention = cross_attention;
    return tokens;
}

TokenCountCheck check_token_counts(const SentenceTokens& tokens) {
    for (const bool context : {false, true}) {
        const std::size_t count = (context ? tokens.keys : tokens.queries).size();
        if (count == 0 || count > kMaxSentenceTokens) return {false, context, count};
    }
    return {};
}

std::string token_count_error(const TokenCountCheck& check) {
    if (check.fits) return {};
    const std::string which = check.context ? "the context sentence" : "the sentence";
    if (check.count == 0) return which + " has no tokens: type at least one word";
    return which + " has " + std::to_string(check.count) + " tokens; the limit is " + std::to_string(kMaxSentenceTokens);
}

std::string sentence_attention(const SentenceTokens& tokens, const SentenceOptions& options, MultiHeadTrace& record) {
    const std::size_t d = options.model_width;
    const std::vector<float> x = embed_with_positions(tokens.queries, d);
    const std::vector<float> context_x = tokens.cross_attention ? embed_with_positions(tokens.keys, d)
                                                                : std::vector<float>();
    std::vector<float> w[4];
    if (options.identity_projections) {
        for (auto& matrix : w) matrix = identity_matrix(d);
    } else {
        for (std::uint32_t stream : {kQuery, kKey, kValue, kOutput})
            w[stream - kQuery] = seeded_matrix(d, d, options.seed, stream);
    }

    MultiHeadInput input{x.data(), tokens.queries.size(), nullptr, 0};
    if (tokens.cross_attention) input.context = context_x.data(), input.context_tokens = tokens.keys.size();
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
    for (const Token& token : tokens.queries) record.tokens.push_back(token.text);
    record.context_tokens.clear();
    for (const Token& token : tokens.keys) record.context_tokens.push_back(token.text);
    return {};
}

std::string sentence_attention(std::string_view text, std::string_view context_text, bool cross_attention,
                               const SentenceOptions& options, MultiHeadTrace& record) {
    const SentenceTokens tokens = tokenize_sentence(text, context_text, cross_attention);
    if (auto error = token_count_error(check_token_counts(tokens)); !error.empty()) return error;
    return sentence_attention(tokens, options, record);
}

std::uint64_t sentence_bytes(std::size_t n, std::size_t n_context, bool cross_attention,
                             const SentenceOptions& options) {
    const std::uint64_t d = options.model_width;
    const std::uint64_t floats = (n + (cross_attention ? n_context : 0)) * d + 4 * d * d;
    return floats * sizeof(float) + multi_head_bytes(n, n_context, d, options.heads, false, true);
}

}  // namespace attnlens
