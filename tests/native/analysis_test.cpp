// Head detectors and attention rollout (src/analysis/) against plain float64
// code written here: each detector from its explicit 0/1 pattern matrix,
// built the way TransformerLens builds it (duplicate: token equality below
// the diagonal; induction: that matrix shifted one key to the right).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <random>
#include <vector>

#include "analysis/detectors.hpp"
#include "analysis/rollout.hpp"
#include "close_to.hpp"

namespace {

namespace analysis = attnlens::analysis;
using Matrix = std::vector<std::vector<double>>;

// Rows of random softmax weights; causal: keys after the query get 0.
std::vector<float> random_attention(std::mt19937& rng, std::size_t heads, std::size_t n, bool causal) {
    std::uniform_real_distribution<double> logit(-3.0, 3.0);
    std::vector<float> weights(heads * n * n, 0.0f);
    for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t keys = causal ? i + 1 : n;
            std::vector<double> row(keys);
            double sum = 0;
            for (double& value : row) sum += value = std::exp(logit(rng));
            for (std::size_t j = 0; j < keys; ++j) weights[(h * n + i) * n + j] = static_cast<float>(row[j] / sum);
        }
    return weights;
}

Matrix zeros(std::size_t n) { return Matrix(n, std::vector<double>(n, 0.0)); }

// The five patterns, in Detector order.
std::vector<Matrix> patterns(const std::vector<std::int32_t>& ids) {
    const std::size_t n = ids.size();
    std::vector<Matrix> p(analysis::kDetectorCount, zeros(n));
    for (std::size_t i = 0; i < n; ++i) {
        p[analysis::kCurrentToken][i][i] = 1;
        if (i >= 1) p[analysis::kPreviousToken][i][i - 1] = 1, p[analysis::kFirstToken][i][0] = 1;
        for (std::size_t j = 0; j < i; ++j) p[analysis::kDuplicateToken][i][j] = ids[i] == ids[j] ? 1 : 0;
    }
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 1; j < n; ++j)
            if (j <= i) p[analysis::kInduction][i][j] = p[analysis::kDuplicateToken][i][j - 1];
    return p;
}

double mul_score(const float* a, const Matrix& pattern) {
    const std::size_t n = pattern.size();
    double matched = 0, total = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) matched += a[i * n + j] * pattern[i][j], total += a[i * n + j];
    return total > 0 ? matched / total : 0;
}

}  // namespace

TEST_CASE("detector scores equal sum(A o P) / sum(A) for every pattern", "[analysis]") {
    std::mt19937 rng(11);
    for (bool causal : {true, false})
        for (std::size_t n : {1, 2, 5, 9, 17}) {
            const analysis::AttentionShape shape{2, 3, n};
            const auto attention = random_attention(rng, shape.head_count(), n, causal);
            std::uniform_int_distribution<std::int32_t> token(0, 3);  // few tokens: many repeats
            std::vector<std::int32_t> ids(n);
            for (auto& id : ids) id = token(rng);
            std::vector<float> scores(analysis::kDetectorCount * shape.head_count());
            analysis::head_scores(attention.data(), shape, ids.data(), 0, scores.data());
            const auto p = patterns(ids);
            std::vector<double> expected;
            for (std::size_t d = 0; d < analysis::kDetectorCount; ++d)
                for (std::size_t head = 0; head < shape.head_count(); ++head)
                    expected.push_back(mul_score(attention.data() + head * n * n, p[d]));
            INFO("n " << n << ", causal " << causal);
            require_close(scores, expected, 1e-6);
        }
}

