// ModelConfig validation, and the canonical tensor list of each architecture.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "model_families.hpp"
#include "model/config.hpp"
#include "model/tensors.hpp"

namespace {

namespace m = attnlens::model;
using Catch::Contains;

m::ModelConfig gpt2_small() {  // the real GPT-2 small
    m::ModelConfig c;
    c.layers = 12, c.heads = 12, c.kv_heads = 12, c.model_width = 768, c.head_width = 64, c.mlp_width = 3072;
    c.vocab_size = 50257, c.max_positions = 1024;
    return c;
}

m::ModelConfig smollm_135m() {  // HuggingFaceTB/SmolLM-135M
    m::ModelConfig c;
    model_families::set_family(c, m::Architecture::llama);
    c.layers = 30, c.heads = 9, c.kv_heads = 3, c.model_width = 576, c.head_width = 64, c.mlp_width = 1536;
    c.vocab_size = 49152, c.max_positions = 2048, c.norm_epsilon = 1e-5f, c.activation = m::Activation::silu;
    return c;
}

m::ModelConfig bert_base() {
    m::ModelConfig c;
    model_families::set_family(c, m::Architecture::bert);
    c.layers = 12, c.heads = 12, c.kv_heads = 12, c.model_width = 768, c.head_width = 64, c.mlp_width = 3072;
    c.vocab_size = 30522, c.max_positions = 512, c.type_vocab_size = 2, c.norm_epsilon = 1e-12f;
    c.activation = m::Activation::gelu_erf, c.has_lm_head = false;
    return c;
}

// The config after `change`, validated.
std::string invalid(m::ModelConfig config, const std::function<void(m::ModelConfig&)>& change) {
    change(config);
    return m::validate(config);
}

std::vector<std::string> names(const std::vector<m::TensorSpec>& specs) {
    std::vector<std::string> out;
    for (const auto& spec : specs) out.push_back(spec.name);
    return out;
}

}  // namespace

TEST_CASE("real configs are valid, and their parameter counts are the published ones", "[model][config]") {
    REQUIRE(m::validate(gpt2_small()) == "");
    REQUIRE(m::validate(smollm_135m()) == "");
    REQUIRE(m::validate(bert_base()) == "");
    REQUIRE(m::parameter_count(gpt2_small()) == 124439808);  // GPT-2 small (tied head)
    REQUIRE(m::parameter_count(smollm_135m()) == 134515008);
    // bert-base-uncased without the pooler (768 x 768 + 768) is 109482240 - 590592.
    REQUIRE(m::parameter_count(bert_base()) == 108891648);
}

