// What both binding files send back: fresh typed arrays, { error } objects,
// and the one record of a multi-head layer (attention/multi_head.hpp) as
// the JavaScript object the public API returns as an Explanation, keys
// included: the JS layer passes it on without renaming.
#pragma once

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attention/float_buffer.hpp"
#include "attention/multi_head.hpp"

namespace attnlens::bindings {

using emscripten::val;

// A fresh Float32Array holding a copy (safe after the heap grows or the buffer is freed).
inline val float_array(const FloatBuffer& values) {
    return val::global("Float32Array").new_(emscripten::typed_memory_view(values.size(), values.data()));
}

inline val error_object(const std::string& error) {
    val result = val::object();
    result.set("error", error);
    return result;
}

// A float32 option as the decimal JavaScript gave it: the shortest decimal
// that rounds to the same float (0.7f -> 0.7, not 0.699999988).
inline double given_decimal(float value) {
    char text[32];
    for (int digits = 1; digits < 10; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, double(value));
        const double decimal = std::strtod(text, nullptr);
        if (float(decimal) == value) return decimal;
    }
    return value;
}

inline val string_list(const std::vector<std::string>& strings) {
    if (strings.empty()) return val::null();
    val list = val::array();
    for (const std::string& text : strings) list.call<void>("push", text);
    return list;
}

// The record as an Explanation (web/lib/index.d.ts), without what only
// JavaScript knows (a model's tokens and ids, the head shown, elapsedMs).
inline val record_object(const MultiHeadTrace& t) {
    val record = val::object();
    record.set("tokens", string_list(t.tokens));
    record.set("contextTokens", string_list(t.context_tokens));
    record.set("n", t.n);
    record.set("nContext", t.n_context);
    record.set("dModel", t.shape.model_width);
    record.set("heads", t.shape.heads);
    record.set("kvHeads", t.shape.kv_heads);
    record.set("headWidth", t.shape.head_width);
    record.set("scale", t.scale);
    record.set("temperature", given_decimal(t.temperature));
    record.set("causal", t.causal);
    record.set("keyMask", t.key_mask.empty() ? val::null()
                                             : val::global("Uint8Array").new_(emscripten::typed_memory_view(
                                                   t.key_mask.size(), t.key_mask.data())));
    record.set("crossAttention", t.cross_attention);
    record.set("window", t.window);
    record.set("qkvBias", t.qkv_bias);
    record.set("outputBias", t.output_bias);
    record.set("architecture", t.architecture.empty() ? val::null() : val(t.architecture));
    const std::pair<const char*, const FloatBuffer*> steps[] = {
        {"x", &t.x},           {"contextX", &t.context_x},
        {"wq", &t.wq},         {"wk", &t.wk},
        {"wv", &t.wv},         {"wo", &t.wo},
        {"q", &t.q},           {"k", &t.k},
        {"v", &t.v},           {"scores", &t.scores},
        {"scaledScores", &t.scaled_scores}, {"weights", &t.weights},
        {"concatenatedHeads", &t.concatenated_heads}, {"output", &t.output},
    };
    for (const auto& step : steps) record.set(step.first, float_array(*step.second));
    if (!t.architecture.empty()) {
        record.set("layerOutput", float_array(t.layer_output));
        record.set("layer", t.layer);
        record.set("norm", t.norm);
        record.set("position", t.position);
        record.set("rotaryWidth", t.rotary_width);
        record.set("parallelResidual", t.parallel_residual);
        record.set("postNorm", t.post_norm);
        record.set("positionBias", t.position_bias);
        record.set("kind", t.kind ? val(t.kind) : val::null());
    }
    return record;
}

}  // namespace attnlens::bindings
