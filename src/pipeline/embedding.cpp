#include "embedding.hpp"

#include <cmath>

namespace attnlens {

std::uint64_t SeededGenerator::next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float SeededGenerator::next_symmetric() {
    // Top 24 bits -> integer in [0, 2^24) -> [-1, 1) in steps of 2^-23.
    const auto bits = static_cast<std::int32_t>(next() >> 40);
    return static_cast<float>(bits - (1 << 23)) * (1.0f / float(1 << 23));
}

std::uint64_t token_hash(std::string_view token) {
    std::uint64_t hash = 0xCBF29CE484222325ull;
    for (char raw : token) {
        auto c = static_cast<unsigned char>(raw);
        if (c >= 'A' && c <= 'Z') c = static_cast<unsigned char>(c - 'A' + 'a');
        hash = (hash ^ c) * 0x100000001B3ull;
    }
    return hash;
}

std::vector<float> embed_tokens(const std::vector<Token>& tokens, std::size_t model_width) {
    // Uniform on [-sqrt(3), sqrt(3)) has variance 1.
    const float unit_variance = std::sqrt(3.0f);
    std::vector<float> x(tokens.size() * model_width);
    for (std::size_t t = 0; t < tokens.size(); ++t) {
        SeededGenerator generator(token_hash(tokens[t].text));
        for (std::size_t j = 0; j < model_width; ++j) x[t * model_width + j] = unit_variance * generator.next_symmetric();
    }
    return x;
}

void add_positional_encoding(float* x, std::size_t tokens, std::size_t model_width) {
    for (std::size_t pos = 0; pos < tokens; ++pos)
        for (std::size_t j = 0; j < model_width; ++j) {
            const double pair = double(j / 2) * 2.0;
            const double angle = double(pos) / std::pow(10000.0, pair / double(model_width));
            x[pos * model_width + j] += static_cast<float>(j % 2 == 0 ? std::sin(angle) : std::cos(angle));
        }
}

std::vector<float> seeded_matrix(std::size_t rows, std::size_t cols, std::uint32_t seed, std::uint32_t stream) {
    SeededGenerator generator((std::uint64_t(seed) << 32) | stream);
    const float bound = std::sqrt(3.0f / float(rows));
    std::vector<float> w(rows * cols);
    for (float& value : w) value = bound * generator.next_symmetric();
    return w;
}

std::vector<float> identity_matrix(std::size_t size) {
    std::vector<float> w(size * size, 0.0f);
    for (std::size_t i = 0; i < size; ++i) w[i * size + i] = 1.0f;
    return w;
}

}  // namespace attnlens
