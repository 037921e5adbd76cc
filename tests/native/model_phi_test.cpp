// Phi's math on the core: one input_layernorm whose output attention and the
// MLP both read (shared_norm with parallel_residual: x + attn(ln(x)) +
// mlp(ln(x))), partial rotary, grouped-query attention on the phi layout, and
// an LM head with a bias. Checked against a double-precision forward written
// here from modeling_phi.py (model_reference.hpp's helpers), in F32, F16 and BF16.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "close_to.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
namespace r = model_reference;

m::ModelConfig phi_config(std::size_t kv_heads, std::size_t rotary_width) {
    m::ModelConfig c;
    c.architecture = m::Architecture::phi;
    c.norm = m::NormKind::layer, c.position = m::PositionKind::rotary;
    c.layers = 2, c.heads = 4, c.kv_heads = kv_heads, c.model_width = 24, c.head_width = 6, c.mlp_width = 30;
    c.vocab_size = 13, c.max_positions = 16;
    c.norm_epsilon = 1e-5f, c.rope_theta = 10000.0f;
    c.activation = m::Activation::gelu_tanh;
    c.rotary_width = rotary_width, c.parallel_residual = true, c.shared_norm = true, c.lm_head_bias = true;
    return c;
}

// PhiForCausalLM: embed_tokens, PhiDecoderLayer per layer, final_layernorm, lm_head (with bias).
r::Result phi_reference(const m::ModelConfig& config, const r::Tensors& t, const std::vector<int>& ids) {
    const r::Config c = model_fixture::reference_config(config);
    const std::size_t n = ids.size(), d = c.d;
    r::Result result;
    r::Matrix x = r::embed(r::get(t, "model.embed_tokens.weight"), ids, d);
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        const auto project = [&](const std::string& name, const r::Matrix& in) {
            return r::linear(in, n, r::get(t, p + name + ".weight"), &r::get(t, p + name + ".bias"));
        };
        r::LayerRecord record;
        record.x = r::layer_norm(x, n, d, r::get(t, p + "input_layernorm.weight"), r::get(t, p + "input_layernorm.bias"),
                                 c.eps);
        r::Matrix q = project("self_attn.q_proj", record.x), k = project("self_attn.k_proj", record.x);
        r::rotary(q, n, c.heads, c.hd, c.theta, config.rotary_width);
        r::rotary(k, n, c.kv_heads, c.hd, c.theta, config.rotary_width);
        r::attend(c, q, k, project("self_attn.v_proj", record.x), n, true, {}, record, result.attention);
        const r::Matrix attended = project("self_attn.dense", record.concatenated);
        const r::Matrix mlp = project("mlp.fc2", r::activate(c.activation, project("mlp.fc1", record.x)));
        r::add(x, attended);
        r::add(x, mlp);
    }
    result.hidden = r::layer_norm(x, n, d, r::get(t, "model.final_layernorm.weight"),
                                  r::get(t, "model.final_layernorm.bias"), c.eps);
    result.logits = r::linear(result.hidden, n, r::get(t, "lm_head.weight"), &r::get(t, "lm_head.bias"));
    return result;
}

}  // namespace

TEST_CASE("Phi: one shared norm, parallel halves, partial rotary and the LM head's bias match the double reference",
          "[model][phi]") {
    std::mt19937 rng(606);
    for (const auto [kv_heads, rotary_width] : {std::pair<std::size_t, std::size_t>{4, 4}, {2, 2}, {1, 0}}) {
        INFO("kv heads " << kv_heads << ", rotary width " << rotary_width);
        const auto config = phi_config(kv_heads, rotary_width);
        model_fixture::check_random_checkpoint(config, rng, true, {1, 7, config.max_positions}, phi_reference);
    }
}

TEST_CASE("Phi: sharedNorm and lmHeadBias are checked against the layout", "[model][phi]") {
    auto config = phi_config(4, 4);
    config.parallel_residual = false;
    CHECK(m::validate(config) == "sharedNorm gives the MLP attention's normalized input: parallelResidual must be true");
    config = phi_config(4, 4);
    config.shared_norm = false;
    CHECK(m::validate(config) ==
          "the phi tensor layout has no MLP norm (one input_layernorm per layer): sharedNorm must be true");
    config = phi_config(4, 4);
    config.architecture = m::Architecture::llama, config.shared_norm = false, config.parallel_residual = false;
    CHECK(m::validate(config) == "the llama tensor layout has no LM head bias: lmHeadBias must be false");
}
