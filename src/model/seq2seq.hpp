// An encoder-decoder's forward pass (BART, Marian, T5): the encoder once over
// the source, then the decoder over target tokens in as many steps as the
// caller likes, each step computing only its new tokens' rows.
//
//   source ids -> embeddings -> encoder layers (bidirectional self-attention,
//                 MLP) [-> T5's final norm] -> encoded (n x d)
//   target ids -> embeddings -> decoder layers (causal self-attention over
//                 the cached keys and values of the earlier target tokens,
//                 cross-attention over `encoded`, MLP) -> logits (+ bias)
//   T5's relative position bias (ModelConfig::relative_buckets) is computed
//   once per encoding and once per step, and added to every layer's
//   self-attention scores (AttentionOptions::score_bias).
//
// Cross-attention's keys and values of `encoded` are projected once, by the
// first step; self-attention's are appended to each layer's cache. A step of
// one token therefore costs O(layers x (d^2 + (past + n) d)), not a pass
// over the whole prefix. Layers are layer.hpp's sublayers, so every family
// knob (norm placement, activation, biases) means what it means in run().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "config.hpp"
#include "../attention/float_buffer.hpp"
#include "../attention/multi_head.hpp"
#include "forward.hpp"
#include "weights.hpp"

namespace attnlens::model {

// An encoder-decoder's three kinds of attention.
enum class AttentionKind { encoder, decoder, cross };
const char* attention_kind_name(AttentionKind kind);  // "encoder", "decoder", "cross"

// The one sublayer whose every step goes into `record` (model.explain):
// layer `layer` of the encoder's self-attention, the decoder's (causal)
// self-attention, or its cross-attention (Q from the decoder, K and V from
// the encoder's output). record: null (nothing traced), or filled with the
// steps, the layer's math and layer_output (the stream after that whole
// encoder or decoder layer). A decoder kind is traced only by a step that
// starts the target (its keys are then exactly the record's rows).
struct SublayerTrace {
    AttentionKind kind = AttentionKind::encoder;
    std::size_t layer = 0;
    MultiHeadTrace* record = nullptr;
};

// Which of one kind's weights a call writes (model.run's attention option):
// from a plain pointer, every layer's every head in full, [layer][head][query][key];
// else the chosen layers and heads, each pooled by `pool` (pooled.hpp: B x B
// blocks, B = ceil(side / pool), each its largest weight), [chosen layer][chosen
// head][block row][block column]. out null: none written.
struct WeightsChoice {
    float* out = nullptr;
    const std::uint8_t* layers = nullptr;  // one flag per layer of the kind's stack (nonzero: chosen); null: every one
    const std::uint8_t* heads = nullptr;   // one flag per head; null: every head
    std::size_t pool = 1;

    WeightsChoice(float* all = nullptr) : out(all) {}
    WeightsChoice(float* chosen, const std::uint8_t* layer_flags, const std::uint8_t* head_flags, std::size_t factor)
        : out(chosen), layers(layer_flags), heads(head_flags), pool(factor) {}
    bool every_head_in_full() const { return !layers && !heads && pool == 1; }
};

// What one decoder step writes (each null when not wanted). m: the target
// tokens before the step, k: the step's tokens, n: the source tokens.
struct DecodeOutputs {
    WeightsChoice self_attention;   // decoder_layers x H x k x (m + k) in full
    WeightsChoice cross_attention;  // decoder_layers x H x k x n in full
    float* logits = nullptr;           // (k - logits_from) x V
    std::size_t logits_from = 0;       // the first of the step's rows with logits
    // model.analyze's observers (forward.hpp LayerObserver), each told every
    // decoder layer (LayerState::layer counts decoder layers from 0): one of
    // the self-attention (keys m + k, values from the cache; its
    // layer_done's residual is the decoder stream, for the logit lens), one
    // of the cross-attention (keys: the n source tokens). Either may be null.
    LayerObserver* self_observer = nullptr;
    LayerObserver* cross_observer = nullptr;
    SublayerTrace trace;  // a decoder or cross kind, or nothing
};

class Seq2SeqSession {
public:
    // Keeps references: the model must outlive the session.
    Seq2SeqSession(const ModelConfig& config, const ModelWeights& weights) : c_(config), w_(weights) {}

    // Runs the encoder over `count` source ids and makes room for up to
    // `max_target` target tokens. encoder_attention: nothing, layers x H x n x n,
    // or the chosen heads (WeightsChoice).
    // observer: null, or told each encoder layer's state (model.analyze).
    // trace: an encoder kind's (else ignored). keep: the session also keeps
    // every layer's queries (and the encoder's keys) for head_weights, and
    // every head computes its weights whether or not they are written (the
    // output-only path sums in another order: the outputs, logits included,
    // are then the same bits whatever is written). "" or the problem (bad ids,
    // too many tokens, memory, no such layer); any earlier encoding is
    // dropped either way.
    std::string encode(const std::int32_t* ids, std::size_t count, std::size_t max_target,
                       const WeightsChoice& encoder_attention, LayerObserver* observer = nullptr,
                       const SublayerTrace& trace = {}, bool keep = false);
    // The decoder over `count` more target ids. "" or the problem (no
    // encoding, bad ids, more tokens than encode() made room for).
    std::string decode(const std::int32_t* ids, std::size_t count, const DecodeOutputs& outputs);

    // Head `head` of layer `layer` of one kind's weights, recomputed from
    // what a session encoded with `keep` holds: the bits encode and a
    // decode of the whole target in one step wrote (or would have); pooled
    // by `pool` above 1 into B x B (pooled.hpp), through one head's
    // weights of scratch. The decoder kinds' rows are the target's m so
    // far. "" or the problem (nothing kept, no such layer or head, no
    // target decoded, pool 0, memory).
    std::string head_weights(AttentionKind kind, std::size_t layer, std::size_t head, std::size_t pool,
                             float* out) const;

    std::size_t source_tokens() const { return n_; }
    std::size_t target_tokens() const { return m_; }
    std::uint64_t bytes() const;  // every buffer the session holds

private:
    const ModelConfig& c_;
    const ModelWeights& w_;
    std::size_t n_ = 0, m_ = 0, capacity_ = 0;
    bool keep_ = false;
    FloatBuffer encoded_;                     // n x d: the encoder's output
    FloatBuffer self_keys_, self_values_;     // per decoder layer: capacity x G*hd
    FloatBuffer cross_keys_, cross_values_;   // per decoder layer: n x G*hd
    // With keep: per encoder layer n x H*hd and n x G*hd; per decoder layer
    // capacity x H*hd (the self-attention's queries, the cross-attention's).
    FloatBuffer encoder_queries_, encoder_keys_, decoder_queries_, cross_queries_;
};

// model.explain of an encoder-decoder: a session of its own over the source
// and, for a decoder kind, the whole target in one step, every layer's
// weights computed as a run computes them (so the record holds exactly
// run's numbers). trace.record: filled. "" or the problem.
std::string explain_seq2seq(const ModelConfig& config, const ModelWeights& weights, const std::int32_t* source,
                            std::size_t source_count, const std::int32_t* target, std::size_t target_count,
                            const SublayerTrace& trace);

// Its memory before it runs: seq2seq_working_bytes (footprint.hpp).

}  // namespace attnlens::model
