#include "pooled.hpp"

#include <algorithm>

namespace attnlens {

std::string check_pool_factor(std::size_t factor, std::size_t rows, std::size_t cols) {
    const std::size_t largest = std::max(rows, cols);
    if (factor == 0 || factor > largest)
        return "pool factor " + std::to_string(factor) + " must be from 1 to " + std::to_string(largest) +
               " (the number of tokens)";
    return {};
}

void pool_block_max(const float* weights, std::size_t rows, std::size_t cols, std::size_t factor, float* out) {
    const std::size_t pooled_cols = pooled_side(cols, factor);
    // Row by row, so each weight is read once and in order: every row of a
    // block raises that block's maxima, started from the block's first row.
    for (std::size_t row = 0; row < rows; ++row) {
        float* pooled = out + (row / factor) * pooled_cols;
        const float* cells = weights + row * cols;
        const bool first = row % factor == 0;
        for (std::size_t block = 0; block < pooled_cols; ++block) {
            const std::size_t begin = block * factor, end = std::min(cols, begin + factor);
            float largest = *std::max_element(cells + begin, cells + end);
            pooled[block] = first ? largest : std::max(pooled[block], largest);
        }
    }
}

}  // namespace attnlens
