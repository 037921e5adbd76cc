// A model as JavaScript holds it (the Embind ModelHandle is a thin skin over
// this): a config, its weights arriving tensor by tensor, then forward
// passes. Nothing here throws or aborts on bad input: every problem is an
// error string.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "config.hpp"
#include "forward.hpp"
#include "seq2seq.hpp"
#include "weights.hpp"

namespace attnlens::model {

class Model {
public:
    // Allocates nothing big. An invalid config makes every call return its error.
    explicit Model(const ModelConfig& config);

    const ModelConfig& config() const { return config_; }
    // "" for a valid config, else validate()'s sentence (calls return it
    // prefixed with "the model config is invalid: ").
    const std::string& config_problem() const { return config_problem_; }

    // Chooses ModelConfig::keep_16_bit after construction, before any tensor
    // loads (JavaScript decides once it has read the files' dtypes): "" or
    // why not (the weights would not fit that way, or loading has begun).
    std::string set_weight_storage(bool keep_16_bit);

    // `type_name`: "F32", "F16" or "BF16". `data`: `count` elements of it,
    // the whole tensor, or (second form) its rows `rows` in the file's
    // orientation, arriving in order (see ModelWeights::load).
    std::string load_tensor(const std::string& name, const std::string& type_name, const void* data,
                            std::size_t count);
    std::string load_tensor(const std::string& name, const std::string& type_name, const void* data, RowRange rows,
                            std::size_t count);
    std::string finish();
    std::size_t weight_bytes() const;

    std::string run(const RunRequest& request) const;
    // What the model keeps of its last run (forward.hpp ForwardCache),
    // for RunRequest::cache; clear() frees it.
    ForwardCache& forward_cache() { return forward_cache_; }
    // The weights, for analyses of what the cache keeps (valid config only).
    const ModelWeights& weights() const { return *weights_; }
    // The last run's logits of `count` positions, in the order given (forward.hpp kept_logits).
    std::string kept_logits(const std::int32_t* positions, std::size_t count, float* out) const;
    std::string explain(const ExplainRequest& request, MultiHeadTrace& trace) const;

    // An encoder-decoder's one session (seq2seq.hpp): encode() starts it
    // (dropping any before), decode() steps it, end_session() frees its caches.
    // observer: null, or told each encoder layer (model.analyze). keep: the
    // session keeps what session_head_weights reads (model.run's), until the
    // next encode or end_session.
    std::string encode(const std::int32_t* ids, std::size_t count, std::size_t max_target,
                       const WeightsChoice& attention, LayerObserver* observer = nullptr, bool keep = false);
    std::string decode(const std::int32_t* ids, std::size_t count, const DecodeOutputs& outputs);
    void end_session() { session_.reset(), ++session_generation_; }
    // One head of one kind's weights of the session (Seq2SeqSession::head_weights).
    std::string session_head_weights(AttentionKind kind, std::size_t layer, std::size_t head, std::size_t pool,
                                     float* out) const;

    // What the model keeps of its last run, either kind of model (the
    // forward cache, or an encoder-decoder's session): its bytes, a count
    // that changes whenever it does (what a result's headWeights was
    // computed from), and freeing it.
    std::uint64_t kept_bytes() const { return forward_cache_.bytes() + (session_ ? session_->bytes() : 0); }
    std::uint64_t kept_generation() const { return forward_cache_.generation + session_generation_; }
    void drop_kept() { forward_cache_.clear(), end_session(); }
    // model.explain of an encoder-decoder (seq2seq.hpp explain_seq2seq): a
    // session of its own; the one above is left as it is.
    std::string explain_seq2seq(const std::int32_t* source, std::size_t source_count, const std::int32_t* target,
                                std::size_t target_count, const SublayerTrace& trace) const;

private:
    ModelConfig config_;
    std::string config_problem_, config_error_;
    bool loading_ = false;  // a tensor has been offered
    std::unique_ptr<ModelWeights> weights_;  // null when the config is invalid
    std::unique_ptr<Seq2SeqSession> session_;
    std::uint64_t session_generation_ = 0;  // counts sessions started and ended
    ForwardCache forward_cache_;
};

}  // namespace attnlens::model
