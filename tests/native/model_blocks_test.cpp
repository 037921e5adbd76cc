// The model's small blocks against their formulas evaluated in double.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "model/blocks.hpp"

namespace {

namespace m = attnlens::model;

std::vector<float> random_row(std::mt19937& rng, std::size_t width, float offset, float spread) {
    std::uniform_real_distribution<float> dist(-spread, spread);
    std::vector<float> row(width);
    for (float& x : row) x = offset + dist(rng);
    return row;
}

const double kPi = 3.14159265358979323846;

}  // namespace

TEST_CASE("layer_norm: (x - mean) / sqrt(var + eps) * w + b with the biased variance", "[model][blocks]") {
    std::mt19937 rng(1);
    for (auto [width, offset, spread, eps] : {std::tuple{7, 0.0f, 1.0f, 1e-5f}, std::tuple{64, 1000.0f, 0.01f, 1e-12f},
                                              std::tuple{33, -3.0f, 50.0f, 1e-5f}, std::tuple{1, 2.0f, 1.0f, 1e-5f}}) {
        const auto x = random_row(rng, width, offset, spread);
        const auto w = random_row(rng, width, 1.0f, 0.5f), b = random_row(rng, width, 0.0f, 0.5f);
        std::vector<float> out(width);
        m::layer_norm(x.data(), width, w.data(), b.data(), eps, out.data());
        double mean = 0, var = 0;
        for (float v : x) mean += v / double(width);
        for (float v : x) var += (v - mean) * (v - mean) / double(width);
        for (int i = 0; i < width; ++i) {
            const double expected = (x[i] - mean) / std::sqrt(var + eps) * w[i] + b[i];
            REQUIRE(out[i] == Approx(expected).epsilon(1e-5).margin(1e-5));
        }
        // In place, and without a bias.
        auto in_place = x;
        m::layer_norm(in_place.data(), width, w.data(), nullptr, eps, in_place.data());
        for (int i = 0; i < width; ++i) REQUIRE(in_place[i] == Approx(out[i] - b[i]).margin(1e-5));
    }
}

TEST_CASE("rms_norm: x / sqrt(mean(x^2) + eps) * w", "[model][blocks]") {
    std::mt19937 rng(2);
    for (int width : {1, 5, 64, 129}) {
        const auto x = random_row(rng, width, 0.5f, 3.0f), w = random_row(rng, width, 1.0f, 0.5f);
        std::vector<float> out(width);
        m::rms_norm(x.data(), width, w.data(), 1e-6f, out.data());
        double mean_square = 0;
        for (float v : x) mean_square += double(v) * v / width;
        for (int i = 0; i < width; ++i)
            REQUIRE(out[i] == Approx(x[i] / std::sqrt(mean_square + 1e-6) * w[i]).epsilon(1e-5).margin(1e-6));
    }
}

TEST_CASE("activations match their formulas, tails included", "[model][blocks]") {
    for (double x = -30; x <= 30; x += 0.0625) {
        INFO("x = " << x);
        const double gelu_tanh = 0.5 * x * (1 + std::tanh(std::sqrt(2 / kPi) * (x + 0.044715 * x * x * x)));
        const double gelu_erf = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
        const double silu = x / (1 + std::exp(-x));
        REQUIRE(m::gelu_tanh(float(x)) == Approx(gelu_tanh).epsilon(1e-5).margin(1e-6));
        REQUIRE(m::gelu_erf(float(x)) == Approx(gelu_erf).epsilon(1e-5).margin(1e-6));
        REQUIRE(m::silu(float(x)) == Approx(silu).epsilon(1e-5).margin(1e-6));
        REQUIRE(m::swiglu(float(x), 0.75f) == Approx(silu * 0.75).epsilon(1e-5).margin(1e-6));
        REQUIRE(m::activate(m::Activation::gelu_erf, float(x)) == m::gelu_erf(float(x)));
    }
    // Far tails stay finite: silu(-1000) is -0, gelu(-1e20) is 0, gelu(1e20) is x.
    REQUIRE(m::silu(-1000.0f) == 0.0f);
    REQUIRE(m::gelu_tanh(-1e20f) == 0.0f);
    REQUIRE(m::gelu_tanh(1e20f) == 1e20f);
    REQUIRE(m::gelu_erf(-1e20f) == 0.0f);

    std::vector<float> gate{-2, -0.5f, 0, 1.5f}, up{3, -1, 2, 0.5f};
    auto expected = gate;
    for (std::size_t i = 0; i < gate.size(); ++i) expected[i] = m::swiglu(gate[i], up[i]);
    // The array forms run the vector kernels (their own exp): equal to float rounding.
    m::gated_activate(m::Activation::silu, gate.data(), up.data(), gate.size());
    for (std::size_t i = 0; i < gate.size(); ++i) REQUIRE(gate[i] == Approx(expected[i]).epsilon(1e-6).margin(1e-7));
    std::vector<float> values{-1, 0, 2};
    m::activate(m::Activation::gelu_tanh, values.data(), values.size());
    const float gelu_expected[] = {m::gelu_tanh(-1), 0.0f, m::gelu_tanh(2)};
    for (std::size_t i = 0; i < values.size(); ++i) REQUIRE(values[i] == Approx(gelu_expected[i]).epsilon(1e-6).margin(1e-7));
}

TEST_CASE("rotary turns the pairs (i, i + w/2) by p * theta^(-2i/w), rotate_half style", "[model][blocks]") {
    std::mt19937 rng(3);
    const std::size_t width = 10, positions = 40, half = width / 2;
    const double theta = 10000.0;
    std::vector<float> cos(positions * half), sin(positions * half);
    m::rotary_tables(positions, width, float(theta), cos.data(), sin.data());
    for (std::size_t p : {std::size_t(0), std::size_t(1), std::size_t(7), positions - 1}) {
        const auto x = random_row(rng, width, 0.0f, 2.0f);
        auto rotated = x;
        m::rotary(rotated.data(), width, cos.data() + p * half, sin.data() + p * half);
        for (std::size_t i = 0; i < half; ++i) {
            const double angle = double(p) * std::pow(theta, -2.0 * double(i) / double(width));
            REQUIRE(rotated[i] == Approx(x[i] * std::cos(angle) - x[i + half] * std::sin(angle)).margin(1e-6));
            REQUIRE(rotated[i + half] == Approx(x[i + half] * std::cos(angle) + x[i] * std::sin(angle)).margin(1e-6));
        }
        if (p == 0) REQUIRE(rotated == x);  // position 0 is the identity
    }
}

TEST_CASE("add_residual adds element-wise", "[model][blocks]") {
    std::vector<float> x{1, 2, 3}, delta{0.5f, -2, 10};
    m::add_residual(x.data(), delta.data(), 3);
    REQUIRE(x == std::vector<float>{1.5f, 0, 13});
}
