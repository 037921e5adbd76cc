// Single-head attention against the double-precision reference, the worked
// example with known numbers, and the properties attention must have.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "attention/attention.hpp"
#include "close_to.hpp"
#include "reference.hpp"

namespace {

struct Result {
    std::vector<float> output, weights;
};

Result run(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
           const attnlens::AttentionShape& shape, const attnlens::AttentionOptions& options = {}) {
    REQUIRE(attnlens::validate(shape, options).empty());
    Result result{std::vector<float>(shape.queries * shape.value_width, NAN),
                  std::vector<float>(shape.queries * shape.keys, NAN)};
    attnlens::attention(q.data(), k.data(), v.data(), shape, options, result.output.data(), result.weights.data());
    return result;
}

// The tutorial example: 3 tokens, d = 4, Q = X W_Q, K = X W_K, V = X W_V.
const reference::Matrix kX = {1, 0, 1, 0, 0, 2, 0, 2, 1, 1, 1, 1};
const reference::Matrix kWq = {0.1, 0.2, 0, 0, 0, 0.1, 0.3, 0, 0.1, 0, 0, 0.2, 0, 0, 0.2, 0.3};
const reference::Matrix kWk = {0.2, 0, 0.1, 0, 0, 0.1, 0, 0.3, 0.1, 0, 0.2, 0, 0, 0.2, 0, 0.1};
const reference::Matrix kWv = {0, 0.1, 0, 0.2, 0.2, 0, 0.2, 0, 0, 0.3, 0.1, 0, 0.1, 0, 0, 0.3};

}  // namespace

TEST_CASE("worked example: 3 tokens, d = 4, known weights and outputs", "[attention]") {
    const auto q = reference::to_float(reference::matmul(kX, kWq, 3, 4, 4));
    const auto k = reference::to_float(reference::matmul(kX, kWk, 3, 4, 4));
    const auto v = reference::to_float(reference::matmul(kX, kWv, 3, 4, 4));
    const auto result = run(q, k, v, {3, 3, 4, 4});
    // Row 0 is the tutorial's published answer; rows 1 and 2 were computed
    // independently in double precision (plain Python, no shared code).
    const std::vector<double> weights = {0.313598944, 0.350063624, 0.336337433,
                                         0.300872366, 0.349563817, 0.349563817,
                                         0.297684785, 0.358179823, 0.344135391};
    const std::vector<double> output = {0.310939404, 0.259974551, 0.272286574, 0.440926679,
                                        0.314607435, 0.260174473, 0.274781909, 0.444694672,
                                        0.318148511, 0.256728071, 0.276281025, 0.446512547};
    require_close(result.weights, weights, 1e-6);
    require_close(result.output, output, 1e-6);
}

TEST_CASE("random shapes match the double-precision reference", "[attention]") {
    std::mt19937 rng(11);
    const std::size_t sizes[] = {1, 2, 3, 5, 7, 8, 13, 16, 17, 33, 64, 70};
    std::uniform_int_distribution<int> pick(0, int(std::size(sizes)) - 1);
    std::bernoulli_distribution coin(0.5);
    for (int trial = 0; trial < 250; ++trial) {
        const std::size_t m = sizes[pick(rng)], n = sizes[pick(rng)], dk = sizes[pick(rng)], dv = sizes[pick(rng)];
        const auto q = reference::random_matrix(rng, m * dk), k = reference::random_matrix(rng, n * dk),
                   v = reference::random_matrix(rng, n * dv);
        reference::Options ref_options;
        attnlens::AttentionOptions options;
        std::vector<std::uint8_t> mask;
        if (coin(rng)) {
            ref_options.causal = options.causal = true;
        }
        if (coin(rng)) {
            ref_options.temperature = options.temperature = std::uniform_real_distribution<float>(0.25f, 3.0f)(rng);
        }
        if (trial % 5 == 0) {
            const float scale = std::uniform_real_distribution<float>(0.05f, 2.0f)(rng);
            ref_options.scale = scale;
            options.scale = scale;
        }
        if (coin(rng)) {
            mask.resize(n);
            for (auto& keep : mask) keep = coin(rng) || coin(rng);
            ref_options.key_mask = mask;
            options.key_mask = mask.data();
        }
        INFO("trial " << trial << ": m=" << m << " n=" << n << " dk=" << dk << " dv=" << dv << " causal="
                      << options.causal << " masked=" << !mask.empty() << " temperature=" << options.temperature);
        const auto expected = reference::attention(q, k, v, m, n, dk, dv, ref_options);
        const auto actual = run(reference::to_float(q), reference::to_float(k), reference::to_float(v), {m, n, dk, dv}, options);
        require_close(actual.weights, expected.weights, 2e-5);
        require_close(actual.output, expected.output, 2e-5);
    }
}

