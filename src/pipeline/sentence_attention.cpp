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
                               const SentenceOptions& options, SentenceAttention& result) {
    SentenceAttention out;
    out.tokens = tokenize(text);
    if (auto error = check_token_count(out.tokens, "the sentence"); !error.empty()) return error;
    out.context_tokens = cross_attention ? tokenize(context_text) : out.tokens;
    if (auto error = check_token_count(out.context_tokens, "the context sentence"); !error.empty()) return error;

    const std::size_t d = options.model_width;
    out.x = embed_with_positions(out.tokens, d);
    out.context_x = cross_attention ? embed_with_positions(out.context_tokens, d) : out.x;

    if (options.identity_projections) {
        out.wq = out.wk = out.wv = out.wo = identity_matrix(d);
    } else {
        out.wq = seeded_matrix(d, d, options.seed, kQuery);
        out.wk = seeded_matrix(d, d, options.seed, kKey);
        out.wv = seeded_matrix(d, d, options.seed, kValue);
        out.wo = seeded_matrix(d, d, options.seed, kOutput);
    }

    MultiHeadInput input;
    input.x = out.x.data();
    input.tokens = out.tokens.size();
    if (cross_attention) {
        input.context = out.context_x.data();
        input.context_tokens = out.context_tokens.size();
    }
    MultiHeadWeights weights;
    weights.model_width = d;
    weights.heads = options.heads;
    weights.wq = out.wq.data();
    weights.wk = out.wk.data();
    weights.wv = out.wv.data();
    weights.wo = out.wo.data();
    AttentionOptions attention_options;
    attention_options.causal = options.causal;
    attention_options.temperature = options.temperature;

    out.output.resize(out.tokens.size() * d);
    multi_head_attention(input, weights, attention_options, out.output.data(), nullptr, &out.trace);
    result = std::move(out);
    return {};
}

}  // namespace attnlens
