// Attention weights pooled to the resolution a view draws: the model view's
// small heatmaps give a 1024-token head a few hundred pixels per side, so
// they need factor x factor blocks of cells, not the cells themselves
// (GPT-2 small's every head at 1024 tokens: 576 MiB in full, 36 MiB pooled by 4).
#pragma once

#include <cstddef>
#include <string>

namespace attnlens {

// Blocks along a side of `cells` cells: ceil(cells / factor), the last block
// holding the remaining cells when factor does not divide them.
inline std::size_t pooled_side(std::size_t cells, std::size_t factor) { return (cells + factor - 1) / factor; }

// "" when `factor` can pool a rows x cols matrix (1 to max(rows, cols)), else the problem.
std::string check_pool_factor(std::size_t factor, std::size_t rows, std::size_t cols);

// out (pooled_side(rows) x pooled_side(cols)) = the largest weight of each
// factor x factor block of `weights` (rows x cols, row-major). The maximum,
// not the mean: a head that looks one token back has one weight near 1 per
// row on a thin diagonal, which a mean over a 4 x 4 block divides by 4 and a
// nearest-neighbour downscale skips three rows in four of; the maximum keeps
// it as bright as it is. A block of hidden cells (weight 0) stays 0.
void pool_block_max(const float* weights, std::size_t rows, std::size_t cols, std::size_t factor, float* out);

}  // namespace attnlens
