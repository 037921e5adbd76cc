// The encoder-decoder forward (src/model/seq2seq.hpp) against a double
// reference written from modeling_bart.py / modeling_marian.py (post-norm
// layers, cross-attention over the encoder's output, final_logits_bias), and
// its key/value caches: decoding token by token gives what one step over
// every target token gives; a session kept for headWeights recomputes any
// head of any kind with the bits of a run that wrote them all.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "attention/pooled.hpp"
#include "model/footprint.hpp"
#include "model/seq2seq.hpp"
#include "model_fixture.hpp"

namespace {

namespace m = attnlens::model;
namespace r = model_reference;
using model_fixture::random_ids;

m::ModelConfig tiny_seq2seq(m::PositionKind position) {
    m::ModelConfig c;
    c.architecture = m::Architecture::bart;
    c.layers = 2, c.decoder_layers = 2, c.heads = c.kv_heads = 2, c.model_width = 16, c.head_width = 8;
    c.mlp_width = 24, c.vocab_size = 40, c.max_positions = 20;
    c.position = position;
    c.position_offset = position == m::PositionKind::learned ? 2 : 0;  // BART's
    c.embedding_norm = position == m::PositionKind::learned;           // BART's layernorm_embedding
    c.embedding_scale = position == m::PositionKind::learned ? 0.0f : 4.0f;  // Marian's sqrt(d_model)
    c.activation = position == m::PositionKind::learned ? m::Activation::gelu_erf : m::Activation::silu;
    c.post_norm = true, c.causal = false, c.final_norm = false, c.lm_head_bias = true;
    return c;
}

struct Seq2SeqResult {
    r::Matrix encoder, decoder, cross, logits;
};

// softmax(q k^T / sqrt(hd)) v per head over keys of another sequence; causal: key j <= query i.
r::Matrix attend(const r::Matrix& q, std::size_t m, const r::Matrix& k, const r::Matrix& v, std::size_t n,
                 std::size_t heads, std::size_t hd, bool causal, r::Matrix& weights) {
    r::Matrix out(m * heads * hd, 0.0);
    for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t i = 0; i < m; ++i) {
            std::vector<double> row(n, -INFINITY);
            double max = -INFINITY, sum = 0;
            for (std::size_t j = 0; j < n && !(causal && j > i); ++j) {
                double dot = 0;
                for (std::size_t c = 0; c < hd; ++c) dot += q[i * heads * hd + h * hd + c] * k[j * heads * hd + h * hd + c];
                row[j] = dot / std::sqrt(double(hd));
                max = std::max(max, row[j]);
            }
            for (double& value : row) sum += (value = std::exp(value - max));
            for (std::size_t j = 0; j < n; ++j) {
                weights.push_back(row[j] / sum);
                for (std::size_t c = 0; c < hd; ++c) out[i * heads * hd + h * hd + c] += row[j] / sum * v[j * heads * hd + h * hd + c];
            }
        }
    return out;
}

