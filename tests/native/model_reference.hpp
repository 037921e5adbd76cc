// An independent double-precision forward pass of GPT-2, BERT and Llama for
// the model tests: written from the formulas in the issue-10 contract (and
// Hugging Face's modeling files), reading tensors by their canonical names
// in file orientation, sharing no code with src/model/. Slow and obvious.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace model_reference {

using Matrix = std::vector<double>;  // row-major

struct Tensor {
    std::vector<std::size_t> shape;
    Matrix values;
};
using Tensors = std::map<std::string, Tensor>;

struct Config {
    std::string architecture;  // "gpt2", "bert", "llama"
    std::size_t layers = 0, heads = 0, kv_heads = 0, d = 0, hd = 0, mlp = 0, vocab = 0;
    double eps = 1e-5, theta = 10000.0;
    std::string activation;  // "gelu_tanh", "gelu_erf", "silu"
};

// What the reference records of every layer, for explain() comparisons.
struct LayerRecord {
    Matrix x;                    // n x d: the input the layer attends from (normalized)
    Matrix q, k, v;              // n x (H*hd): after bias and rotary; k, v per query head
    Matrix scores, weights;      // H x n x n: raw q k^T, softmax weights
    Matrix concatenated;         // n x (H*hd)
    Matrix output;               // n x d: attention output projection (before the residual)
    Matrix layer_output;         // n x d
};

struct Result {
    Matrix attention;  // layers x H x n x n
    Matrix hidden;     // n x d
    Matrix logits;     // n x V (empty for bert)
    std::vector<LayerRecord> layers;
};

inline const Tensor& get(const Tensors& t, const std::string& name) {
    const auto found = t.find(name);
    if (found == t.end()) throw std::runtime_error("reference: no tensor " + name);
    return found->second;
}
inline bool has(const Tensors& t, const std::string& name) { return t.count(name) != 0; }

// y = x W + b for n rows of `in` values, `out` outputs; weight(p, j): W's input p, output j.
template <class Weight>
Matrix affine(const Matrix& x, std::size_t n, std::size_t in, std::size_t out, Weight weight, const Tensor* b) {
    Matrix y(n * out, 0.0);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < out; ++j) {
            double sum = b ? b->values[j] : 0.0;
            for (std::size_t p = 0; p < in; ++p) sum += x[i * in + p] * weight(p, j);
            y[i * out + j] = sum;
        }
    return y;
}
// y = x W + b with W [in, out] (Conv1D), or y = x W^T + b with W [out, in] (Linear).
inline Matrix conv1d(const Matrix& x, std::size_t n, const Tensor& w, const Tensor* b) {
    const std::size_t in = w.shape[0], out = w.shape[1];
    return affine(x, n, in, out, [&](std::size_t p, std::size_t j) { return w.values[p * out + j]; }, b);
}
inline Matrix linear(const Matrix& x, std::size_t n, const Tensor& w, const Tensor* b) {
    const std::size_t out = w.shape[0], in = w.shape[1];
    return affine(x, n, in, out, [&](std::size_t p, std::size_t j) { return w.values[j * in + p]; }, b);
}

// The rows of an embedding table (V x width) the ids pick: n x width.
inline Matrix embed(const Tensor& table, const std::vector<int>& ids, std::size_t width) {
    Matrix x(ids.size() * width);
    for (std::size_t i = 0; i < ids.size(); ++i)
        for (std::size_t j = 0; j < width; ++j) x[i * width + j] = table.values[ids[i] * width + j];
    return x;
}

inline Matrix layer_norm(const Matrix& x, std::size_t n, std::size_t d, const Tensor& w, const Tensor& b, double eps) {
    Matrix y(n * d);
    for (std::size_t i = 0; i < n; ++i) {
        double mean = 0, var = 0;
        for (std::size_t j = 0; j < d; ++j) mean += x[i * d + j] / double(d);
        for (std::size_t j = 0; j < d; ++j) var += (x[i * d + j] - mean) * (x[i * d + j] - mean) / double(d);
        for (std::size_t j = 0; j < d; ++j)
            y[i * d + j] = (x[i * d + j] - mean) / std::sqrt(var + eps) * w.values[j] + b.values[j];
    }
    return y;
}

inline Matrix rms_norm(const Matrix& x, std::size_t n, std::size_t d, const Tensor& w, double eps) {
    Matrix y(n * d);
    for (std::size_t i = 0; i < n; ++i) {
        double mean_square = 0;
        for (std::size_t j = 0; j < d; ++j) mean_square += x[i * d + j] * x[i * d + j] / double(d);
        for (std::size_t j = 0; j < d; ++j) y[i * d + j] = x[i * d + j] / std::sqrt(mean_square + eps) * w.values[j];
    }
    return y;
}

inline double activation(const std::string& name, double x) {
    const double pi = 3.14159265358979323846;
    if (name == "gelu_tanh") return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
    if (name == "gelu_erf") return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    return x / (1 + std::exp(-x));  // silu
}

