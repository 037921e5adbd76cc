// The analyses (src/analysis/) over attention a model run has already written
// to the heap: JavaScript runs the forward (ModelHandle.run, attention only)
// into a heap buffer and passes that buffer here, so the weights are never
// copied out and back (web/lib/model/analysis.js).
//
// One plain C export (module._attnlens_analyze, listed in the link's
// EXPORTED_FUNCTIONS) rather than Embind: an Embind function and its string
// result cost the module's download more than the analyses themselves, and
// they need neither (numbers in, a status out). It allocates nothing.
//
// The analyses that need more than the attention (the logit lens and
// value-weighted attention) read the layers as the forward passes them: JS
// makes a LayerAnalyses (attnlens_layer_analyses), hands its address to
// ModelHandle.run as `observer`, then reads its status and frees it
// (attnlens_layer_analyses_end). Plain C exports again, for the same reason.
#include <cstddef>
#include <cstdint>
#include <new>

#include "analysis/detectors.hpp"
#include "analysis/layer_analyses.hpp"
#include "analysis/rollout.hpp"
#include "attention/float_buffer.hpp"

namespace {

template <class T>
T* at(std::uintptr_t address) {
    return reinterpret_cast<T*>(address);
}

}  // namespace

// attention: float32 [layer][head][query][key]; ids: int32 x tokens.
// scores: float32, 5 x layers x heads (period 0) or layers x heads (the
// induction score of a sequence that repeats after `period` tokens), see
// head_scores; 0 = not wanted. rollout: float32 layers x tokens x tokens, and
// row: scratch for tokens floats; 0 = not wanted. before: 0 when attention's
// first layer is the model's first, else the rollout after the layer before
// it (a caller going a layer at a time).
// Returns 0, or 1 for a shape past the memory or a missing address: the
// module has no exceptions, so nothing here may trap on bad numbers.
extern "C" int attnlens_analyze(std::uintptr_t attention, std::uintptr_t ids, std::size_t layers, std::size_t heads,
                                std::size_t tokens, std::size_t period, std::uintptr_t scores, std::uintptr_t rollout,
                                std::uintptr_t row, std::uintptr_t before) {
    std::uint64_t bytes = sizeof(float);
    for (std::size_t size : {layers, heads, tokens, tokens})
        if ((bytes *= size) > attnlens::kMaxMemoryBytes) return 1;
    if (!attention || !ids || (rollout && !row)) return 1;
    const attnlens::analysis::AttentionShape shape{layers, heads, tokens};
    if (scores) attnlens::analysis::head_scores(at<const float>(attention), shape, at<const std::int32_t>(ids), period, at<float>(scores));
    if (rollout)
        attnlens::analysis::attention_rollout(at<const float>(attention), shape, at<float>(rollout), at<float>(row),
                                              at<const float>(before));
    return 0;
}

// The observer of a run writing the logit lens (top_k ranks into lens_ids
// and lens_probs, of the position_count positions at `positions`, or of
// every position when positions is 0) and value-weighted attention
// (value_weighted); 0 = not wanted; over a stack of `layers` layers (the
// lens's rows of all of them go through the LM head together). Returns its
// address for RunRequest.observer, or 0 out of memory.
extern "C" attnlens::model::LayerObserver* attnlens_layer_analyses(std::size_t top_k, std::uintptr_t lens_ids,
                                                                   std::uintptr_t lens_probs, std::uintptr_t positions,
                                                                   std::size_t position_count,
                                                                   std::uintptr_t value_weighted, std::size_t layers) {
    using attnlens::analysis::LayerAnalyses;
    attnlens::analysis::LayerOutputs outputs;
    outputs.top_k = top_k, outputs.lens_ids = at<std::int32_t>(lens_ids), outputs.lens_probs = at<float>(lens_probs);
    outputs.lens_positions = at<const std::int32_t>(positions), outputs.lens_position_count = position_count;
    outputs.value_weighted = at<float>(value_weighted), outputs.layers = layers;
    return new (std::nothrow) LayerAnalyses(outputs);
}

// The floats of scratch that observer allocates in a run whose attention
// reads `tokens` keys (cross-attention's: the source tokens) of a model of
// these sizes, its lens reading lens_rows rows (layers x positions; 0: no lens), with
// value-weighted attention when `weighted` is nonzero: what JavaScript
// counts before the run (a double: it may pass 2^32).
extern "C" double attnlens_layer_analyses_floats(std::size_t tokens, std::size_t lens_rows, int weighted,
                                                 std::size_t model_width, std::size_t vocab_size, std::size_t heads,
                                                 std::size_t head_width) {
    attnlens::model::ModelConfig c;
    c.model_width = model_width, c.vocab_size = vocab_size, c.heads = heads, c.head_width = head_width;
    return double(attnlens::analysis::LayerAnalyses::scratch_floats(c, tokens, lens_rows, weighted != 0));
}

// Frees an observer made above and returns its LayerStatus (0: every layer's results were written).
extern "C" int attnlens_layer_analyses_end(attnlens::model::LayerObserver* observer) {
    auto* analyses = static_cast<attnlens::analysis::LayerAnalyses*>(observer);
    const int status = analyses ? analyses->status() : attnlens::analysis::kOutOfMemory;
    delete analyses;
    return status;
}