Seq2SeqResult reference(const m::ModelConfig& c, const r::Tensors& t, const std::vector<std::int32_t>& source,
                        const std::vector<std::int32_t>& target) {
    const std::size_t d = c.model_width;
    const auto get = [&](const std::string& name) -> const r::Tensor& { return r::get(t, name); };
    const auto plus = [](r::Matrix a, const r::Matrix& b) {
        for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
        return a;
    };
    const auto norm = [&](const r::Matrix& x, std::size_t rows, const std::string& name) {
        return r::layer_norm(x, rows, d, get(name + ".weight"), get(name + ".bias"), 1e-5);
    };
    const auto linear = [&](const r::Matrix& x, std::size_t rows, const std::string& name) {
        return r::linear(x, rows, get(name + ".weight"), &get(name + ".bias"));
    };
    const auto embed = [&](const std::string& side, const std::vector<std::int32_t>& ids) {
        r::Matrix x(ids.size() * d);
        const double scale = c.embedding_scale > 0 ? c.embedding_scale : 1.0;
        for (std::size_t p = 0; p < ids.size(); ++p)
            for (std::size_t j = 0; j < d; ++j) {
                double position;
                if (c.position == m::PositionKind::learned) {
                    position = get("model." + side + ".embed_positions.weight").values[(p + 2) * d + j];
                } else {  // MarianSinusoidalPositionalEmbedding: sines of the even j, then cosines of the odd j
                    const std::size_t k = j < d / 2 ? j : j - d / 2;
                    const double angle = double(p) / std::pow(10000.0, 2.0 * double(k) / double(d));
                    position = float(j < d / 2 ? std::sin(angle) : std::cos(angle));
                }
                x[p * d + j] = get("model.shared.weight").values[std::size_t(ids[p]) * d + j] * scale + position;
            }
        return c.embedding_norm ? norm(x, ids.size(), "model." + side + ".layernorm_embedding") : x;
    };
    const auto attention = [&](const std::string& prefix, const r::Matrix& x, std::size_t m, const r::Matrix& keys,
                               std::size_t n, bool causal, r::Matrix& weights) {
        const r::Matrix heads = attend(linear(x, m, prefix + ".q_proj"), m, linear(keys, n, prefix + ".k_proj"),
                                       linear(keys, n, prefix + ".v_proj"), n, c.heads, c.head_width, causal, weights);
        return linear(heads, m, prefix + ".out_proj");
    };
    const auto mlp = [&](const r::Matrix& x, std::size_t rows, const std::string& prefix) {
        r::Matrix up = linear(x, rows, prefix + "fc1");
        for (double& value : up) value = r::activation(m::activation_name(c.activation), value);
        return norm(plus(x, linear(up, rows, prefix + "fc2")), rows, prefix + "final_layer_norm");
    };
    Seq2SeqResult out;
    const std::size_t n = source.size(), tm = target.size();
    r::Matrix x = embed("encoder", source);
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string prefix = "model.encoder.layers." + std::to_string(l) + ".";
        x = norm(plus(x, attention(prefix + "self_attn", x, n, x, n, false, out.encoder)), n, prefix + "self_attn_layer_norm");
        x = mlp(x, n, prefix);
    }
    const r::Matrix encoded = x;
    x = embed("decoder", target);
    for (std::size_t l = 0; l < c.decoder_layers; ++l) {
        const std::string prefix = "model.decoder.layers." + std::to_string(l) + ".";
        x = norm(plus(x, attention(prefix + "self_attn", x, tm, x, tm, true, out.decoder)), tm, prefix + "self_attn_layer_norm");
        x = norm(plus(x, attention(prefix + "encoder_attn", x, tm, encoded, n, false, out.cross)), tm,
                 prefix + "encoder_attn_layer_norm");
        x = mlp(x, tm, prefix);
    }
    r::Tensor bias{{c.vocab_size}, get("final_logits_bias").values};
    out.logits = r::linear(x, tm, get("model.shared.weight"), &bias);
    return out;
}

struct Decoded {
    std::vector<float> encoder, decoder, cross, logits;
};

// A tiny encoder-decoder of random weights, with random source and target ids.
struct TinyModel {
    m::ModelConfig config;
    std::unique_ptr<m::Model> model;
    std::vector<std::int32_t> source, target;
};
TinyModel tiny_model(m::PositionKind position, unsigned seed, std::size_t n, std::size_t tm) {
    TinyModel tiny{tiny_seq2seq(position), nullptr, {}, {}};
    std::mt19937 rng(seed);
    tiny.model = model_fixture::load(tiny.config, model_fixture::random_tensors(tiny.config, rng, false));
    tiny.source = random_ids(rng, n, tiny.config.vocab_size), tiny.target = random_ids(rng, tm, tiny.config.vocab_size);
    return tiny;
}

