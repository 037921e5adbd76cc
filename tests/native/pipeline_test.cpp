// The text -> attention pipeline: tokens, embeddings, positions, projections.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "close_to.hpp"
#include "pipeline/embedding.hpp"
#include "pipeline/sentence_attention.hpp"
#include "pipeline/tokenizer.hpp"

namespace {

std::vector<float> as_vector(const attnlens::FloatBuffer& buffer) {
    return std::vector<float>(buffer.data(), buffer.data() + buffer.size());
}

}  // namespace

namespace {

std::vector<std::string> texts(const std::vector<attnlens::Token>& tokens) {
    std::vector<std::string> out;
    for (const auto& t : tokens) out.push_back(t.text);
    return out;
}

}  // namespace

TEST_CASE("tokenizer splits words and punctuation", "[pipeline]") {
    using V = std::vector<std::string>;
    REQUIRE(texts(attnlens::tokenize("The cat sat on the mat.")) == V{"The", "cat", "sat", "on", "the", "mat", "."});
    REQUIRE(texts(attnlens::tokenize("  don't stop,now!  ")) == V{"don't", "stop", ",", "now", "!"});
    REQUIRE(texts(attnlens::tokenize("<img src=x onerror=alert(1)>")) ==
            V{"<", "img", "src", "=", "x", "onerror", "=", "alert", "(", "1", ")", ">"});
    REQUIRE(texts(attnlens::tokenize("café 日本語 🙂")) == V{"café", "日本語", "🙂"});
    REQUIRE(texts(attnlens::tokenize("a\tb\nc\x01" "d")) == V{"a", "b", "c", "d"});
    REQUIRE(attnlens::tokenize("").empty());
    REQUIRE(attnlens::tokenize(" \n\t ").empty());
    const auto tokens = attnlens::tokenize("hi, you");
    REQUIRE(tokens[1].offset == 2);
    REQUIRE(tokens[2].offset == 4);
}

TEST_CASE("embeddings: the same word always gets the same vector, case-folded", "[pipeline]") {
    const auto tokens = attnlens::tokenize("The cat saw the other cat");
    const std::size_t d = 10;
    const auto x = attnlens::embed_tokens(tokens, d);
    auto row = [&](std::size_t t) { return std::vector<float>(x.begin() + t * d, x.begin() + (t + 1) * d); };
    REQUIRE(row(0) == row(3));  // The / the
    REQUIRE(row(1) == row(5));  // cat / cat
    REQUIRE(row(1) != row(2));
    for (float value : x) REQUIRE(std::abs(value) <= std::sqrt(3.0f));
    REQUIRE(attnlens::embed_tokens(tokens, d) == x);  // deterministic
}

TEST_CASE("positional encoding follows sin/cos of pos / 10000^(2i/d)", "[pipeline]") {
    const std::size_t n = 7, d = 9;
    std::vector<float> x(n * d, 0.0f);
    attnlens::add_positional_encoding(x.data(), n, d);
    for (std::size_t pos = 0; pos < n; ++pos)
        for (std::size_t i = 0; i < d; ++i) {
            const double angle = double(pos) / std::pow(10000.0, double(2 * (i / 2)) / double(d));
            const double expected = i % 2 == 0 ? std::sin(angle) : std::cos(angle);
            REQUIRE(x[pos * d + i] == Approx(expected).margin(1e-6));
        }
}

TEST_CASE("seeded projections are reproducible and scaled to variance 1/d", "[pipeline]") {
    const std::size_t d = 64;
    const auto a = attnlens::seeded_matrix(d, d, 7, 1), b = attnlens::seeded_matrix(d, d, 7, 1);
    REQUIRE(a == b);
    REQUIRE(attnlens::seeded_matrix(d, d, 8, 1) != a);
    REQUIRE(attnlens::seeded_matrix(d, d, 7, 2) != a);
    double sum = 0.0, sum_sq = 0.0;
    for (float w : a) {
        sum += w;
        sum_sq += double(w) * w;
    }
    const double mean = sum / a.size(), variance = sum_sq / a.size() - mean * mean;
    REQUIRE(std::abs(mean) < 0.01);
    REQUIRE(variance == Approx(1.0 / d).epsilon(0.1));
}

