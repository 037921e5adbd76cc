// libFuzzer target over the real-model layer (src/model/), in two modes:
//
//   header   the input is a safetensors JSON header, read into a tensor
//            table (tests/native/safetensors_json.hpp, nlohmann/json, as the
//            module's JavaScript does with JSON.parse) and checked by the
//            core against two data sizes. A table the core accepts must
//            satisfy everything it promises (known dtypes, offsets inside
//            the data, byte counts that match the shapes, unique names).
//   table    an input starting with 'T' is a table of arbitrary numbers
//            (negative, fractional, huge, NaN), checked the same way.
//   model    an input starting with 'M' describes a tiny model: a config
//            (valid or not), its tensors in F32/F16/BF16 (moderate values,
//            raw bit patterns, missing ones), token ids (in range or not), a
//            key mask; then run() and explain(). Refusals must be error
//            strings; for moderate values the attention rows sum to 1 (or 0
//            when every key is hidden) and explain() gives run()'s weights exactly.
//
// Built with -fsanitize=fuzzer,address,undefined (see tests/fuzz/run.mjs).
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "model/safetensors.hpp"
#include "model/tensors.hpp"
#include "safetensors_json.hpp"

namespace {

namespace m = attnlens::model;

void require(bool condition, const char* what) {
    if (!condition) {
        std::fprintf(stderr, "fuzz check failed: %s\n", what);
        std::abort();
    }
}

// The promises of a table the core accepted.
void check_table(const std::vector<m::SafetensorsEntry>& entries, std::uint64_t data_bytes) {
    std::vector<m::SafetensorsTensor> tensors;
    const std::string error = m::check_safetensors_entries(entries, data_bytes, tensors);
    if (!error.empty()) return;
    require(tensors.size() == entries.size(), "every entry is kept");
    std::set<std::string> names;
    for (const auto& tensor : tensors) {
        require(names.insert(tensor.name).second, "tensor names are unique");
        const std::size_t element = m::safetensors_dtype_size(tensor.dtype);
        require(element > 0, "dtypes are known");
        require(tensor.begin <= tensor.end && tensor.end <= data_bytes, "offsets lie inside the data");
        require(tensor.shape.size() <= m::kMaxSafetensorsRank, "shapes have at most 64 dimensions");
        long double bytes = element;
        for (std::uint64_t size : tensor.shape) {
            require(size <= m::kMaxSafetensorsSize, "shape sizes are at most 2^53 - 1");
            bytes *= static_cast<long double>(size);
        }
        require(bytes == static_cast<long double>(tensor.end - tensor.begin), "byte counts match the shapes");
    }
}

void check_header(const std::uint8_t* bytes, std::size_t size, std::uint64_t data_bytes) {
    const auto header = safetensors_json::read(bytes, size);
    if (header.error.empty()) check_table(header.entries, data_bytes);
}

// Arbitrary tables: names from a few, any dtype string, any numbers.
void fuzz_table(FuzzedDataProvider& data) {
    const char* dtypes[] = {"F32", "F16", "BF16", "U8", "F64", "BOOL", "F8_E4M3", "F24", ""};
    const double specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, 9007199254740991.0, 9007199254740992.0, 1e300,
                               std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
    const auto number = [&]() {
        return data.ConsumeBool() ? double(data.ConsumeIntegralInRange<std::int64_t>(-4, 1 << 20))
                                  : specials[data.ConsumeIntegralInRange<int>(0, 9)];
    };
    std::vector<m::SafetensorsEntry> entries(data.ConsumeIntegralInRange<std::size_t>(0, 6));
    for (auto& entry : entries) {
        entry.name = std::string(1, char('a' + data.ConsumeIntegralInRange<int>(0, 4)));
        entry.dtype = dtypes[data.ConsumeIntegralInRange<int>(0, 8)];
        entry.shape.resize(data.ConsumeIntegralInRange<std::size_t>(0, 66));
        for (double& size : entry.shape) size = number();
        entry.begin = number();
        entry.end = number();
    }
    check_table(entries, data.ConsumeIntegralInRange<std::uint64_t>(0, std::uint64_t(1) << 53));
}

// ---- model mode -------------------------------------------------------------

m::ModelConfig take_config(FuzzedDataProvider& data) {
    m::ModelConfig c;
    c.architecture = static_cast<m::Architecture>(data.ConsumeIntegralInRange<int>(0, 6));
    c.layers = data.ConsumeIntegralInRange<std::size_t>(0, 3);
    c.heads = data.ConsumeIntegralInRange<std::size_t>(0, 4);
    c.kv_heads = data.ConsumeBool() ? c.heads : data.ConsumeIntegralInRange<std::size_t>(0, 4);
    c.head_width = data.ConsumeIntegralInRange<std::size_t>(0, 9);
    c.model_width = data.ConsumeBool() ? c.heads * c.head_width : data.ConsumeIntegralInRange<std::size_t>(0, 24);
    c.mlp_width = data.ConsumeIntegralInRange<std::size_t>(0, 20);
    c.vocab_size = data.ConsumeIntegralInRange<std::size_t>(0, 9);
    c.max_positions = data.ConsumeIntegralInRange<std::size_t>(0, 13);
    c.type_vocab_size = data.ConsumeIntegralInRange<std::size_t>(0, 3);
    const float epsilons[] = {1e-5f, 1e-12f, 0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()};
    c.norm_epsilon = epsilons[data.ConsumeIntegralInRange<int>(0, 4)];
    const float thetas[] = {10000.0f, 500000.0f, 1.0f, std::numeric_limits<float>::infinity()};
    c.rope_theta = thetas[data.ConsumeIntegralInRange<int>(0, 3)];
    c.activation = static_cast<m::Activation>(data.ConsumeIntegralInRange<int>(0, 3));
    c.has_lm_head = c.architecture != m::Architecture::bert || data.ConsumeIntegralInRange<int>(0, 7) == 0;
    c.attention_bias = data.ConsumeBool();
    c.attention_output_bias = data.ConsumeBool();
    c.mlp_bias = data.ConsumeBool();
    // The math knobs, any combination: validate() refuses what a layout cannot name.
    c.norm = static_cast<m::NormKind>(data.ConsumeIntegralInRange<int>(0, 2));
    c.position = static_cast<m::PositionKind>(data.ConsumeIntegralInRange<int>(0, 1));
    c.post_norm = data.ConsumeBool(), c.causal = data.ConsumeBool(), c.gated_mlp = data.ConsumeBool();
    c.embedding_norm = data.ConsumeBool(), c.final_norm = data.ConsumeBool();
    c.padding_idx = data.ConsumeIntegralInRange<std::int64_t>(-2, 12);
    c.window = data.ConsumeIntegralInRange<std::size_t>(0, 4);
    c.rotary_width = data.ConsumeIntegralInRange<std::size_t>(0, 10);
    c.parallel_residual = data.ConsumeBool();
    c.shared_norm = data.ConsumeBool(), c.lm_head_bias = data.ConsumeBool();
    c.position_offset = data.ConsumeIntegralInRange<std::size_t>(0, 3);
    c.embedding_width = data.ConsumeIntegralInRange<std::size_t>(0, 24);
    const float embedding_scales[] = {0.0f, 5.656854f, 0.5f, std::numeric_limits<float>::infinity()};
    c.embedding_scale = embedding_scales[data.ConsumeIntegralInRange<int>(0, 3)];
    c.window_every_layer = data.ConsumeBool();
    c.window_layers = data.ConsumeIntegral<std::uint64_t>();
    const float scales[] = {0.0f, 1.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()};
    c.attention_scale = scales[data.ConsumeIntegralInRange<int>(0, 3)];
    return c;
}

// One tensor's bytes in `type`: moderate values (multiples of 1/64 in
// [-0.5, 0.5], exact in every type) or, when `raw`, any bit pattern.
std::vector<std::uint8_t> take_tensor(FuzzedDataProvider& data, std::size_t count, m::WeightType type, bool raw) {
    const std::size_t width = m::weight_type_bytes(type);
    std::vector<std::uint8_t> bytes(count * width);
    for (std::size_t i = 0; i < count; ++i) {
        if (raw) {
            for (std::size_t b = 0; b < width; ++b) bytes[i * width + b] = data.ConsumeIntegral<std::uint8_t>();
            continue;
        }
        const float value = static_cast<float>(data.ConsumeIntegralInRange<int>(-32, 32)) / 64.0f;
        std::uint32_t bits;
        std::memcpy(&bits, &value, sizeof bits);
        if (type == m::WeightType::f32) {
            std::memcpy(&bytes[i * 4], &bits, 4);
        } else if (type == m::WeightType::bf16) {
            const auto half = static_cast<std::uint16_t>(bits >> 16);
            std::memcpy(&bytes[i * 2], &half, 2);
        } else {
            // k/64 = k * 2^-6 in F16: exponent and fraction from frexp.
            std::uint16_t half = value < 0 ? 0x8000 : 0;
            if (value != 0.0f) {
                int exponent;
                const float mantissa = std::frexp(std::fabs(value), &exponent);
                half |= static_cast<std::uint16_t>((exponent - 1 + 15) << 10 | static_cast<int>((mantissa * 2 - 1) * 1024));
            }
            std::memcpy(&bytes[i * 2], &half, 2);
        }
    }
    return bytes;
}

void fuzz_model(FuzzedDataProvider& data) {
    const m::ModelConfig config = take_config(data);
    const bool valid = m::validate(config).empty();
    m::Model model(config);
    const bool raw = data.ConsumeIntegralInRange<int>(0, 3) == 0;
    bool complete = true;
    for (const m::TensorSpec& spec : m::model_tensors(config)) {
        if (data.ConsumeIntegralInRange<int>(0, 31) == 0 || (spec.optional && data.ConsumeBool())) {
            complete = complete && spec.optional;
            continue;
        }
        const auto type = static_cast<m::WeightType>(data.ConsumeIntegralInRange<int>(0, 2));
        std::size_t count = m::element_count(spec.shape);
        if (data.ConsumeIntegralInRange<int>(0, 31) == 0) count += 1;  // a count that disagrees with the shape
        const auto bytes = take_tensor(data, count, type, raw);
        const std::string error = model.load_tensor(spec.name, m::weight_type_name(type), bytes.data(), count);
        if (!valid) require(!error.empty(), "an invalid config refuses every tensor");
        if (!error.empty()) {
            require(!valid || error.find(spec.name) != std::string::npos, "a load error names the tensor");
            complete = complete && spec.optional;  // a refused LM head leaves it tied
        }
    }
    const std::string finished = model.finish();
    require(finished.empty() == (valid && complete), "finish succeeds exactly when every required tensor loaded");

    const std::size_t n = data.ConsumeIntegralInRange<std::size_t>(0, config.max_positions + 1);
    std::vector<std::int32_t> ids(n);
    // The positions a run may use: RoBERTa-style padding and OPT's offset skip the table's first rows.
    bool ids_valid = n >= 1 && n <= m::usable_positions(config);
    for (auto& id : ids) {
        id = data.ConsumeIntegralInRange<std::int32_t>(-1, static_cast<std::int32_t>(config.vocab_size));
        ids_valid = ids_valid && id >= 0 && std::size_t(id) < config.vocab_size;
    }
    std::vector<std::uint8_t> mask;
    if (data.ConsumeBool()) {
        mask.resize(n);
        for (auto& keep : mask) keep = data.ConsumeIntegralInRange<std::uint8_t>(0, 2);
    }
    const std::size_t per_layer = config.heads * n * n;
    std::vector<float> attention(config.layers * per_layer), hidden(n * config.model_width), logits(n * config.vocab_size);
    m::RunRequest request;
    request.ids = ids.empty() ? nullptr : ids.data();
    request.count = n;
    request.key_mask = mask.empty() ? nullptr : mask.data();
    request.attention = attention.data();
    request.hidden = hidden.data();
    request.logits = config.has_lm_head ? logits.data() : nullptr;
    const std::string ran = model.run(request);
    require(ran.empty() == (finished.empty() && ids_valid), "run succeeds exactly for a finished model and valid ids");
    if (!ran.empty() || raw) return;

    for (std::size_t row = 0; row < config.layers * config.heads * n; ++row) {
        double sum = 0;
        for (std::size_t j = 0; j < n; ++j) {
            const float w = attention[row * n + j];
            require(std::isfinite(w) && w >= 0.0f && w <= 1.0f + 1e-6f, "weights lie in [0, 1]");
            sum += w;
        }
        require(std::fabs(sum - 1.0) < 1e-4 || sum == 0.0, "attention rows sum to 1, or 0 when all keys are hidden");
    }
    for (float value : hidden) require(std::isfinite(value), "the hidden state is finite");

    m::ExplainRequest explain;
    explain.ids = ids.data();
    explain.count = n;
    explain.layer = data.ConsumeIntegralInRange<std::size_t>(0, config.layers);
    explain.key_mask = request.key_mask;
    attnlens::MultiHeadTrace trace;
    const std::string explained = model.explain(explain, trace);
    require(explained.empty() == (explain.layer < config.layers), "explain refuses exactly the missing layers");
    if (!explained.empty()) return;
    require(std::memcmp(trace.weights.data(), attention.data() + explain.layer * per_layer,
                        per_layer * sizeof(float)) == 0,
            "explain's weights are run's, bit for bit");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    if (size > 0 && bytes[0] == 'M') {
        FuzzedDataProvider data(bytes + 1, size - 1);
        fuzz_model(data);
        return 0;
    }
    if (size > 0 && bytes[0] == 'T') {
        FuzzedDataProvider data(bytes + 1, size - 1);
        fuzz_table(data);
        return 0;
    }
    check_header(bytes, size, std::uint64_t(1) << 53);
    check_header(bytes, size, size * 4);
    return 0;
}