TEST_CASE("validate names the problem and the number", "[model][config]") {
    const auto g = gpt2_small();
    REQUIRE_THAT(invalid(g, [](auto& c) { c.layers = 0; }), Contains("layers must be at least 1"));
    REQUIRE_THAT(invalid(g, [](auto& c) { c.mlp_width = 0; }), Contains("mlpWidth must be at least 1"));
    REQUIRE_THAT(invalid(g, [](auto& c) { c.vocab_size = 0; }), Contains("vocabSize"));
    REQUIRE_THAT(invalid(g, [](auto& c) { c.max_positions = 0; }), Contains("maxPositions"));
    REQUIRE_THAT(invalid(g, [](auto& c) { c.heads = c.kv_heads = 7, c.head_width = 109; }),
                 Contains("modelWidth (768) must be divisible by heads (7)"));
    REQUIRE_THAT(invalid(g, [](auto& c) { c.head_width = 32; }), Contains("headWidth (32) must be modelWidth / heads (64)"));
    REQUIRE_THAT(invalid(g, [](auto& c) { c.kv_heads = 4; }), Contains("no grouped-query attention"));
    REQUIRE_THAT(invalid(g, [](auto& c) { c.kv_heads = 5; }), Contains("kvHeads (5) must divide heads (12)"));
    REQUIRE_THAT(invalid(g, [](auto& c) { c.vocab_size = std::size_t(1) << 30; }),
                 Contains("vocabSize 1073741824 is too large"));
    REQUIRE_THAT(invalid(g, [](auto& c) { c.layers = 100000; }), Contains("layers 100000 is too large"));
    REQUIRE_THAT(invalid(g, [](auto& c) { c.model_width = std::size_t(1) << 21; }), Contains("modelWidth 2097152"));
    // Within every single bound, but far beyond 2 GiB of float32 weights.
    REQUIRE_THAT(invalid(g, [](auto& c) { c.layers = 200; }),
                 Contains("the model has 1456959744 parameters") && Contains("2.0 GiB"));
    REQUIRE_THAT(invalid(g, [](auto& c) { c.norm_epsilon = 0; }), Contains("normEpsilon"));
    REQUIRE_THAT(invalid(g, [](auto& c) { c.norm_epsilon = std::numeric_limits<float>::quiet_NaN(); }),
                 Contains("normEpsilon"));
    REQUIRE_THAT(invalid(g, [](auto& c) { c.norm_epsilon = -1e-5f; }), Contains("normEpsilon"));

    const auto l = smollm_135m();
    REQUIRE_THAT(invalid(l, [](auto& c) { c.head_width = 63; }), Contains("headWidth (63) must be even"));
    REQUIRE_THAT(invalid(l, [](auto& c) { c.kv_heads = 2; }), Contains("kvHeads (2) must divide heads (9)"));
    REQUIRE_THAT(invalid(l, [](auto& c) { c.kv_heads = 18; }), Contains("kvHeads (18) must divide heads (9)"));
    REQUIRE_THAT(invalid(l, [](auto& c) { c.rope_theta = 1.0f; }), Contains("ropeTheta"));
    REQUIRE_THAT(invalid(l, [](auto& c) { c.rope_theta = std::numeric_limits<float>::infinity(); }), Contains("ropeTheta"));
    REQUIRE_THAT(invalid(l, [](auto& c) { c.heads = 4096, c.kv_heads = 1, c.head_width = 4096; }), Contains("heads x headWidth"));
    // Llama allows a head width other than d / H.
    REQUIRE(invalid(l, [](auto& c) { c.head_width = 128; }) == "");

    const auto b = bert_base();
    // BERT's LM head is its masked-LM head; a decoder layout has no place for an encoder's.
    REQUIRE(invalid(b, [](auto& c) { c.has_lm_head = true; }) == "");
    REQUIRE_THAT(invalid(b, [](auto& c) { c.has_lm_head = true, c.embedding_width = 1024; }),
                 Contains("the LM head reads rows embeddingWidth wide: embeddingWidth (1024) must be at most modelWidth (768)"));
    REQUIRE_THAT(invalid(b, [](auto& c) { c.final_norm = true; }), Contains("bert tensor layout has no final norm"));
    REQUIRE_THAT(invalid(b, [](auto& c) { c.padding_idx = 511; }), Contains("paddingIdx (511) leaves no position"));
    REQUIRE(invalid(b, [](auto& c) { c.padding_idx = 1; }) == "");
    REQUIRE_THAT(invalid(b, [](auto& c) { c.window = 4; }), Contains("window (4) needs causal attention"));
    REQUIRE(invalid(l, [](auto& c) { c.window = 4; }) == "");
    // The knobs a layout cannot name are refused, naming the knob.
    REQUIRE_THAT(invalid(gpt2_small(), [](auto& c) { c.type_vocab_size = 2; }), Contains("typeVocabSize must be 0"));
    REQUIRE_THAT(invalid(l, [](auto& c) { c.embedding_norm = true; }), Contains("embeddingNorm must be false"));
    REQUIRE_THAT(invalid(l, [](auto& c) { c.position = m::PositionKind::learned; }), Contains("position must be rotary"));
}

TEST_CASE("GPT-2's canonical tensors, in order with their shapes", "[model][config]") {
    auto c = gpt2_small();
    c.layers = 1;
    const auto specs = m::model_tensors(c);
    REQUIRE(names(specs) == std::vector<std::string>{
                                "wte.weight", "wpe.weight", "h.0.ln_1.weight", "h.0.ln_1.bias",
                                "h.0.attn.c_attn.weight", "h.0.attn.c_attn.bias", "h.0.attn.c_proj.weight",
                                "h.0.attn.c_proj.bias", "h.0.ln_2.weight", "h.0.ln_2.bias", "h.0.mlp.c_fc.weight",
                                "h.0.mlp.c_fc.bias", "h.0.mlp.c_proj.weight", "h.0.mlp.c_proj.bias", "ln_f.weight",
                                "ln_f.bias", "lm_head.weight"});
    REQUIRE(specs[0].shape == std::vector<std::size_t>{50257, 768});
    REQUIRE(specs[4].shape == std::vector<std::size_t>{768, 2304});
    REQUIRE(specs[5].shape == std::vector<std::size_t>{2304});
    REQUIRE(specs[10].shape == std::vector<std::size_t>{768, 3072});
    REQUIRE(specs[12].shape == std::vector<std::size_t>{3072, 768});
    REQUIRE(specs.back().shape == std::vector<std::size_t>{50257, 768});
    for (std::size_t i = 0; i + 1 < specs.size(); ++i) REQUIRE(!specs[i].optional);
    REQUIRE(specs.back().optional);
}

