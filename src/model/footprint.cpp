#include "footprint.hpp"

#include <algorithm>

#include "../attention/attention.hpp"
#include "../attention/multi_head.hpp"
#include "layer.hpp"

namespace attnlens::model {

std::uint64_t earlier_weights_floats(const ModelConfig& config, std::size_t tokens) {
    return std::uint64_t(config.heads) * tokens * tokens;
}

namespace {

// One pass's activations over `rows` tokens and its heads' workspaces, each
// returning its rows x `keys` weights.
std::uint64_t pass_floats(const ModelConfig& config, std::size_t rows, std::size_t keys) {
    const ThreadPolicy policy = ThreadPolicy::automatic_up_to_max();
    Activations sizes_only;  // allocates nothing: only its size list is read
    const AttentionShape shape{rows, keys, config.head_width, config.head_width};
    return total_floats(sizes_only.buffer_sizes(config, rows, policy)) +
           Activations::workspace_count(config, policy) * workspace_floats(shape, true);
}

}  // namespace

std::uint64_t run_working_bytes(const ModelConfig& config, std::size_t tokens) {
    return (pass_floats(config, tokens, tokens) + cached_run_floats(config, tokens)) * sizeof(float);
}

std::uint64_t cached_run_floats(const ModelConfig& config, std::size_t tokens) {
    return earlier_weights_floats(config, tokens);
}

std::uint64_t seq2seq_working_bytes(const ModelConfig& config, std::size_t source, std::size_t target, bool traced,
                                    bool kept) {
    // Seq2SeqSession::encode's buffers, then its encoder pass or a decoder
    // step over every target token (never both at once).
    const std::uint64_t caches = std::uint64_t(config.decoder_layers) * 2 * (source + target) * key_value_width(config);
    // T5's position bias of the encoder or of a step over every target token.
    const std::uint64_t bias = config.position == PositionKind::relative
                                   ? std::uint64_t(config.heads) * std::max(source * source, target * target)
                                   : 0;
    const std::uint64_t passes =
        std::max(pass_floats(config, source, source), pass_floats(config, target, std::max(source, target)));
    const std::uint64_t most = std::max(source, target), n = source, m = target, H = config.heads;
    const std::uint64_t trace = traced ? trace_floats(most, most, multi_head_shape(config)) + most * config.model_width +
                                             H * (config.layers * n * n + config.decoder_layers * (m * m + m * n))
                                       : 0;
    // model.run's session keeps every layer's queries and the encoder's keys,
    // and computes one layer's weights of each kind into scratch.
    const std::uint64_t qw = query_width(config), kvw = key_value_width(config);
    const std::uint64_t keeps = kept ? config.layers * n * (qw + kvw) + 2 * config.decoder_layers * m * qw +
                                           H * std::max(n * n, m * m + m * n)
                                     : 0;
    return (std::uint64_t(source) * config.model_width + caches + bias + passes + trace + keeps) * sizeof(float);
}

std::uint64_t explain_working_bytes(const ModelConfig& config, std::size_t tokens) {
    const std::uint64_t layer_output = std::uint64_t(tokens) * config.model_width;
    return (pass_floats(config, tokens, tokens) + trace_floats(tokens, tokens, multi_head_shape(config)) + layer_output +
            earlier_weights_floats(config, tokens)) *
               sizeof(float);
}

}  // namespace attnlens::model
