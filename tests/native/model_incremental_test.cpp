// The incremental forward (forward.hpp ForwardCache): a run through the
// cache gives the very bits of a fresh run (attention, hidden state,
// logits) after appends, deletions, edits in the middle, key-mask changes
// and random edit sequences, on learned positions (GPT-2's fused [Q | K | V]),
// rotary with grouped-query attention (Llama) and a sliding window, with
// and without attention weights returned, on one and two threads; and it recomputes
// only from the first position that changed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "kernels/kernels.hpp"
#include "model_families.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
using model_fixture::same_bits;

m::ModelConfig config_of(m::Architecture architecture, std::size_t window) {
    m::ModelConfig c;
    model_families::set_family(c, architecture);
    c.layers = 2, c.heads = 4, c.kv_heads = architecture == m::Architecture::llama ? 2 : 4;
    c.model_width = 40, c.head_width = 10, c.mlp_width = 70, c.vocab_size = 53, c.max_positions = 80;
    c.norm_epsilon = 1e-5f;
    c.activation = architecture == m::Architecture::llama ? m::Activation::silu : m::Activation::gelu_tanh;
    c.window = window;
    return c;
}

struct Case {
    m::Architecture architecture;
    std::size_t window;
};

}  // namespace

TEST_CASE("a run through the cache gives the bits of a fresh run after every kind of edit", "[model][incremental]") {
    for (const Case& model_case : {Case{m::Architecture::gpt2, 0}, Case{m::Architecture::llama, 0},
                                   Case{m::Architecture::llama, 5}}) {
        const auto config = config_of(model_case.architecture, model_case.window);
        CAPTURE(m::architecture_name(config.architecture), config.window);
        REQUIRE(m::validate(config) == "");
        std::mt19937 rng(700 + static_cast<int>(config.architecture) + int(config.window));
        const auto model = model_fixture::load(config, model_fixture::random_tensors(config, rng, false));
        for (bool with_attention : {true, false})
            for (std::size_t threads : {1, 2}) {
                CAPTURE(with_attention, threads);
                m::ForwardCache cache;
                // More tokens than a query block (24) and than two AVX-512 vectors: a row's softmax
                // splits into vector body and scalar tail by its own length, not the block's.
                const std::size_t base = 37;
                auto ids = model_fixture::random_ids(rng, base, config.vocab_size);
                std::vector<std::uint8_t> mask;
                const auto check = [&](std::size_t expected_reused) {
                    CAPTURE(ids.size(), mask.size());
                    const std::size_t logits_from = ids.size() % 2 ? ids.size() - 1 : 0;  // 'last' and 'all'
                    // Through a cache, a run without attention takes the weights' path too.
                    const auto fresh = model_fixture::run(*model, ids, mask, threads, logits_from);
                    const auto cached = model_fixture::run(*model, ids, mask, threads, logits_from, &cache, with_attention);
                    if (with_attention) CHECK(same_bits(cached.attention, fresh.attention));
                    CHECK(same_bits(cached.hidden, fresh.hidden));
                    CHECK(same_bits(cached.logits, fresh.logits));
                    if (expected_reused != std::size_t(-1)) CHECK(cache.reused == expected_reused);
                };
                check(0);
                ids.push_back(3), check(base);                         // append one token
                ids.insert(ids.end(), {5, 6, 7}), check(base + 1);     // append three
                ids.resize(ids.size() - 2), check(base + 1);           // delete the last two: the last row is recomputed
                ids[10] = (ids[10] + 1) % std::int32_t(config.vocab_size), check(10);  // an edit in the middle
                ids.erase(ids.begin() + 4), check(4);                  // a deletion in the middle
                check(ids.size() - 1);                                 // the same ids: the last row only
                mask.assign(ids.size(), 1), check(ids.size() - 1);     // an all-ones mask is no mask
                mask[7] = 0, check(7);                                 // a different key mask
                std::uniform_int_distribution<std::size_t> kind(0, 3);
                for (int step = 0; step < 12; ++step) {  // random edits
                    const std::size_t at = std::uniform_int_distribution<std::size_t>(0, ids.size() - 1)(rng);
                    const auto id = std::uniform_int_distribution<std::int32_t>(0, config.vocab_size - 1)(rng);
                    switch (kind(rng)) {
                        case 0: ids.push_back(id), mask.push_back(1); break;
                        case 1: ids.insert(ids.begin() + at, id), mask.insert(mask.begin() + at, 1); break;
                        case 2: if (ids.size() > 2) ids.erase(ids.begin() + at), mask.erase(mask.begin() + at); break;
                        default: ids[at] = id;
                    }
                    check(std::size_t(-1));
                }
                cache.clear();
                CHECK(cache.bytes() == 0);
                check(0);
                CHECK(cache.bytes() > 0);
            }
    }
}