// Encodes `source`, then decodes `target` in steps of `step` tokens.
Decoded decode(m::Model& model, const std::vector<std::int32_t>& source, const std::vector<std::int32_t>& target,
               std::size_t step) {
    const m::ModelConfig& c = model.config();
    const std::size_t n = source.size(), tm = target.size(), H = c.heads, L = c.decoder_layers;
    Decoded out;
    out.encoder.assign(c.layers * H * n * n, -1.0f);
    REQUIRE(model.encode(source.data(), n, tm, out.encoder.data()) == "");
    // Laid out [layer][head][query][key] over the whole target (self keys: all tm, masked ones 0).
    out.decoder.assign(L * H * tm * tm, 0.0f);
    out.cross.assign(L * H * tm * n, -1.0f);
    out.logits.assign(tm * c.vocab_size, -1.0f);
    for (std::size_t first = 0; first < tm; first += step) {
        const std::size_t k = std::min(step, tm - first), seen = first + k;
        std::vector<float> self(L * H * k * seen), cross(L * H * k * n);
        m::DecodeOutputs outputs{self.data(), cross.data(), out.logits.data() + first * c.vocab_size, 0};
        REQUIRE(model.decode(target.data() + first, k, outputs) == "");
        for (std::size_t block = 0; block < L * H; ++block)
            for (std::size_t i = 0; i < k; ++i) {
                std::copy_n(self.data() + (block * k + i) * seen, seen, out.decoder.data() + (block * tm + first + i) * tm);
                std::copy_n(cross.data() + (block * k + i) * n, n, out.cross.data() + (block * tm + first + i) * n);
            }
    }
    return out;
}

}  // namespace

TEST_CASE("an encoder-decoder matches the double reference, decoded at once or token by token", "[model][seq2seq]") {
    for (const auto position : {m::PositionKind::learned, m::PositionKind::sinusoidal}) {
        INFO(m::position_name(position));
        const m::ModelConfig config = tiny_seq2seq(position);
        REQUIRE(m::validate(config) == "");
        std::mt19937 rng(23);
        const r::Tensors tensors = model_fixture::random_tensors(config, rng, false);
        for (const char* type : {"F32", "BF16"}) {
            INFO(type);
            auto model = model_fixture::load(config, tensors, type);
            for (const auto [n, tm] : {std::pair<std::size_t, std::size_t>{1, 1}, {7, 5}, {18, 18}}) {
                const auto source = random_ids(rng, n, config.vocab_size), target = random_ids(rng, tm, config.vocab_size);
                const Seq2SeqResult expected = reference(config, tensors, source, target);
                const Decoded at_once = decode(*model, source, target, tm);
                require_close(at_once.encoder, expected.encoder, 1e-5);
                require_close(at_once.decoder, expected.decoder, 1e-5);
                require_close(at_once.cross, expected.cross, 1e-5);
                require_close(at_once.logits, expected.logits, 1e-4);
                for (const std::size_t step : {std::size_t(1), std::size_t(2)}) {
                    const Decoded stepped = decode(*model, source, target, step);
                    require_close(stepped.decoder, at_once.decoder, 1e-6);
                    require_close(stepped.cross, at_once.cross, 1e-6);
                    require_close(stepped.logits, at_once.logits, 1e-5);
                }
            }
            model->end_session();
        }
    }
}

