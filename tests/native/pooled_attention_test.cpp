// Attention pooled to the resolution a view draws (src/attention/pooled.hpp):
// the kernel against a block-by-block reference, on shapes the factor does
// not divide and on rectangular (cross-attention) shapes; a model's run and
// kept_head_weights pooled against its full weights pooled by that reference.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "../../src/attention/pooled.hpp"
#include "model_families.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
using model_fixture::pooled_reference;
using model_fixture::same_bits;

std::vector<float> pool(const std::vector<float>& weights, std::size_t rows, std::size_t cols, std::size_t factor) {
    std::vector<float> out(attnlens::pooled_side(rows, factor) * attnlens::pooled_side(cols, factor), -2.0f);
    attnlens::pool_block_max(weights.data(), rows, cols, factor, out.data());
    return out;
}

std::vector<float> head_of(const std::vector<float>& attention, std::size_t index, std::size_t square) {
    return {attention.begin() + index * square, attention.begin() + (index + 1) * square};
}

}  // namespace

TEST_CASE("block-max pooling takes each block's largest weight, the last blocks partial", "[pooled]") {
    std::mt19937 rng(31);
    std::uniform_real_distribution<float> weight(0.0f, 1.0f);
    struct Shape { std::size_t rows, cols, factor; };
    for (const Shape& shape : {Shape{12, 12, 4}, Shape{11, 11, 3}, Shape{7, 10, 3}, Shape{10, 7, 4}, Shape{5, 5, 1},
                               Shape{9, 9, 9}, Shape{1, 13, 5}}) {
        CAPTURE(shape.rows, shape.cols, shape.factor);
        std::vector<float> weights(shape.rows * shape.cols);
        for (float& w : weights) w = weight(rng);
        CHECK(same_bits(pool(weights, shape.rows, shape.cols, shape.factor),
                        pooled_reference(weights, shape.rows, shape.cols, shape.factor)));
    }
}

TEST_CASE("a previous-token diagonal stays at its weight when pooled", "[pooled]") {
    const std::size_t n = 16;
    std::vector<float> weights(n * n, 0.0f);
    weights[0] = 1.0f;
    for (std::size_t i = 1; i < n; ++i) weights[i * n + i - 1] = 1.0f;
    const auto pooled = pool(weights, n, n, 4);
    for (std::size_t b = 0; b < 4; ++b) CHECK(pooled[b * 4 + b] == 1.0f);
    CHECK(pooled[0 * 4 + 3] == 0.0f);  // above the diagonal: hidden cells, weight 0
}

TEST_CASE("a pool factor outside 1..n is refused with its range", "[pooled]") {
    CHECK(attnlens::check_pool_factor(0, 10, 10) == "pool factor 0 must be from 1 to 10 (the number of tokens)");
    CHECK(attnlens::check_pool_factor(11, 10, 10) == "pool factor 11 must be from 1 to 10 (the number of tokens)");
    CHECK(attnlens::check_pool_factor(10, 10, 3) == "");
}

TEST_CASE("a run's pooled attention and a kept head pooled are the full weights pooled", "[pooled][model]") {
    for (auto architecture : {m::Architecture::gpt2, m::Architecture::llama}) {
        m::ModelConfig config;
        model_families::set_family(config, architecture);
        config.layers = 2, config.heads = 4, config.kv_heads = architecture == m::Architecture::llama ? 2 : 4;
        config.model_width = 40, config.head_width = 10, config.mlp_width = 70, config.vocab_size = 53;
        config.max_positions = 80, config.norm_epsilon = 1e-5f;
        config.activation = architecture == m::Architecture::llama ? m::Activation::silu : m::Activation::gelu_tanh;
        CAPTURE(m::architecture_name(architecture));
        REQUIRE(m::validate(config) == "");
        std::mt19937 rng(79);
        const auto model = model_fixture::load(config, model_fixture::random_tensors(config, rng, false));
        const auto ids = model_fixture::random_ids(rng, 26, config.vocab_size);
        const std::size_t n = ids.size(), factor = 3, side = attnlens::pooled_side(n, factor);
        const auto all = model_fixture::run(*model, ids);
        m::ForwardCache cache;
        // A fresh run (every row new), then the same ids less the last three first (the kept rows recomputed).
        for (std::size_t kept_first : {0, 1}) {
            CAPTURE(kept_first);
            if (kept_first) {
                cache.clear();
                model_fixture::run(*model, std::vector<std::int32_t>(ids.begin(), ids.end() - 3), {}, 0, 0, &cache);
            }
            std::vector<float> pooled(config.layers * config.heads * side * side, -1.0f);
            m::RunRequest request;
            request.ids = ids.data(), request.count = n, request.cache = &cache;
            request.attention = pooled.data(), request.pool = factor;
            REQUIRE(model->run(request) == "");
            CHECK(cache.reused == (kept_first ? n - 3 : 0));
            for (std::size_t index = 0; index < config.layers * config.heads; ++index)
                CHECK(same_bits(head_of(pooled, index, side * side),
                                pooled_reference(head_of(all.attention, index, n * n), n, n, factor)));
        }
        std::vector<float> head(side * side, -1.0f);
        REQUIRE(m::kept_head_weights(config, cache, 1, 2, head.data(), factor) == "");
        CHECK(same_bits(head, pooled_reference(head_of(all.attention, config.heads + 2, n * n), n, n, factor)));
        CHECK(m::kept_head_weights(config, cache, 1, 2, head.data(), 0) ==
              "pool factor 0 must be from 1 to 26 (the number of tokens)");
        CHECK(m::kept_head_weights(config, cache, 1, 2, head.data(), n + 1) ==
              "pool factor 27 must be from 1 to 26 (the number of tokens)");
        m::RunRequest uncached;
        std::vector<float> out(config.layers * config.heads * side * side);
        uncached.ids = ids.data(), uncached.count = n, uncached.attention = out.data(), uncached.pool = factor;
        CHECK(model->run(uncached) == "pooled attention needs a cache");
    }
}
