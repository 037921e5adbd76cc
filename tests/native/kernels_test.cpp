// Each SIMD kernel against its scalar twin, on sizes around the SIMD width.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
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

TEST_CASE("gelu_tanh and silu_gate: SIMD and scalar twins against the double formulas", "[kernels]") {
    // Values across the range that matters (the MLP's pre-activations),
    // their tails, and extremes where tanh and the sigmoid saturate.
    std::mt19937 rng(12);
    for (std::size_t length : kAwkwardSizes) {
        auto x = random_floats(rng, length, -12.0f, 12.0f);
        const float extremes[] = {0.0f, -0.0f, 1e-8f, -1e-8f, 50.0f, -50.0f, 1e4f, -1e4f, 88.0f, -88.0f, 200.0f, -200.0f};
        for (std::size_t i = 0; i < length && i < std::size(extremes); i += 2) x[i] = extremes[(i + length) % std::size(extremes)];
        const auto up = random_floats(rng, length, -3.0f, 3.0f);
        auto gelu_simd = x, gelu_scalar = x, silu_simd = x, silu_scalar = x;
        attnlens::simd::gelu_tanh(gelu_simd.data(), length);
        attnlens::scalar::gelu_tanh(gelu_scalar.data(), length);
        attnlens::simd::silu_gate(silu_simd.data(), up.data(), length);
        attnlens::scalar::silu_gate(silu_scalar.data(), up.data(), length);
        for (std::size_t i = 0; i < length; ++i) {
            const double v = x[i];
            const double gelu = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
            const double silu = v / (1.0 + std::exp(-v)) * up[i];
            // Absolute error of tanh / the sigmoid ~1e-7, scaled by |x| (and |up|).
            const double bound = 1e-6 * std::max(1.0, std::abs(v)) * std::max(1.0, double(std::abs(up[i])));
            INFO("x = " << v << ", up = " << up[i]);
            REQUIRE(std::abs(gelu_simd[i] - gelu) <= bound);
            REQUIRE(std::abs(gelu_scalar[i] - gelu) <= bound);
            REQUIRE(std::abs(silu_simd[i] - silu) <= bound);
            REQUIRE(std::abs(silu_scalar[i] - silu) <= bound);
            REQUIRE(std::isfinite(gelu_simd[i]));
            REQUIRE(std::isfinite(silu_simd[i]));
        }
    }
}

namespace {

// Packs B (or the transpose of K) with one namespace's packer and multiplies
// with the same namespace's matmul_packed, on sub-blocks of larger matrices
// (strides differ from widths) as attention uses them.
template <class PackSize, class Pack, class PackTransposed, class Multiply>
void check_packed_products(PackSize packed_size, Pack pack, PackTransposed pack_transposed, Multiply multiply) {
    std::mt19937 rng(5);
    for (std::size_t rows : {1, 2, 3, 4, 7, 13})
        for (std::size_t inner : {1, 3, 8, 17, 64})
            for (std::size_t cols : {1, 4, 5, 12, 13, 24, 31, 64, 70}) {
                const std::size_t lda = inner + 3, ldb = cols + 2, ldc = cols + 1;
                auto a = random_floats(rng, rows * lda), b = random_floats(rng, inner * ldb);
                std::vector<float> dense_a(rows * inner), dense_b(inner * cols), expected(rows * cols);
                for (std::size_t i = 0; i < rows; ++i) std::copy_n(a.begin() + i * lda, inner, dense_a.begin() + i * inner);
                for (std::size_t p = 0; p < inner; ++p) std::copy_n(b.begin() + p * ldb, cols, dense_b.begin() + p * cols);
                attnlens::scalar::matmul(dense_a.data(), dense_b.data(), expected.data(), rows, inner, cols);

                std::vector<float> packed(packed_size(inner, cols));
                pack(b.data(), ldb, inner, cols, packed.data());
                std::vector<float> c(rows * ldc, 42.0f), biased(rows * ldc, 42.0f);
                const auto bias = random_floats(rng, cols);
                multiply(a.data(), lda, packed.data(), inner, c.data(), ldc, rows, inner, cols, nullptr);
                multiply(a.data(), lda, packed.data(), inner, biased.data(), ldc, rows, inner, cols, bias.data());
                INFO(rows << " x " << inner << " x " << cols);
                for (std::size_t i = 0; i < rows; ++i) {
                    for (std::size_t j = 0; j < cols; ++j) {
                        REQUIRE(c[i * ldc + j] == Approx(expected[i * cols + j]).margin(1e-5));
                        REQUIRE(biased[i * ldc + j] == Approx(expected[i * cols + j] + bias[j]).margin(1e-5));
                    }
                    REQUIRE(c[i * ldc + cols] == 42.0f);  // nothing written past the columns
                    REQUIRE(biased[i * ldc + cols] == 42.0f);
                }

                // K (cols x inner, stride ldk): packing its transpose gives the same product as B = K^T.
                const std::size_t ldk = inner + 5;
                std::vector<float> k(cols * ldk, 0.0f);
                for (std::size_t j = 0; j < cols; ++j)
                    for (std::size_t p = 0; p < inner; ++p) k[j * ldk + p] = dense_b[p * cols + j];
                std::vector<float> packed_t(packed_size(inner, cols));
                pack_transposed(k.data(), ldk, cols, inner, packed_t.data());
                REQUIRE(packed_t == packed);
            }
}

}  // namespace

