// How much memory a call on a loaded model allocates inside the core, beyond
// its weights: what JavaScript asks (ModelHandle.runBytes / explainBytes)
// before it starts a call, instead of recomputing the core's buffers. Summed
// from the same size lists the allocations use (layer.hpp's BufferSizes), so
// a buffer added there is counted here without a second edit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "config.hpp"

namespace attnlens::model {

// run() over `tokens` tokens through the model's cache, with the automatic
// thread policy, returning the attention weights (as every model.run does):
// activations, the heads' attention workspaces and cached_run_floats. The
// outputs, and the cache's own growth (JavaScript counts it), are the caller's.
std::uint64_t run_working_bytes(const ModelConfig& config, std::size_t tokens);

// What a run through the cache (forward.cpp run_cached) allocates beyond a
// pass: one layer's heads' weights of the new positions (every position at most).
std::uint64_t cached_run_floats(const ModelConfig& config, std::size_t tokens);

// An encoder-decoder's Seq2SeqSession (seq2seq.hpp) over `source` tokens
// with room for `target`, decoded in one step, every weight returned.
// `traced`: Model::explain_seq2seq's, which adds the record of one sublayer
// (at most max(source, target) queries and keys) and every layer's weights.
// `kept`: model.run's, whose session keeps what headWeights reads and whose
// heads write one layer's weights of each kind into scratch.
std::uint64_t seq2seq_working_bytes(const ModelConfig& config, std::size_t source, std::size_t target,
                                    bool traced = false, bool kept = false);

// The weights explain() keeps for the layers before the traced one (one
// layer's heads x n x n, reused): allocated there, counted here.
std::uint64_t earlier_weights_floats(const ModelConfig& config, std::size_t tokens);

// explain() over `tokens` tokens (no cache): a pass's working memory, the
// weights of the layers before the traced one, and the trace itself.
std::uint64_t explain_working_bytes(const ModelConfig& config, std::size_t tokens);

}  // namespace attnlens::model
