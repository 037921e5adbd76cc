// The memory estimates JavaScript asks before a call (footprint.hpp) cover
// what the core really allocates: every buffer of the activations, the
// heads' attention workspaces and the trace, counted from the objects after
// allocation, and measured as heap growth where the allocator reports it.
#include <catch2/catch.hpp>

#include <malloc.h>

#include <cstdint>

#include "attention/attention.hpp"
#include "attention/multi_head.hpp"
#include "attention/threads.hpp"
#include "model_families.hpp"
#include "model/footprint.hpp"
#include "model/layer.hpp"

namespace {

namespace m = attnlens::model;

m::ModelConfig config_of(m::Architecture architecture, bool keep_16_bit) {
    m::ModelConfig c;
    model_families::set_family(c, architecture);
    c.layers = 2, c.heads = 4, c.kv_heads = 4, c.model_width = 32, c.head_width = 8, c.mlp_width = 72;
    c.vocab_size = 50, c.max_positions = 128, c.type_vocab_size = architecture == m::Architecture::bert ? 2 : 0;
    if (architecture == m::Architecture::bert) c.has_lm_head = false;
    if (architecture == m::Architecture::llama) c.kv_heads = 2, c.head_width = 10, c.activation = m::Activation::silu;
    c.keep_16_bit = keep_16_bit;
    return c;
}

// Bytes the allocator holds for the program (small blocks and mmapped ones).
std::uint64_t heap_in_use() {
    const struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

std::uint64_t floats_of(std::initializer_list<const attnlens::FloatBuffer*> buffers) {
    std::uint64_t floats = 0;
    for (const attnlens::FloatBuffer* buffer : buffers) floats += buffer->size();
    return floats;
}

// Per block the allocator may keep a header and round the size up, and for
// a FloatBuffer, which starts on a cache line (float_buffer.hpp), part of
// the line before it.
constexpr std::uint64_t kBlockOverhead = 32 + attnlens::kCacheLine;

// Sanitizers bring their own allocator, which mallinfo2 does not see. (The
// growth is only an upper check: blocks freed earlier and cached by the
// allocator count as in use, so reusing them adds nothing.)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kHeapMeasured = false;
#else
constexpr bool kHeapMeasured = true;
#endif

}  // namespace

TEST_CASE("footprint: a run's estimate is what its activations and workspaces allocate", "[model][footprint]") {
    const attnlens::ThreadPolicy policy = attnlens::ThreadPolicy::automatic_up_to_max();
    for (auto architecture : {m::Architecture::gpt2, m::Architecture::bert, m::Architecture::llama})
        for (bool keep_16_bit : {false, true})
            for (std::size_t n : {1, 7, 33, 128}) {
                const m::ModelConfig c = config_of(architecture, keep_16_bit);
                INFO(m::architecture_name(architecture) << (keep_16_bit ? " 16-bit" : "") << ", n = " << n);
                const std::uint64_t before = heap_in_use();
                m::Activations acts;
                REQUIRE(acts.allocate(c, n, policy) == "");
                // The workspaces as attention_half sizes them when it returns weights.
                const attnlens::AttentionShape shape{n, n, c.head_width, c.head_width};
                std::uint64_t workspace_floats = 0;
                for (auto& workspace : acts.workspaces) {
                    attnlens::prepare_workspace(workspace, shape, true);
                    workspace_floats += workspace.keys.size() + workspace.values.size();
                }
                const std::uint64_t grown = heap_in_use() - before;
                const std::uint64_t counted =
                    4 * (floats_of({&acts.x, &acts.normed, &acts.qkv, &acts.heads, &acts.projected, &acts.up, &acts.gate,
                                    &acts.rotary_cos, &acts.rotary_sin, &acts.panel_scratch}) +
                         workspace_floats);
                // A run through the cache adds its new positions' weights (one layer's heads, n x n
                // at most: forward.cpp run_cached).
                const std::uint64_t cached = 4 * std::uint64_t(c.heads) * n * n;
                const std::uint64_t estimate = m::run_working_bytes(c, n);
                REQUIRE(estimate == counted + cached);
                if (kHeapMeasured) {
                    REQUIRE(grown <= estimate + 16 * kBlockOverhead);
                }
            }
}

TEST_CASE("footprint: an explain's estimate adds the trace and the earlier layers' weights", "[model][footprint]") {
    for (auto architecture : {m::Architecture::gpt2, m::Architecture::llama})
        for (std::size_t n : {1, 9, 64}) {
            const m::ModelConfig c = config_of(architecture, false);
            const std::uint64_t before = heap_in_use();
            attnlens::MultiHeadTrace trace;
            // As explain() allocates it: the layer's trace, then its layer output.
            REQUIRE(attnlens::allocate_trace(attnlens::MultiHeadInput{nullptr, n, nullptr, 0}, m::multi_head_shape(c),
                                             trace) == "");
            REQUIRE(trace.layer_output.allocate(n * c.model_width));
            const std::uint64_t grown = heap_in_use() - before;
            const std::uint64_t trace_floats =
                floats_of({&trace.x, &trace.context_x, &trace.wq, &trace.wk, &trace.wv, &trace.wo, &trace.q, &trace.k,
                           &trace.v, &trace.scores, &trace.scaled_scores, &trace.weights, &trace.concatenated_heads,
                           &trace.output, &trace.layer_output});
            const std::uint64_t earlier_weights = c.heads * n * n;
            // A pass (a run's working memory without what only a run through the cache adds), the trace, the weights.
            const std::uint64_t pass = m::run_working_bytes(c, n) - 4 * m::cached_run_floats(c, n);
            REQUIRE(m::explain_working_bytes(c, n) == pass + 4 * (trace_floats + earlier_weights));
            if (kHeapMeasured) {
                // 15 buffers, and allocate_trace's list of them (freed, but it may stay cached).
                REQUIRE(grown <= 4 * trace_floats + 24 * kBlockOverhead);
            }
        }
}

TEST_CASE("footprint: estimates grow with the tokens and stay exact in 64 bits", "[model][footprint]") {
    m::ModelConfig c = config_of(m::Architecture::gpt2, false);
    REQUIRE(m::run_working_bytes(c, 2) > m::run_working_bytes(c, 1));
    REQUIRE(m::explain_working_bytes(c, 64) > m::explain_working_bytes(c, 32));
    // 2^24 positions of a wide model: far past 2^32 bytes, and not wrapped.
    c.model_width = 4096, c.heads = 32, c.head_width = 128, c.kv_heads = 32, c.mlp_width = 16384;
    const std::size_t n = std::size_t(1) << 24;
    REQUIRE(m::run_working_bytes(c, n) > (std::uint64_t(1) << 40));
}
