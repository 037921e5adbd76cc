// attention_heads split over threads: heads are independent, so any thread
// count must give bit-identical output and weights (and so must the
// output-only path).
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "attention/attention.hpp"

TEST_CASE("attention_heads on 1, 2, 3 and 8 threads gives bit-identical results", "[threads]") {
    std::mt19937 rng(77);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    auto random_floats = [&](std::size_t count) {
        std::vector<float> values(count);
        for (auto& value : values) value = uniform(rng);
        return values;
    };
    const std::size_t heads = 5, m = 33, n = 70, dk = 16, dv = 24;
    const attnlens::AttentionShape shape{m, n, dk, dv};
    std::vector<std::uint8_t> mask(n, 1);
    mask[3] = mask[40] = 0;
    attnlens::AttentionOptions options;
    options.causal = true;
    options.key_mask = mask.data();
    const auto q = random_floats(heads * m * dk), k = random_floats(heads * n * dk), v = random_floats(heads * n * dv);

    std::vector<float> output_one(heads * m * dv), weights_one(heads * m * n), online_one(heads * m * dv);
    attnlens::attention_heads(q.data(), k.data(), v.data(), heads, shape, options, output_one.data(),
                              weights_one.data(), 1);
    attnlens::attention_heads(q.data(), k.data(), v.data(), heads, shape, options, online_one.data(), nullptr, 1);
    for (std::size_t threads : {2, 3, 8}) {
        INFO(threads << " threads");
        std::vector<float> output(heads * m * dv, 9.0f), weights(heads * m * n, 9.0f), online(heads * m * dv, 9.0f);
        attnlens::attention_heads(q.data(), k.data(), v.data(), heads, shape, options, output.data(), weights.data(),
                                  threads);
        attnlens::attention_heads(q.data(), k.data(), v.data(), heads, shape, options, online.data(), nullptr, threads);
        CHECK(output == output_one);
        CHECK(weights == weights_one);
        CHECK(online == online_one);
    }
    // The single-head reference agrees with head 2 of the stacked call.
    std::vector<float> output_two(m * dv), weights_two(m * n);
    attnlens::attention(q.data() + 2 * m * dk, k.data() + 2 * n * dk, v.data() + 2 * n * dv, shape, options,
                        output_two.data(), weights_two.data());
    CHECK(std::vector<float>(output_one.begin() + 2 * m * dv, output_one.begin() + 3 * m * dv) == output_two);
    CHECK(std::vector<float>(weights_one.begin() + 2 * m * n, weights_one.begin() + 3 * m * n) == weights_two);
}
