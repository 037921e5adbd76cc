// Gemma's math on the core: RMSNorms scaling by (1 + weight), word
// embeddings multiplied by sqrt(hidden_size) rounded to their stored dtype
// (transformers' normalizer tensor of the hidden dtype), a GeGLU MLP and
// heads wider than hidden_size / heads. Checked against a double-precision
// forward written here from modeling_gemma.py (model_reference.hpp's
// Linear, rotary and attention), in F32, F16 and BF16.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "close_to.hpp"
#include "model/float16.hpp"
#include "model_families.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
namespace r = model_reference;

m::ModelConfig gemma_config() {
    m::ModelConfig c;
    model_families::set_family(c, m::Architecture::llama);
    c.norm = m::NormKind::rms_plus_one;
    c.layers = 2, c.heads = 4, c.kv_heads = 1, c.model_width = 16, c.head_width = 10, c.mlp_width = 24;
    c.vocab_size = 17, c.max_positions = 20;
    c.norm_epsilon = 1e-6f, c.rope_theta = 10000.0f;
    c.activation = m::Activation::gelu_tanh;
    c.embedding_scale = std::sqrt(16.0f);
    return c;
}

// GemmaRMSNorm: x / sqrt(mean(x^2) + eps) * (1 + weight).
r::Matrix gemma_norm(const r::Matrix& x, std::size_t n, std::size_t d, const r::Tensor& w, double eps) {
    r::Matrix y(n * d);
    for (std::size_t i = 0; i < n; ++i) {
        double mean_square = 0;
        for (std::size_t j = 0; j < d; ++j) mean_square += x[i * d + j] * x[i * d + j] / double(d);
        for (std::size_t j = 0; j < d; ++j)
            y[i * d + j] = x[i * d + j] / std::sqrt(mean_square + eps) * (1.0 + w.values[j]);
    }
    return y;
}

// GemmaForCausalLM; `normalizer`: sqrt(hidden_size) as the model's dtype holds it.
r::Result gemma_reference(const m::ModelConfig& config, const r::Tensors& t, const std::vector<int>& ids,
                          double normalizer) {
    const r::Config c = model_fixture::reference_config(config);
    const std::size_t n = ids.size(), d = c.d;
    r::Result result;
    r::Matrix x(n * d);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < d; ++j)
            x[i * d + j] = r::get(t, "model.embed_tokens.weight").values[ids[i] * d + j] * normalizer;
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        const auto project = [&](const std::string& name, const r::Matrix& in) {
            return r::linear(in, n, r::get(t, p + name + ".weight"), nullptr);
        };
        r::LayerRecord record;
        record.x = gemma_norm(x, n, d, r::get(t, p + "input_layernorm.weight"), c.eps);
        r::Matrix q = project("self_attn.q_proj", record.x), k = project("self_attn.k_proj", record.x);
        r::rotary(q, n, c.heads, c.hd, c.theta);
        r::rotary(k, n, c.kv_heads, c.hd, c.theta);
        r::attend(c, q, k, project("self_attn.v_proj", record.x), n, true, {}, record, result.attention);
        r::add(x, project("self_attn.o_proj", record.concatenated));
        const r::Matrix mlp_in = gemma_norm(x, n, d, r::get(t, p + "post_attention_layernorm.weight"), c.eps);
        r::Matrix gate = project("mlp.gate_proj", mlp_in);
        const r::Matrix up = project("mlp.up_proj", mlp_in);
        for (std::size_t i = 0; i < gate.size(); ++i) gate[i] = r::activation(c.activation, gate[i]) * up[i];
        r::add(x, project("mlp.down_proj", gate));
    }
    result.hidden = gemma_norm(x, n, d, r::get(t, "model.norm.weight"), c.eps);
    result.logits = r::linear(result.hidden, n, r::get(t, "model.embed_tokens.weight"), nullptr);
    return result;
}

}  // namespace

TEST_CASE("Gemma: (1 + w) RMSNorms, the rounded embedding scale, GeGLU and wide heads match the double reference",
          "[model][gemma]") {
    std::mt19937 rng(505);
    const auto config = gemma_config();
    REQUIRE(m::validate(config) == "");
    const auto tensors = model_fixture::random_tensors(config, rng, false);
    // sqrt(16) = 4 is exact in every dtype: the dtypes then load the same floats (model_fixture).
    model_fixture::check_dtypes_against(
        config, tensors, rng, {std::size_t(1), std::size_t(6), config.max_positions},
        [&](const std::vector<int>& ids) { return gemma_reference(config, tensors, ids, 4.0); });
    // A scale no 16-bit type holds: each dtype multiplies by its own rounding of it.
    auto odd = config;
    odd.embedding_scale = std::sqrt(3072.0f);
    for (const auto& [type, normalizer] : {std::pair<const char*, double>{"F32", double(std::sqrt(3072.0f))},
                                           {"F16", 55.4375}, {"BF16", 55.5}}) {
        INFO(type);
        const auto model = model_fixture::load(odd, tensors, type);
        const auto ids = model_fixture::random_ids(rng, 7, config.vocab_size);
        require_close(model_fixture::run(*model, ids).hidden,
                      gemma_reference(odd, tensors, model_fixture::as_int(ids), normalizer).hidden, 1e-4);
    }
}

TEST_CASE("round_to_type rounds to the nearest 16-bit value, ties to even", "[model][gemma]") {
    using m::WeightType;
    CHECK(m::round_to_type(WeightType::bf16, std::sqrt(3072.0f)) == 55.5f);
    CHECK(m::round_to_type(WeightType::f16, std::sqrt(3072.0f)) == 55.4375f);
    CHECK(m::round_to_type(WeightType::f32, std::sqrt(3072.0f)) == std::sqrt(3072.0f));
    CHECK(m::round_to_type(WeightType::bf16, 1.0f + 0x1p-8f) == 1.0f);                  // a tie: to even
    CHECK(m::round_to_type(WeightType::bf16, 1.0f + 3 * 0x1p-8f) == 1.0f + 0x1p-6f);    // a tie: to even
    CHECK(m::round_to_type(WeightType::f16, 1.0f + 0x1p-11f) == 1.0f);
    CHECK(m::round_to_type(WeightType::f16, 1.0f + 0x1p-11f + 0x1p-20f) == 1.0f + 0x1p-10f);
    auto config = gemma_config();
    config.embedding_scale = 0.5f;
    CHECK(m::validate(config) == "embeddingScale (0.5) must be 0 (none) or between 1 and 65504");
}