TEST_CASE("an encoder-decoder session refuses bad calls with a sentence", "[model][seq2seq]") {
    const m::ModelConfig config = tiny_seq2seq(m::PositionKind::learned);
    std::mt19937 rng(5);
    auto model = model_fixture::load(config, model_fixture::random_tensors(config, rng, false));
    const std::vector<std::int32_t> ids{3, 4, 5}, bad{3, 40};
    float logits[3 * 40];  // up to three rows
    const m::DecodeOutputs outputs{nullptr, nullptr, logits, 0};
    CHECK(model->decode(ids.data(), 1, outputs) == "nothing is encoded: encode a source before decoding");
    CHECK(model->encode(bad.data(), 2, 4, nullptr).find("source token id 40 at position 1 is outside the vocabulary") == 0);
    CHECK(model->encode(ids.data(), 3, 0, nullptr) == "no room for target tokens: the decoder needs at least one");
    CHECK(model->encode(ids.data(), 3, 19, nullptr) == "19 target tokens are more than the model's 18 positions");
    REQUIRE(model->encode(ids.data(), 3, 2, nullptr) == "");
    CHECK(model->decode(bad.data(), 2, outputs).find("target token id 40") == 0);
    CHECK(model->decode(ids.data(), 3, outputs) == "3 target tokens are more than the 2 the encoding made room for");
    CHECK(model->decode(ids.data(), 1, m::DecodeOutputs{nullptr, nullptr, logits, 1}) ==
          "logits from row 1: the step has only 1 tokens");
    CHECK(model->decode(ids.data(), 2, outputs) == "");  // the refusals changed nothing
    m::RunRequest request;
    request.ids = ids.data(), request.count = 3;
    CHECK(model->run(request).find("an encoder-decoder model runs through its encoder and decoder") == 0);
    m::ModelConfig no_decoder = config;
    no_decoder.decoder_layers = 0;
    CHECK(m::validate(no_decoder) == "the bart tensor layout is an encoder-decoder: decoderLayers must be at least 1");
}

TEST_CASE("explain_seq2seq: each kind's record holds exactly the session's weights; decode's observers see every decoder layer",
          "[model][seq2seq][explain]") {
    const auto [config, model, source, target] = tiny_model(m::PositionKind::learned, 29, 5, 4);
    const std::size_t n = source.size(), tm = target.size(), H = config.heads;
    const Decoded run = decode(*model, source, target, tm);
    for (const auto kind : {m::AttentionKind::encoder, m::AttentionKind::decoder, m::AttentionKind::cross}) {
        INFO(m::attention_kind_name(kind));
        const std::size_t layer = 1, rows = kind == m::AttentionKind::encoder ? n : tm;
        const std::size_t keys = kind == m::AttentionKind::decoder ? tm : n;
        const std::vector<float>& weights =
            kind == m::AttentionKind::encoder ? run.encoder : kind == m::AttentionKind::decoder ? run.decoder : run.cross;
        attnlens::MultiHeadTrace record;
        REQUIRE(model->explain_seq2seq(source.data(), n, target.data(), tm, {kind, layer, &record}) == "");
        CHECK(std::string(record.kind) == m::attention_kind_name(kind));
        CHECK(record.n == rows);
        CHECK(record.n_context == keys);
        CHECK(record.cross_attention == (kind == m::AttentionKind::cross));
        CHECK(record.causal == (kind == m::AttentionKind::decoder));
        CHECK(record.layer == layer);
        const std::size_t block = H * rows * keys;
        REQUIRE(record.weights.size() == block);
        CHECK(std::equal(record.weights.data(), record.weights.data() + block, weights.data() + layer * block));
        CHECK(record.layer_output.size() == rows * config.model_width);
        attnlens::MultiHeadTrace beyond;
        CHECK(model->explain_seq2seq(source.data(), n, target.data(), tm, {kind, 2, &beyond}) == "no such layer");
    }
}

