// Sliding-window attention (Mistral's): a causal query at position p sees
// keys p - window + 1 .. p. Checked against the double-precision reference
// run one query at a time with a key mask that spells the window out, on
// the dense path (weights wanted) and the online path (output only, keys
// visited in steps, so whole steps fall before a window), with m < n and
// with a padding key mask on top.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "attention/attention.hpp"
#include "close_to.hpp"
#include "reference.hpp"

namespace {

// Query i's result by the reference: its row of Q alone, with the keys
// outside [position - window + 1, position] (position = i + n - m) and the
// padding keys masked.
reference::Attention windowed_row(const reference::Matrix& q, const reference::Matrix& k, const reference::Matrix& v,
                                  std::size_t i, std::size_t m, std::size_t n, std::size_t d, std::size_t window,
                                  const std::vector<std::uint8_t>& padding) {
    const std::size_t position = i + n - m;
    reference::Options options;
    options.key_mask.assign(n, 0);
    for (std::size_t j = 0; j < n; ++j)
        options.key_mask[j] = j <= position && j + window > position && (padding.empty() || padding[j] != 0);
    const reference::Matrix row(q.begin() + i * d, q.begin() + (i + 1) * d);
    return reference::attention(row, k, v, 1, n, d, d, options);
}

}  // namespace

TEST_CASE("a causal window hides the keys before it, on the dense and the online path", "[attention][window]") {
    std::mt19937 rng(31);
    const std::size_t d = 8;
    for (const auto [m, n] : {std::pair<std::size_t, std::size_t>{7, 7}, {3, 9}, {40, 40}, {30, 300}}) {
        for (const std::size_t window : {1, 2, 5, 64, 1000}) {
            for (const bool padded : {false, true}) {
                INFO("m " << m << ", n " << n << ", window " << window << (padded ? ", padded" : ""));
                const auto q = reference::random_matrix(rng, m * d), k = reference::random_matrix(rng, n * d);
                const auto v = reference::random_matrix(rng, n * d);
                std::vector<std::uint8_t> padding;
                if (padded) {
                    padding.assign(n, 1);
                    for (std::size_t j = 1; j < n; j += 4) padding[j] = 0;  // never every key of a window of 2+
                }
                attnlens::AttentionOptions options;
                options.causal = true;
                options.window = window;
                options.key_mask = padded ? padding.data() : nullptr;
                const attnlens::AttentionShape shape{m, n, d, d};
                REQUIRE(attnlens::validate(shape, options).empty());
                const auto qf = reference::to_float(q), kf = reference::to_float(k), vf = reference::to_float(v);
                std::vector<float> dense(m * d), weights(m * n), online(m * d);
                attnlens::attention(qf.data(), kf.data(), vf.data(), shape, options, dense.data(), weights.data());
                attnlens::attention(qf.data(), kf.data(), vf.data(), shape, options, online.data(), nullptr);
                reference::Matrix expected_weights, expected_output;
                for (std::size_t i = 0; i < m; ++i) {
                    const auto row = windowed_row(q, k, v, i, m, n, d, window, padding);
                    expected_weights.insert(expected_weights.end(), row.weights.begin(), row.weights.end());
                    expected_output.insert(expected_output.end(), row.output.begin(), row.output.end());
                    for (std::size_t j = 0; j < n; ++j)
                        REQUIRE(attnlens::key_hidden(shape, options, i, j) == (row.weights[j] == 0.0));
                }
                require_close(weights, expected_weights, 1e-5);
                require_close(dense, expected_output, 1e-5);
                require_close(online, expected_output, 1e-5);
            }
        }
    }
}