TEST_CASE("detector scores: worked example, and 0 for a text without repeats", "[analysis]") {
    // One head, ids a b a: row 2 puts 0.5 on the earlier "a" (duplicate) and
    // 0.25 on the "b" after it (induction). Sum of A = 3.
    const std::vector<float> a = {1, 0, 0, 0.5f, 0.5f, 0, 0.5f, 0.25f, 0.25f};
    std::vector<float> scores(analysis::kDetectorCount);
    const std::vector<std::int32_t> repeated = {4, 7, 4};
    analysis::head_scores(a.data(), {1, 1, 3}, repeated.data(), 0, scores.data());
    CHECK(scores[analysis::kPreviousToken] == Approx(0.75 / 3));
    CHECK(scores[analysis::kFirstToken] == Approx(1.0 / 3));
    CHECK(scores[analysis::kCurrentToken] == Approx(1.75 / 3));
    CHECK(scores[analysis::kDuplicateToken] == Approx(0.5 / 3));
    CHECK(scores[analysis::kInduction] == Approx(0.25 / 3));
    const std::vector<std::int32_t> distinct = {4, 7, 5};
    analysis::head_scores(a.data(), {1, 1, 3}, distinct.data(), 0, scores.data());
    CHECK(scores[analysis::kDuplicateToken] == 0.0f);
    CHECK(scores[analysis::kInduction] == 0.0f);
    const std::vector<float> masked(9, 0.0f);  // no weight at all: every score 0, no NaN
    analysis::head_scores(masked.data(), {1, 1, 3}, repeated.data(), 0, scores.data());
    for (float score : scores) CHECK(score == 0.0f);
}

TEST_CASE("head scores with a period: the second copy's attention to the token after the first occurrence", "[analysis]") {
    std::mt19937 rng(5);
    const std::size_t period = 6, n = 2 * period;
    const analysis::AttentionShape shape{2, 2, n};
    const auto attention = random_attention(rng, shape.head_count(), n, true);
    // Ids with chance repeats inside each copy: the score follows the period, not the ids.
    std::vector<std::int32_t> ids(n);
    for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::int32_t>(i % 4);
    std::vector<float> scores(shape.head_count());
    analysis::head_scores(attention.data(), shape, ids.data(), period, scores.data());
    for (std::size_t head = 0; head < shape.head_count(); ++head) {
        const float* a = attention.data() + head * n * n;
        double matched = 0;
        for (std::size_t i = period; i < n; ++i) matched += a[i * n + i - period + 1];
        CHECK(scores[head] == Approx(matched / period).epsilon(1e-6));  // each row sums to 1
    }
    analysis::head_scores(attention.data(), shape, ids.data(), n, scores.data());  // no second copy: no rows
    for (float score : scores) CHECK(score == 0.0f);
}

TEST_CASE("attention rollout equals the float64 product of residual-mixed layers, rows summing to 1", "[analysis]") {
    std::mt19937 rng(7);
    for (bool causal : {true, false})
        for (std::size_t n : {1, 3, 8, 13, 33}) {
            const analysis::AttentionShape shape{4, 3, n};
            const auto attention = random_attention(rng, shape.layers * shape.heads, n, causal);
            std::vector<float> rollout(shape.layers * n * n), row(n);
            analysis::attention_rollout(attention.data(), shape, rollout.data(), row.data());
            Matrix previous;
            std::vector<double> expected;
            for (std::size_t l = 0; l < shape.layers; ++l) {
                Matrix mixed = zeros(n);
                for (std::size_t i = 0; i < n; ++i)
                    for (std::size_t j = 0; j < n; ++j) {
                        double mean = 0;
                        for (std::size_t h = 0; h < shape.heads; ++h)
                            mean += attention[((l * shape.heads + h) * n + i) * n + j];
                        mixed[i][j] = 0.5 * mean / shape.heads + (i == j ? 0.5 : 0.0);
                    }
                Matrix current = l == 0 ? mixed : zeros(n);
                if (l > 0)
                    for (std::size_t i = 0; i < n; ++i)
                        for (std::size_t j = 0; j < n; ++j)
                            for (std::size_t k = 0; k < n; ++k) current[i][j] += mixed[i][k] * previous[k][j];
                for (const auto& row : current) expected.insert(expected.end(), row.begin(), row.end());
                previous = current;
            }
            INFO("n " << n << ", causal " << causal);
            require_close(rollout, expected, 1e-5);
            for (std::size_t row = 0; row < shape.layers * n; ++row) {
                double sum = 0;
                for (std::size_t j = 0; j < n; ++j) sum += rollout[row * n + j];
                REQUIRE(sum == Approx(1.0).margin(1e-5));
            }
        }
}

