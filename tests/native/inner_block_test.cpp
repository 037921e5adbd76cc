// matmul_packed blocks the inner dimension (kInnerBlock rows of a panel at a
// time, later blocks adding to C). These products cross block edges: the
// result must equal one unblocked pass over the whole panel bit for bit (the
// sums continue in the same order) and the scalar reference to rounding.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/scalar_kernels.hpp"
#include "kernels/simd_kernels.hpp"

namespace {

std::vector<float> random_floats(std::mt19937& rng, std::size_t count) {
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> values(count);
    for (auto& value : values) value = uniform(rng);
    return values;
}

}  // namespace

TEST_CASE("matmul_packed across inner blocks equals one unblocked pass and the scalar product") {
    namespace s = attnlens::simd;
    std::mt19937 rng(2024);
    const std::size_t block = s::kInnerBlock;
    // inner = 0 (a causal row block that sees no key) must store zeros.
    for (std::size_t inner : {std::size_t(0), block - 1, block, block + 1, 2 * block + 3, 3 * block})
        for (std::size_t rows : {1, 2, 3, 5})
            for (std::size_t cols : {std::size_t(1), s::kPanelWidth, s::kPanelWidth + 1, 2 * s::kPanelWidth + 7}) {
                INFO(rows << " x " << inner << " x " << cols);
                const std::size_t lda = inner + 2, ldc = cols + 3;
                const auto a = random_floats(rng, rows * lda), b = random_floats(rng, inner * cols);
                std::vector<float> packed(s::packed_size(inner, cols));
                s::pack_panels(b.data(), cols, inner, cols, packed.data());

                std::vector<float> blocked(rows * ldc, 7.0f);
                s::matmul_packed(a.data(), lda, packed.data(), inner, blocked.data(), ldc, rows, inner, cols);

                // Unblocked: one tile per row and panel over the whole inner dimension.
                std::vector<float> whole(rows * ldc, 7.0f);
                for (std::size_t first = 0; first < cols; first += s::kPanelWidth)
                    for (std::size_t i = 0; i < rows; ++i)
                        s::panel_tile_for_width<1>(a.data() + i * lda, lda, packed.data() + first * inner, inner,
                                                   whole.data() + i * ldc + first, ldc,
                                                   std::min(s::kPanelWidth, cols - first), false);
                // Padding columns of C (past cols) are never written.
                CHECK(blocked == whole);

                if (inner == 0)
                    for (std::size_t i = 0; i < rows; ++i)
                        for (std::size_t j = 0; j < cols; ++j) CHECK(blocked[i * ldc + j] == 0.0f);
                std::vector<float> dense_a(rows * inner), expected(rows * cols);
                for (std::size_t i = 0; i < rows; ++i)
                    for (std::size_t p = 0; p < inner; ++p) dense_a[i * inner + p] = a[i * lda + p];
                attnlens::scalar::matmul(dense_a.data(), b.data(), expected.data(), rows, inner, cols);
                for (std::size_t i = 0; i < rows; ++i)
                    for (std::size_t j = 0; j < cols; ++j) {
                        const float got = blocked[i * ldc + j], want = expected[i * cols + j];
                        CHECK(std::abs(got - want) <= 1e-5f * inner);
                    }

                // The bias, added in the last block's tiles: the bits of the product and then one
                // float addition per element (add_row_bias), also for narrow last panels and inner = 0.
                const auto bias = random_floats(rng, cols);
                std::vector<float> fused(rows * ldc, 7.0f), added = blocked;
                s::matmul_packed(a.data(), lda, packed.data(), inner, fused.data(), ldc, rows, inner, cols, bias.data());
                for (std::size_t i = 0; i < rows; ++i) attnlens::scalar::add_row_bias(added.data() + i * ldc, bias.data(), 1, cols);
                CHECK(fused == added);
            }
}
