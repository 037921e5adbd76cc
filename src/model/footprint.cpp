#include "footprint.hpp"

#include "../attention/attention.hpp"
#include "../attention/multi_head.hpp"
#include "layer.hpp"

namespace attnlens::model {

std::uint64_t earlier_weights_floats(const ModelConfig& config, std::size_t tokens) {
    return std::uint64_t(config.heads) * tokens * tokens;
}

std::uint64_t run_working_bytes(const ModelConfig& config, std::size_t tokens) {
    const ThreadPolicy policy = ThreadPolicy::automatic_up_to_max();
    Activations sizes_only;  // allocates nothing: only its size list is read
    // Each head's workspace when it returns its weights (as every run does).
    const AttentionShape shape{tokens, tokens, config.head_width, config.head_width};
    const std::uint64_t floats = total_floats(sizes_only.buffer_sizes(config, tokens, policy)) +
                                 Activations::workspace_count(config, policy) * workspace_floats(shape, true);
    return floats * sizeof(float);
}

std::uint64_t explain_working_bytes(const ModelConfig& config, std::size_t tokens) {
    const std::uint64_t layer_output = std::uint64_t(tokens) * config.model_width;
    return run_working_bytes(config, tokens) +
           (trace_floats(tokens, tokens, multi_head_shape(config)) + layer_output +
            earlier_weights_floats(config, tokens)) *
               sizeof(float);
}

}  // namespace attnlens::model
