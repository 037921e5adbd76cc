// Multi-head attention against a double-precision reference built from the
// single-head reference: project, slice columns per head, attend, concat, W_O.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "attention/multi_head.hpp"
#include "close_to.hpp"
#include "reference.hpp"

namespace {

struct ReferenceMultiHead {
    reference::Matrix output, weights;  // n x d, heads x n x nk
};

reference::Matrix plus_bias(reference::Matrix m, const reference::Matrix& bias, std::size_t rows, std::size_t cols) {
    if (bias.empty()) return m;
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) m[i * cols + j] += bias[j];
    return m;
}

reference::Matrix columns(const reference::Matrix& m, std::size_t rows, std::size_t stride, std::size_t first, std::size_t width) {
    reference::Matrix out(rows * width);
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < width; ++j) out[i * width + j] = m[i * stride + first + j];
    return out;
}

ReferenceMultiHead reference_multi_head(const reference::Matrix& x, std::size_t n, const reference::Matrix& context,
                                        std::size_t nk, std::size_t d, std::size_t heads,
                                        const std::vector<reference::Matrix>& w, const std::vector<reference::Matrix>& b,
                                        const reference::Options& options) {
    const std::size_t dk = d / heads;
    const auto q = plus_bias(reference::matmul(x, w[0], n, d, d), b[0], n, d);
    const auto k = plus_bias(reference::matmul(context, w[1], nk, d, d), b[1], nk, d);
    const auto v = plus_bias(reference::matmul(context, w[2], nk, d, d), b[2], nk, d);
    ReferenceMultiHead result{{}, reference::Matrix(heads * n * nk)};
    reference::Matrix concatenated(n * d);
    for (std::size_t h = 0; h < heads; ++h) {
        const auto head = reference::attention(columns(q, n, d, h * dk, dk), columns(k, nk, d, h * dk, dk),
                                               columns(v, nk, d, h * dk, dk), n, nk, dk, dk, options);
        std::copy(head.weights.begin(), head.weights.end(), result.weights.begin() + h * n * nk);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < dk; ++j) concatenated[i * d + h * dk + j] = head.output[i * dk + j];
    }
    result.output = plus_bias(reference::matmul(concatenated, w[3], n, d, d), b[3], n, d);
    return result;
}

}  // namespace

TEST_CASE("multi-head attention matches the reference (self and cross, biases, masks)", "[multi_head]") {
    std::mt19937 rng(21);
    struct Case { std::size_t n, nk, d, heads; bool cross, biases, causal; float temperature; };
    const Case cases[] = {
        {3, 3, 4, 1, false, false, false, 1.0f}, {5, 5, 12, 3, false, true, false, 1.0f},
        {7, 7, 16, 4, false, false, true, 1.0f}, {6, 9, 8, 2, true, true, false, 0.5f},
        {9, 4, 30, 5, true, false, true, 2.0f},  {1, 1, 7, 7, false, true, false, 1.0f},
        {17, 17, 48, 3, false, true, true, 1.0f}, {33, 20, 64, 8, true, true, false, 1.5f},
    };
    for (const Case& c : cases) {
        INFO("n=" << c.n << " nk=" << c.nk << " d=" << c.d << " heads=" << c.heads << " cross=" << c.cross);
        const auto x = reference::random_matrix(rng, c.n * c.d);
        const auto context = c.cross ? reference::random_matrix(rng, c.nk * c.d) : x;
        std::vector<reference::Matrix> w, b;
        for (int i = 0; i < 4; ++i) {
            w.push_back(reference::random_matrix(rng, c.d * c.d, -0.5, 0.5));
            b.push_back(c.biases ? reference::random_matrix(rng, c.d) : reference::Matrix{});
        }
        reference::Options ref_options;
        ref_options.causal = c.causal;
        ref_options.temperature = c.temperature;
        const auto expected = reference_multi_head(x, c.n, context, c.nk, c.d, c.heads, w, b, ref_options);

        std::vector<std::vector<float>> wf, bf;
        for (int i = 0; i < 4; ++i) {
            wf.push_back(reference::to_float(w[i]));
            bf.push_back(reference::to_float(b[i]));
        }
        const auto xf = reference::to_float(x), contextf = reference::to_float(context);
        attnlens::MultiHeadInput input{xf.data(), c.n, c.cross ? contextf.data() : nullptr, c.cross ? c.nk : 0};
        attnlens::MultiHeadWeights weights{c.d, c.heads, wf[0].data(), wf[1].data(), wf[2].data(), wf[3].data(),
                                           c.biases ? bf[0].data() : nullptr, c.biases ? bf[1].data() : nullptr,
                                           c.biases ? bf[2].data() : nullptr, c.biases ? bf[3].data() : nullptr};
        attnlens::AttentionOptions options;
        options.causal = c.causal;
        options.temperature = c.temperature;
        REQUIRE(attnlens::validate(input, weights, options).empty());
        std::vector<float> output(c.n * c.d), head_weights(c.heads * c.n * c.nk);
        attnlens::MultiHeadTrace trace;
        attnlens::multi_head_attention(input, weights, options, output.data(), head_weights.data(), &trace);
        require_close(output, expected.output, 2e-5);
        require_close(head_weights, expected.weights, 2e-5);
        require_close(trace.weights, expected.weights, 2e-5);

        // The trace is consistent with itself: scaled = scores * scale / T, masked = -inf.
        const float multiplier = 1.0f / std::sqrt(float(c.d / c.heads)) / c.temperature;
        for (std::size_t i = 0; i < trace.scores.size(); ++i) {
            if (std::isinf(trace.scaled_scores[i])) {
                REQUIRE(trace.weights[i] == 0.0f);
            } else {
                REQUIRE(trace.scaled_scores[i] == Approx(trace.scores[i] * multiplier).margin(1e-6));
            }
        }
        REQUIRE(trace.q.size() == c.n * c.d);
        REQUIRE(trace.k.size() == c.nk * c.d);
        REQUIRE(trace.concatenated_heads.size() == c.n * c.d);
    }
}

TEST_CASE("multi-head validate names the problem", "[multi_head]") {
    std::vector<float> w(36, 0.0f), x(6, 0.0f);
    attnlens::MultiHeadInput input{x.data(), 1, nullptr, 0};
    attnlens::MultiHeadWeights weights{6, 4, w.data(), w.data(), w.data(), w.data()};
    attnlens::AttentionOptions options;
    REQUIRE(attnlens::validate(input, weights, options).find("divisible by heads") != std::string::npos);
    weights.heads = 3;
    REQUIRE(attnlens::validate(input, weights, options).empty());
    weights.wo = nullptr;
    REQUIRE(attnlens::validate(input, weights, options).find("wo") != std::string::npos);
    weights.wo = w.data();
    input.tokens = 0;
    REQUIRE(attnlens::validate(input, weights, options).find("tokens") != std::string::npos);
}