TEST_CASE("typing across the kept keys' panel boundaries gives the bits of a fresh run", "[model][incremental]") {
    // The cache keeps K^T and V in the kernels' panels (packed_cache.hpp):
    // one token at a time past two panels, an edit inside the last partial
    // panel, and growths of the cache's capacity between.
    const std::size_t width = attnlens::kernels::kPanelWidth;
    for (auto architecture : {m::Architecture::gpt2, m::Architecture::llama}) {
        auto config = config_of(architecture, 0);
        config.max_positions = std::max<std::size_t>(config.max_positions, 2 * width + 8);
        CAPTURE(m::architecture_name(architecture), width);
        std::mt19937 rng(905 + static_cast<int>(architecture));
        const auto model = model_fixture::load(config, model_fixture::random_tensors(config, rng, false));
        m::ForwardCache cache;
        auto ids = model_fixture::random_ids(rng, 1, config.vocab_size);
        const auto check = [&](std::size_t expected_reused) {
            CAPTURE(ids.size());
            const auto fresh = model_fixture::run(*model, ids);
            const auto cached = model_fixture::run(*model, ids, {}, 0, 0, &cache);
            CHECK(cache.reused == expected_reused);
            CHECK(same_bits(cached.attention, fresh.attention));
            CHECK(same_bits(cached.hidden, fresh.hidden));
            CHECK(same_bits(cached.logits, fresh.logits));
        };
        check(0);
        while (ids.size() < 2 * width + 3) ids.push_back(std::int32_t(ids.size() % config.vocab_size)), check(ids.size() - 1);
        const std::size_t inside = ids.size() - 2;  // in the last panel, which is partial
        ids[inside] = (ids[inside] + 1) % std::int32_t(config.vocab_size), check(inside);
        ids.resize(width + 1), check(width);  // back into the second panel
        for (std::size_t layer = 0; layer < config.layers; ++layer) {
            const std::size_t n = ids.size(), from = (layer * config.heads + 1) * n * n;
            const auto all = model_fixture::run(*model, ids);
            std::vector<float> head(n * n, -1.0f);
            REQUIRE(m::kept_head_weights(config, cache, layer, 1, head.data()) == "");
            CHECK(same_bits(head, std::vector<float>(all.attention.begin() + std::ptrdiff_t(from),
                                                     all.attention.begin() + std::ptrdiff_t(from + n * n))));
        }
    }
}

TEST_CASE("an encoder's runs through the cache reuse nothing and give the bits of a fresh run", "[model][incremental]") {
    std::mt19937 rng(77);
    auto config = config_of(m::Architecture::bert, 0);
    config.type_vocab_size = 2, config.has_lm_head = false;
    const auto model = model_fixture::load(config, model_fixture::random_tensors(config, rng, false));
    m::ForwardCache cache;
    auto ids = model_fixture::random_ids(rng, 9, config.vocab_size);
    model_fixture::run(*model, ids, {}, 0, 0, &cache);
    ids.push_back(4);
    const auto fresh = model_fixture::run(*model, ids);
    const auto cached = model_fixture::run(*model, ids, {}, 0, 0, &cache);
    CHECK(cache.reused == 0);
    CHECK(same_bits(cached.attention, fresh.attention));
    CHECK(same_bits(cached.hidden, fresh.hidden));
}

TEST_CASE("chosen layers and heads, and any head's weights afterwards, are those of every head", "[model][incremental]") {
    for (auto architecture : {m::Architecture::gpt2, m::Architecture::llama, m::Architecture::bert}) {
        auto config = config_of(architecture, 0);
        if (architecture == m::Architecture::bert) config.type_vocab_size = 2, config.has_lm_head = false;
        CAPTURE(m::architecture_name(architecture));
        std::mt19937 rng(78);
        const auto model = model_fixture::load(config, model_fixture::random_tensors(config, rng, false));
        const auto ids = model_fixture::random_ids(rng, 11, config.vocab_size);
        const std::size_t n = ids.size(), square = n * n;
        const auto all = model_fixture::run(*model, ids);
        m::ForwardCache cache;
        model_fixture::run(*model, std::vector<std::int32_t>(ids.begin(), ids.end() - 3), {}, 0, 0, &cache);
        const std::vector<std::uint8_t> layers{0, 1}, heads{1, 0, 0, 1};
        std::vector<float> chosen(2 * square, -1.0f);
        m::RunRequest request;
        request.ids = ids.data(), request.count = n, request.cache = &cache;
        request.attention = chosen.data(), request.layers_chosen = layers.data(), request.heads_chosen = heads.data();
        REQUIRE(model->run(request) == "");
        CHECK(cache.reused == (config.causal ? 8 : 0));
        for (std::size_t k = 0; k < 2; ++k) {  // layer 1, heads 0 and 3
            const std::size_t h = k == 0 ? 0 : 3, from = (config.heads + h) * square;
            CHECK(same_bits(std::vector<float>(chosen.begin() + k * square, chosen.begin() + (k + 1) * square),
                            std::vector<float>(all.attention.begin() + from, all.attention.begin() + from + square)));
        }
        for (std::size_t layer = 0; layer < config.layers; ++layer)
            for (std::size_t h = 0; h < config.heads; ++h) {
                std::vector<float> head(square, -1.0f);
                REQUIRE(m::kept_head_weights(config, cache, layer, h, head.data()) == "");
                const std::size_t from = (layer * config.heads + h) * square;
                CHECK(same_bits(head, std::vector<float>(all.attention.begin() + from,
                                                         all.attention.begin() + from + square)));
            }
        cache.clear();
        std::vector<float> head(square);
        CHECK(m::kept_head_weights(config, cache, 0, 0, head.data()) == "nothing is kept: run the model first");
    }
}

