// AttentionOptions::score_bias (T5's relative position bias) against a
// double reference, with the weights materialized and output only (which
// then takes the dense path), causal or not, m queries over n keys.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "attention/attention.hpp"
#include "close_to.hpp"
#include "reference.hpp"

TEST_CASE("a score bias is added to the raw scores before the multiplier", "[attention][bias]") {
    std::mt19937 rng(41);
    for (const bool causal : {false, true})
        for (const auto [m, n] : {std::pair<std::size_t, std::size_t>{1, 1}, {3, 7}, {7, 7}, {40, 300}}) {
            if (causal && m > n) continue;
            INFO("causal " << causal << ", m " << m << ", n " << n);
            const std::size_t d = 8;
            const auto q = reference::random_matrix(rng, m * d), k = reference::random_matrix(rng, n * d);
            const auto v = reference::random_matrix(rng, n * d), bias = reference::random_matrix(rng, m * n, -3.0, 3.0);
            // softmax((q k^T + bias) * 0.5) v, query i seeing keys j <= i + n - m under the causal mask.
            reference::Matrix weights(m * n, 0.0), output(m * d, 0.0);
            for (std::size_t i = 0; i < m; ++i) {
                double max = -INFINITY, sum = 0;
                std::vector<double> row(n, -INFINITY);
                for (std::size_t j = 0; j < n && !(causal && j > i + n - m); ++j) {
                    double dot = bias[i * n + j];
                    for (std::size_t c = 0; c < d; ++c) dot += q[i * d + c] * k[j * d + c];
                    row[j] = dot * 0.5;
                    max = std::max(max, row[j]);
                }
                for (double& value : row) sum += (value = std::exp(value - max));
                for (std::size_t j = 0; j < n; ++j) {
                    weights[i * n + j] = row[j] / sum;
                    for (std::size_t c = 0; c < d; ++c) output[i * d + c] += weights[i * n + j] * v[j * d + c];
                }
            }
            const std::vector<float> fq = reference::to_float(q), fk = reference::to_float(k), fv = reference::to_float(v);
            const std::vector<float> fbias = reference::to_float(bias);
            attnlens::AttentionOptions options;
            options.scale = 0.5f;
            options.causal = causal;
            options.score_bias = fbias.data();
            const attnlens::AttentionShape shape{m, n, d, d};
            std::vector<float> got_output(m * d), got_weights(m * n), output_only(m * d);
            attnlens::attention(fq.data(), fk.data(), fv.data(), shape, options, got_output.data(), got_weights.data());
            require_close(got_weights, weights, 1e-5);
            require_close(got_output, output, 1e-5);
            attnlens::attention(fq.data(), fk.data(), fv.data(), shape, options, output_only.data(), nullptr);
            require_close(output_only, output, 1e-5);
        }
}
