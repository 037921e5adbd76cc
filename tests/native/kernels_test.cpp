// Each SIMD kernel against its scalar twin, on sizes around the SIMD width.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "close_to.hpp"
#include "kernels/scalar_kernels.hpp"
#include "kernels/simd_kernels.hpp"

namespace {

std::vector<float> random_floats(std::mt19937& rng, std::size_t count, float low = -1.0f, float high = 1.0f) {
    std::uniform_real_distribution<float> dist(low, high);
    std::vector<float> values(count);
    for (float& x : values) x = dist(rng);
    return values;
}

const std::size_t kAwkwardSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 33, 48, 64, 65, 100};

}  // namespace

TEST_CASE("dot: SIMD equals scalar for every length around the vector width", "[kernels]") {
    std::mt19937 rng(1);
    for (std::size_t length = 0; length < 80; ++length) {
        auto a = random_floats(rng, length), b = random_floats(rng, length);
        double exact = 0.0;
        for (std::size_t i = 0; i < length; ++i) exact += double(a[i]) * double(b[i]);
        INFO("length " << length);
        REQUIRE(attnlens::simd::dot(a.data(), b.data(), length) == Approx(exact).margin(1e-5));
        REQUIRE(attnlens::scalar::dot(a.data(), b.data(), length) == Approx(exact).margin(1e-5));
    }
}

TEST_CASE("matmul: SIMD equals scalar on awkward shapes", "[kernels]") {
    std::mt19937 rng(2);
    for (std::size_t rows : kAwkwardSizes)
        for (std::size_t inner : {1, 3, 4, 16, 33})
            for (std::size_t cols : kAwkwardSizes) {
                auto a = random_floats(rng, rows * inner), b = random_floats(rng, inner * cols);
                std::vector<float> simd_c(rows * cols, -7.0f), scalar_c(rows * cols, 7.0f);
                attnlens::simd::matmul(a.data(), b.data(), simd_c.data(), rows, inner, cols);
                attnlens::scalar::matmul(a.data(), b.data(), scalar_c.data(), rows, inner, cols);
                INFO(rows << " x " << inner << " x " << cols);
                require_close(simd_c, scalar_c, 1e-5);
            }
}

TEST_CASE("exp: vector exp matches std::exp to a few ulps over the float range", "[kernels]") {
    std::vector<float> inputs;
    for (float x = -87.0f; x <= 88.0f; x += 0.01f) inputs.push_back(x);
    for (float x : {0.0f, -0.0f, 1.0f, -1.0f, 1e-8f, -1e-8f, 0.5f, -0.3465736f, 0.3465736f}) inputs.push_back(x);
    std::vector<float> simd = inputs;
    attnlens::simd::exp_inplace(simd.data(), simd.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const double exact = std::exp(double(inputs[i]));
        INFO("x = " << inputs[i]);
        REQUIRE(std::abs(simd[i] - exact) <= 4e-7 * exact);  // ~3 ulps
    }
}

TEST_CASE("exp: underflow and -infinity give exactly 0, exp(0) = 1", "[kernels]") {
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> x = {-inf, -1000.0f, -88.0f, -87.5f, 0.0f, -inf, -1e30f, 0.0f, -inf};
    attnlens::simd::exp_inplace(x.data(), x.size());
    REQUIRE(x[0] == 0.0f);
    REQUIRE(x[1] == 0.0f);
    REQUIRE(x[2] == 0.0f);
    REQUIRE(x[3] == 0.0f);
    REQUIRE(x[4] == 1.0f);
    REQUIRE(x[5] == 0.0f);
    REQUIRE(x[6] == 0.0f);
    REQUIRE(x[7] == 1.0f);
    REQUIRE(x[8] == 0.0f);
}

TEST_CASE("softmax_row: SIMD equals scalar, rows sum to 1", "[kernels]") {
    std::mt19937 rng(3);
    for (std::size_t length : kAwkwardSizes)
        for (float multiplier : {1.0f, 0.125f, 3.0f}) {
            auto row = random_floats(rng, length, -20.0f, 20.0f);
            auto simd = row, scalar = row;
            attnlens::simd::softmax_row(simd.data(), length, multiplier);
            attnlens::scalar::softmax_row(scalar.data(), length, multiplier);
            INFO("length " << length << ", multiplier " << multiplier);
            require_close(simd, scalar, 2e-6);
            double sum = 0.0;
            for (float w : simd) sum += w;
            REQUIRE(sum == Approx(1.0).margin(1e-5));
        }
}

TEST_CASE("softmax_row: masked entries, fully masked rows and infinite maxima", "[kernels]") {
    const float inf = std::numeric_limits<float>::infinity();
    SECTION("-inf entries get weight 0, the rest renormalize") {
        for (auto* softmax : {&attnlens::simd::softmax_row, &attnlens::scalar::softmax_row}) {
            std::vector<float> row = {1.0f, -inf, 1.0f, -inf, 1.0f, 1.0f, -inf, 1.0f, -inf};
            softmax(row.data(), row.size(), 1.0f);
            for (std::size_t j = 0; j < row.size(); ++j) {
                const bool masked = j == 1 || j == 3 || j == 6 || j == 8;
                REQUIRE(row[j] == Approx(masked ? 0.0f : 0.2f).margin(1e-7));
            }
        }
    }
    SECTION("a row with every entry masked is zeros, not NaN") {
        for (auto* softmax : {&attnlens::simd::softmax_row, &attnlens::scalar::softmax_row}) {
            std::vector<float> row(13, -inf);
            softmax(row.data(), row.size(), 1.0f);
            for (float w : row) REQUIRE(w == 0.0f);
        }
    }
    SECTION("scores of +-1e4 stay finite and exact") {
        for (auto* softmax : {&attnlens::simd::softmax_row, &attnlens::scalar::softmax_row}) {
            std::vector<float> row = {1e4f, -1e4f, 1e4f, 0.0f, -1e4f};
            softmax(row.data(), row.size(), 1.0f);
            REQUIRE(row[0] == Approx(0.5f));
            REQUIRE(row[1] == 0.0f);
            REQUIRE(row[2] == Approx(0.5f));
            REQUIRE(row[3] == 0.0f);
        }
    }
    SECTION("overflowed +inf scores share the weight") {
        for (auto* softmax : {&attnlens::simd::softmax_row, &attnlens::scalar::softmax_row}) {
            std::vector<float> row = {inf, 3.0f, inf, inf, -inf};
            softmax(row.data(), row.size(), 1.0f);
            REQUIRE(row[0] == Approx(1.0f / 3.0f));
            REQUIRE(row[1] == 0.0f);
            REQUIRE(row[4] == 0.0f);
        }
    }
}

TEST_CASE("add_row_bias: SIMD equals scalar", "[kernels]") {
    std::mt19937 rng(4);
    for (std::size_t cols : kAwkwardSizes) {
        auto c = random_floats(rng, 3 * cols), bias = random_floats(rng, cols);
        auto simd = c, scalar = c;
        attnlens::simd::add_row_bias(simd.data(), bias.data(), 3, cols);
        attnlens::scalar::add_row_bias(scalar.data(), bias.data(), 3, cols);
        REQUIRE(simd == scalar);
    }
}
