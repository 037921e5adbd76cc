// Embind bindings of the analyses (src/analysis/) over attention a model run
// has already written to the heap: JavaScript runs the forward (ModelHandle.run,
// attention only) into a heap buffer and passes that buffer here, so the
// weights are never copied out and back.
#include <emscripten/bind.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "analysis/detectors.hpp"
#include "analysis/rollout.hpp"
#include "attention/float_buffer.hpp"

namespace {

namespace analysis = attnlens::analysis;

bool misaligned(std::uintptr_t address) { return address % alignof(float) != 0; }

// attention: float32 [layer][head][query][key]; ids: int32 x tokens (the
// detectors need them). period 0: scores gets the five detectors
// (kDetectorCount x layers x heads); otherwise the sequence repeats after
// `period` tokens and scores gets each head's induction score on its second
// copy (layers x heads). scores and rollout (layers x tokens x tokens) are
// float32 heap addresses, or 0 when not wanted. Plain arguments rather than
// a value_object: each Embind struct costs the module code (the size budget).
std::string analyze_attention(std::uintptr_t attention_address, std::uintptr_t ids, std::size_t layers,
                              std::size_t heads, std::size_t tokens, std::size_t period, std::uintptr_t scores,
                              std::uintptr_t rollout) {
    const analysis::AttentionShape shape{layers, heads, tokens};
    if (shape.layers == 0 || shape.heads == 0 || shape.tokens == 0) return "layers, heads and tokens must be at least 1";
    const std::uint64_t floats = std::uint64_t(shape.layers) * shape.heads * shape.tokens * shape.tokens;
    if (shape.layers > attnlens::kMaxMemoryBytes || shape.heads > attnlens::kMaxMemoryBytes ||
        shape.tokens > attnlens::kMaxMemoryBytes || floats * sizeof(float) > attnlens::kMaxMemoryBytes)
        return "the attention does not fit in memory";
    if (!attention_address || misaligned(attention_address) || misaligned(ids) || misaligned(scores) ||
        misaligned(rollout))
        return "attention, ids, scores and rollout must be 4-byte aligned (attention nonzero)";
    const auto* attention = reinterpret_cast<const float*>(attention_address);
    if (scores && period > 0) {
        analysis::repeat_induction_scores(attention, shape, period, reinterpret_cast<float*>(scores));
    } else if (scores) {
        if (!ids) return "the detectors need the token ids";
        analysis::detector_scores(attention, shape, reinterpret_cast<const std::int32_t*>(ids),
                                  reinterpret_cast<float*>(scores));
    }
    if (!rollout) return {};
    return analysis::attention_rollout(attention, shape, reinterpret_cast<float*>(rollout));
}

// Bytes analyzeAttention allocates for `tokens` tokens (Infinity past 2^31).
double analysis_bytes(double tokens) {
    if (!(tokens >= 0 && tokens <= 2147483647.0)) return INFINITY;
    return static_cast<double>(analysis::rollout_working_bytes(static_cast<std::size_t>(tokens)));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_analysis) {
    emscripten::function("analyzeAttention", &analyze_attention);
    emscripten::function("analysisBytes", &analysis_bytes);
}