// Without an output buffer (a model's kept rows, src/model/forward.cpp kept_rows): the weights' very bits, V unread.
TEST_CASE("without a weights buffer the output is the same, without an output buffer the weights", "[attention]") {
    std::mt19937 rng(12);
    for (std::size_t m : {1, 31, 32, 33, 100})
        for (bool causal : {false, true}) {
            const std::size_t n = 45, dk = 16, dv = 9;
            auto q = reference::to_float(reference::random_matrix(rng, m * dk));
            auto k = reference::to_float(reference::random_matrix(rng, n * dk));
            auto v = reference::to_float(reference::random_matrix(rng, n * dv));
            attnlens::AttentionOptions options;
            options.causal = causal;
            const auto with_weights = run(q, k, v, {m, n, dk, dv}, options);
            std::vector<float> output(m * dv, NAN);
            attnlens::attention(q.data(), k.data(), v.data(), {m, n, dk, dv}, options, output.data(), nullptr);
            require_close(output, with_weights.output, 1e-6);
            std::vector<float> weights(m * n, NAN);
            const std::vector<float> poisoned(n * dv, NAN);  // never read: no output is asked for
            attnlens::attention_strided(q.data(), dk, k.data(), dk, poisoned.data(), dv, {m, n, dk, dv}, options, nullptr,
                                        dv, weights.data());
            REQUIRE(weights == with_weights.weights);
        }
}

TEST_CASE("properties: rows sum to 1, causal zeros, permutation invariance", "[attention]") {
    std::mt19937 rng(13);
    const std::size_t m = 9, n = 9, dk = 6, dv = 5;
    auto q = reference::to_float(reference::random_matrix(rng, m * dk, -3, 3));
    auto k = reference::to_float(reference::random_matrix(rng, n * dk, -3, 3));
    auto v = reference::to_float(reference::random_matrix(rng, n * dv, -3, 3));

    SECTION("every row of the weights sums to 1") {
        const auto result = run(q, k, v, {m, n, dk, dv});
        for (std::size_t i = 0; i < m; ++i)
            REQUIRE(std::accumulate(result.weights.begin() + i * n, result.weights.begin() + (i + 1) * n, 0.0) ==
                    Approx(1.0).margin(1e-6));
    }
    SECTION("causal weights are 0 above the diagonal, and the first query sees only the first key") {
        attnlens::AttentionOptions options;
        options.causal = true;
        const auto result = run(q, k, v, {m, n, dk, dv}, options);
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = i + 1; j < n; ++j) REQUIRE(result.weights[i * n + j] == 0.0f);
        REQUIRE(result.weights[0] == 1.0f);
    }
    SECTION("causal with fewer queries than keys aligns queries to the end") {
        attnlens::AttentionOptions options;
        options.causal = true;
        const std::size_t short_m = 3;
        const auto result = run(std::vector<float>(q.begin(), q.begin() + short_m * dk), k, v, {short_m, n, dk, dv}, options);
        for (std::size_t i = 0; i < short_m; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                INFO("query " << i << ", key " << j);
                if (j > i + (n - short_m)) REQUIRE(result.weights[i * n + j] == 0.0f);
                else REQUIRE(result.weights[i * n + j] > 0.0f);
            }
    }
    SECTION("permuting keys and values together permutes weights and keeps the output") {
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        std::vector<float> k_perm(n * dk), v_perm(n * dv);
        for (std::size_t j = 0; j < n; ++j) {
            std::copy_n(k.begin() + order[j] * dk, dk, k_perm.begin() + j * dk);
            std::copy_n(v.begin() + order[j] * dv, dv, v_perm.begin() + j * dv);
        }
        const auto original = run(q, k, v, {m, n, dk, dv});
        const auto permuted = run(q, k_perm, v_perm, {m, n, dk, dv});
        require_close(permuted.output, original.output, 1e-5);
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j)
                REQUIRE(permuted.weights[i * n + j] == Approx(original.weights[i * n + order[j]]).margin(1e-6));
    }
}

