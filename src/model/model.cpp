#include "model.hpp"

namespace attnlens::model {

Model::Model(const ModelConfig& config) : config_(config), config_problem_(validate(config)) {
    // Only a valid config bounds the sizes ModelWeights allocates for.
    if (config_problem_.empty()) weights_ = std::make_unique<ModelWeights>(config_);
    else config_error_ = "the model config is invalid: " + config_problem_;
}

std::string Model::set_weight_storage(bool keep_16_bit) {
    if (!weights_) return config_error_;
    if (keep_16_bit == config_.keep_16_bit) return {};
    if (loading_) return "the weight storage is chosen before the first tensor loads";
    ModelConfig changed = config_;
    changed.keep_16_bit = keep_16_bit;
    if (auto error = validate_storage(changed); !error.empty()) return error;
    config_ = changed;
    weights_->set_keep_16_bit(keep_16_bit);  // nothing loaded yet
    return {};
}

namespace {

// "" and `type` set, or the error naming the tensor's dtype.
std::string weight_type(const std::string& name, const std::string& type_name, WeightType& type) {
    if (parse_weight_type(type_name, type)) return {};
    return "tensor \"" + name + "\" has dtype \"" + type_name + "\": only F32, F16 and BF16 weights are supported";
}

}  // namespace

std::string Model::load_tensor(const std::string& name, const std::string& type_name, const void* data,
                               std::size_t count) {
    if (!weights_) return config_error_;
    loading_ = true;
    WeightType type;
    if (auto error = weight_type(name, type_name, type); !error.empty()) return error;
    return weights_->load(name, type, data, count);
}

std::string Model::load_tensor(const std::string& name, const std::string& type_name, const void* data,
                               RowRange rows, std::size_t count) {
    if (!weights_) return config_error_;
    loading_ = true;
    WeightType type;
    if (auto error = weight_type(name, type_name, type); !error.empty()) return error;
    return weights_->load(name, type, data, rows, count);
}

std::string Model::finish() { return weights_ ? weights_->finish() : config_error_; }

std::size_t Model::weight_bytes() const { return weights_ ? weights_->bytes() : 0; }

std::string Model::run(const RunRequest& request) const {
    return weights_ ? model::run(config_, *weights_, request) : config_error_;
}

std::string Model::kept_logits(const std::int32_t* positions, std::size_t count, float* out) const {
    return weights_ ? model::kept_logits(config_, *weights_, forward_cache_, positions, count, 0, out) : config_error_;
}

std::string Model::explain(const ExplainRequest& request, MultiHeadTrace& trace) const {
    return weights_ ? model::explain(config_, *weights_, request, trace) : config_error_;
}

std::string Model::encode(const std::int32_t* ids, std::size_t count, std::size_t max_target,
                          const WeightsChoice& attention, LayerObserver* observer, bool keep) {
    if (!weights_) return config_error_;
    end_session();  // the earlier session's kept weights are gone even when this one fails
    session_ = std::make_unique<Seq2SeqSession>(config_, *weights_);
    auto error = session_->encode(ids, count, max_target, attention, observer, {}, keep);
    if (!error.empty()) session_.reset();
    return error;
}

std::string Model::session_head_weights(AttentionKind kind, std::size_t layer, std::size_t head, std::size_t pool,
                                        float* out) const {
    return session_ ? session_->head_weights(kind, layer, head, pool, out) : "nothing is kept: run the model first";
}

std::string Model::decode(const std::int32_t* ids, std::size_t count, const DecodeOutputs& outputs) {
    if (!weights_) return config_error_;
    return session_ ? session_->decode(ids, count, outputs) : "nothing is encoded: encode a source before decoding";
}

std::string Model::explain_seq2seq(const std::int32_t* source, std::size_t source_count, const std::int32_t* target,
                                   std::size_t target_count, const SublayerTrace& trace) const {
    return weights_ ? model::explain_seq2seq(config_, *weights_, source, source_count, target, target_count, trace)
                    : config_error_;
}

}  // namespace attnlens::model
