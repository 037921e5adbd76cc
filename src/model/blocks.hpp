// The small pieces a transformer layer is built from besides its matrix
// products and attention: normalizations, activations, rotary position
// embedding, the residual add. Plain loops over one row (or one array);
// each says its formula.
#pragma once

#include <cmath>
#include <cstddef>

#include "config.hpp"

namespace attnlens::model {

// LayerNorm (Ba et al. 2016) of one row of `width` values:
//   out = (x - mean) / sqrt(var + eps) * weight + bias,  var = mean((x - mean)^2)
// (the biased variance, as PyTorch). `bias` may be null (= 0). In place is fine.
void layer_norm(const float* x, std::size_t width, const float* weight, const float* bias, float epsilon, float* out);

// RMSNorm (Zhang and Sennrich 2019) of one row, as Llama applies it:
//   out = x / sqrt(mean(x^2) + eps) * (weight_offset + weight).  In place is
// fine. weight_offset: 0 (Llama), 1 (Gemma's GemmaRMSNorm).
void rms_norm(const float* x, std::size_t width, const float* weight, float epsilon, float* out,
              float weight_offset = 0.0f);

// GELU, tanh approximation (GPT-2's "gelu_new"):
//   0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
inline float gelu_tanh(float x) {
    const float sqrt_2_over_pi = 0.7978845608028654f;
    return 0.5f * x * (1.0f + std::tanh(sqrt_2_over_pi * (x + 0.044715f * x * x * x)));
}

// GELU, exact (BERT's "gelu"): x Phi(x) = 0.5 x (1 + erf(x / sqrt 2))
inline float gelu_erf(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f)); }

// SiLU / swish: x sigmoid(x) = x / (1 + e^-x). For x -> -inf, e^-x
// overflows to inf and the quotient is -0, its limit.
inline float silu(float x) { return x / (1.0f + std::exp(-x)); }

// ReLU (OPT's): max(x, 0).
inline float relu(float x) { return x > 0.0f ? x : 0.0f; }

// SwiGLU's element (Shazeer 2020), the gated MLP of Llama: silu(gate) * up
inline float swiglu(float gate, float up) { return silu(gate) * up; }

float activate(Activation activation, float x);

// values[i] = activation(values[i])
void activate(Activation activation, float* values, std::size_t count);

// gate[i] = activation(gate[i]) * up[i]: the gated MLP (SwiGLU for silu).
void gated_activate(Activation activation, float* gate, const float* up, std::size_t count);

// Rotary position embedding (Su et al. 2021) of one head's vector (`width`
// even), Hugging Face's rotate_half style: the pairs are (x_i, x_{i+width/2})
// for i < width/2, each turned by its angle theta_i = position * inv_freq_i:
//   (x_i, x_{i+w/2}) -> (x_i cos - x_{i+w/2} sin, x_{i+w/2} cos + x_i sin)
// cos and sin hold the width/2 values of that position.
void rotary(float* x, std::size_t width, const float* cos, const float* sin);

// The rotary tables of positions [first, first + positions): row r holds cos
// (or sin) of (first + r) * theta^(-2i/width) for i < width/2. Angles are
// computed in double.
void rotary_tables(std::size_t positions, std::size_t width, float theta, float* cos, float* sin,
                   std::size_t first = 0);

// The residual connection: x += delta.
void add_residual(float* x, const float* delta, std::size_t count);

}  // namespace attnlens::model
