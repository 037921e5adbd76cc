// The model forward on threads: every stage (the projections split by column
// panels, the heads, the activations by rows, the LM head) gives the very
// bits of one thread for any thread count, on the three architectures; and
// logits_from computes only the rows asked for, with the bits of a full run.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "model_families.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
using model_fixture::load;
using model_fixture::random_ids;
using model_fixture::random_tensors;
using model_fixture::same_bits;

// Wide enough that every product has several panels per thread and the
// heads outnumber the threads; odd sizes leave partial panels and rows.
m::ModelConfig config_of(m::Architecture architecture) {
    m::ModelConfig c = model_families::usual_config(architecture);
    c.layers = 2, c.heads = 5, c.kv_heads = 5, c.model_width = 70, c.head_width = 14, c.mlp_width = 150;
    c.vocab_size = 97, c.max_positions = 40;
    c.norm_epsilon = 1e-5f;
    if (architecture == m::Architecture::llama) {
        c.kv_heads = 1;  // grouped-query attention: 5 query heads on one kv head
        c.rope_theta = 10000.0f;
    }
    return c;
}

}  // namespace

TEST_CASE("the model forward gives the same bits on 1, 2, 3 and 8 threads", "[model][threads]") {
    for (auto architecture : {m::Architecture::gpt2, m::Architecture::bert, m::Architecture::llama}) {
        CAPTURE(m::architecture_name(architecture));
        std::mt19937 rng(300 + static_cast<int>(architecture));
        const auto config = config_of(architecture);
        REQUIRE(m::validate(config) == "");
        const auto model = load(config, random_tensors(config, rng, false));
        // 33 tokens and 7: the products of many rows and of few are cut in
        // parts differently (packed_matrix.cpp, part_count).
        for (std::size_t count : {33, 7}) {
            CAPTURE(count);
            const auto ids = random_ids(rng, count, config.vocab_size);
            std::vector<std::uint8_t> mask(ids.size(), 1);
            mask[4] = mask[count - 3] = 0;
            const auto one = model_fixture::run(*model, ids, mask, 1);
            for (std::size_t threads : {2, 3, 8}) {
                CAPTURE(threads);
                const auto many = model_fixture::run(*model, ids, mask, threads);
                CHECK(same_bits(many.attention, one.attention));
                CHECK(same_bits(many.hidden, one.hidden));
                CHECK(same_bits(many.logits, one.logits));
            }
        }
    }
}

TEST_CASE("explain() on threads gives the bits of one thread", "[model][threads]") {
    std::mt19937 rng(310);
    const auto config = config_of(m::Architecture::llama);
    const auto model = load(config, random_tensors(config, rng, false));
    const auto ids = random_ids(rng, 21, config.vocab_size);
    const auto one = model_fixture::explain(*model, ids, 1, 1), many = model_fixture::explain(*model, ids, 1, 3);
    using T = attnlens::MultiHeadTrace;
    for (auto step : {&T::x, &T::q, &T::k, &T::v, &T::scores, &T::scaled_scores, &T::weights, &T::concatenated_heads,
                      &T::output, &T::layer_output}) {
        CHECK((many.*step).size() > 0);
        CHECK(same_bits(many.*step, one.*step));
    }
}

TEST_CASE("logits_from computes the last rows only, with the bits of a full run", "[model][forward]") {
    std::mt19937 rng(320);
    const auto config = config_of(m::Architecture::gpt2);
    const auto model = load(config, random_tensors(config, rng, false));
    const auto ids = random_ids(rng, 9, config.vocab_size);
    const auto full = model_fixture::run(*model, ids, {}, 2);
    for (std::size_t from : {8, 5, 0}) {
        CAPTURE(from);
        const auto part = model_fixture::run(*model, ids, {}, 2, from);
        REQUIRE(part.logits.size() == (ids.size() - from) * config.vocab_size);
        const std::vector<float> tail(full.logits.end() - part.logits.size(), full.logits.end());
        CHECK(same_bits(part.logits, tail));
        CHECK(same_bits(part.hidden, full.hidden));
    }

    std::vector<float> logits(config.vocab_size);
    m::RunRequest request;
    request.ids = ids.data();
    request.count = ids.size();
    request.logits = logits.data();
    request.logits_from = ids.size();
    REQUIRE_THAT(model->run(request), Catch::Contains("logits from position 9") && Catch::Contains("only 9 tokens"));
}
