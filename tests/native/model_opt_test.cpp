// OPT's math on the core: learned positions read position_offset rows on
// (OPTLearnedPositionalEmbedding's 2), ReLU, and LayerNorms before each half
// (OPT-125m) or after it without a final norm (OPT-350m's
// do_layer_norm_before: false). Checked against a double-precision forward
// written here from modeling_opt.py (model_reference.hpp's Linear,
// LayerNorm and attention), in F32, F16 and BF16.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "close_to.hpp"
#include "model/blocks.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
namespace r = model_reference;

m::ModelConfig opt_config(bool norm_before, bool biases) {
    m::ModelConfig c;
    c.architecture = m::Architecture::opt;
    c.layers = 2, c.heads = 3, c.kv_heads = 3, c.model_width = 18, c.head_width = 6, c.mlp_width = 26;
    c.vocab_size = 15, c.max_positions = 12 + 2, c.position_offset = 2;
    c.norm_epsilon = 1e-5f;
    c.activation = m::Activation::relu;
    c.post_norm = !norm_before, c.final_norm = norm_before;
    c.attention_bias = c.attention_output_bias = c.mlp_bias = biases;
    return c;
}

// OPTForCausalLM: embed_tokens + embed_positions[t + 2], OPTDecoderLayer per
// layer, the decoder's final_layer_norm when norms come first, lm_head.
r::Result opt_reference(const m::ModelConfig& config, const r::Tensors& t, const std::vector<int>& ids) {
    const r::Config c = model_fixture::reference_config(config);
    const std::size_t n = ids.size(), d = c.d;
    const bool before = !config.post_norm;
    const std::string decoder = "model.decoder.";
    r::Result result;
    r::Matrix x(n * d);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < d; ++j)
            x[i * d + j] = r::get(t, decoder + "embed_tokens.weight").values[ids[i] * d + j] +
                           r::get(t, decoder + "embed_positions.weight").values[(i + 2) * d + j];
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string p = decoder + "layers." + std::to_string(l) + ".";
        const auto norm = [&](const std::string& name, const r::Matrix& in) {
            return r::layer_norm(in, n, d, r::get(t, p + name + ".weight"), r::get(t, p + name + ".bias"), c.eps);
        };
        const auto project = [&](const std::string& name, const r::Matrix& in) {
            const std::string bias = p + name + ".bias";
            return r::linear(in, n, r::get(t, p + name + ".weight"), r::has(t, bias) ? &r::get(t, bias) : nullptr);
        };
        r::LayerRecord record;
        record.x = before ? norm("self_attn_layer_norm", x) : x;
        r::attend(c, project("self_attn.q_proj", record.x), project("self_attn.k_proj", record.x),
                  project("self_attn.v_proj", record.x), n, true, {}, record, result.attention);
        r::add(x, project("self_attn.out_proj", record.concatenated));
        if (!before) x = norm("self_attn_layer_norm", x);
        r::Matrix hidden = project("fc1", before ? norm("final_layer_norm", x) : x);
        for (double& value : hidden) value = value > 0 ? value : 0.0;  // ReLU
        r::add(x, project("fc2", hidden));
        if (!before) x = norm("final_layer_norm", x);
    }
    result.hidden = before ? r::layer_norm(x, n, d, r::get(t, decoder + "final_layer_norm.weight"),
                                           r::get(t, decoder + "final_layer_norm.bias"), c.eps)
                           : x;
    result.logits = r::linear(result.hidden, n, r::get(t, decoder + "embed_tokens.weight"), nullptr);
    return result;
}

}  // namespace

TEST_CASE("OPT: positions two rows on, ReLU, norms before or after each half match the double reference",
          "[model][opt]") {
    std::mt19937 rng(404);
    for (const bool before : {true, false}) {
        for (const bool biases : {true, false}) {
            INFO("norms before " << before << ", biases " << biases);
            const auto config = opt_config(before, biases);
            REQUIRE(m::validate(config) == "");
            REQUIRE(m::usable_positions(config) == 12);
            const auto tensors = model_fixture::random_tensors(config, rng, false);
            model_fixture::check_dtypes_against(
                config, tensors, rng, {std::size_t(1), std::size_t(5), std::size_t(12)},
                [&](const std::vector<int>& ids) { return opt_reference(config, tensors, ids); });
            m::RunRequest past;
            const std::vector<std::int32_t> too_many(13, 1);
            past.ids = too_many.data(), past.count = too_many.size();
            CHECK(model_fixture::load(config, tensors)->run(past) ==
                  "13 tokens are more than the model's 12 positions (maxPositions - positionOffset)");
        }
    }
}

TEST_CASE("OPT: positionOffset and ReLU are checked and named", "[model][opt]") {
    auto config = opt_config(true, true);
    config.position_offset = config.max_positions;
    CHECK(m::validate(config) == "positionOffset (14) leaves no position for a token: maxPositions (14) must be greater");
    config = opt_config(true, true);
    config.padding_idx = 1;
    CHECK(m::validate(config) == "paddingIdx and positionOffset number positions two ways: one must be unset");
    m::Activation parsed = m::Activation::silu;
    CHECK((m::parse_activation("relu", parsed) && parsed == m::Activation::relu));
    CHECK(m::activate(m::Activation::relu, -2.5f) == 0.0f);
    CHECK(m::activate(m::Activation::relu, 1.5f) == 1.5f);
}
