#include "footprint.hpp"

#include "../kernels/kernels.hpp"
#include "layer.hpp"

namespace attnlens::model {

namespace {

// Floats of `inner` x `cols` packed as panels (kernels::packed_size, in 64
// bits: a size the module refuses must not wrap around its 32-bit size_t).
std::uint64_t packed_floats(std::uint64_t inner, std::uint64_t cols) {
    const std::uint64_t width = kernels::kPanelWidth;
    return (cols + width - 1) / width * width * inner;
}

// One head's attention workspace when it returns its weights: K packed as
// panels of K^T and V as panels (prepare_workspace, src/attention/attention.cpp).
std::uint64_t workspace_floats(const ModelConfig& c, std::size_t tokens) {
    return packed_floats(c.head_width, tokens) + packed_floats(tokens, c.head_width);
}

}  // namespace

std::uint64_t run_working_bytes(const ModelConfig& config, std::size_t tokens) {
    const ThreadPolicy policy = ThreadPolicy::automatic_up_to_max();
    Activations sizes_only;  // allocates nothing: only its size list is read
    const std::uint64_t floats = total_floats(sizes_only.buffer_sizes(config, tokens, policy)) +
                                 Activations::workspace_count(config, policy) * workspace_floats(config, tokens);
    return floats * sizeof(float);
}

std::uint64_t explain_working_bytes(const ModelConfig& config, std::size_t tokens) {
    LayerTrace sizes_only;
    const std::uint64_t n = tokens;
    const std::uint64_t earlier_weights = config.heads * n * n;  // explain()'s scratch for the layers before
    return run_working_bytes(config, tokens) +
           (total_floats(trace_buffer_sizes(config, tokens, sizes_only)) + earlier_weights) * sizeof(float);
}

}  // namespace attnlens::model
