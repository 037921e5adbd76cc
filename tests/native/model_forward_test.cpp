// GPT-2, BERT and Llama forward passes on tiny random checkpoints against
// the independent double-precision reference (model_reference.hpp):
// attention to 1e-5, hidden states and logits to 1e-4 (relative above 1).
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "close_to.hpp"
#include "model_families.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
using model_fixture::load;
using model_fixture::random_ids;
using model_fixture::random_tensors;
using model_fixture::reference_config;

m::ModelConfig gpt2_config() {
    m::ModelConfig c;
    c.architecture = m::Architecture::gpt2;
    c.layers = 2, c.heads = 4, c.kv_heads = 4, c.model_width = 20, c.head_width = 5, c.mlp_width = 36;
    c.vocab_size = 13, c.max_positions = 12;
    c.norm_epsilon = 1e-5f;
    c.activation = m::Activation::gelu_tanh;
    return c;
}

// Grouped-query attention (4 query heads on 2 kv heads) and a head width
// that is not d / H.
m::ModelConfig llama_config(bool attention_bias = false, bool mlp_bias = false) {
    m::ModelConfig c;
    model_families::set_family(c, m::Architecture::llama);
    c.layers = 2, c.heads = 4, c.kv_heads = 2, c.model_width = 16, c.head_width = 6, c.mlp_width = 28;
    c.vocab_size = 19, c.max_positions = 32;
    c.norm_epsilon = 1e-6f, c.rope_theta = 500.0f;
    c.activation = m::Activation::silu;
    c.attention_bias = c.attention_output_bias = attention_bias, c.mlp_bias = mlp_bias;
    return c;
}

// Runs the model and the reference on the same ids and compares everything.
void check_against_reference(const m::ModelConfig& config, const model_reference::Tensors& tensors,
                             const std::vector<std::int32_t>& ids, const std::vector<std::uint8_t>& mask = {}) {
    REQUIRE(m::validate(config) == "");
    const auto model = load(config, tensors);
    const auto actual = model_fixture::run(*model, ids, mask);
    const auto expected = model_reference::forward(reference_config(config), tensors, model_fixture::as_int(ids), mask);
    require_close(actual.attention, expected.attention, 1e-5);
    require_close(actual.hidden, expected.hidden, 1e-4);
    require_close(actual.logits, expected.logits, 1e-4);
}

}  // namespace

TEST_CASE("GPT-2 forward matches the float64 reference, with and without its own LM head", "[model][forward]") {
    std::mt19937 rng(101);
    const auto config = gpt2_config();
    for (bool untied : {true, false}) {
        INFO("own lm_head: " << untied);
        const auto tensors = random_tensors(config, rng, untied);
        check_against_reference(config, tensors, random_ids(rng, 7, config.vocab_size));
        check_against_reference(config, tensors, random_ids(rng, 1, config.vocab_size));
        check_against_reference(config, tensors, random_ids(rng, config.max_positions, config.vocab_size));
    }
}

TEST_CASE("GPT-2 forward over several panels of every width matches the reference", "[model][forward]") {
    std::mt19937 rng(102);
    auto config = gpt2_config();
    config.layers = 1, config.heads = 3, config.kv_heads = 3, config.model_width = 66, config.head_width = 22;
    config.mlp_width = 130, config.vocab_size = 101, config.max_positions = 40;
    const auto tensors = random_tensors(config, rng, false);
    check_against_reference(config, tensors, random_ids(rng, 37, config.vocab_size));
}

TEST_CASE("BERT forward matches the float64 reference, padding masked", "[model][forward]") {
    std::mt19937 rng(103);
    const auto config = model_families::small_bert();
    const auto tensors = random_tensors(config, rng, false);
    const auto ids = random_ids(rng, 8, config.vocab_size);
    check_against_reference(config, tensors, ids);
    check_against_reference(config, tensors, ids, {1, 1, 1, 1, 1, 1, 0, 0});
    check_against_reference(config, tensors, ids, {1, 0, 1, 1, 0, 1, 1, 0});
}