TEST_CASE("the logits computed afterwards from the kept rows are the bits of a run's", "[model][incremental]") {
    for (auto architecture : {m::Architecture::gpt2, m::Architecture::llama}) {
        const auto config = config_of(architecture, 0);
        CAPTURE(m::architecture_name(architecture));
        std::mt19937 rng(810 + static_cast<int>(architecture));
        const auto model = model_fixture::load(config, model_fixture::random_tensors(config, rng, true));
        m::ForwardCache& cache = model->forward_cache();
        const auto ids = model_fixture::random_ids(rng, 29, config.vocab_size);
        const std::size_t n = ids.size(), V = config.vocab_size;
        const auto fresh = model_fixture::run(*model, ids);  // every row's logits, nothing kept
        std::vector<std::int32_t> every(n);
        for (std::size_t t = 0; t < n; ++t) every[t] = std::int32_t(t);
        const std::int32_t last_position = std::int32_t(n - 1);
        CHECK(model->kept_logits(every.data(), n, nullptr) == "nothing is kept: run the model first");
        // An append through the cache, as a page typing at the end runs it (no logits of its own).
        model_fixture::run(*model, {ids.begin(), ids.end() - 1}, {}, 0, 0, &cache);
        model_fixture::run(*model, ids, {}, 0, n - 1, &cache);
        REQUIRE(cache.reused == n - 1);
        const auto row = [&](std::size_t t) {
            return std::vector<float>(fresh.logits.begin() + std::ptrdiff_t(t * V), fresh.logits.begin() + std::ptrdiff_t((t + 1) * V));
        };
        std::vector<float> all(n * V, -1.0f), last(V, -1.0f);
        CHECK(model->kept_logits(every.data(), n, all.data()) == "");
        CHECK(model->kept_logits(&last_position, 1, last.data()) == "");
        CHECK(same_bits(all, fresh.logits));
        CHECK(same_bits(last, row(n - 1)));
        // Chosen rows in any order, repeats too (gathered out of the kept rows): each its position's bits.
        const std::vector<std::int32_t> chosen{7, 2, 28, 2};
        std::vector<float> some(chosen.size() * V, -1.0f);
        CHECK(model->kept_logits(chosen.data(), chosen.size(), some.data()) == "");
        for (std::size_t i = 0; i < chosen.size(); ++i)
            CHECK(same_bits(std::vector<float>(some.begin() + std::ptrdiff_t(i * V), some.begin() + std::ptrdiff_t((i + 1) * V)),
                            row(std::size_t(chosen[i]))));
        const std::int32_t past = std::int32_t(n), negative = -1;
        CHECK(model->kept_logits(&past, 1, last.data()) == "logits of position 29: there are only 29 tokens (positions 0 to 28)");
        CHECK(model->kept_logits(&negative, 1, last.data()) == "logits of position -1: there are only 29 tokens (positions 0 to 28)");
        CHECK(model->kept_logits(every.data(), 0, last.data()) == "no positions: the logits of at least one position were asked for");
        cache.clear();
        CHECK(model->kept_logits(every.data(), n, all.data()) == "nothing is kept: run the model first");
    }
    auto encoder = config_of(m::Architecture::bert, 0);
    encoder.type_vocab_size = 2, encoder.has_lm_head = false;
    std::mt19937 rng(812);
    const auto model = model_fixture::load(encoder, model_fixture::random_tensors(encoder, rng, false));
    model_fixture::run(*model, {1, 2, 3}, {}, 0, 0, &model->forward_cache());
    const std::int32_t first = 0;
    CHECK(model->kept_logits(&first, 1, nullptr) == "bert models have no language-model head: no logits");
}