// HF rotate_half rotary embedding of every head (`heads` of hd columns) of
// every row; `rot`: only the first rot columns of each head turn, with
// angles of that width (GPT-NeoX's and Phi's partial rotary). 0: all hd.
inline void rotary(Matrix& x, std::size_t n, std::size_t heads, std::size_t hd, double theta, std::size_t rot = 0) {
    if (rot == 0) rot = hd;
    for (std::size_t p = 0; p < n; ++p)
        for (std::size_t h = 0; h < heads; ++h)
            for (std::size_t i = 0; i < rot / 2; ++i) {
                const double angle = double(p) * std::pow(theta, -2.0 * double(i) / double(rot));
                double& a = x[p * heads * hd + h * hd + i];
                double& b = x[p * heads * hd + h * hd + i + rot / 2];
                const double a0 = a, b0 = b;
                a = a0 * std::cos(angle) - b0 * std::sin(angle);
                b = b0 * std::cos(angle) + a0 * std::sin(angle);
            }
}

// Multi-head attention of projected q (n x H*hd), k, v (n x G*hd), query
// head h on kv head h / (H/G). Fills the record's q, k, v (per query head),
// scores, weights and concatenated heads; appends the weights to `attention`.
inline void attend(const Config& c, const Matrix& q, const Matrix& k, const Matrix& v, std::size_t n, bool causal,
                   const std::vector<std::uint8_t>& mask, LayerRecord& record, Matrix& attention) {
    const std::size_t H = c.heads, G = c.kv_heads, hd = c.hd, group = H / G;
    record.q = q;
    record.k.assign(n * H * hd, 0.0);
    record.v.assign(n * H * hd, 0.0);
    record.scores.assign(H * n * n, 0.0);
    record.weights.assign(H * n * n, 0.0);
    record.concatenated.assign(n * H * hd, 0.0);
    for (std::size_t h = 0; h < H; ++h) {
        const std::size_t g = h / group;
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t c2 = 0; c2 < hd; ++c2) {
                record.k[i * H * hd + h * hd + c2] = k[i * G * hd + g * hd + c2];
                record.v[i * H * hd + h * hd + c2] = v[i * G * hd + g * hd + c2];
            }
        for (std::size_t i = 0; i < n; ++i) {
            std::vector<double> scaled(n);
            double max_score = -std::numeric_limits<double>::infinity();
            for (std::size_t j = 0; j < n; ++j) {
                double dot = 0;
                for (std::size_t c2 = 0; c2 < hd; ++c2) dot += q[i * H * hd + h * hd + c2] * k[j * G * hd + g * hd + c2];
                record.scores[h * n * n + i * n + j] = dot;
                const bool visible = (!causal || j <= i) && (mask.empty() || mask[j] != 0);
                scaled[j] = visible ? dot / std::sqrt(double(hd)) : -std::numeric_limits<double>::infinity();
                max_score = std::max(max_score, scaled[j]);
            }
            double sum = 0;
            for (std::size_t j = 0; j < n; ++j) sum += std::isinf(scaled[j]) ? 0.0 : std::exp(scaled[j] - max_score);
            for (std::size_t j = 0; j < n; ++j) {
                const double w = std::isinf(scaled[j]) ? 0.0 : std::exp(scaled[j] - max_score) / sum;
                record.weights[h * n * n + i * n + j] = w;
                for (std::size_t c2 = 0; c2 < hd; ++c2)
                    record.concatenated[i * H * hd + h * hd + c2] += w * v[j * G * hd + g * hd + c2];
            }
        }
    }
    attention.insert(attention.end(), record.weights.begin(), record.weights.end());
}

inline void add(Matrix& x, const Matrix& y) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += y[i];
}

inline Matrix activate(const std::string& name, Matrix x) {
    for (double& value : x) value = activation(name, value);
    return x;
}

// logits = hidden E^T with E [V, d].
inline Matrix lm_logits(const Tensors& t, const Matrix& hidden, std::size_t n, const std::string& lm_head,
                        const std::string& embedding) {
    return linear(hidden, n, get(t, has(t, lm_head) ? lm_head : embedding), nullptr);
}