TEST_CASE("a kept session gives any head of any kind afterwards: the bits of a run that wrote every weight",
          "[model][seq2seq][kept]") {
    const auto [config, model, source, target] = tiny_model(m::PositionKind::sinusoidal, 31, 7, 5);
    const std::size_t n = source.size(), tm = target.size(), H = config.heads, V = config.vocab_size;
    const Decoded all = decode(*model, source, target, tm);  // every weight written, nothing kept
    CHECK(model->session_head_weights(m::AttentionKind::encoder, 0, 0, 1, nullptr) == "nothing is kept: run the model first");

    // Kept, writing nothing: the same logits, and every head recomputed afterwards.
    const std::uint64_t before = model->kept_generation();
    REQUIRE(model->encode(source.data(), n, tm, nullptr, nullptr, true) == "");
    std::vector<float> logits(tm * V);
    m::DecodeOutputs outputs;
    outputs.logits = logits.data();
    REQUIRE(model->decode(target.data(), tm, outputs) == "");
    CHECK(model_fixture::same_bits(logits, all.logits));
    CHECK(model->kept_generation() != before);
    const std::uint64_t kvw = config.kv_heads * config.head_width, qw = H * config.head_width;
    const std::uint64_t layers = config.layers, decoder_layers = config.decoder_layers;
    CHECK(model->kept_bytes() == 4 * (n * config.model_width + decoder_layers * 2 * (tm + n) * kvw +
                                      layers * n * (qw + kvw) + decoder_layers * 2 * tm * qw));
    // The estimate JavaScript checks before a run counts what the session keeps, and more than a run that keeps nothing.
    CHECK(m::seq2seq_working_bytes(config, n, tm, false, true) > m::seq2seq_working_bytes(config, n, tm));
    CHECK(m::seq2seq_working_bytes(config, n, tm, false, true) >= model->kept_bytes());
    for (const auto kind : {m::AttentionKind::encoder, m::AttentionKind::decoder, m::AttentionKind::cross}) {
        INFO(m::attention_kind_name(kind));
        const std::size_t rows = kind == m::AttentionKind::encoder ? n : tm, keys = kind == m::AttentionKind::decoder ? tm : n;
        const std::vector<float>& every =
            kind == m::AttentionKind::encoder ? all.encoder : kind == m::AttentionKind::decoder ? all.decoder : all.cross;
        for (std::size_t layer = 0; layer < 2; ++layer)
            for (std::size_t head = 0; head < H; ++head) {
                const std::size_t square = rows * keys, index = layer * H + head;
                const std::vector<float> full(every.begin() + index * square, every.begin() + (index + 1) * square);
                for (const std::size_t pool : {1, 2, 3, 7}) {
                    std::vector<float> out(attnlens::pooled_side(rows, pool) * attnlens::pooled_side(keys, pool), -2.0f);
                    REQUIRE(model->session_head_weights(kind, layer, head, pool, out.data()) == "");
                    CHECK(model_fixture::same_bits(out, model_fixture::pooled_reference(full, rows, keys, pool)));
                }
            }
        std::vector<float> out(n * n);
        CHECK(model->session_head_weights(kind, 2, 0, 1, out.data()) == "no such layer or head");
        CHECK(model->session_head_weights(kind, 0, H, 1, out.data()) == "no such layer or head");
        CHECK(model->session_head_weights(kind, 0, 0, 0, out.data()) == "pool factor 0 must be at least 1");
    }

    // A run that writes layer 1's head 0 of each kind, pooled by 2: those blocks of the full weights pooled.
    const std::uint8_t flags[] = {0, 1, 1, 0};  // the layers, then the heads
    std::vector<float> encoder(16, -2.0f), self(9, -2.0f), cross(12, -2.0f);
    REQUIRE(model->encode(source.data(), n, tm, {encoder.data(), flags, flags + 2, 2}, nullptr, true) == "");
    outputs.self_attention = {self.data(), flags, flags + 2, 2};
    outputs.cross_attention = {cross.data(), flags, flags + 2, 2};
    REQUIRE(model->decode(target.data(), tm, outputs) == "");
    CHECK(model_fixture::same_bits(logits, all.logits));
    const auto block = [&](const std::vector<float>& every, std::size_t rows, std::size_t keys) {
        const std::size_t square = rows * keys, index = 1 * H + 0;  // layer 1, head 0
        return model_fixture::pooled_reference({every.begin() + index * square, every.begin() + (index + 1) * square},
                                               rows, keys, 2);
    };
    CHECK(model_fixture::same_bits(encoder, block(all.encoder, n, n)));
    CHECK(model_fixture::same_bits(self, block(all.decoder, tm, tm)));
    CHECK(model_fixture::same_bits(cross, block(all.cross, tm, n)));

    // Ended, the session keeps nothing.
    model->drop_kept();
    CHECK(model->kept_bytes() == 0);
    CHECK(model->session_head_weights(m::AttentionKind::cross, 0, 0, 1, encoder.data()) == "nothing is kept: run the model first");
}
