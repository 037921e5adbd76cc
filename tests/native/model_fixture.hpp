// Tiny random checkpoints for the model tests: every tensor of a config
// (by the production list, so names are whatever model_tensors says; the
// reference reads them by its own spelling of the contract's names, so a
// misnamed tensor fails there), loaded into a Model in F32, F16 or BF16.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "close_to.hpp"
#include "model/model.hpp"
#include "model/tensors.hpp"
#include "model_reference.hpp"

namespace model_fixture {

namespace m = attnlens::model;

inline model_reference::Config reference_config(const m::ModelConfig& c) {
    model_reference::Config r;
    r.architecture = m::architecture_name(c.architecture);
    r.layers = c.layers, r.heads = c.heads, r.kv_heads = c.kv_heads, r.d = c.model_width, r.hd = c.head_width;
    r.mlp = c.mlp_width, r.vocab = c.vocab_size, r.eps = c.norm_epsilon, r.theta = c.rope_theta;
    r.activation = m::activation_name(c.activation);
    return r;
}

inline bool is_norm_weight(m::TensorRole role) {
    using R = m::TensorRole;
    return role == R::embedding_norm || role == R::attention_norm || role == R::mlp_norm || role == R::final_norm ||
           role == R::decoder_embedding_norm || role == R::cross_norm;
}

// Values are multiples of 1/64 in [-0.5, 0.5] (norm weights 1 +- 0.25): exact
// in float32, F16 and BF16 alike, so a model loads to the same floats from each.
inline model_reference::Tensors random_tensors(const m::ModelConfig& config, std::mt19937& rng, bool with_lm_head) {
    std::uniform_int_distribution<int> step(-32, 32);
    model_reference::Tensors tensors;
    for (const m::TensorSpec& spec : m::model_tensors(config)) {
        if (spec.optional && !with_lm_head) continue;
        model_reference::Tensor& t = tensors[spec.name];
        t.shape = spec.shape;
        t.values.resize(m::element_count(spec.shape));
        for (double& value : t.values)
            value = is_norm_weight(spec.role) ? 1.0 + step(rng) / 128.0 : step(rng) / 64.0;
    }
    return tensors;
}

// An F16 bit pattern for a value F16 holds exactly (test-side encoder).
inline std::uint16_t exact_f16(double value) {
    const std::uint16_t sign = std::signbit(value) ? 0x8000 : 0;
    const double magnitude = std::fabs(value);
    if (magnitude == 0) return sign;
    int exponent;
    const double mantissa = std::frexp(magnitude, &exponent);  // magnitude = mantissa * 2^exponent, mantissa in [0.5, 1)
    const int biased = exponent - 1 + 15;
    double fraction;
    std::uint16_t bits;
    if (biased >= 1) {
        fraction = (mantissa * 2 - 1) * 1024;
        bits = static_cast<std::uint16_t>(sign | (biased << 10) | static_cast<int>(fraction));
    } else {
        fraction = magnitude / std::ldexp(1.0, -24);
        bits = static_cast<std::uint16_t>(sign | static_cast<int>(fraction));
    }
    REQUIRE(fraction == std::floor(fraction));
    return bits;
}

inline std::uint16_t exact_bf16(double value) {
    const float f = static_cast<float>(value);
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    REQUIRE((bits & 0xffffu) == 0);
    return static_cast<std::uint16_t>(bits >> 16);
}

// A tensor's values as a file stores them in `type` ("F32", "F16", "BF16").
struct EncodedTensor {
    std::vector<float> f32;
    std::vector<std::uint16_t> halves;
    const unsigned char* bytes() const {
        return f32.empty() ? reinterpret_cast<const unsigned char*>(halves.data())
                           : reinterpret_cast<const unsigned char*>(f32.data());
    }
};

inline EncodedTensor encode(const std::vector<double>& values, const std::string& type) {
    EncodedTensor out;
    for (double value : values) {
        if (type == "F32") out.f32.push_back(static_cast<float>(value));
        else out.halves.push_back(type == "F16" ? exact_f16(value) : exact_bf16(value));
    }
    return out;
}

// Loads every tensor in `type` ("F32", "F16", "BF16") and finishes.
inline std::unique_ptr<m::Model> load(const m::ModelConfig& config, const model_reference::Tensors& tensors,
                                      const std::string& type = "F32") {
    auto model = std::make_unique<m::Model>(config);
    for (const auto& [name, tensor] : tensors) {
        const EncodedTensor encoded = encode(tensor.values, type);
        INFO(name);
        REQUIRE(model->load_tensor(name, type, encoded.bytes(), tensor.values.size()) == "");
    }
    REQUIRE(model->finish() == "");
    return model;
}

struct RunOutput {
    std::vector<float> attention, hidden, logits;
};

// threads: 0 = the core's automatic policy. logits_from: the first position
// whose logits are asked for. cache: run()'s ForwardCache, or null.
// with_attention false: no weights (the output-only attention path).
inline RunOutput run(const m::Model& model, const std::vector<std::int32_t>& ids,
                     const std::vector<std::uint8_t>& mask = {}, std::size_t threads = 0, std::size_t logits_from = 0,
                     m::ForwardCache* cache = nullptr, bool with_attention = true) {
    const m::ModelConfig& c = model.config();
    const std::size_t n = ids.size();
    RunOutput out;
    out.attention.assign(with_attention ? c.layers * c.heads * n * n : 0, -1.0f);
    out.hidden.assign(n * c.model_width, -1.0f);
    if (c.has_lm_head) out.logits.assign((n - logits_from) * c.vocab_size, -1.0f);
    m::RunRequest request;
    request.ids = ids.data();
    request.count = n;
    request.key_mask = mask.empty() ? nullptr : mask.data();
    request.attention = with_attention ? out.attention.data() : nullptr;
    request.hidden = out.hidden.data();
    request.logits = c.has_lm_head ? out.logits.data() : nullptr;
    request.logits_from = logits_from;
    request.threads = threads;
    request.cache = cache;
    REQUIRE(model.run(request) == "");
    return out;
}

inline std::vector<int> as_int(const std::vector<std::int32_t>& ids) { return std::vector<int>(ids.begin(), ids.end()); }

// `n` token ids drawn uniformly from the vocabulary.
inline std::vector<std::int32_t> random_ids(std::mt19937& rng, std::size_t n, std::size_t vocab) {
    std::uniform_int_distribution<std::int32_t> id(0, static_cast<std::int32_t>(vocab) - 1);
    std::vector<std::int32_t> ids(n);
    for (auto& value : ids) value = id(rng);
    return ids;
}

// Loads `config` with `tensors` in F32, F16 and BF16 and compares run() on
// random ids of each length with `reference(ids)`: attention to 1e-5, hidden
// states and (when the model has a head) logits to 1e-4.
template <class Reference>
void check_dtypes_against(const m::ModelConfig& config, const model_reference::Tensors& tensors, std::mt19937& rng,
                          std::initializer_list<std::size_t> lengths, Reference reference) {
    for (const char* type : {"F32", "F16", "BF16"}) {
        INFO(type);
        const auto model = load(config, tensors, type);
        for (const std::size_t n : lengths) {
            const auto ids = random_ids(rng, n, config.vocab_size);
            const auto actual = run(*model, ids);
            const auto expected = reference(as_int(ids));
            require_close(actual.attention, expected.attention, 1e-5);
            require_close(actual.hidden, expected.hidden, 1e-4);
            if (config.has_lm_head) require_close(actual.logits, expected.logits, 1e-4);
        }
    }
}

// check_dtypes_against for a family test: `config` valid, random tensors for it
// (its own LM head too with `with_lm_head`), and `reference(config, tensors, ids)`.
template <class Reference>
void check_random_checkpoint(const m::ModelConfig& config, std::mt19937& rng, bool with_lm_head,
                             std::initializer_list<std::size_t> lengths, Reference reference) {
    REQUIRE(m::validate(config) == "");
    const auto tensors = random_tensors(config, rng, with_lm_head);
    check_dtypes_against(config, tensors, rng, lengths,
                         [&](const std::vector<int>& ids) { return reference(config, tensors, ids); });
}

using ::same_bits;  // close_to.hpp's, for the tests that name it model_fixture::same_bits

// explain() of `layer` on `ids`, on `threads` (0: the core's automatic policy).
inline attnlens::MultiHeadTrace explain(const m::Model& model, const std::vector<std::int32_t>& ids, std::size_t layer,
                                        std::size_t threads = 0) {
    m::ExplainRequest request;
    request.ids = ids.data();
    request.count = ids.size();
    request.layer = layer;
    request.threads = threads;
    attnlens::MultiHeadTrace trace;
    REQUIRE(model.explain(request, trace) == "");
    return trace;
}

// Each block's maximum of a rows x cols matrix pooled by `factor`, found by
// visiting the block's cells: the other order of the kernel's row-wise loop
// (src/attention/pooled.hpp), a reference written apart from it.
inline std::vector<float> pooled_reference(const std::vector<float>& weights, std::size_t rows, std::size_t cols,
                                           std::size_t factor) {
    const std::size_t block_rows = (rows + factor - 1) / factor, block_cols = (cols + factor - 1) / factor;
    std::vector<float> out(block_rows * block_cols);
    for (std::size_t br = 0; br < block_rows; ++br)
        for (std::size_t bc = 0; bc < block_cols; ++bc) {
            float largest = -1.0f;
            for (std::size_t r = br * factor; r < std::min(rows, (br + 1) * factor); ++r)
                for (std::size_t c = bc * factor; c < std::min(cols, (bc + 1) * factor); ++c)
                    largest = std::max(largest, weights[r * cols + c]);
            out[br * block_cols + bc] = largest;
        }
    return out;
}

}  // namespace model_fixture
