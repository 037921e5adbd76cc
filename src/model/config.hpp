// What a transformer checkpoint is, independent of how its files name things:
// the tensor layout, its sizes, its few numeric constants and the knobs that
// say which math it runs. The JavaScript layer maps a Hugging Face
// config.json onto this through the family's description
// (web/lib/model/families/), so a family whose math is a combination of the
// knobs below needs no C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "../attention/float_buffer.hpp"

namespace attnlens::model {

// The tensor layout: which canonical tensors the core lists (tensors.cpp),
// and the name a model's attention records carry. Families map their own
// tensor names onto one of these (DistilBERT and RoBERTa onto bert's, Qwen2
// onto llama's); the math is the knobs of ModelConfig, not this. gpt_neox
// is GPT-NeoX's (Pythia's) names with its fused per-head Q/K/V rows; gpt_neo
// GPT-2's names with Linear Q, K, V and MLP; opt OPT's decoder names; phi
// Phi's (one norm per layer, an LM head with a bias); bart BART's and
// Marian's encoder-decoder names (seq2seq_tensors.cpp), t5 T5's.
enum class Architecture { gpt2, bert, llama, gpt_neox, gpt_neo, opt, phi, bart, t5 };
enum class Activation { gelu_tanh, gelu_erf, silu, relu };
// LayerNorm (with bias), RMSNorm (weight only), or Gemma's RMSNorm scaling by (1 + weight).
enum class NormKind { layer, rms, rms_plus_one };
// A position-embedding table added to the input, RoPE on Q and K, or
// Marian's fixed sinusoids added to the input (MarianSinusoidalPositionalEmbedding:
// the first half of a row sines, the second half cosines), or T5's learned
// relative position bias on the scores (relative_buckets).
enum class PositionKind { learned, rotary, sinusoidal, relative };

struct ModelConfig {
    Architecture architecture = Architecture::gpt2;
    // An encoder-decoder (decoder_layers > 0) has `layers` encoder layers
    // (bidirectional) and decoder_layers decoder layers (causal
    // self-attention, then cross-attention over the encoder's output with
    // its own norm, then the MLP): seq2seq.hpp runs it.
    std::size_t decoder_layers = 0;
    std::size_t layers = 0, heads = 0, kv_heads = 0, model_width = 0, head_width = 0, mlp_width = 0;
    // type_vocab_size 0: no token-type embedding (DistilBERT, decoders).
    std::size_t vocab_size = 0, max_positions = 0, type_vocab_size = 0;
    // ELECTRA: the embeddings (and their norm) are this wide, and a Linear
    // (embeddings_project) takes them to model_width. OPT (word_embed_proj_dim):
    // the word embeddings are, project_in takes them to model_width, and
    // project_out takes the last hidden state back before the (tied) head.
    // 0: model_width, no projection.
    std::size_t embedding_width = 0;
    // OPT: the projection takes the word embeddings alone; positions,
    // model_width wide, are added after it. ELECTRA projects the normed sum.
    bool projection_before_positions = false;
    float norm_epsilon = 1e-5f, rope_theta = 10000.0f;
    Activation activation = Activation::gelu_tanh;
    // The math. The defaults are GPT-2's.
    NormKind norm = NormKind::layer;
    PositionKind position = PositionKind::learned;
    bool post_norm = false;       // x = norm(x + half(x)) (BERT) instead of x += half(norm(x))
    bool causal = true;           // decoder, or bidirectional encoder
    bool gated_mlp = false;       // act(x Wg) * (x Wu) (Llama) instead of act(x Wu)
    bool embedding_norm = false;  // a norm on the summed embeddings (BERT)
    bool final_norm = true;       // a norm after the last layer (decoders)
    // Learned positions as RoBERTa numbers them (create_position_ids_from_input_ids):
    // the first non-pad token sits at position padding_idx + 1, pad tokens
    // (id == padding_idx) at padding_idx. -1: positions 0, 1, ..., n-1.
    std::int64_t padding_idx = -1;
    // T5's relative positions: a key j places at distance j - i from query i
    // in one of relative_buckets buckets (exact up to a quarter or half of
    // them, logarithmic up to relative_max_distance; the encoder's both ways,
    // the decoder's looking back only); each bucket's learned bias per head,
    // from the first layer of each side, is added to every layer's scores.
    std::size_t relative_buckets = 0, relative_max_distance = 0;
    // The final hidden state is multiplied by this before the LM head (T5's
    // tied head: d_model^-0.5). 0: not scaled.
    float logits_scale = 0.0f;
    // Learned positions read this many rows on (OPT's 2: token t at row t + 2),
    // counting only the tokens a key mask keeps, as OPT numbers a padded
    // batch (a masked token reads row position_offset - 1).
    std::size_t position_offset = 0;
    // Sliding-window attention (Mistral): a causal query sees only the
    // `window` keys ending at its own position. 0: every earlier key.
    std::size_t window = 0;
    // The layers the window applies to: every layer (Mistral), or, with
    // window_every_layer false, layer l when bit l of window_layers is set
    // (GPT-Neo's local layers; at most kMaxWindowLayers layers). Bits, not a
    // list, so that ModelConfig stays a plain value.
    bool window_every_layer = true;
    std::uint64_t window_layers = 0;
    // What raw scores are multiplied by before the softmax. 0: 1/sqrt(head_width).
    // GPT-Neo multiplies by 1 (GPTNeoSelfAttention._attn scales nothing).
    float attention_scale = 0.0f;
    // Gemma: the word embeddings are multiplied by this (sqrt(hidden_size)),
    // rounded to the word embedding's stored dtype as transformers' normalizer
    // tensor of the hidden dtype is. 0: not scaled.
    float embedding_scale = 0.0f;
    // Partial rotary (GPT-NeoX's rotary_pct): only the first rotary_width
    // columns of each query and key head turn, with angles of that width;
    // the rest pass unchanged. 0: the whole head.
    std::size_t rotary_width = 0;
    // x = x + attention(norm1(x)) + mlp(norm2(x)) (GPT-NeoX's
    // use_parallel_residual): both halves read the layer's input.
    bool parallel_residual = false;
    // With parallel_residual: the MLP reads attention's normalized input
    // (Phi's one input_layernorm) instead of its own norm of x.
    bool shared_norm = false;
    // The LM head has a bias (Phi's lm_head).
    bool lm_head_bias = false;
    // Decoders' next-token head, or an encoder's masked-LM head (BertForMaskedLM's
    // cls.predictions); false for encoders whose checkpoint has none.
    bool has_lm_head = true;
    // The masked-LM head's activation between its dense and its LayerNorm
    // (BERT's hidden_act; RoBERTa's and ELECTRA's heads always use exact GELU).
    Activation mlm_activation = Activation::gelu_erf;
    bool attention_bias = true;          // Q, K and V projections have biases
    bool attention_output_bias = true;   // the attention output projection has one
    bool mlp_bias = true;                // the MLP projections have them
    // Storage, not architecture: keep the matrices of F16 and BF16
    // checkpoints at 2 bytes a weight (products widen them a panel at a
    // time) instead of converting them to float32 at load. Half the memory,
    // so models twice as large fit in WebAssembly's 2 GiB; the same results
    // bit for bit (widening is exact); a little slower (performance.md).
    bool keep_16_bit = false;
};

// Upper bounds on single sizes. They keep every product of two sizes (a
// weight's element count) far below 2^64, so the checks below can be done in
// 64-bit arithmetic without overflow; the 2 GiB check then makes every
// weight's element count fit a 32-bit size_t too (WebAssembly).
constexpr std::size_t kMaxLayers = 4096;
constexpr std::size_t kMaxHeads = 4096;
constexpr std::size_t kMaxWidth = std::size_t(1) << 20;       // model, head, MLP and attention widths
constexpr std::size_t kMaxVocabulary = std::size_t(1) << 24;  // also type vocabulary
constexpr std::size_t kMaxPositions = std::size_t(1) << 24;
constexpr std::size_t kMaxWindowLayers = 64;  // layers window_layers can pick
// kMaxMemoryBytes (the 2 GiB of a wasm32 memory): attention/float_buffer.hpp.

// "" when the model can be built and run, otherwise one sentence naming the
// problem and the offending number.
std::string validate(const ModelConfig& config);
// validate()'s last check alone: the weights, as keep_16_bit stores them,
// fit in memory. For a config validate() accepted with another storage.
std::string validate_storage(const ModelConfig& config);

// Sizes derived from the config, named once.
inline std::size_t query_width(const ModelConfig& c) { return c.heads * c.head_width; }     // H * hd
inline std::size_t key_value_width(const ModelConfig& c) { return c.kv_heads * c.head_width; }  // G * hd
// Columns of the fused projection output [Q | K | V] the forward pass uses.
inline std::size_t qkv_width(const ModelConfig& c) { return query_width(c) + 2 * key_value_width(c); }

// The window of layer `layer`'s attention (0: none).
inline std::size_t layer_window(const ModelConfig& c, std::size_t layer) {
    return c.window_every_layer || (layer < kMaxWindowLayers && (c.window_layers >> layer & 1u)) ? c.window : 0;
}

// An encoder-decoder (BART, Marian), run by seq2seq.hpp rather than run().
inline bool encoder_decoder(const ModelConfig& c) { return c.decoder_layers > 0; }

// The width of the embeddings before any projection.
inline std::size_t embedded_width(const ModelConfig& c) { return c.embedding_width ? c.embedding_width : c.model_width; }

// The columns of a head that rotary embeddings turn.
inline std::size_t rotated_width(const ModelConfig& c) { return c.rotary_width ? c.rotary_width : c.head_width; }

// Token positions the position table can number (max_positions less the
// positions RoBERTa's numbering skips).
std::size_t usable_positions(const ModelConfig& config);

const char* architecture_name(Architecture architecture);
const char* activation_name(Activation activation);
const char* norm_name(NormKind norm);
const char* position_name(PositionKind position);
// False when the name is not one of the *_name() functions' answers.
bool parse_architecture(const std::string& name, Architecture& out);
bool parse_activation(const std::string& name, Activation& out);
bool parse_norm(const std::string& name, NormKind& out);
bool parse_position(const std::string& name, PositionKind& out);

}  // namespace attnlens::model
