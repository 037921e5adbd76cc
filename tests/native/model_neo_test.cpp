// GPT-Neo's math on the core: scores multiplied by attention_scale (1: not
// scaled), and a window only on the layers window_layers' bits mark (GPT-Neo's
// "local" layers: key j visible from query i when i - window < j <= i).
// Checked against a double-precision forward written here from
// modeling_gpt_neo.py (model_reference.hpp's Linear and LayerNorm), in F32,
// F16 and BF16.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "close_to.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
namespace r = model_reference;

// window_layers: one '0' or '1' per layer, or "" for every layer.
m::ModelConfig neo_config(const std::string& window_layers, float scale) {
    m::ModelConfig c;
    c.architecture = m::Architecture::gpt_neo;
    c.layers = 3, c.heads = 2, c.kv_heads = 2, c.model_width = 12, c.head_width = 6, c.mlp_width = 20;
    c.vocab_size = 13, c.max_positions = 14;
    c.norm_epsilon = 1e-5f;
    c.activation = m::Activation::gelu_tanh;
    c.attention_bias = false;  // GPT-Neo's q, k and v have none; out_proj and the MLP do
    c.window = 3, c.attention_scale = scale;
    c.window_every_layer = window_layers.empty();
    for (std::size_t l = 0; l < window_layers.size(); ++l)
        if (window_layers[l] == '1') c.window_layers |= std::uint64_t(1) << l;
    return c;
}

// GPTNeoSelfAttention._attn: softmax(q k^T * scale) under its causal (and,
// for local layers, windowed) bias; weights appended to `attention`.
r::Matrix neo_attention(const r::Matrix& q, const r::Matrix& k, const r::Matrix& v, std::size_t n, std::size_t heads,
                        std::size_t hd, double scale, std::size_t window, r::Matrix& attention) {
    const std::size_t d = heads * hd;
    r::Matrix out(n * d, 0.0);
    for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t i = 0; i < n; ++i) {
            std::vector<double> weights(n, 0.0);
            double max_score = -std::numeric_limits<double>::infinity(), sum = 0;
            for (std::size_t j = 0; j <= i; ++j) {
                if (window > 0 && j + window <= i) continue;
                double dot = 0;
                for (std::size_t c = 0; c < hd; ++c) dot += q[i * d + h * hd + c] * k[j * d + h * hd + c];
                weights[j] = dot * scale;
                max_score = std::max(max_score, weights[j]);
            }
            for (std::size_t j = 0; j <= i; ++j) {
                const bool visible = window == 0 || j + window > i;
                weights[j] = visible ? std::exp(weights[j] - max_score) : 0.0;
                sum += weights[j];
            }
            for (std::size_t j = 0; j < n; ++j) {
                weights[j] /= sum;
                attention.push_back(weights[j]);
                for (std::size_t c = 0; c < hd; ++c) out[i * d + h * hd + c] += weights[j] * v[j * d + h * hd + c];
            }
        }
    return out;
}

// GPTNeoForCausalLM: wte + wpe, GPTNeoBlock per layer, ln_f, lm_head.
r::Result neo_reference(const m::ModelConfig& config, const r::Tensors& t, const std::vector<int>& ids) {
    const r::Config c = model_fixture::reference_config(config);
    const std::size_t n = ids.size(), d = c.d;
    const double scale = config.attention_scale > 0 ? config.attention_scale : 1.0 / std::sqrt(double(c.hd));
    r::Result result;
    r::Matrix x(n * d);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < d; ++j)
            x[i * d + j] = r::get(t, "wte.weight").values[ids[i] * d + j] + r::get(t, "wpe.weight").values[i * d + j];
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string p = "h." + std::to_string(l) + ".";
        const auto norm = [&](const std::string& name, const r::Matrix& in) {
            return r::layer_norm(in, n, d, r::get(t, p + name + ".weight"), r::get(t, p + name + ".bias"), c.eps);
        };
        const auto project = [&](const std::string& name, const r::Matrix& in) {
            const std::string bias = p + name + ".bias";
            return r::linear(in, n, r::get(t, p + name + ".weight"), r::has(t, bias) ? &r::get(t, bias) : nullptr);
        };
        const r::Matrix a = norm("ln_1", x);
        const bool local = config.window_every_layer || (config.window_layers >> l & 1u);
        const r::Matrix heads = neo_attention(project("attn.attention.q_proj", a), project("attn.attention.k_proj", a),
                                              project("attn.attention.v_proj", a), n, c.heads, c.hd, scale,
                                              local ? config.window : 0, result.attention);
        r::add(x, project("attn.attention.out_proj", heads));
        r::add(x, project("mlp.c_proj", r::activate(c.activation, project("mlp.c_fc", norm("ln_2", x)))));
    }
    result.hidden = r::layer_norm(x, n, d, r::get(t, "ln_f.weight"), r::get(t, "ln_f.bias"), c.eps);
    result.logits = r::linear(result.hidden, n, r::get(t, "wte.weight"), nullptr);
    return result;
}

}  // namespace

TEST_CASE("GPT-Neo: unscaled scores and windows on its local layers only match the double reference",
          "[model][neo]") {
    std::mt19937 rng(303);
    for (const std::string window_layers : {"010", "111", "000", ""}) {
        for (const float scale : {1.0f, 0.0f, 0.25f}) {
            INFO("window layers \"" << window_layers << "\", scale " << scale);
            const auto config = neo_config(window_layers, scale);
            // The LM head tied to wte.
            model_fixture::check_random_checkpoint(config, rng, false, {1, 8, config.max_positions}, neo_reference);
        }
    }
}

TEST_CASE("GPT-Neo: windowLayers and attentionScale are checked by name", "[model][neo]") {
    auto deep = neo_config("010", 1.0f);
    deep.layers = 65;
    CHECK(m::validate(deep) == "windowLayers picks windowed layers among at most 64, but the model has 65 layers");
    deep.window_every_layer = true;
    CHECK(m::validate(deep).empty());
    CHECK(m::validate(neo_config("010", -2.0f)) ==
          "attentionScale (-2) must be a finite number of at least 0 (0: 1/sqrt(headWidth))");
    CHECK(m::validate(neo_config("010", std::numeric_limits<float>::infinity())) ==
          "attentionScale (inf) must be a finite number of at least 0 (0: 1/sqrt(headWidth))");
    CHECK(m::layer_window(neo_config("010", 1.0f), 0) == 0);
    CHECK(m::layer_window(neo_config("010", 1.0f), 1) == 3);
    CHECK(m::layer_window(neo_config("", 1.0f), 2) == 3);
}