TEST_CASE("BERT's and Llama's canonical tensors", "[model][config]") {
    auto b = bert_base();
    b.layers = 2;
    const auto bert = names(m::model_tensors(b));
    REQUIRE(bert.size() == 5 + 2 * 16);
    REQUIRE(bert[2] == "embeddings.token_type_embeddings.weight");
    REQUIRE(bert[3] == "embeddings.LayerNorm.weight");
    REQUIRE(bert[5] == "encoder.layer.0.attention.self.query.weight");
    REQUIRE(bert[14] == "encoder.layer.0.attention.output.LayerNorm.bias");
    REQUIRE(bert.back() == "encoder.layer.1.output.LayerNorm.bias");
    // With its masked-LM head: cls.predictions' transform, then the (tied, optional) decoder and its bias.
    b.has_lm_head = true;
    const auto head = m::model_tensors(b);
    REQUIRE(head.size() == bert.size() + 6);
    REQUIRE(head[bert.size()].name == "cls.predictions.transform.dense.weight");
    REQUIRE(head[bert.size()].shape == std::vector<std::size_t>{768, 768});
    REQUIRE(head[bert.size() + 3].name == "cls.predictions.transform.LayerNorm.bias");
    REQUIRE(head[bert.size() + 4].name == "lm_head.weight");
    REQUIRE(head[bert.size() + 4].optional);
    REQUIRE(head.back().name == "lm_head.bias");
    REQUIRE(head.back().shape == std::vector<std::size_t>{30522});
    REQUIRE(!head.back().optional);

    auto l = smollm_135m();
    l.layers = 1;
    const auto specs = m::model_tensors(l);
    REQUIRE(names(specs) == std::vector<std::string>{
                                "model.embed_tokens.weight", "model.layers.0.input_layernorm.weight",
                                "model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight",
                                "model.layers.0.self_attn.v_proj.weight", "model.layers.0.self_attn.o_proj.weight",
                                "model.layers.0.post_attention_layernorm.weight", "model.layers.0.mlp.gate_proj.weight",
                                "model.layers.0.mlp.up_proj.weight", "model.layers.0.mlp.down_proj.weight",
                                "model.norm.weight", "lm_head.weight"});
    REQUIRE(specs[3].shape == std::vector<std::size_t>{192, 576});  // G * hd = 3 * 64
    REQUIRE(specs[5].shape == std::vector<std::size_t>{576, 576});
    l.attention_bias = l.attention_output_bias = l.mlp_bias = true;
    const auto biased = names(m::model_tensors(l));
    REQUIRE(biased.size() == 12 + 7);
    REQUIRE(biased[3] == "model.layers.0.self_attn.q_proj.bias");
    REQUIRE(biased[9] == "model.layers.0.self_attn.o_proj.bias");
}

TEST_CASE("architecture and activation names round-trip", "[model][config]") {
    m::Architecture architecture;
    for (const char* name : {"gpt2", "bert", "llama", "gpt_neox", "gpt_neo", "opt"}) {
        REQUIRE(m::parse_architecture(name, architecture));
        REQUIRE(std::string(m::architecture_name(architecture)) == name);
    }
    REQUIRE(!m::parse_architecture("mistral", architecture));
    m::Activation activation;
    for (const char* name : {"gelu_tanh", "gelu_erf", "silu", "relu"}) {
        REQUIRE(m::parse_activation(name, activation));
        REQUIRE(std::string(m::activation_name(activation)) == name);
    }
    REQUIRE(!m::parse_activation("gelu", activation));
}
