#include "blocks.hpp"

#include "../kernels/kernels.hpp"

namespace attnlens::model {

void layer_norm(const float* x, std::size_t width, const float* weight, const float* bias, float epsilon, float* out) {
    // Two passes, sums in double: the mean first, then the spread around it
    // (summing x^2 - mean^2 would cancel badly for rows far from zero).
    double sum = 0.0;
    for (std::size_t i = 0; i < width; ++i) sum += x[i];
    const double mean = sum / double(width);
    double squares = 0.0;
    for (std::size_t i = 0; i < width; ++i) squares += (x[i] - mean) * (x[i] - mean);
    // x - mean in double too: for a row far from zero with a small spread,
    // rounding the mean to float would be a visible part of the spread.
    const double inverse = 1.0 / std::sqrt(squares / double(width) + double(epsilon));
    for (std::size_t i = 0; i < width; ++i) {
        const auto normalized = static_cast<float>((x[i] - mean) * inverse);
        out[i] = normalized * weight[i] + (bias ? bias[i] : 0.0f);
    }
}

void rms_norm(const float* x, std::size_t width, const float* weight, float epsilon, float* out, float weight_offset) {
    double squares = 0.0;
    for (std::size_t i = 0; i < width; ++i) squares += double(x[i]) * x[i];
    const float inverse = static_cast<float>(1.0 / std::sqrt(squares / double(width) + double(epsilon)));
    for (std::size_t i = 0; i < width; ++i) out[i] = x[i] * inverse * (weight_offset + weight[i]);
}

float activate(Activation activation, float x) {
    switch (activation) {
        case Activation::gelu_tanh: return gelu_tanh(x);
        case Activation::gelu_erf: return gelu_erf(x);
        case Activation::silu: return silu(x);
        case Activation::relu: return relu(x);
    }
    return x;
}

void activate(Activation activation, float* values, std::size_t count) {
    // The switch outside the loop, so each loop is one plain function call per value.
    switch (activation) {
        case Activation::gelu_tanh:
            kernels::gelu_tanh(values, count);  // vectorized: GPT-2's MLP runs it on n x 4d values
            return;
        case Activation::gelu_erf:
            for (std::size_t i = 0; i < count; ++i) values[i] = gelu_erf(values[i]);
            return;
        case Activation::silu:
            for (std::size_t i = 0; i < count; ++i) values[i] = silu(values[i]);
            return;
        case Activation::relu:
            for (std::size_t i = 0; i < count; ++i) values[i] = relu(values[i]);
            return;
    }
}

void gated_activate(Activation activation, float* gate, const float* up, std::size_t count) {
    if (activation == Activation::silu) {
        kernels::silu_gate(gate, up, count);  // vectorized: Llama's MLP runs it on n x mlp_width values
        return;
    }
    for (std::size_t i = 0; i < count; ++i) gate[i] = activate(activation, gate[i]) * up[i];
}

void rotary(float* x, std::size_t width, const float* cos, const float* sin) {
    const std::size_t half = width / 2;
    for (std::size_t i = 0; i < half; ++i) {
        const float first = x[i], second = x[i + half];
        x[i] = first * cos[i] - second * sin[i];
        x[i + half] = second * cos[i] + first * sin[i];
    }
}

void rotary_tables(std::size_t positions, std::size_t width, float theta, float* cos, float* sin, std::size_t first) {
    const std::size_t half = width / 2;
    for (std::size_t i = 0; i < half; ++i) {
        const double inverse_frequency = std::pow(double(theta), -2.0 * double(i) / double(width));
        for (std::size_t p = 0; p < positions; ++p) {
            const double angle = double(first + p) * inverse_frequency;
            cos[p * half + i] = static_cast<float>(std::cos(angle));
            sin[p * half + i] = static_cast<float>(std::sin(angle));
        }
    }
}

void add_residual(float* x, const float* delta, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) x[i] += delta[i];
}

}  // namespace attnlens::model
