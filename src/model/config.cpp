#include "config.hpp"

#include <cmath>
#include <cstdio>
#include <initializer_list>

#include "tensors.hpp"

namespace attnlens::model {

namespace {

std::string number(std::size_t value) { return std::to_string(value); }

// "1e-12", "0", "nan": a float as a message shows it.
std::string float_text(float value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", double(value));
    return text;
}

// "1.5 GiB", for messages about memory.
std::string gibibytes(std::uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", double(bytes) / double(std::uint64_t(1) << 30));
    return text;
}

// "" when 1 <= value <= limit, else a sentence naming the field and value.
std::string check_size(const char* field, std::size_t value, std::size_t limit) {
    if (value == 0) return std::string(field) + " must be at least 1";
    if (value > limit)
        return std::string(field) + " " + number(value) + " is too large (at most " + number(limit) + " is supported)";
    return {};
}

// Sizes one at a time: each at least 1 and below its bound.
std::string check_sizes(const ModelConfig& c) {
    const struct {
        const char* field;
        std::size_t value, limit;
    } sizes[] = {
        {"layers", c.layers, kMaxLayers},          {"heads", c.heads, kMaxHeads},
        {"kvHeads", c.kv_heads, kMaxHeads},        {"modelWidth", c.model_width, kMaxWidth},
        {"headWidth", c.head_width, kMaxWidth},    {"mlpWidth", c.mlp_width, kMaxWidth},
        {"vocabSize", c.vocab_size, kMaxVocabulary}, {"maxPositions", c.max_positions, kMaxPositions},
    };
    for (const auto& size : sizes)
        if (auto error = check_size(size.field, size.value, size.limit); !error.empty()) return error;
    if (c.decoder_layers > kMaxLayers) return check_size("decoderLayers", c.decoder_layers, kMaxLayers);
    if (c.embedding_width > kMaxWidth) return check_size("embeddingWidth", c.embedding_width, kMaxWidth);
    if (c.type_vocab_size > kMaxVocabulary)
        return check_size("typeVocabSize", c.type_vocab_size, kMaxVocabulary);
    return {};
}

// How the heads split the widths.
std::string check_heads(const ModelConfig& c) {
    const std::string heads = "heads (" + number(c.heads) + ")", kv_heads = "kvHeads (" + number(c.kv_heads) + ")";
    if (c.kv_heads > c.heads || c.heads % c.kv_heads != 0) return kv_heads + " must divide " + heads;
    // Both sizes are at most 2^20, so the product cannot overflow 64 bits.
    const std::uint64_t attention_width = std::uint64_t(c.heads) * c.head_width;
    const bool rotary_pairs = c.position == PositionKind::rotary && rotated_width(c) % 2 != 0;
    const std::string odd_heads = std::string(c.rotary_width ? "rotaryWidth (" : "headWidth (") +
                                  number(rotated_width(c)) + ") must be even: rotary embeddings rotate pairs";
    if (c.rotary_width > c.head_width)
        return "rotaryWidth (" + number(c.rotary_width) + ") must be at most headWidth (" + number(c.head_width) + ")";
    if (c.architecture == Architecture::llama || c.architecture == Architecture::phi || c.architecture == Architecture::t5) {
        if (attention_width > kMaxWidth)
            return "heads x headWidth " + std::to_string(attention_width) + " is too large (at most " +
                   number(kMaxWidth) + " is supported)";
        return rotary_pairs ? odd_heads : std::string();
    }
    // The GPT-2 and BERT layouts: every head sees d / H columns; no grouped-query attention.
    const std::string name = architecture_name(c.architecture);
    if (c.kv_heads != c.heads) return name + " has no grouped-query attention: " + kv_heads + " must equal " + heads;
    if (c.model_width % c.heads != 0)
        return "modelWidth (" + number(c.model_width) + ") must be divisible by " + heads;
    if (attention_width != c.model_width)
        return "headWidth (" + number(c.head_width) + ") must be modelWidth / heads (" +
               number(c.model_width / c.heads) + ") for " + name;
    return rotary_pairs ? odd_heads : std::string();
}

std::string check_constants(const ModelConfig& c) {
    if (!(std::isfinite(c.norm_epsilon) && c.norm_epsilon > 0.0f))
        return "normEpsilon (" + float_text(c.norm_epsilon) + ") must be a finite number greater than 0";
    if (c.position == PositionKind::rotary && !(std::isfinite(c.rope_theta) && c.rope_theta > 1.0f))
        return "ropeTheta (" + float_text(c.rope_theta) + ") must be a finite number greater than 1";
    if (!(std::isfinite(c.attention_scale) && c.attention_scale >= 0.0f))
        return "attentionScale (" + float_text(c.attention_scale) +
               ") must be a finite number of at least 0 (0: 1/sqrt(headWidth))";
    if (!c.window_every_layer && c.layers > kMaxWindowLayers)
        return "windowLayers picks windowed layers among at most " + number(kMaxWindowLayers) + ", but the model has " +
               number(c.layers) + " layers";
    if (c.position_offset > 0) {
        if (c.position != PositionKind::learned)
            return "positionOffset numbers learned positions: position must be learned";
        if (c.position_offset >= c.max_positions)
            return "positionOffset (" + number(c.position_offset) + ") leaves no position for a token: maxPositions (" +
                   number(c.max_positions) + ") must be greater";
    }
    if (c.embedding_scale != 0.0f && !(c.embedding_scale >= 1.0f && c.embedding_scale <= 65504.0f))
        return "embeddingScale (" + float_text(c.embedding_scale) + ") must be 0 (none) or between 1 and 65504";
    if (c.rotary_width > 0 && c.position != PositionKind::rotary)
        return "rotaryWidth (" + number(c.rotary_width) + ") needs rotary positions: position must be rotary";
    if (c.shared_norm && !c.parallel_residual)
        return "sharedNorm gives the MLP attention's normalized input: parallelResidual must be true";
    if (c.parallel_residual && c.post_norm)
        return "parallelResidual adds both halves to the layer's input: postNorm must be false";
    if (c.position == PositionKind::relative) {
        // The buckets split in halves (both directions), then in exact and
        // logarithmic ones, whose log divides by log(max distance / exact ones).
        if (c.relative_buckets < 4 || c.relative_buckets > kMaxWidth)
            return "relativeBuckets (" + number(c.relative_buckets) + ") must be from 4 to " + number(kMaxWidth);
        if (c.relative_max_distance <= c.relative_buckets / 2 || c.relative_max_distance > kMaxPositions)
            return "relativeMaxDistance (" + number(c.relative_max_distance) + ") must be more than relativeBuckets / 2 (" +
                   number(c.relative_buckets / 2) + ") and at most " + number(kMaxPositions);
    } else if (c.relative_buckets > 0) {
        return "relativeBuckets (" + number(c.relative_buckets) + ") needs relative positions: position must be relative";
    }
    if (!(std::isfinite(c.logits_scale) && c.logits_scale >= 0.0f))
        return "logitsScale (" + float_text(c.logits_scale) + ") must be a finite number of at least 0 (0: none)";
    if (c.logits_scale > 0.0f && !c.final_norm) return "logitsScale scales the final norm's output: finalNorm must be true";
    if (c.position == PositionKind::sinusoidal && c.model_width % 2 != 0)
        return "modelWidth (" + number(c.model_width) + ") must be even for sinusoidal positions (half sines, half cosines)";
    if (c.window > 0 && !c.causal) return "window (" + number(c.window) + ") needs causal attention: causal must be true";
    if (c.padding_idx >= 0) {
        if (c.position != PositionKind::learned) return "paddingIdx numbers learned positions: position must be learned";
        if (std::uint64_t(c.padding_idx) + 1 >= c.max_positions)
            return "paddingIdx (" + std::to_string(c.padding_idx) + ") leaves no position for a token: maxPositions (" +
                   number(c.max_positions) + ") must be greater than paddingIdx + 1";
        if (c.position_offset > 0) return "paddingIdx and positionOffset number positions two ways: one must be unset";
    } else if (c.padding_idx != -1) {
        return "paddingIdx (" + std::to_string(c.padding_idx) + ") must be -1 (positions from 0) or at least 0";
    }
    return layout_error(c);
}

// The weights, plus the activations of a one-token forward pass, must fit
// in a wasm32 memory. (Longer inputs are checked when they run.)
std::string check_memory(const ModelConfig& c) {
    const std::uint64_t parameters = parameter_count(c);
    // keep_16_bit: counted at 2 bytes a weight, as a 16-bit checkpoint stores
    // its matrices (a float32 checkpoint that does not fit fails as it loads).
    const std::uint64_t weight_bytes = parameters * (c.keep_16_bit ? 2 : 4);
    if (weight_bytes > kMaxMemoryBytes)
        return "the model has " + std::to_string(parameters) + " parameters (" + gibibytes(weight_bytes) +
               (c.keep_16_bit ? " at 16 bits" : " as float32") + "), more than the " + gibibytes(kMaxMemoryBytes) +
               " of WebAssembly memory";
    const std::uint64_t one_token = 4 * (std::uint64_t(4) * c.model_width + qkv_width(c) + query_width(c) +
                                         2 * std::uint64_t(c.mlp_width) + c.vocab_size);
    if (weight_bytes + one_token > kMaxMemoryBytes)
        return "the model's weights (" + gibibytes(weight_bytes) + ") and one token's activations (" +
               std::to_string(one_token) + " bytes) do not fit in " + gibibytes(kMaxMemoryBytes) +
               " of WebAssembly memory";
    return {};
}

}  // namespace

std::string validate(const ModelConfig& config) {
    // Order matters: later checks multiply sizes the earlier ones bounded.
    for (auto check : {check_sizes, check_heads, check_constants, check_memory})
        if (auto error = check(config); !error.empty()) return error;
    return {};
}

std::string validate_storage(const ModelConfig& config) { return check_memory(config); }

std::size_t usable_positions(const ModelConfig& c) {
    const std::size_t skipped = (c.padding_idx >= 0 ? std::size_t(c.padding_idx) + 1 : 0) + c.position_offset;
    return c.max_positions > skipped ? c.max_positions - skipped : 0;
}

const char* architecture_name(Architecture architecture) {
    switch (architecture) {
        case Architecture::gpt2: return "gpt2";
        case Architecture::bert: return "bert";
        case Architecture::llama: return "llama";
        case Architecture::gpt_neox: return "gpt_neox";
        case Architecture::gpt_neo: return "gpt_neo";
        case Architecture::opt: return "opt";
        case Architecture::phi: return "phi";
        case Architecture::bart: return "bart";
        case Architecture::t5: return "t5";
    }
    return "?";
}

const char* activation_name(Activation activation) {
    switch (activation) {
        case Activation::gelu_tanh: return "gelu_tanh";
        case Activation::gelu_erf: return "gelu_erf";
        case Activation::silu: return "silu";
        case Activation::relu: return "relu";
    }
    return "?";
}

namespace {

// out = the candidate whose name() is `name`; false when none is.
template <class Enum, class Namer>
bool parse_name(const std::string& name, std::initializer_list<Enum> candidates, Namer namer, Enum& out) {
    for (Enum candidate : candidates)
        if (name == namer(candidate)) {
            out = candidate;
            return true;
        }
    return false;
}

}  // namespace

const char* norm_name(NormKind norm) {
    switch (norm) {
        case NormKind::layer: return "layer";
        case NormKind::rms: return "rms";
        case NormKind::rms_plus_one: return "rms_plus_one";
    }
    return "?";
}

const char* position_name(PositionKind position) {
    switch (position) {
        case PositionKind::learned: return "learned";
        case PositionKind::rotary: return "rotary";
        case PositionKind::sinusoidal: return "sinusoidal";
        case PositionKind::relative: return "relative";
    }
    return "?";
}

bool parse_architecture(const std::string& name, Architecture& out) {
    return parse_name(name,
                      {Architecture::gpt2, Architecture::bert, Architecture::llama, Architecture::gpt_neox,
                       Architecture::gpt_neo, Architecture::opt, Architecture::phi, Architecture::bart,
                       Architecture::t5},
                      architecture_name, out);
}

bool parse_activation(const std::string& name, Activation& out) {
    return parse_name(name, {Activation::gelu_tanh, Activation::gelu_erf, Activation::silu, Activation::relu},
                      activation_name, out);
}

bool parse_norm(const std::string& name, NormKind& out) {
    return parse_name(name, {NormKind::layer, NormKind::rms, NormKind::rms_plus_one}, norm_name, out);
}

bool parse_position(const std::string& name, PositionKind& out) {
    return parse_name(name, {PositionKind::learned, PositionKind::rotary, PositionKind::sinusoidal, PositionKind::relative},
                      position_name, out);
}

}  // namespace attnlens::model
