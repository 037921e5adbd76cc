// The real trained checkpoint ../shared/models/sort-gpt2 (3 layers, 3 heads,
// d = 48, vocabulary "0" "1" "2"), read from its safetensors file through
// the production header parser: greedy decoding sorts every one of the 729
// six-digit inputs, and its attention matches the float64 reference.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "close_to.hpp"
#include "model/safetensors.hpp"
#include "safetensors_json.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;

const std::string kModelFile = std::string(ATTNLENS_SHARED_MODELS_DIR) + "/sort-gpt2/model.safetensors";

m::ModelConfig sort_gpt2_config() {  // config.json
    m::ModelConfig c;
    c.layers = 3, c.heads = 3, c.kv_heads = 3, c.model_width = 48, c.head_width = 16, c.mlp_width = 4 * 48;
    c.vocab_size = 3, c.max_positions = 11, c.norm_epsilon = 1e-5f;
    return c;
}

// The checkpoint's tensors by canonical name (without "transformer."), or
// empty when the file is not there.
model_reference::Tensors read_checkpoint() {
    std::ifstream file(kModelFile, std::ios::binary);
    if (!file) return {};
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    REQUIRE(bytes.size() >= 8);
    std::uint64_t header_size = 0;
    for (int i = 7; i >= 0; --i) header_size = header_size << 8 | bytes[i];
    REQUIRE(8 + header_size <= bytes.size());
    const std::uint8_t* data = bytes.data() + 8 + header_size;
    const auto header = safetensors_json::read(bytes.data() + 8, header_size);
    REQUIRE(header.error == "");
    std::vector<m::SafetensorsTensor> table;
    REQUIRE(m::check_safetensors_entries(header.entries, bytes.size() - 8 - header_size, table) == "");
    model_reference::Tensors tensors;
    for (const auto& tensor : table) {
        REQUIRE(tensor.dtype == "F32");
        std::string name = tensor.name;
        if (name.rfind("transformer.", 0) == 0) name = name.substr(12);
        auto& t = tensors[name];
        t.shape.assign(tensor.shape.begin(), tensor.shape.end());
        std::vector<float> values((tensor.end - tensor.begin) / 4);
        std::memcpy(values.data(), data + tensor.begin, tensor.end - tensor.begin);
        t.values.assign(values.begin(), values.end());
    }
    return tensors;
}

// Appends the most likely next token `count` times.
std::vector<std::int32_t> greedy(const m::Model& model, std::vector<std::int32_t> ids, std::size_t count) {
    for (std::size_t step = 0; step < count; ++step) {
        const auto out = model_fixture::run(model, ids);
        const float* last = out.logits.data() + (ids.size() - 1) * 3;
        ids.push_back(static_cast<std::int32_t>(std::max_element(last, last + 3) - last));
    }
    return ids;
}

}  // namespace

TEST_CASE("sort-gpt2: greedy decoding sorts every six-digit input", "[model][sort-gpt2]") {
    const auto tensors = read_checkpoint();
    // ../shared/models sits beside every clone this project is tested in: its absence is a failure.
    INFO(kModelFile << " must exist");
    REQUIRE(!tensors.empty());
    REQUIRE(tensors.count("lm_head.weight") == 1);  // untied
    const auto model = model_fixture::load(sort_gpt2_config(), tensors);
    for (int code = 0; code < 729; ++code) {
        std::vector<std::int32_t> digits;
        for (int i = 0, rest = code; i < 6; ++i, rest /= 3) digits.push_back(rest % 3);
        auto sorted = digits;
        std::sort(sorted.begin(), sorted.end());
        // The last of 6 predictions reads 11 tokens, the model's maximum.
        const auto output = greedy(*model, digits, 6);
        INFO("input code " << code);
        REQUIRE(std::vector<std::int32_t>(output.begin() + 6, output.end()) == sorted);
    }
}

TEST_CASE("sort-gpt2: attention, hidden state and logits match the float64 reference", "[model][sort-gpt2]") {
    const auto tensors = read_checkpoint();
    // ../shared/models sits beside every clone this project is tested in: its absence is a failure.
    INFO(kModelFile << " must exist");
    REQUIRE(!tensors.empty());
    const auto config = sort_gpt2_config();
    const auto model = model_fixture::load(config, tensors);
    for (const std::vector<std::int32_t>& ids : {std::vector<std::int32_t>{2, 0, 1, 1, 0, 2, 0, 0, 1, 1, 2},
                                                 std::vector<std::int32_t>{1, 1, 1, 0, 0, 0}}) {
        const auto actual = model_fixture::run(*model, ids);
        const auto expected =
            model_reference::forward(model_fixture::reference_config(config), tensors, model_fixture::as_int(ids));
        require_close(actual.attention, expected.attention, 1e-5);
        require_close(actual.hidden, expected.hidden, 1e-4);
        require_close(actual.logits, expected.logits, 1e-4);
    }
}
