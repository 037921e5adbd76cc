#include "weight.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "../kernels/kernels.hpp"

namespace attnlens::model {

namespace {

constexpr std::size_t kPanelWidth = kernels::kPanelWidth;

// F16 and BF16 matrices are converted a block of whole panels at a time into
// a scratch buffer of about this many floats, then packed from it: the
// kernels' packers do the layout, and the scratch stays small next to the
// tensor (a whole float32 copy of a 50257 x 768 embedding would be 154 MB).
constexpr std::size_t kScratchFloats = std::size_t(1) << 20;

std::string quoted(const std::string& name) { return "tensor \"" + name + "\""; }

// "index 53 (element [1, 5] of [3, 48])"
std::string index_text(const std::vector<std::size_t>& shape, std::size_t index) {
    std::vector<std::size_t> element(shape.size());
    std::size_t rest = index;
    for (std::size_t axis = shape.size(); axis-- > 0;) {
        element[axis] = shape[axis] ? rest % shape[axis] : 0;
        rest = shape[axis] ? rest / shape[axis] : 0;
    }
    return "index " + std::to_string(index) + " (element " + shape_text(element) + " of " + shape_text(shape) + ")";
}

std::string non_finite_error(const TensorSpec& spec, WeightType type, const void* data, std::size_t count) {
    return quoted(spec.name) + " holds a value that is not finite (NaN or infinity) at " +
           index_text(spec.shape, first_non_finite(type, data, count));
}

bool finite(const float* values, std::size_t count) {
    return std::isfinite(kernels::max_magnitude(values, count));
}

bool float_aligned(const void* data) { return reinterpret_cast<std::uintptr_t>(data) % alignof(float) == 0; }

// in_out: the source is B itself (inner x cols, row-major).
std::string pack_in_out(const TensorSpec& spec, WeightType type, const void* data, Weight& out) {
    const std::size_t inner = out.inner, cols = out.cols, panel_floats = inner * kPanelWidth;
    float* packed = out.values.data();
    if (type == WeightType::f32 && float_aligned(data)) {
        const auto* source = static_cast<const float*>(data);
        if (!finite(source, inner * cols)) return non_finite_error(spec, type, data, inner * cols);
        kernels::pack_panels(source, cols, inner, cols, packed);
        return {};
    }
    const std::size_t block_cols = std::max<std::size_t>(1, kScratchFloats / panel_floats) * kPanelWidth;
    FloatBuffer scratch;
    if (!scratch.allocate(inner * std::min(block_cols, cols))) return "out of memory converting " + quoted(spec.name);
    for (std::size_t first = 0; first < cols; first += block_cols) {
        const std::size_t width = std::min(block_cols, cols - first);
        for (std::size_t p = 0; p < inner; ++p)
            convert_to_float(type, data, p * cols + first, width, scratch.data() + p * width);
        if (!finite(scratch.data(), inner * width)) return non_finite_error(spec, type, data, inner * cols);
        kernels::pack_panels(scratch.data(), width, inner, width, packed + first / kPanelWidth * panel_floats);
    }
    return {};
}

// out_in: the source is B^T (cols rows of inner values): a block of whole
// panels of B is a contiguous run of source rows.
std::string pack_out_in(const TensorSpec& spec, WeightType type, const void* data, Weight& out) {
    const std::size_t inner = out.inner, rows = out.cols, panel_floats = inner * kPanelWidth;
    float* packed = out.values.data();
    if (type == WeightType::f32 && float_aligned(data)) {
        const auto* source = static_cast<const float*>(data);
        if (!finite(source, inner * rows)) return non_finite_error(spec, type, data, inner * rows);
        kernels::pack_transposed_panels(source, inner, rows, inner, packed);
        return {};
    }
    const std::size_t block_rows = std::max<std::size_t>(1, kScratchFloats / panel_floats) * kPanelWidth;
    FloatBuffer scratch;
    if (!scratch.allocate(inner * std::min(block_rows, rows))) return "out of memory converting " + quoted(spec.name);
    for (std::size_t first = 0; first < rows; first += block_rows) {
        const std::size_t count = std::min(block_rows, rows - first);
        convert_to_float(type, data, first * inner, count * inner, scratch.data());
        if (!finite(scratch.data(), count * inner)) return non_finite_error(spec, type, data, inner * rows);
        kernels::pack_transposed_panels(scratch.data(), inner, count, inner, packed + first / kPanelWidth * panel_floats);
    }
    return {};
}

}  // namespace

std::string load_weight(const TensorSpec& spec, WeightType type, const void* data, std::size_t count, Weight& out) {
    out = Weight{};
    const std::uint64_t expected = element_count(spec.shape);
    if (count != expected)
        return quoted(spec.name) + " has " + std::to_string(count) + " values, but its shape " + shape_text(spec.shape) +
               " needs " + std::to_string(expected);
    if (count > 0 && data == nullptr) return quoted(spec.name) + ": no data (null address)";

    out.layout = spec.layout;
    const bool matrix = spec.shape.size() == 2;
    switch (spec.layout) {
        case TensorLayout::vector: out.inner = 1, out.cols = spec.shape[0]; break;
        case TensorLayout::rows:
        case TensorLayout::in_out: out.inner = spec.shape[0], out.cols = matrix ? spec.shape[1] : 1; break;
        case TensorLayout::out_in: out.inner = matrix ? spec.shape[1] : 1, out.cols = spec.shape[0]; break;
    }
    const bool packed = spec.layout == TensorLayout::in_out || spec.layout == TensorLayout::out_in;
    const std::size_t floats = packed ? kernels::packed_size(out.inner, out.cols) : count;
    if (!out.values.allocate(floats))
        return "out of memory: " + quoted(spec.name) + " needs " + std::to_string(floats * sizeof(float)) + " bytes";

    std::string error;
    if (spec.layout == TensorLayout::in_out) {
        error = pack_in_out(spec, type, data, out);
    } else if (spec.layout == TensorLayout::out_in) {
        error = pack_out_in(spec, type, data, out);
    } else {
        convert_to_float(type, data, 0, count, out.values.data());
        if (!finite(out.values.data(), count)) error = non_finite_error(spec, type, data, count);
    }
    if (!error.empty()) {
        out = Weight{};
        return error;
    }
    out.loaded = true;
    return {};
}

void project_columns(const Weight& w, const Weight* bias, const float* in, std::size_t ldi, std::size_t rows,
                     float* out, std::size_t ldo, std::size_t first, std::size_t count) {
    const float* panels = w.values.data() + first / kPanelWidth * w.inner * kPanelWidth;
    kernels::matmul_packed(in, ldi, panels, w.inner, out + first, ldo, rows, w.inner, count);
    if (!bias) return;
    for (std::size_t i = 0; i < rows; ++i) kernels::add_row_bias(out + i * ldo + first, bias->values.data() + first, 1, count);
}

void project(const Weight& w, const Weight* bias, const float* in, std::size_t ldi, std::size_t rows, float* out,
             std::size_t ldo) {
    project_columns(w, bias, in, ldi, rows, out, ldo, 0, w.cols);
}

void gather_column(const Weight& w, std::size_t j, float* out) {
    const float* column = w.values.data() + j / kPanelWidth * w.inner * kPanelWidth + j % kPanelWidth;
    for (std::size_t p = 0; p < w.inner; ++p) out[p] = column[p * kPanelWidth];
}

void unpack_columns(const Weight& w, std::size_t first, std::size_t count, float* out, std::size_t ldo) {
    for (std::size_t c = 0; c < count; ++c) {
        const std::size_t j = first + c;
        const float* column = w.values.data() + j / kPanelWidth * w.inner * kPanelWidth + j % kPanelWidth;
        for (std::size_t p = 0; p < w.inner; ++p) out[p * ldo + c] = column[p * kPanelWidth];
    }
}

}  // namespace attnlens::model