TEST_CASE("sentence attention keeps every step and agrees with multi-head attention", "[pipeline]") {
    attnlens::SentenceOptions options;
    options.model_width = 16;
    options.heads = 4;
    options.seed = 3;
    attnlens::MultiHeadTrace steps;
    REQUIRE(attnlens::sentence_attention("The cat sat on the mat.", "", false, options, steps).empty());
    const std::size_t n = 7, d = 16;
    REQUIRE(steps.tokens == std::vector<std::string>{"The", "cat", "sat", "on", "the", "mat", "."});
    REQUIRE(steps.context_tokens == steps.tokens);
    REQUIRE(steps.x.size() == n * d);
    REQUIRE(steps.weights.size() == 4 * n * n);
    // The record carries the options it ran with.
    REQUIRE(steps.n == n);
    REQUIRE(steps.n_context == n);
    REQUIRE(steps.shape.heads == 4);
    REQUIRE(steps.shape.kv_heads == 4);
    REQUIRE(steps.shape.head_width == 4);
    REQUIRE(steps.scale == 0.5);
    REQUIRE(steps.temperature == 1.0f);
    REQUIRE_FALSE(steps.causal);
    REQUIRE_FALSE(steps.cross_attention);
    REQUIRE(steps.key_mask.empty());
    REQUIRE(steps.architecture.empty());

    // X = embedding + positional encoding, recomputed here from the parts.
    auto expected_x = attnlens::embed_tokens(attnlens::tokenize("The cat sat on the mat."), d);
    attnlens::add_positional_encoding(expected_x.data(), n, d);
    REQUIRE(as_vector(steps.x) == expected_x);
    REQUIRE(as_vector(steps.context_x) == expected_x);
    // W_Q is the seeded matrix of stream 1.
    REQUIRE(as_vector(steps.wq) == attnlens::seeded_matrix(d, d, 3, 1));

    // Running multi-head attention on the returned X and W reproduces the output.
    const auto x = as_vector(steps.x), wq = as_vector(steps.wq), wk = as_vector(steps.wk), wv = as_vector(steps.wv),
               wo = as_vector(steps.wo);
    attnlens::MultiHeadInput input{x.data(), n, nullptr, 0};
    attnlens::MultiHeadWeights weights{d, 4, wq.data(), wk.data(), wv.data(), wo.data()};
    std::vector<float> output(n * d), head_weights(4 * n * n);
    REQUIRE(attnlens::multi_head_attention(input, weights, {}, output.data(), head_weights.data()).empty());
    REQUIRE(output == as_vector(steps.output));
    REQUIRE(head_weights == as_vector(steps.weights));
}

TEST_CASE("sentence attention: cross-attention, identity projections and errors", "[pipeline]") {
    attnlens::SentenceOptions options;
    options.model_width = 8;
    options.heads = 2;
    attnlens::MultiHeadTrace steps;
    REQUIRE(attnlens::sentence_attention("I like tea", "Ich mag Tee sehr", true, options, steps).empty());
    REQUIRE(steps.tokens.size() == 3);
    REQUIRE(steps.context_tokens.size() == 4);
    REQUIRE(steps.weights.size() == 2 * 3 * 4);
    REQUIRE(steps.cross_attention);
    REQUIRE(steps.n_context == 4);
    REQUIRE(steps.context_x.size() == 4 * 8);
    REQUIRE(steps.k.size() == 4 * 8);

    options.identity_projections = true;
    REQUIRE(attnlens::sentence_attention("a b a", "", false, options, steps).empty());
    REQUIRE(as_vector(steps.q) == as_vector(steps.x));
    REQUIRE(as_vector(steps.k) == as_vector(steps.x));

    REQUIRE(attnlens::sentence_attention("   ", "", false, options, steps).find("no tokens") != std::string::npos);
    REQUIRE(attnlens::sentence_attention("ok", "", true, options, steps).find("context") != std::string::npos);
    std::string long_text;
    for (int i = 0; i < 1100; ++i) long_text += "w ";
    REQUIRE(attnlens::sentence_attention(long_text, "", false, options, steps).find("limit") != std::string::npos);
    options.heads = 3;
    REQUIRE(attnlens::validate(options).find("divisible") != std::string::npos);
}

TEST_CASE("sentence tokens: counted once, the first text out of bounds named with its count", "[pipeline]") {
    auto tokens = attnlens::tokenize_sentence("I like tea", "Ich mag Tee sehr", true);
    REQUIRE(tokens.queries.size() == 3);
    REQUIRE(tokens.keys.size() == 4);
    REQUIRE(attnlens::check_token_counts(tokens).fits);

    tokens = attnlens::tokenize_sentence("a b", "", false);
    REQUIRE(tokens.keys.size() == 2);  // self-attention: the keys are the sentence's
    REQUIRE(attnlens::check_token_counts(tokens).fits);

    REQUIRE(attnlens::check_token_counts(attnlens::tokenize_sentence("ok", " ,", true)).fits);  // "," is a token
    std::string long_text;
    for (int i = 0; i < 1030; ++i) long_text += "w ";
    const auto too_long = attnlens::check_token_counts(attnlens::tokenize_sentence("ok", long_text, true));
    REQUIRE_FALSE(too_long.fits);
    REQUIRE(too_long.context);
    REQUIRE(too_long.count == 1030);
    REQUIRE(attnlens::token_count_error(too_long) == "the context sentence has 1030 tokens; the limit is 1024");
    const auto empty = attnlens::check_token_counts(attnlens::tokenize_sentence("  ", long_text, true));
    REQUIRE_FALSE(empty.context);  // the sentence is checked first
    REQUIRE(empty.count == 0);
    REQUIRE(attnlens::token_count_error(empty) == "the sentence has no tokens: type at least one word");
}