TEST_CASE("Llama forward (GQA, head width != d/H, rotary) matches the float64 reference", "[model][forward]") {
    std::mt19937 rng(104);
    for (bool attention_bias : {false, true})
        for (bool mlp_bias : {false, true})
            for (bool untied : {false, true}) {
                INFO("attention_bias " << attention_bias << ", mlp_bias " << mlp_bias << ", own lm_head " << untied);
                const auto config = llama_config(attention_bias, mlp_bias);
                const auto tensors = random_tensors(config, rng, untied);
                check_against_reference(config, tensors, random_ids(rng, 9, config.vocab_size));
            }
    // One kv head for all queries (multi-query attention), and G = H.
    for (std::size_t kv_heads : {1, 4}) {
        auto config = llama_config();
        config.kv_heads = kv_heads;
        const auto tensors = random_tensors(config, rng, false);
        check_against_reference(config, tensors, random_ids(rng, 11, config.vocab_size));
    }
}

TEST_CASE("a key mask hides keys from causal models too", "[model][forward]") {
    std::mt19937 rng(105);
    const auto config = llama_config();
    const auto tensors = random_tensors(config, rng, false);
    // The first key masked: query 0 sees nothing and gets zero weights.
    check_against_reference(config, tensors, random_ids(rng, 6, config.vocab_size), {0, 1, 1, 0, 1, 1});
}

TEST_CASE("F16 and BF16 checkpoints give the same model as F32", "[model][forward]") {
    std::mt19937 rng(106);
    for (const auto& config : {gpt2_config(), model_families::small_bert(), llama_config(true, true)}) {
        INFO(m::architecture_name(config.architecture));
        const auto tensors = random_tensors(config, rng, true);
        const auto ids = random_ids(rng, 7, config.vocab_size);
        const auto f32 = model_fixture::run(*load(config, tensors, "F32"), ids);
        for (const char* type : {"F16", "BF16"}) {
            INFO(type);
            const auto other = model_fixture::run(*load(config, tensors, type), ids);
            REQUIRE(other.attention == f32.attention);
            REQUIRE(other.hidden == f32.hidden);
            REQUIRE(other.logits == f32.logits);
        }
    }
}

TEST_CASE("a tied LM head reuses the embedding's panels; an untied one is held once more", "[model][forward]") {
    std::mt19937 rng(107);
    const auto config = gpt2_config();
    auto tensors = random_tensors(config, rng, true);
    const auto untied = load(config, tensors);
    const auto lm_head = tensors.at("lm_head.weight");
    tensors.erase("lm_head.weight");
    const auto tied = load(config, tensors);
    REQUIRE(untied->weight_bytes() > tied->weight_bytes());
    REQUIRE(untied->weight_bytes() - tied->weight_bytes() >= lm_head.values.size() * sizeof(float));
    // The same file with lm_head = wte is the tied model, bit for bit.
    tensors["lm_head.weight"] = tensors.at("wte.weight");
    const auto copied = load(config, tensors);
    const std::vector<std::int32_t> ids{3, 1, 4, 1, 5, 9, 2, 6};
    REQUIRE(model_fixture::run(*copied, ids).logits == model_fixture::run(*tied, ids).logits);
}

TEST_CASE("run without buffers for attention or logits gives the same hidden state", "[model][forward]") {
    std::mt19937 rng(108);
    const auto config = gpt2_config();
    const auto model = load(config, random_tensors(config, rng, false));
    const std::vector<std::int32_t> ids{0, 5, 7, 12, 3};
    const auto full = model_fixture::run(*model, ids);
    std::vector<float> hidden(ids.size() * config.model_width);
    m::RunRequest request;
    request.ids = ids.data();
    request.count = ids.size();
    request.hidden = hidden.data();
    REQUIRE(model->run(request) == "");
    require_close(hidden, full.hidden, 1e-6);  // the output-only attention path rounds differently
}
