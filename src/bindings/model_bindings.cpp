// Embind bindings of the real-model core (src/model/): a thin skin.
//
// Structs cross as value_objects; arrays as heap addresses the JavaScript
// layer (web/lib/model/) allocated and filled, or as fresh typed arrays on
// the way out; short lists (a safetensors file's tensor table, tensor names)
// as JavaScript arrays read through val, each element's type checked. The module has no C++ exceptions, so nothing here may throw
// or abort on bad input: every problem comes back as an error string (or an
// { error } object), and the module keeps working.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "analysis/kept_value_weighted.hpp"
#include "model/config.hpp"
#include "model/footprint.hpp"
#include "model/model.hpp"
#include "model/safetensors.hpp"
#include "model/tensors.hpp"
#include "model/weight.hpp"
#include "record.hpp"

namespace {

using emscripten::val;
using attnlens::bindings::error_object;
namespace model = attnlens::model;

// ---- Structs as JavaScript sees them -----------------------------------------

// Sizes are doubles, so that a negative, fractional or huge number from
// JavaScript is refused with its value named instead of wrapping around a
// 32-bit size_t.
struct ModelConfigJs {
    std::string architecture = "gpt2";  // the tensor layout: 'gpt2' | 'bert' | 'llama' | 'gpt_neox' | 'gpt_neo' | 'opt' | 'phi' | 'bart' | 't5'
    double decoderLayers = 0;           // > 0: an encoder-decoder
    double relativeBuckets = 0, relativeMaxDistance = 0, logitsScale = 0;  // T5's
    double layers = 0, heads = 0, kvHeads = 0, modelWidth = 0, headWidth = 0, mlpWidth = 0;
    double vocabSize = 0, maxPositions = 0, typeVocabSize = 0, embeddingWidth = 0;
    double normEpsilon = 1e-5, ropeTheta = 10000.0;
    std::string activation = "gelu_tanh";  // 'gelu_tanh' | 'gelu_erf' | 'silu' | 'relu'
    std::string mlmActivation = "gelu_erf";  // the masked-LM head's (the same names)
    // The math (ModelConfig's knobs), as the family description sets them.
    std::string norm = "layer";         // 'layer' | 'rms' | 'rms_plus_one'
    std::string position = "learned";   // 'learned' | 'rotary'
    bool postNorm = false, causal = true, gatedMlp = false, embeddingNorm = false, finalNorm = true;
    double paddingIdx = -1, positionOffset = 0, window = 0, rotaryWidth = 0, attentionScale = 0, embeddingScale = 0;
    std::string windowLayers;  // '0'/'1' per layer, or '' for every layer
    bool parallelResidual = false, sharedNorm = false, lmHeadBias = false, projectionBeforePositions = false;
    bool hasLmHead = true, attentionBias = true, attentionOutputBias = true, mlpBias = true;
    bool keep16Bit = false;  // ModelConfig::keep_16_bit (storage, chosen by loadModel)
};

// Rows [firstRow, firstRow + rows) of a tensor in the file's orientation
// (shape[0] rows; see model::RowRange), in order: JavaScript stages a big
// tensor a few megabytes at a time. A whole tensor: firstRow 0, rows shape[0].
struct TensorLoadJs {
    std::string name;   // canonical (model_tensors)
    std::string dtype;  // 'F32' | 'F16' | 'BF16'
    std::uintptr_t data = 0;
    std::size_t count = 0;  // elements in data: rows x the values of one row
    std::size_t firstRow = 0, rows = 0;
};

struct RunRequestJs {
    std::uintptr_t ids = 0;  // int32
    std::size_t count = 0;
    std::uintptr_t attention = 0, hidden = 0, logits = 0;  // float32, or 0 = not wanted
    std::uintptr_t keyMask = 0;                           // uint8, or 0
    std::size_t logitsFrom = 0;  // the first position whose logits are wanted (logits holds count - logitsFrom rows)
    std::uintptr_t observer = 0;  // a model::LayerObserver (model.analyze's, analysis_bindings.cpp), or 0
    std::uintptr_t chosen = 0;    // uint8 flags of the layers, then the heads, whose weights attention holds; 0: all
    bool cached = false;          // through the model's ForwardCache (model.run's), or not (model.analyze's)
    std::size_t pool = 1;         // attention pooled by this factor (forward.hpp RunRequest::pool); 1: in full
};

// A .safetensors file's tensor table as JavaScript read it from the JSON
// header: sizes as numbers (doubles: the data part may pass 4 GiB).
struct SafetensorsTableJs {
    double headerBytes = 0, dataBytes = 0;
    val tensors = val::undefined();  // [{ name, dtype, shape: number[], begin, end }]
};

// ---- Conversions ---------------------------------------------------------------

// A number as a message shows it: "5000000000", "-1", "1.5", "nan".
std::string number_text(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

// A JavaScript number as a size: "" or the problem, naming the field and value.
std::string to_size(const char* field, double value, std::size_t& out) {
    if (!std::isfinite(value) || value < 0 || value != std::floor(value))
        return std::string(field) + " must be a whole number of at least 0, got " + number_text(value);
    // Anything above 2^31 is refused by validate() anyway; keep it above the
    // bounds there so its message (which names the number) is the one seen.
    if (value > 2147483647.0) return std::string(field) + " " + number_text(value) + " is too large";
    out = static_cast<std::size_t>(value);
    return {};
}

std::string to_model_config(const ModelConfigJs& js, model::ModelConfig& out) {
    if (!model::parse_architecture(js.architecture, out.architecture))
        return "unknown architecture \"" + js.architecture + "\" (supported: gpt2, bert, llama, gpt_neox, gpt_neo, opt, phi, bart, t5)";
    if (!model::parse_activation(js.activation, out.activation))
        return "unknown activation \"" + js.activation + "\" (supported: gelu_tanh, gelu_erf, silu, relu)";
    if (!model::parse_activation(js.mlmActivation, out.mlm_activation))
        return "unknown mlmActivation \"" + js.mlmActivation + "\" (supported: gelu_tanh, gelu_erf, silu, relu)";
    if (!model::parse_norm(js.norm, out.norm)) return "unknown norm \"" + js.norm + "\" (supported: layer, rms, rms_plus_one)";
    if (!model::parse_position(js.position, out.position))
        return "unknown position \"" + js.position + "\" (supported: learned, rotary, sinusoidal, relative)";
    if (!std::isfinite(js.paddingIdx) || js.paddingIdx != std::floor(js.paddingIdx) || js.paddingIdx < -1 ||
        js.paddingIdx > 2147483647.0)
        return "paddingIdx must be -1 or a whole number of at least 0, got " + number_text(js.paddingIdx);
    const struct {
        const char* field;
        double value;
        std::size_t* target;
    } sizes[] = {
        {"layers", js.layers, &out.layers},          {"heads", js.heads, &out.heads},
        {"decoderLayers", js.decoderLayers, &out.decoder_layers},
        {"relativeBuckets", js.relativeBuckets, &out.relative_buckets},
        {"relativeMaxDistance", js.relativeMaxDistance, &out.relative_max_distance},
        {"kvHeads", js.kvHeads, &out.kv_heads},      {"modelWidth", js.modelWidth, &out.model_width},
        {"headWidth", js.headWidth, &out.head_width}, {"mlpWidth", js.mlpWidth, &out.mlp_width},
        {"vocabSize", js.vocabSize, &out.vocab_size}, {"maxPositions", js.maxPositions, &out.max_positions},
        {"typeVocabSize", js.typeVocabSize, &out.type_vocab_size}, {"window", js.window, &out.window},
        {"rotaryWidth", js.rotaryWidth, &out.rotary_width},
        {"embeddingWidth", js.embeddingWidth, &out.embedding_width},
        {"positionOffset", js.positionOffset, &out.position_offset},
    };
    for (const auto& size : sizes)
        if (auto error = to_size(size.field, size.value, *size.target); !error.empty()) return error;
    out.norm_epsilon = static_cast<float>(js.normEpsilon);
    out.rope_theta = static_cast<float>(js.ropeTheta);
    out.post_norm = js.postNorm, out.causal = js.causal, out.gated_mlp = js.gatedMlp;
    out.embedding_norm = js.embeddingNorm, out.final_norm = js.finalNorm;
    out.padding_idx = static_cast<std::int64_t>(js.paddingIdx);
    out.parallel_residual = js.parallelResidual;
    out.shared_norm = js.sharedNorm;
    out.lm_head_bias = js.lmHeadBias;
    // windowLayers: '' (every layer) or one '0' / '1' per layer (bit l of ModelConfig::window_layers).
    out.window_every_layer = js.windowLayers.empty();
    if (!out.window_every_layer) {
        if (js.windowLayers.size() != out.layers || js.windowLayers.find_first_not_of("01") != std::string::npos)
            return "windowLayers must give one '0' or '1' per layer (" + std::to_string(out.layers) + "), got \"" +
                   js.windowLayers.substr(0, 64) + "\"";
        for (std::size_t l = 0; l < js.windowLayers.size() && l < model::kMaxWindowLayers; ++l)
            if (js.windowLayers[l] == '1') out.window_layers |= std::uint64_t(1) << l;
    }
    out.attention_scale = static_cast<float>(js.attentionScale);
    out.embedding_scale = static_cast<float>(js.embeddingScale);
    out.logits_scale = static_cast<float>(js.logitsScale);
    out.has_lm_head = js.hasLmHead;
    out.projection_before_positions = js.projectionBeforePositions;
    out.attention_bias = js.attentionBias;
    out.attention_output_bias = js.attentionOutputBias;
    out.mlp_bias = js.mlpBias;
    out.keep_16_bit = js.keep16Bit;
    return {};
}

template <class T>
T* heap(std::uintptr_t address) {
    return reinterpret_cast<T*>(address);
}

// "" when a nonzero address is aligned for T.
template <class T>
std::string check_aligned(const char* field, std::uintptr_t address) {
    if (address % alignof(T) != 0)
        return std::string(field) + " must be a " + std::to_string(alignof(T)) + "-byte aligned heap address";
    return {};
}

// typeof value == type, and not null.
bool is_a(const val& value, const char* type) { return !value.isNull() && value.typeOf().as<std::string>() == type; }

// A shape as a JavaScript array of numbers.
template <class Sizes>
val number_array(const Sizes& sizes) {
    val array = val::array();
    for (auto size : sizes) array.call<void>("push", static_cast<double>(size));
    return array;
}

// ---- The model handle ----------------------------------------------------------

class ModelHandle {
public:
    explicit ModelHandle(const ModelConfigJs& js) : model_(config_from(js)) {}

    // { error } naming what makes the config unusable (validate()'s sentence,
    // which JavaScript puts in config.json's terms), or { tensors: [{ name,
    // shape, optional }], causal }: the tensors the config needs, and whether
    // its attention is causal (forward.hpp attends_causally), and each layer's
    // window (config.hpp layer_window; 0: none, and none without causal
    // attention, which the window narrows). The core's one
    // check of a config: JavaScript asks it before reading any weight.
    val plan() const {
        const std::string& problem = conversion_problem_.empty() ? model_.config_problem() : conversion_problem_;
        if (!problem.empty()) return error_object(problem);
        val list = val::array();
        for (const model::TensorSpec& spec : model::model_tensors(model_.config())) {
            val entry = val::object();
            entry.set("name", spec.name);
            entry.set("shape", number_array(spec.shape));
            entry.set("optional", spec.optional);
            list.call<void>("push", entry);
        }
        val result = val::object();
        result.set("tensors", list);
        const bool causal = model::attends_causally(model_.config());
        result.set("causal", causal);
        val windows = val::array();
        for (std::size_t layer = 0; layer < model_.config().layers; ++layer)
            windows.call<void>("push", causal ? double(model::layer_window(model_.config(), layer)) : 0.0);
        result.set("windows", windows);
        return result;
    }

    // Bytes the weights take once loaded, as float32 or with 16-bit matrices
    // kept at 16 bits (weight.hpp stored_bytes): `tensors` is [{ name (canonical),
    // dtype }]. Infinity when one is not a tensor of this model or not a
    // weight dtype (JavaScript has matched them already).
    double storedBytes(val tensors, bool keep16Bit) const {
        if (!conversion_problem_.empty() || !model_.config_problem().empty()) return INFINITY;
        std::map<std::string, model::TensorSpec> specs;
        for (model::TensorSpec& spec : model::model_tensors(model_.config())) specs.emplace(spec.name, std::move(spec));
        if (!val::global("Array").call<bool>("isArray", tensors)) return INFINITY;
        const auto count = tensors["length"].as<std::size_t>();
        double total = 0;
        for (std::size_t i = 0; i < count; ++i) {
            const val tensor = tensors[i];
            if (!is_a(tensor, "object") || !is_a(tensor["name"], "string") || !is_a(tensor["dtype"], "string"))
                return INFINITY;
            const auto spec = specs.find(tensor["name"].as<std::string>());
            model::WeightType type;
            if (spec == specs.end() || !model::parse_weight_type(tensor["dtype"].as<std::string>(), type)) return INFINITY;
            total += static_cast<double>(model::stored_bytes(spec->second, type, keep16Bit));
        }
        return total;
    }

    // keep16Bit chosen once the files' dtypes are known, before loading.
    std::string setWeightStorage(bool keep16Bit) {
        return config_error_.empty() ? model_.set_weight_storage(keep16Bit) : config_error_;
    }

    // Bytes the core allocates for a run / an explain of `tokens` tokens,
    // beyond the weights and the outputs (footprint.hpp). JavaScript asks
    // before it allocates anything; Infinity for a count that is not one.
    double runBytes(double tokens) const { return working_bytes(tokens, model::run_working_bytes); }
    double explainBytes(double tokens) const { return working_bytes(tokens, model::explain_working_bytes); }

    std::string loadTensor(const TensorLoadJs& load) {
        if (!config_error_.empty()) return config_error_;
        return model_.load_tensor(load.name, load.dtype, heap<const void>(load.data),
                                  model::RowRange{load.firstRow, load.rows}, load.count);
    }

    std::string finish() { return config_error_.empty() ? model_.finish() : config_error_; }

    double weightBytes() const { return static_cast<double>(model_.weight_bytes()); }

    std::string run(const RunRequestJs& js) {
        if (!config_error_.empty()) return config_error_;
        for (auto error : {check_aligned<std::int32_t>("ids", js.ids), check_aligned<float>("attention", js.attention),
                           check_aligned<float>("hidden", js.hidden), check_aligned<float>("logits", js.logits)})
            if (!error.empty()) return error;
        model::RunRequest request;
        request.ids = heap<const std::int32_t>(js.ids);
        request.count = js.count;
        request.key_mask = heap<const std::uint8_t>(js.keyMask);
        request.attention = heap<float>(js.attention);
        request.hidden = heap<float>(js.hidden);
        request.logits = heap<float>(js.logits);
        request.logits_from = js.logitsFrom;
        request.observer = heap<model::LayerObserver>(js.observer);
        if (js.cached) request.cache = &model_.forward_cache();  // the incremental forward and headWeights (forward.hpp)
        request.pool = js.pool;
        if (js.chosen) {
            request.layers_chosen = heap<const std::uint8_t>(js.chosen);
            request.heads_chosen = request.layers_chosen + model_.config().layers;
        }
        return model_.run(request);
    }

    // An encoder-decoder's session (Model::encode / decode), its arrays as
    // heap addresses (0: not wanted). Plain arguments, not value_objects:
    // each Embind field costs the download more than the call's few lines.
    // chosen: 0 (every layer and head in full), or uint8 flags of the
    // stack's layers then the heads whose weights, pooled by `pool`, the
    // attention arrays hold (seq2seq.hpp WeightsChoice).
    // observer: a model::LayerObserver told each encoder layer (model.analyze's), or 0.
    // keep: the session keeps what headWeights reads (model.run's).
    std::string encode(std::uintptr_t ids, std::size_t count, std::size_t maxTarget, std::uintptr_t attention,
                       std::uintptr_t chosen, std::size_t pool, std::uintptr_t observer, bool keep) {
        if (!config_error_.empty()) return config_error_;
        for (auto error : {check_aligned<std::int32_t>("ids", ids), check_aligned<float>("attention", attention)})
            if (!error.empty()) return error;
        return model_.encode(heap<const std::int32_t>(ids), count, maxTarget,
                             choice_of(attention, chosen, model_.config().layers, pool),
                             heap<model::LayerObserver>(observer), keep);
    }

    // Outputs: decoder self-attention, cross-attention (both as `chosen`
    // and `pool` say, over the decoder's layers), logits of rows
    // logitsFrom.. of the step; observers of the self- and cross-attention (or 0).
    std::string decode(std::uintptr_t ids, std::size_t count, std::uintptr_t selfAttention,
                       std::uintptr_t crossAttention, std::uintptr_t chosen, std::size_t pool, std::uintptr_t logits,
                       std::size_t logitsFrom, std::uintptr_t selfObserver, std::uintptr_t crossObserver) {
        if (!config_error_.empty()) return config_error_;
        for (auto error : {check_aligned<std::int32_t>("ids", ids), check_aligned<float>("selfAttention", selfAttention),
                           check_aligned<float>("crossAttention", crossAttention), check_aligned<float>("logits", logits)})
            if (!error.empty()) return error;
        model::DecodeOutputs outputs;
        const std::size_t layers = model_.config().decoder_layers;
        outputs.self_attention = choice_of(selfAttention, chosen, layers, pool);
        outputs.cross_attention = choice_of(crossAttention, chosen, layers, pool);
        outputs.logits = heap<float>(logits), outputs.logits_from = logitsFrom;
        outputs.self_observer = heap<model::LayerObserver>(selfObserver);
        outputs.cross_observer = heap<model::LayerObserver>(crossObserver);
        return model_.decode(heap<const std::int32_t>(ids), count, outputs);
    }

    void endSession() { model_.end_session(); }

    // The kept keys and values of the last run (forward.hpp ForwardCache):
    // its bytes, the positions that run took from it, and freeing it.
    // (An encoder-decoder's: its session's, Model::kept_bytes.)
    double cacheBytes() { return static_cast<double>(model_.kept_bytes()); }
    double reusedPositions() { return static_cast<double>(model_.forward_cache().reused); }
    double cacheGeneration() { return static_cast<double>(model_.kept_generation()); }
    void dropCache() { model_.drop_kept(); }
    // One head's n x n weights of the last run, or B x B pooled by `pool`
    // (B = ceil(n / pool)), into `out` (model.run's headWeights). kind -1:
    // a model with one stack; else an encoder-decoder's kind (0 encoder,
    // 1 decoder, 2 cross), from its kept session.
    std::string headWeights(int kind, std::size_t layer, std::size_t head, std::size_t pool, std::uintptr_t out) {
        if (auto error = check_aligned<float>("out", out); !error.empty()) return error;
        if (kind > 2) return "kind must be -1, 0, 1 or 2";
        if (kind >= 0)
            return model_.session_head_weights(static_cast<model::AttentionKind>(kind), layer, head, pool,
                                               heap<float>(out));
        return model::kept_head_weights(model_.config(), model_.forward_cache(), layer, head, heap<float>(out), pool);
    }
    // Layer `layer`'s value-weighted attention of the last run, its heads
    // whose uint8 flag at `heads` is set (0: every head), each n x n or B x B
    // pooled (kept_value_weighted.hpp): model.run's attention { valueWeighted }.
    std::string valueWeighted(std::size_t layer, std::uintptr_t heads, std::size_t pool, std::uintptr_t out) {
        if (!config_error_.empty()) return config_error_;
        if (auto error = check_aligned<float>("out", out); !error.empty()) return error;
        return attnlens::analysis::kept_value_weighted(model_.config(), model_.weights(), model_.forward_cache(), layer,
                                                       heap<const std::uint8_t>(heads), pool, heap<float>(out));
    }

    // The last run's logits of the `count` int32 positions at `positions`, in
    // that order, into `out` (count x V: model.run's computeLogits).
    std::string keptLogits(std::uintptr_t positions, std::size_t count, std::uintptr_t out) {
        for (auto error : {check_aligned<std::int32_t>("positions", positions), check_aligned<float>("out", out)})
            if (!error.empty()) return error;
        return model_.kept_logits(heap<const std::int32_t>(positions), count, heap<float>(out));
    }

    // seq2seq_working_bytes (footprint.hpp); Infinity for counts that are not ones.
    // traced: explainSeq2seq's.
    double seq2seqBytes(double source, double target, bool traced, bool kept) const {
        std::size_t n = 0, m = 0;
        if (!to_size("source", source, n).empty() || !to_size("target", target, m).empty()) return INFINITY;
        return static_cast<double>(model::seq2seq_working_bytes(model_.config(), n, m, traced, kept));
    }

    // One layer's record (the Explanation), or { error }. kind -1: a model
    // with one stack (keyMask: uint8 or 0); else an encoder-decoder's kind
    // (0 encoder, 1 decoder, 2 cross: JavaScript names them) over the source
    // `ids` and the `target`. Plain arguments: each Embind field costs the
    // download more than the call's few lines.
    val explain(std::uintptr_t ids, std::size_t count, std::size_t layer, std::uintptr_t keyMask,
                std::uintptr_t target, std::size_t targetCount, int kind) const {
        if (!config_error_.empty()) return error_object(config_error_);
        for (auto error : {check_aligned<std::int32_t>("ids", ids), check_aligned<std::int32_t>("target", target)})
            if (!error.empty()) return error_object(error);
        if (kind > 2) return error_object("kind must be -1, 0, 1 or 2");
        attnlens::MultiHeadTrace record;
        std::string error;
        if (kind < 0) {
            model::ExplainRequest request;
            request.ids = heap<const std::int32_t>(ids);
            request.count = count;
            request.layer = layer;
            request.key_mask = heap<const std::uint8_t>(keyMask);
            error = model_.explain(request, record);
        } else {
            const model::SublayerTrace trace{static_cast<model::AttentionKind>(kind), layer, &record};
            error = model_.explain_seq2seq(heap<const std::int32_t>(ids), count, heap<const std::int32_t>(target),
                                           targetCount, trace);
        }
        return error.empty() ? attnlens::bindings::record_object(record) : error_object(error);
    }

private:
    // A kind's weights at `out` as encode / decode take them: `chosen` 0 is
    // every layer and head in full, else the flags of `layers` layers then the heads.
    model::WeightsChoice choice_of(std::uintptr_t out, std::uintptr_t chosen, std::size_t layers, std::size_t pool) const {
        if (!chosen && pool == 1) return heap<float>(out);
        const std::uint8_t* flags = heap<const std::uint8_t>(chosen);
        return {heap<float>(out), flags, flags ? flags + layers : nullptr, pool};
    }

    // The config the core model is built from (model::Model validates it and
    // refuses every call with its error). Numbers that are not sizes make
    // every call return that error instead (the core never sees them).
    model::ModelConfig config_from(const ModelConfigJs& js) {
        model::ModelConfig config;
        conversion_problem_ = to_model_config(js, config);
        if (!conversion_problem_.empty()) {
            config_error_ = "the model config is invalid: " + conversion_problem_;
            return model::ModelConfig{};
        }
        return config;
    }

    double working_bytes(double tokens, std::uint64_t (*bytes)(const model::ModelConfig&, std::size_t)) const {
        std::size_t count = 0;
        if (!to_size("tokens", tokens, count).empty()) return INFINITY;
        return static_cast<double>(bytes(model_.config(), count));
    }

    // Declared before model_: config_from sets them first.
    std::string conversion_problem_, config_error_;
    model::Model model_;
};

// ---- Functions -----------------------------------------------------------------

// The table as the core's entries; "" or what is not of the expected type
// (JavaScript's reader gives the right types: this guards the boundary).
std::string to_entries(const val& tensors, std::vector<model::SafetensorsEntry>& entries) {
    const val array_type = val::global("Array");
    const auto is_array = [&](const val& value) { return array_type.call<bool>("isArray", value); };
    const auto numbers = [&](const val& array, std::vector<double>& out) {
        if (!is_array(array)) return false;
        const auto length = array["length"].as<std::size_t>();
        for (std::size_t i = 0; i < length; ++i) {
            if (!is_a(array[i], "number")) return false;
            out.push_back(array[i].as<double>());
        }
        return true;
    };
    if (!is_array(tensors)) return "tensors must be an array";
    const auto count = tensors["length"].as<std::size_t>();
    entries.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        const val tensor = tensors[i];
        model::SafetensorsEntry& entry = entries[i];
        const bool typed = is_a(tensor, "object") && is_a(tensor["name"], "string") && is_a(tensor["dtype"], "string") &&
                           is_a(tensor["begin"], "number") && is_a(tensor["end"], "number") &&
                           numbers(tensor["shape"], entry.shape);
        if (!typed)
            return "tensors[" + std::to_string(i) + "] must be { name, dtype, shape (numbers), begin, end }";
        entry.name = tensor["name"].as<std::string>();
        entry.dtype = tensor["dtype"].as<std::string>();
        entry.begin = tensor["begin"].as<double>();
        entry.end = tensor["end"].as<double>();
    }
    return {};
}

// "" or the first problem of a file's tensor table (check_safetensors_entries).
std::string check_safetensors_table(const SafetensorsTableJs& js) {
    const auto whole = [](double value) { return std::isfinite(value) && value >= 0 && value == std::floor(value); };
    if (!whole(js.headerBytes)) return "headerBytes must be a whole number of bytes, got " + number_text(js.headerBytes);
    if (!whole(js.dataBytes) || js.dataBytes > 9007199254740992.0)
        return "dataBytes must be a whole number of bytes from 0 to 2^53, got " + number_text(js.dataBytes);
    if (auto error = model::safetensors_header_size_error(static_cast<std::uint64_t>(js.headerBytes)); !error.empty())
        return error;
    std::vector<model::SafetensorsEntry> entries;
    if (auto error = to_entries(js.tensors, entries); !error.empty()) return error;
    std::vector<model::SafetensorsTensor> tensors;
    return model::check_safetensors_entries(entries, static_cast<std::uint64_t>(js.dataBytes), tensors);
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_model) {
    using emscripten::value_object;
    value_object<ModelConfigJs>("ModelConfig")
        .field("architecture", &ModelConfigJs::architecture)
        .field("layers", &ModelConfigJs::layers)
        .field("decoderLayers", &ModelConfigJs::decoderLayers)
        .field("relativeBuckets", &ModelConfigJs::relativeBuckets)
        .field("relativeMaxDistance", &ModelConfigJs::relativeMaxDistance)
        .field("logitsScale", &ModelConfigJs::logitsScale)
        .field("heads", &ModelConfigJs::heads)
        .field("kvHeads", &ModelConfigJs::kvHeads)
        .field("modelWidth", &ModelConfigJs::modelWidth)
        .field("headWidth", &ModelConfigJs::headWidth)
        .field("mlpWidth", &ModelConfigJs::mlpWidth)
        .field("vocabSize", &ModelConfigJs::vocabSize)
        .field("maxPositions", &ModelConfigJs::maxPositions)
        .field("typeVocabSize", &ModelConfigJs::typeVocabSize)
        .field("embeddingWidth", &ModelConfigJs::embeddingWidth)
        .field("normEpsilon", &ModelConfigJs::normEpsilon)
        .field("ropeTheta", &ModelConfigJs::ropeTheta)
        .field("activation", &ModelConfigJs::activation)
        .field("mlmActivation", &ModelConfigJs::mlmActivation)
        .field("norm", &ModelConfigJs::norm)
        .field("position", &ModelConfigJs::position)
        .field("postNorm", &ModelConfigJs::postNorm)
        .field("causal", &ModelConfigJs::causal)
        .field("gatedMlp", &ModelConfigJs::gatedMlp)
        .field("embeddingNorm", &ModelConfigJs::embeddingNorm)
        .field("finalNorm", &ModelConfigJs::finalNorm)
        .field("paddingIdx", &ModelConfigJs::paddingIdx)
        .field("window", &ModelConfigJs::window)
        .field("rotaryWidth", &ModelConfigJs::rotaryWidth)
        .field("positionOffset", &ModelConfigJs::positionOffset)
        .field("windowLayers", &ModelConfigJs::windowLayers)
        .field("attentionScale", &ModelConfigJs::attentionScale)
        .field("embeddingScale", &ModelConfigJs::embeddingScale)
        .field("parallelResidual", &ModelConfigJs::parallelResidual)
        .field("sharedNorm", &ModelConfigJs::sharedNorm)
        .field("lmHeadBias", &ModelConfigJs::lmHeadBias)
        .field("projectionBeforePositions", &ModelConfigJs::projectionBeforePositions)
        .field("hasLmHead", &ModelConfigJs::hasLmHead)
        .field("attentionBias", &ModelConfigJs::attentionBias)
        .field("attentionOutputBias", &ModelConfigJs::attentionOutputBias)
        .field("mlpBias", &ModelConfigJs::mlpBias)
        .field("keep16Bit", &ModelConfigJs::keep16Bit);
    value_object<TensorLoadJs>("TensorLoad")
        .field("name", &TensorLoadJs::name)
        .field("dtype", &TensorLoadJs::dtype)
        .field("data", &TensorLoadJs::data)
        .field("count", &TensorLoadJs::count)
        .field("firstRow", &TensorLoadJs::firstRow)
        .field("rows", &TensorLoadJs::rows);
    value_object<RunRequestJs>("RunRequest")
        .field("ids", &RunRequestJs::ids)
        .field("count", &RunRequestJs::count)
        .field("attention", &RunRequestJs::attention)
        .field("hidden", &RunRequestJs::hidden)
        .field("logits", &RunRequestJs::logits)
        .field("keyMask", &RunRequestJs::keyMask)
        .field("logitsFrom", &RunRequestJs::logitsFrom)
        .field("chosen", &RunRequestJs::chosen)
        .field("cached", &RunRequestJs::cached)
        .field("pool", &RunRequestJs::pool)
        .field("observer", &RunRequestJs::observer);
    value_object<SafetensorsTableJs>("SafetensorsTable")
        .field("headerBytes", &SafetensorsTableJs::headerBytes)
        .field("dataBytes", &SafetensorsTableJs::dataBytes)
        .field("tensors", &SafetensorsTableJs::tensors);

    emscripten::class_<ModelHandle>("ModelHandle")
        .constructor<const ModelConfigJs&>()
        .function("loadTensor", &ModelHandle::loadTensor)
        .function("finish", &ModelHandle::finish)
        .function("weightBytes", &ModelHandle::weightBytes)
        .function("plan", &ModelHandle::plan)
        .function("setWeightStorage", &ModelHandle::setWeightStorage)
        .function("storedBytes", &ModelHandle::storedBytes)
        .function("runBytes", &ModelHandle::runBytes)
        .function("explainBytes", &ModelHandle::explainBytes)
        .function("run", &ModelHandle::run)
        .function("explain", &ModelHandle::explain)
        .function("encode", &ModelHandle::encode)
        .function("decode", &ModelHandle::decode)
        .function("endSession", &ModelHandle::endSession)
        .function("cacheBytes", &ModelHandle::cacheBytes)
        .function("reusedPositions", &ModelHandle::reusedPositions)
        .function("cacheGeneration", &ModelHandle::cacheGeneration)
        .function("dropCache", &ModelHandle::dropCache)
        .function("headWeights", &ModelHandle::headWeights)
        .function("valueWeighted", &ModelHandle::valueWeighted)
        .function("keptLogits", &ModelHandle::keptLogits)
        .function("seq2seqBytes", &ModelHandle::seq2seqBytes);

    emscripten::function("checkSafetensorsTable", &check_safetensors_table);
}