inline Result gpt2(const Config& c, const Tensors& t, const std::vector<int>& ids, const std::vector<std::uint8_t>& mask) {
    const std::size_t n = ids.size(), d = c.d;
    Result r;
    Matrix x(n * d);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < d; ++j)
            x[i * d + j] = get(t, "wte.weight").values[ids[i] * d + j] + get(t, "wpe.weight").values[i * d + j];
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string p = "h." + std::to_string(l) + ".";
        LayerRecord record;
        record.x = layer_norm(x, n, d, get(t, p + "ln_1.weight"), get(t, p + "ln_1.bias"), c.eps);
        const Matrix qkv = conv1d(record.x, n, get(t, p + "attn.c_attn.weight"), &get(t, p + "attn.c_attn.bias"));
        Matrix q(n * d), k(n * d), v(n * d);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < d; ++j) {
                q[i * d + j] = qkv[i * 3 * d + j];
                k[i * d + j] = qkv[i * 3 * d + d + j];
                v[i * d + j] = qkv[i * 3 * d + 2 * d + j];
            }
        attend(c, q, k, v, n, true, mask, record, r.attention);
        record.output = conv1d(record.concatenated, n, get(t, p + "attn.c_proj.weight"), &get(t, p + "attn.c_proj.bias"));
        add(x, record.output);
        const Matrix m = layer_norm(x, n, d, get(t, p + "ln_2.weight"), get(t, p + "ln_2.bias"), c.eps);
        const Matrix h = activate(c.activation, conv1d(m, n, get(t, p + "mlp.c_fc.weight"), &get(t, p + "mlp.c_fc.bias")));
        add(x, conv1d(h, n, get(t, p + "mlp.c_proj.weight"), &get(t, p + "mlp.c_proj.bias")));
        record.layer_output = x;
        r.layers.push_back(record);
    }
    r.hidden = layer_norm(x, n, d, get(t, "ln_f.weight"), get(t, "ln_f.bias"), c.eps);
    r.logits = lm_logits(t, r.hidden, n, "lm_head.weight", "wte.weight");
    return r;
}

inline Result bert(const Config& c, const Tensors& t, const std::vector<int>& ids, const std::vector<std::uint8_t>& mask) {
    const std::size_t n = ids.size(), d = c.d;
    const std::string e = "embeddings.";
    Result r;
    Matrix x(n * d);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < d; ++j)
            x[i * d + j] = get(t, e + "word_embeddings.weight").values[ids[i] * d + j] +
                           get(t, e + "position_embeddings.weight").values[i * d + j] +
                           get(t, e + "token_type_embeddings.weight").values[j];
    x = layer_norm(x, n, d, get(t, e + "LayerNorm.weight"), get(t, e + "LayerNorm.bias"), c.eps);
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string p = "encoder.layer." + std::to_string(l) + ".";
        LayerRecord record;
        record.x = x;
        const auto project = [&](const std::string& name, const Matrix& in) {
            return linear(in, n, get(t, p + name + ".weight"), &get(t, p + name + ".bias"));
        };
        attend(c, project("attention.self.query", x), project("attention.self.key", x),
               project("attention.self.value", x), n, false, mask, record, r.attention);
        record.output = project("attention.output.dense", record.concatenated);
        add(x, record.output);
        x = layer_norm(x, n, d, get(t, p + "attention.output.LayerNorm.weight"),
                       get(t, p + "attention.output.LayerNorm.bias"), c.eps);
        Matrix y = project("output.dense", activate(c.activation, project("intermediate.dense", x)));
        add(y, x);
        x = layer_norm(y, n, d, get(t, p + "output.LayerNorm.weight"), get(t, p + "output.LayerNorm.bias"), c.eps);
        record.layer_output = x;
        r.layers.push_back(record);
    }
    r.hidden = x;
    return r;
}

inline Result llama(const Config& c, const Tensors& t, const std::vector<int>& ids, const std::vector<std::uint8_t>& mask) {
    const std::size_t n = ids.size(), d = c.d;
    Result r;
    Matrix x = embed(get(t, "model.embed_tokens.weight"), ids, d);
    for (std::size_t l = 0; l < c.layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        const auto project = [&](const std::string& name, const Matrix& in) {
            const std::string bias = p + name + ".bias";
            return linear(in, n, get(t, p + name + ".weight"), has(t, bias) ? &get(t, bias) : nullptr);
        };
        LayerRecord record;
        record.x = rms_norm(x, n, d, get(t, p + "input_layernorm.weight"), c.eps);
        Matrix q = project("self_attn.q_proj", record.x), k = project("self_attn.k_proj", record.x);
        rotary(q, n, c.heads, c.hd, c.theta);
        rotary(k, n, c.kv_heads, c.hd, c.theta);
        attend(c, q, k, project("self_attn.v_proj", record.x), n, true, mask, record, r.attention);
        record.output = project("self_attn.o_proj", record.concatenated);
        add(x, record.output);
        const Matrix m = rms_norm(x, n, d, get(t, p + "post_attention_layernorm.weight"), c.eps);
        Matrix gate = project("mlp.gate_proj", m);
        const Matrix up = project("mlp.up_proj", m);
        for (std::size_t i = 0; i < gate.size(); ++i) gate[i] = activation(c.activation, gate[i]) * up[i];
        add(x, project("mlp.down_proj", gate));
        record.layer_output = x;
        r.layers.push_back(record);
    }
    r.hidden = rms_norm(x, n, d, get(t, "model.norm.weight"), c.eps);
    r.logits = lm_logits(t, r.hidden, n, "lm_head.weight", "model.embed_tokens.weight");
    return r;
}

inline Result forward(const Config& c, const Tensors& t, const std::vector<int>& ids,
                      const std::vector<std::uint8_t>& mask = {}) {
    if (c.architecture == "gpt2") return gpt2(c, t, ids, mask);
    if (c.architecture == "bert") return bert(c, t, ids, mask);
    return llama(c, t, ids, mask);
}

}  // namespace model_reference