TEST_CASE("extreme scores stay finite and correct", "[attention]") {
    // q . k = +-1e4 after scaling: softmax must not overflow.
    const std::vector<float> q = {100.0f, 100.0f};
    const std::vector<float> k = {100.0f, 0.0f, -100.0f, 0.0f, 100.0f, 0.0f};
    const std::vector<float> v = {1.0f, 2.0f, 3.0f};
    attnlens::AttentionOptions options;
    options.scale = 1.0f;
    const auto result = run(q, k, v, {1, 3, 2, 1}, options);
    REQUIRE(result.weights[0] == Approx(0.5f));
    REQUIRE(result.weights[1] == 0.0f);
    REQUIRE(result.weights[2] == Approx(0.5f));
    REQUIRE(result.output[0] == Approx(2.0f));
}

TEST_CASE("a query whose keys are all masked gets zero weights and zero output", "[attention]") {
    std::mt19937 rng(14);
    const std::size_t m = 4, n = 5, d = 3;
    auto q = reference::to_float(reference::random_matrix(rng, m * d));
    auto k = reference::to_float(reference::random_matrix(rng, n * d));
    auto v = reference::to_float(reference::random_matrix(rng, n * d));
    const std::vector<std::uint8_t> mask(n, 0);
    attnlens::AttentionOptions options;
    options.key_mask = mask.data();
    const auto result = run(q, k, v, {m, n, d, d}, options);
    for (float w : result.weights) REQUIRE(w == 0.0f);
    for (float o : result.output) REQUIRE(o == 0.0f);
}

TEST_CASE("temperature divides the scaled scores", "[attention]") {
    std::mt19937 rng(15);
    const std::size_t m = 3, n = 6, d = 8;
    auto q = reference::to_float(reference::random_matrix(rng, m * d, -2, 2));
    auto k = reference::to_float(reference::random_matrix(rng, n * d, -2, 2));
    auto v = reference::to_float(reference::random_matrix(rng, n * d, -2, 2));
    attnlens::AttentionOptions hot, scaled;
    hot.temperature = 4.0f;
    scaled.scale = 1.0f / (std::sqrt(8.0f) * 4.0f);
    require_close(run(q, k, v, {m, n, d, d}, hot).weights, run(q, k, v, {m, n, d, d}, scaled).weights, 1e-6);
}

TEST_CASE("validate names the problem", "[attention]") {
    using attnlens::validate;
    attnlens::AttentionOptions ok;
    REQUIRE(validate({0, 1, 1, 1}, ok).find("queries") != std::string::npos);
    REQUIRE(validate({1, 0, 1, 1}, ok).find("keys") != std::string::npos);
    REQUIRE(validate({1, 1, 0, 1}, ok).find("dk") != std::string::npos);
    REQUIRE(validate({1, 1, 1, 0}, ok).find("dv") != std::string::npos);
    attnlens::AttentionOptions cold;
    cold.temperature = 0.0f;
    REQUIRE(validate({1, 1, 1, 1}, cold).find("temperature") != std::string::npos);
    cold.temperature = std::numeric_limits<float>::quiet_NaN();
    REQUIRE(validate({1, 1, 1, 1}, cold).find("temperature") != std::string::npos);
    attnlens::AttentionOptions negative;
    negative.scale = -1.0f;  // would turn masked -inf scores into +inf
    REQUIRE(validate({1, 1, 1, 1}, negative).find("scale") != std::string::npos);
    negative.scale = 0.0f;
    REQUIRE(validate({1, 1, 1, 1}, negative).find("scale") != std::string::npos);
    REQUIRE(validate({1, 1, 1, 1}, ok).empty());
}
