// The module's own sizes and limits, for JavaScript to ask instead of
// writing them down again (web/lib/validation.js limitsOf): a kernel or
// build setting changed here reaches the checks in JavaScript by itself.
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cstdint>

#include "kernels/kernels.hpp"
#include "model/config.hpp"
#include "model/float16.hpp"
#include "model/safetensors.hpp"
#include "pipeline/sentence_attention.hpp"

namespace {

struct ModuleLimits {
    // The most WebAssembly memory a call may count on: what the module can
    // grow to (-sMAXIMUM_MEMORY), within the core's own bound (kMaxMemoryBytes).
    double maxMemoryBytes = 0;
    // Columns of a packed weight panel (16 in SIMD builds, 8 in the scalar
    // one): chunks of whole panels load without a column-by-column edge.
    double panelWidth = 0;
    // The largest safetensors JSON header the core accepts, and how deep its
    // JSON may nest.
    double maxSafetensorsHeaderBytes = 0, maxSafetensorsNesting = 0;
    // The sentence pipeline's most tokens per sentence, and its widest d_model.
    double maxSentenceTokens = 0, maxSentenceModelWidth = 0;
    // The safetensors dtypes the core loads weights from: ['F32', 'F16', 'BF16'].
    emscripten::val weightDtypes = emscripten::val::array();
};

ModuleLimits module_limits() {
    ModuleLimits limits;
    limits.maxMemoryBytes =
        static_cast<double>(std::min<std::uint64_t>(emscripten_get_heap_max(), attnlens::kMaxMemoryBytes));
    limits.panelWidth = static_cast<double>(attnlens::kernels::kPanelWidth);
    limits.maxSafetensorsHeaderBytes = static_cast<double>(attnlens::model::kMaxSafetensorsHeaderBytes);
    limits.maxSafetensorsNesting = static_cast<double>(attnlens::model::kMaxSafetensorsNesting);
    limits.maxSentenceTokens = static_cast<double>(attnlens::kMaxSentenceTokens);
    limits.maxSentenceModelWidth = static_cast<double>(attnlens::kMaxSentenceModelWidth);
    using attnlens::model::WeightType;
    for (WeightType type : {WeightType::f32, WeightType::f16, WeightType::bf16})
        limits.weightDtypes.call<void>("push", std::string(attnlens::model::weight_type_name(type)));
    return limits;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_limits) {
    emscripten::value_object<ModuleLimits>("ModuleLimits")
        .field("maxMemoryBytes", &ModuleLimits::maxMemoryBytes)
        .field("panelWidth", &ModuleLimits::panelWidth)
        .field("maxSafetensorsHeaderBytes", &ModuleLimits::maxSafetensorsHeaderBytes)
        .field("maxSafetensorsNesting", &ModuleLimits::maxSafetensorsNesting)
        .field("maxSentenceTokens", &ModuleLimits::maxSentenceTokens)
        .field("maxSentenceModelWidth", &ModuleLimits::maxSentenceModelWidth)
        .field("weightDtypes", &ModuleLimits::weightDtypes);
    emscripten::function("limits", &module_limits);
}
