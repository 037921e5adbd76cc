// GPT-NeoX's (Pythia's) math on the core: the fused query_key_value whose
// rows come per head, rotary on the first rotary_width columns of each head
// only, and the parallel residual x + attn(ln1(x)) + mlp(ln2(x)). Checked
// against a double-precision forward written here from modeling_gpt_neox.py
// (model_reference.hpp's helpers: Linear, LayerNorm, attention), in F32,
// F16 and BF16, with the fused rows arriving in odd-sized runs.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "close_to.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
namespace r = model_reference;

m::ModelConfig neox_config(std::size_t rotary_width, bool parallel) {
    m::ModelConfig c;
    c.architecture = m::Architecture::gpt_neox;
    c.norm = m::NormKind::layer, c.position = m::PositionKind::rotary;
    c.post_norm = false, c.causal = true, c.gated_mlp = false, c.embedding_norm = false, c.final_norm = true;
    c.layers = 2, c.heads = 3, c.kv_heads = 3, c.model_width = 24, c.head_width = 8, c.mlp_width = 20;
    c.vocab_size = 11, c.max_positions = 16, c.type_vocab_size = 0;
    c.norm_epsilon = 1e-5f, c.rope_theta = 100.0f;
    c.activation = m::Activation::gelu_erf;
    c.rotary_width = rotary_width, c.parallel_residual = parallel;
    return c;
}

// GPTNeoXModel + embed_out, one layer at a time as GPTNeoXLayer.forward.
r::Result neox_reference(const m::ModelConfig& config, const r::Tensors& t, const std::vector<int>& ids) {
    const r::Config c = model_fixture::reference_config(config);
    const std::size_t n = ids.size(), d = c.d, H = c.heads, hd = c.hd;
    const std::size_t rot = config.rotary_width ? config.rotary_width : hd;
    r::Result result;
    r::Matrix x = r::embed(r::get(t, "gpt_neox.embed_in.weight"), ids, d);
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string p = "gpt_neox.layers." + std::to_string(l) + ".";
        const auto norm = [&](const std::string& name, const r::Matrix& in) {
            return r::layer_norm(in, n, d, r::get(t, p + name + ".weight"), r::get(t, p + name + ".bias"), c.eps);
        };
        const auto project = [&](const std::string& name, const r::Matrix& in) {
            return r::linear(in, n, r::get(t, p + name + ".weight"), &r::get(t, p + name + ".bias"));
        };
        r::LayerRecord record;
        record.x = norm("input_layernorm", x);
        // qkv viewed as [n, H, 3 * hd]: head h's query, key and value side by side.
        const r::Matrix qkv = project("attention.query_key_value", record.x);
        r::Matrix q(n * d), k(n * d), v(n * d);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t j = 0; j < hd; ++j) {
                    const double* fused = &qkv[i * 3 * d + h * 3 * hd];
                    q[i * d + h * hd + j] = fused[j];
                    k[i * d + h * hd + j] = fused[hd + j];
                    v[i * d + h * hd + j] = fused[2 * hd + j];
                }
        // GPTNeoXAttention: rotate_half on columns [0, rotary_ndims) of each head.
        r::rotary(q, n, H, hd, c.theta, rot);
        r::rotary(k, n, H, hd, c.theta, rot);
        r::attend(c, q, k, v, n, true, {}, record, result.attention);
        record.output = project("attention.dense", record.concatenated);
        // use_parallel_residual: the MLP reads x; otherwise x + attention.
        r::Matrix attended = x;
        r::add(attended, record.output);
        const r::Matrix mlp_in = norm("post_attention_layernorm", config.parallel_residual ? x : attended);
        const r::Matrix mlp = project("mlp.dense_4h_to_h", r::activate(c.activation, project("mlp.dense_h_to_4h", mlp_in)));
        x = attended;
        r::add(x, mlp);
        record.layer_output = x;
        result.layers.push_back(record);
    }
    result.hidden = r::layer_norm(x, n, d, r::get(t, "gpt_neox.final_layer_norm.weight"),
                                  r::get(t, "gpt_neox.final_layer_norm.bias"), c.eps);
    result.logits = r::linear(result.hidden, n, r::get(t, "lm_head.weight"), nullptr);
    return result;
}

}  // namespace

TEST_CASE("GPT-NeoX: fused per-head QKV, partial rotary and the parallel residual match the double reference",
          "[model][neox]") {
    std::mt19937 rng(202);
    for (const std::size_t rotary_width : {std::size_t(0), std::size_t(2), std::size_t(6)}) {
        for (const bool parallel : {true, false}) {
            INFO("rotary width " << rotary_width << ", parallel " << parallel);
            const auto config = neox_config(rotary_width, parallel);
            model_fixture::check_random_checkpoint(config, rng, true, {1, 7, config.max_positions}, neox_reference);
        }
    }
}

TEST_CASE("GPT-NeoX: the fused rows may arrive in any runs, and the knobs' bad values are refused by name", "[model][neox]") {
    std::mt19937 rng(203);
    const auto config = neox_config(4, true);
    const auto tensors = model_fixture::random_tensors(config, rng, true);
    const auto whole = model_fixture::load(config, tensors);
    m::Model model(config);
    for (const auto& [name, tensor] : tensors) {
        const std::vector<float> values(tensor.values.begin(), tensor.values.end());
        const std::size_t rows = tensor.shape[0], width = values.size() / rows;
        // Runs of 5 rows: they start inside panels and cut through heads.
        for (std::size_t first = 0; first < rows; first += 5) {
            const std::size_t count = std::min<std::size_t>(5, rows - first);
            REQUIRE(model.load_tensor(name, "F32", values.data() + first * width, m::RowRange{first, count},
                                      count * width) == "");
        }
    }
    REQUIRE(model.finish() == "");
    const auto ids = model_fixture::random_ids(rng, 9, config.vocab_size);
    REQUIRE(model_fixture::same_bits(model_fixture::run(model, ids).hidden, model_fixture::run(*whole, ids).hidden));

    auto odd = neox_config(5, true);
    CHECK(m::validate(odd) == "rotaryWidth (5) must be even: rotary embeddings rotate pairs");
    odd.rotary_width = 10;
    CHECK(m::validate(odd) == "rotaryWidth (10) must be at most headWidth (8)");
    auto post = neox_config(0, true);
    post.post_norm = true;
    CHECK(m::validate(post) == "parallelResidual adds both halves to the layer's input: postNorm must be false");
    auto learned = neox_config(4, false);
    learned.position = m::PositionKind::learned;
    CHECK(m::validate(learned) == "rotaryWidth (4) needs rotary positions: position must be rotary");
}
