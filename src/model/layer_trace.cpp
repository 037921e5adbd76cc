// prepare_layer_trace (layer.hpp): the record of one explained attention
// sublayer, a decoder-only model's (forward.cpp explain) or an
// encoder-decoder's (seq2seq.cpp). Its own file, compiled for size with the
// rest of the once-per-call code (CMakeLists.txt): layer.cpp's kernels are
// compiled for speed.
#include "layer.hpp"

namespace attnlens::model {

std::string prepare_layer_trace(const ModelConfig& c, std::size_t layer, const MultiHeadInput& input,
                                MultiHeadTrace& trace) {
    if (auto error = allocate_trace(input, multi_head_shape(c), trace); !error.empty()) return error;
    if (auto error = allocate_all({{&trace.layer_output, std::uint64_t(input.tokens) * c.model_width}},
                                  "explaining a layer", input.tokens);
        !error.empty())
        return error;
    trace.architecture = architecture_name(c.architecture);
    trace.layer = layer;
    trace.norm = norm_name(c.norm);
    trace.position = position_name(c.position);
    trace.rotary_width = c.position == PositionKind::rotary ? rotated_width(c) : 0;
    trace.parallel_residual = c.parallel_residual;
    trace.post_norm = c.post_norm;
    return {};
}

}  // namespace attnlens::model