TEST_CASE("packed-panel matmul: SIMD and scalar both equal the plain product", "[kernels]") {
    check_packed_products(attnlens::simd::packed_size, attnlens::simd::pack_panels,
                          attnlens::simd::pack_transposed_panels, attnlens::simd::matmul_packed);
    check_packed_products(attnlens::scalar::packed_size, attnlens::scalar::pack_panels,
                          attnlens::scalar::pack_transposed_panels, attnlens::scalar::matmul_packed);
}

TEST_CASE("online softmax over blocks equals the one-pass softmax", "[kernels]") {
    std::mt19937 rng(6);
    const float inf = std::numeric_limits<float>::infinity();
    for (auto* online : {&attnlens::simd::softmax_block_online, &attnlens::scalar::softmax_block_online})
        for (std::size_t length : {1, 5, 16, 37, 100})
            for (std::size_t block : {1, 3, 8, 16, 64}) {
                auto row = random_floats(rng, length, -30.0f, 30.0f);
                if (length > 4) row[2] = row[3] = -inf;  // masked keys
                auto expected = row;
                attnlens::scalar::softmax_row(expected.data(), length, 0.5f);

                // Unnormalized exp per block, rescaled as the running max grows.
                std::vector<float> values = row;
                float running_max = -inf, running_sum = 0.0f;
                for (std::size_t start = 0; start < length; start += block) {
                    const std::size_t count = std::min(block, length - start);
                    const float factor = online(values.data() + start, count, 0.5f, running_max, running_sum);
                    for (std::size_t j = 0; j < start; ++j) values[j] *= factor;
                }
                for (float& v : values) v /= running_sum;
                INFO("length " << length << ", block " << block);
                require_close(values, expected, 2e-6);
            }
}

TEST_CASE("max_magnitude: SIMD equals scalar, non-finite values surface", "[kernels]") {
    std::mt19937 rng(7);
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    for (std::size_t length = 0; length < 70; ++length) {
        auto values = random_floats(rng, length, -5.0f, 5.0f);
        double expected = 0.0;
        for (float v : values) expected = std::max(expected, double(std::abs(v)));
        INFO("length " << length);
        REQUIRE(attnlens::simd::max_magnitude(values.data(), length) == float(expected));
        REQUIRE(attnlens::scalar::max_magnitude(values.data(), length) == float(expected));
        if (length == 0) continue;
        for (float special : {inf, -inf, nan}) {
            auto with_special = values;
            with_special[length / 2] = special;
            INFO("special " << special);
            REQUIRE_FALSE(std::isfinite(attnlens::simd::max_magnitude(with_special.data(), length)));
            REQUIRE_FALSE(std::isfinite(attnlens::scalar::max_magnitude(with_special.data(), length)));
        }
    }
    const std::vector<float> tiny = {-0.0f, 1e-45f, -3e-40f, 0.0f, -1e-38f};  // signed zero and subnormals
    REQUIRE(attnlens::simd::max_magnitude(tiny.data(), tiny.size()) == 1e-38f);
    REQUIRE(attnlens::scalar::max_magnitude(tiny.data(), tiny.size()) == 1e-38f);
    const std::vector<float> zeros = {-0.0f, 0.0f, -0.0f};
    REQUIRE(attnlens::simd::max_magnitude(zeros.data(), zeros.size()) == 0.0f);
}

