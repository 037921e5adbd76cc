// Deterministic stand-ins for what a trained model would learn: token vectors
// derived from the token text, sinusoidal positions, seeded projections.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer.hpp"

namespace attnlens {

// SplitMix64 (Steele, Lea and Flood 2014): tiny, fast, and the same sequence
// on every platform, so native and WebAssembly builds agree bit for bit.
class SeededGenerator {
public:
    explicit SeededGenerator(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next();
    // Uniform in [-1, 1), exactly representable steps of 2^-23.
    float next_symmetric();

private:
    std::uint64_t state_;
};

// 64-bit FNV-1a of the token, ASCII letters folded to lower case, so "The"
// and "the" share a vector.
std::uint64_t token_hash(std::string_view token);

// rows = tokens, each d_model wide, entries uniform with unit variance,
// seeded by the token's hash: the same word always gets the same vector.
std::vector<float> embed_tokens(const std::vector<Token>& tokens, std::size_t model_width);

// Adds PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))
// (Vaswani et al. 2017) to each row of x (tokens x d_model).
void add_positional_encoding(float* x, std::size_t tokens, std::size_t model_width);

// A rows x cols matrix with entries uniform of variance 1 / rows (so X W keeps
// the scale of X), from the generator seeded by (seed, stream).
std::vector<float> seeded_matrix(std::size_t rows, std::size_t cols, std::uint32_t seed, std::uint32_t stream);

std::vector<float> identity_matrix(std::size_t size);

}  // namespace attnlens