// The rollout and the detectors skip terms whose weight is 0 (keys after the
// query in a causal model, masked keys): the same bits as summing every term
// in order, which the plain float loops below do.
TEST_CASE("rollout and detectors skip zero weights without changing a bit", "[analysis]") {
    std::mt19937 rng(11);
    for (bool causal : {true, false})
        for (std::size_t n : {1, 2, 9, 31}) {
            const analysis::AttentionShape shape{3, 2, n};
            auto attention = random_attention(rng, shape.layers * shape.heads, n, causal);
            // Some weights exactly 0 below the diagonal too, as a key mask leaves them.
            for (std::size_t cell = 5; cell < attention.size(); cell += 7) attention[cell] = 0.0f;
            std::vector<float> rollout(shape.layers * n * n), row(n);
            analysis::attention_rollout(attention.data(), shape, rollout.data(), row.data());
            std::vector<float> expected(shape.layers * n * n), mixed(n);
            for (std::size_t l = 0; l < shape.layers; ++l)
                for (std::size_t i = 0; i < n; ++i) {
                    for (std::size_t j = 0; j < n; ++j) {
                        float sum = 0.0f;
                        for (std::size_t h = 0; h < shape.heads; ++h) sum += attention[((l * shape.heads + h) * n + i) * n + j];
                        mixed[j] = 0.5f * sum / static_cast<float>(shape.heads) + (i == j ? 0.5f : 0.0f);
                    }
                    float* out = expected.data() + (l * n + i) * n;
                    for (std::size_t j = 0; j < n; ++j) {
                        if (l == 0) { out[j] = mixed[j]; continue; }
                        out[j] = 0.0f;
                    }
                    if (l == 0) continue;
                    const float* previous = expected.data() + (l - 1) * n * n;
                    for (std::size_t k = 0; k < n; ++k)
                        for (std::size_t j = 0; j < n; ++j) out[j] += mixed[k] * previous[k * n + j];
                }
            INFO("n " << n << ", causal " << causal);
            REQUIRE(same_bits(rollout, expected));

            std::vector<std::int32_t> ids(n);
            for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::int32_t>(i % 4);
            std::vector<float> scores(analysis::kDetectorCount * shape.head_count());
            analysis::head_scores(attention.data(), shape, ids.data(), 0, scores.data());
            for (std::size_t head = 0; head < shape.head_count(); ++head) {
                double total = 0, matched[analysis::kDetectorCount] = {};
                for (std::size_t i = 0; i < n; ++i)
                    for (std::size_t j = 0; j < n; ++j) {
                        const double a = attention[(head * n + i) * n + j];
                        total += a;
                        if (j + 1 == i) matched[analysis::kPreviousToken] += a;
                        if (j == 0 && i > 0) matched[analysis::kFirstToken] += a;
                        if (j == i) matched[analysis::kCurrentToken] += a;
                        if (j < i && ids[j] == ids[i]) matched[analysis::kDuplicateToken] += a;
                        if (j > 0 && j <= i && ids[j - 1] == ids[i]) matched[analysis::kInduction] += a;
                    }
                for (std::size_t d = 0; d < analysis::kDetectorCount; ++d) {
                    const float expected_score = total > 0 ? static_cast<float>(matched[d] / total) : 0.0f;
                    REQUIRE(std::memcmp(&scores[d * shape.head_count() + head], &expected_score, sizeof(float)) == 0);
                }
            }
        }
}

// A caller with one layer's weights at a time (model.analyze through the kept
// cache) passes the rollout after the layer before: the same bits as all layers at once.
TEST_CASE("attention rollout a layer at a time equals all layers at once, bit for bit", "[analysis]") {
    std::mt19937 rng(5);
    for (bool causal : {true, false})
        for (std::size_t n : {1, 6, 17}) {
            const analysis::AttentionShape shape{4, 3, n}, one_layer{1, 3, n};
            const auto attention = random_attention(rng, shape.layers * shape.heads, n, causal);
            std::vector<float> whole(shape.layers * n * n), stepped(shape.layers * n * n), row(n);
            analysis::attention_rollout(attention.data(), shape, whole.data(), row.data());
            for (std::size_t layer = 0; layer < shape.layers; ++layer)
                analysis::attention_rollout(attention.data() + layer * shape.heads * n * n, one_layer,
                                            stepped.data() + layer * n * n, row.data(),
                                            layer ? stepped.data() + (layer - 1) * n * n : nullptr);
            INFO("n " << n << ", causal " << causal);
            REQUIRE(same_bits(whole, stepped));
        }
}