TEST_CASE("pack_panels returns max_magnitude of the packed columns only", "[kernels]") {
    std::mt19937 rng(8);
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    for (std::size_t inner : {1, 3, 17})
        for (std::size_t cols : {1, 5, 16, 24, 31, 70}) {
            const std::size_t ldb = cols + 3;
            auto b = random_floats(rng, inner * ldb, -5.0f, 5.0f);
            // Outside the columns (the row stride's padding): never counted.
            for (std::size_t p = 0; p < inner; ++p) b[p * ldb + cols] = 1e30f;
            std::vector<float> dense(inner * cols);
            for (std::size_t p = 0; p < inner; ++p) std::copy_n(b.begin() + p * ldb, cols, dense.begin() + p * cols);
            INFO("inner " << inner << " cols " << cols);
            for (float special : {0.0f, 9.0f, -inf, nan}) {
                auto with_special = b;
                auto dense_special = dense;
                if (special != 0.0f) {
                    const std::size_t p = inner / 2, j = cols - 1;  // the last column: a partial panel when there is one
                    with_special[p * ldb + j] = dense_special[p * cols + j] = special;
                }
                const float expected = attnlens::scalar::max_magnitude(dense_special.data(), dense_special.size());
                std::vector<float> simd_packed(attnlens::simd::packed_size(inner, cols));
                std::vector<float> scalar_packed(attnlens::scalar::packed_size(inner, cols));
                const float simd = attnlens::simd::pack_panels(with_special.data(), ldb, inner, cols, simd_packed.data());
                const float scalar =
                    attnlens::scalar::pack_panels(with_special.data(), ldb, inner, cols, scalar_packed.data());
                INFO("special " << special);
                CHECK(std::memcmp(&simd, &expected, sizeof expected) == 0);
                CHECK(std::memcmp(&scalar, &expected, sizeof expected) == 0);
                if (special != 0.0f && special == special) CHECK(expected == std::abs(special));
            }
        }
}

TEST_CASE("exp2_nonpositive: matches std::exp2 on [-126, 0], exactly 1 at 0, exactly 0 from -127 down",
          "[kernels]") {
    using attnlens::simd::FloatBatch;
    using attnlens::simd::kWidth;
    std::vector<float> inputs;
    for (float y = -126.0f; y <= 0.0f; y += 0.0013f) inputs.push_back(y);
    // Both sides of every rounding boundary n + 1/2, where f jumps from +1/2 to -1/2.
    for (int n = -125; n <= 0; ++n)
        for (float offset : {-0.5f, -0.5f + 1e-6f, 0.5f - 1e-6f})
            if (float(n) + offset <= 0.0f) inputs.push_back(float(n) + offset);
    inputs.push_back(0.0f);
    inputs.push_back(-0.0f);
    inputs.push_back(-1e-30f);
    while (inputs.size() % kWidth) inputs.push_back(-1.0f);
    std::vector<float> results(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); i += kWidth)
        attnlens::simd::exp2_nonpositive(FloatBatch::load_unaligned(inputs.data() + i))
            .store_unaligned(results.data() + i);
    double worst = 0.0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const double exact = std::exp2(double(inputs[i]));
        INFO("y = " << inputs[i]);
        REQUIRE(std::abs(results[i] - exact) <= 2.5e-7 * exact);
        worst = std::max(worst, std::abs(results[i] - exact) / exact);
    }
    INFO("worst relative error " << worst);
    CHECK(worst > 0.0);  // the comparison above really ran against something different
    alignas(64) float special[kWidth];
    const float specials[] = {0.0f, -127.0f, -1000.0f, -std::numeric_limits<float>::infinity(), -126.9f,
                              -0.0f, -3.4e38f, -127.5f};
    for (std::size_t start = 0; start < 8; start += kWidth) {
        for (std::size_t t = 0; t < kWidth; ++t) special[t] = specials[(start + t) % 8];
        attnlens::simd::exp2_nonpositive(FloatBatch::load_aligned(special)).store_aligned(special);
        for (std::size_t t = 0; t < kWidth; ++t) {
            const float input = specials[(start + t) % 8];
            INFO("y = " << input);
            REQUIRE(special[t] == (input == 0.0f ? 1.0f : 0.0f));
        }
    }
}
