#include "weight.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "../kernels/kernels.hpp"

namespace attnlens::model {

namespace {

constexpr std::size_t kPanelWidth = kernels::kPanelWidth;

// F16, BF16 and misaligned F32 rows are converted a block of rows at a time
// into a scratch buffer of about this many floats, then stored from it: the
// kernels' packers do the layout, and the scratch stays small next to the
// tensor (a whole float32 copy of a 50257 x 768 embedding would be 154 MB).
constexpr std::size_t kScratchFloats = std::size_t(1) << 20;

std::string quoted(const std::string& name) { return "tensor \"" + name + "\""; }

std::string rows_text(RowRange range) {
    return "rows [" + std::to_string(range.first) + ", " + std::to_string(range.first + range.count) + ")";
}

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

// `data` holds `count` values of the tensor from index `first` on.
std::string non_finite_error(const TensorSpec& spec, WeightType type, const void* data, std::size_t count,
                             std::size_t first) {
    return quoted(spec.name) + " holds a value that is not finite (NaN or infinity) at " +
           index_text(spec.shape, first + first_non_finite(type, data, count));
}

bool finite(const float* values, std::size_t count) {
    return std::isfinite(kernels::max_magnitude(values, count));
}

bool float_aligned(const void* data) { return reinterpret_cast<std::uintptr_t>(data) % alignof(float) == 0; }

// Where the file's row (or value) r of a fused per-head [Q_h | K_h | V_h]
// tensor goes in [Q | K | V]: row r = (h * 3 + part) * hd + i is column
// part * H * hd + h * hd + i (modeling_gpt_neox.py views the projection as
// [heads, 3 * head_size] and splits the last axis in three).
std::size_t stored_column(const Weight& w, std::size_t r) {
    const std::size_t hd = w.head_interleave;
    if (hd == 0) return r;
    const std::size_t heads = w.cols / (3 * hd), head = r / (3 * hd), part = r / hd % 3;
    return part * heads * hd + head * hd + r % hd;
}

// in_out: rows [first, first + count) of B (count x cols, row-major) are
// rows [first, first + count) of every panel. out_in: rows of the file's
// [out, in] tensor K are columns of B = K^T, i.e. a run of panel columns;
// interleaved rows go one by one to their columns.
void pack_out_in_rows(const float* k, std::size_t first, std::size_t count, Weight& out) {
    if (out.head_interleave == 0) return pack_transposed_rows_into(k, out.inner, first, count, out.inner, out.values.data());
    for (std::size_t r = 0; r < count; ++r)
        pack_column(k + r * out.inner, out.inner, stored_column(out, first + r), out.values.data());
}

// Stores float32 rows [first, first + count) of the tensor in place.
void store_rows(const float* values, std::size_t first, std::size_t count, std::size_t width, Weight& out) {
    switch (out.layout) {
        case TensorLayout::in_out:
            pack_rows_into(values, out.cols, first, count, out.inner, out.cols, out.values.data());
            break;
        case TensorLayout::out_in: pack_out_in_rows(values, first, count, out); break;
        default: std::copy(values, values + count * width, out.values.data() + first * width); break;
    }
}

// One 16-bit element of `source` (any alignment).
std::uint16_t half_at(const unsigned char* source, std::size_t index) {
    std::uint16_t value;
    std::memcpy(&value, source + 2 * index, sizeof value);
    return value;
}

// store_rows for a 16-bit weight: the file's bit patterns, unconverted, into
// the panel layout (padding columns are zero from allocate()).
void store_half_rows(const unsigned char* source, std::size_t first, std::size_t count, Weight& out) {
    const std::size_t inner = out.inner, cols = out.cols, panel_values = inner * kPanelWidth;
    std::uint16_t* packed = out.halves.data();
    if (out.layout == TensorLayout::in_out) {
        // Row p of B: element j goes to panel j / w, row p, column j % w.
        for (std::size_t r = 0; r < count; ++r)
            for (std::size_t j = 0; j < cols; ++j)
                packed[j / kPanelWidth * panel_values + (first + r) * kPanelWidth + j % kPanelWidth] =
                    half_at(source, r * cols + j);
        return;
    }
    // out_in: row j of the file is column j of B.
    for (std::size_t r = 0; r < count; ++r) {
        const std::size_t j = stored_column(out, first + r);
        std::uint16_t* column = packed + j / kPanelWidth * panel_values + j % kPanelWidth;
        for (std::size_t p = 0; p < inner; ++p) column[p * kPanelWidth] = half_at(source, r * inner + p);
    }
}

// Converts, checks and stores rows `range` (`data` holds exactly them).
std::string store_range(const TensorSpec& spec, WeightType type, const void* data, RowRange range, Weight& out) {
    const std::size_t width = row_values(spec.shape), values = range.count * width, first_value = range.first * width;
    if (out.layout == TensorLayout::vector || out.layout == TensorLayout::rows) {
        // Kept as is: converted straight into place (an interleaved bias
        // value by value into its column).
        if (out.head_interleave != 0) {
            for (std::size_t i = 0; i < values; ++i) {
                float* target = out.values.data() + stored_column(out, first_value + i);
                convert_to_float(type, data, i, 1, target);
                if (!std::isfinite(*target)) return non_finite_error(spec, type, data, values, first_value);
            }
            return {};
        }
        float* target = out.values.data() + first_value;
        convert_to_float(type, data, 0, values, target);
        if (!finite(target, values)) return non_finite_error(spec, type, data, values, first_value);
        return {};
    }
    if (out.sixteen_bit()) {
        // Checked through float32 a block at a time (the stored values must be
        // finite: they are widened without a check), stored as they came.
        FloatBuffer scratch;
        const std::size_t block_values = std::min(values, std::max(width, kScratchFloats));
        if (!scratch.allocate(block_values)) return "out of memory converting " + quoted(spec.name);
        for (std::size_t done = 0; done < values; done += block_values) {
            const std::size_t part = std::min(block_values, values - done);
            convert_to_float(type, data, done, part, scratch.data());
            if (!finite(scratch.data(), part)) return non_finite_error(spec, type, data, values, first_value);
        }
        store_half_rows(static_cast<const unsigned char*>(data), range.first, range.count, out);
        return {};
    }
    if (type == WeightType::f32 && float_aligned(data)) {
        const auto* source = static_cast<const float*>(data);
        if (!finite(source, values)) return non_finite_error(spec, type, data, values, first_value);
        store_rows(source, range.first, range.count, width, out);
        return {};
    }
    // Blocks of whole panels' worth of rows, so that out_in blocks after the
    // first start on a panel boundary when the range does.
    const std::size_t block_rows =
        std::max<std::size_t>(1, kScratchFloats / (std::max<std::size_t>(width, 1) * kPanelWidth)) * kPanelWidth;
    FloatBuffer scratch;
    if (!scratch.allocate(std::min(block_rows, range.count) * width))
        return "out of memory converting " + quoted(spec.name);
    for (std::size_t done = 0; done < range.count; done += block_rows) {
        const std::size_t rows = std::min(block_rows, range.count - done);
        convert_to_float(type, data, done * width, rows * width, scratch.data());
        if (!finite(scratch.data(), rows * width)) return non_finite_error(spec, type, data, values, first_value);
        store_rows(scratch.data(), range.first + done, rows, width, out);
    }
    return {};
}

// How a tensor is held once loaded: its inner and column sizes, the values
// allocated (packed matrices padded to whole panels), and whether they are
// 16-bit (packed matrices of a 16-bit `type` when keep_16_bit) or float32.
struct Storage {
    std::size_t inner = 1, cols = 1, values = 0;
    bool halves = false;
};

Storage storage_of(const TensorSpec& spec, WeightType type, bool keep_16_bit) {
    Storage storage;
    const bool matrix = spec.shape.size() == 2;
    switch (spec.layout) {
        case TensorLayout::vector: storage.inner = 1, storage.cols = spec.shape[0]; break;
        case TensorLayout::rows:
        case TensorLayout::in_out: storage.inner = spec.shape[0], storage.cols = matrix ? spec.shape[1] : 1; break;
        case TensorLayout::out_in: storage.inner = matrix ? spec.shape[1] : 1, storage.cols = spec.shape[0]; break;
    }
    const bool packed = spec.layout == TensorLayout::in_out || spec.layout == TensorLayout::out_in;
    storage.values = packed ? kernels::packed_size(storage.inner, storage.cols) : element_count(spec.shape);
    storage.halves = packed && keep_16_bit && type != WeightType::f32;
    return storage;
}

// Sets out's shape from the spec and allocates the whole tensor (storage_of).
std::string allocate(const TensorSpec& spec, WeightType type, bool keep_16_bit, Weight& out) {
    out = Weight{};
    out.layout = spec.layout;
    out.head_interleave = spec.head_interleave;
    const Storage storage = storage_of(spec, type, keep_16_bit);
    out.inner = storage.inner, out.cols = storage.cols;
    const std::size_t floats = storage.values;
    if (storage.halves) {
        out.half_type = type;
        if (!out.halves.allocate(floats))
            return "out of memory: " + quoted(spec.name) + " needs " + std::to_string(floats * sizeof(std::uint16_t)) +
                   " bytes";
        std::fill_n(out.halves.data(), floats, std::uint16_t(0));  // the padding columns multiply as +0
        return {};
    }
    if (!out.values.allocate(floats))
        return "out of memory: " + quoted(spec.name) + " needs " + std::to_string(floats * sizeof(float)) + " bytes";
    // Interleaved rows are stored column by column, which leaves a last
    // panel's padding unwritten: zero it here instead.
    if (spec.head_interleave != 0) std::fill_n(out.values.data(), floats, 0.0f);
    return {};
}

}  // namespace

std::uint64_t stored_bytes(const TensorSpec& spec, WeightType type, bool keep_16_bit) {
    const Storage storage = storage_of(spec, type, keep_16_bit);
    return std::uint64_t(storage.values) * (storage.halves ? sizeof(std::uint16_t) : sizeof(float));
}

std::size_t tensor_rows(const std::vector<std::size_t>& shape) { return shape.empty() ? 1 : shape[0]; }

std::size_t row_values(const std::vector<std::size_t>& shape) {
    std::size_t values = 1;
    for (std::size_t axis = 1; axis < shape.size(); ++axis) values *= shape[axis];
    return values;
}

std::string load_weight_rows(const TensorSpec& spec, WeightType type, const void* data, RowRange range,
                             std::size_t count, Weight& out, bool keep_16_bit) {
    if (out.loaded) return quoted(spec.name) + " is already loaded";
    const auto fail = [&out](std::string error) {
        out = Weight{};
        return error;
    };
    const std::size_t total = tensor_rows(spec.shape), width = row_values(spec.shape);
    if (range.first > total || range.count > total - range.first)
        return fail(quoted(spec.name) + ": " + rows_text(range) + " are past the end of its " + std::to_string(total) +
                    " rows");
    if (range.first < out.rows_loaded)
        return fail(quoted(spec.name) + ": " + rows_text(range) + " arrive twice (rows [0, " +
                    std::to_string(out.rows_loaded) + ") are already stored)");
    if (range.first > out.rows_loaded)
        return fail(quoted(spec.name) + ": " + rows_text(range) + " arrive before rows [" +
                    std::to_string(out.rows_loaded) + ", " + std::to_string(range.first) +
                    "): a tensor's rows must arrive in order");
    if (range.count == 0 && total > 0) return fail(quoted(spec.name) + ": an empty range of rows at row " +
                                                   std::to_string(range.first));
    const std::size_t expected = range.count * width;  // <= element_count(spec.shape)
    if (count != expected) {
        if (range.first == 0 && range.count == total)
            return fail(quoted(spec.name) + " has " + std::to_string(count) + " values, but its shape " +
                        shape_text(spec.shape) + " needs " + std::to_string(expected));
        return fail(quoted(spec.name) + ": " + rows_text(range) + " have " + std::to_string(count) +
                    " values, but need " + std::to_string(expected) + " (" + std::to_string(range.count) +
                    " rows of " + std::to_string(width) + ")");
    }
    if (count > 0 && data == nullptr) return fail(quoted(spec.name) + ": no data (null address)");

    if (range.first == 0) {
        if (auto error = allocate(spec, type, keep_16_bit, out); !error.empty()) return fail(error);
    } else if (out.sixteen_bit() && type != out.half_type) {
        return fail(quoted(spec.name) + ": " + rows_text(range) + " are " + weight_type_name(type) +
                    ", but its first rows were " + weight_type_name(out.half_type));
    }
    if (auto error = store_range(spec, type, data, range, out); !error.empty()) return fail(error);
    out.rows_loaded += range.count;
    out.loaded = out.rows_loaded == total;
    return {};
}

std::string load_weight(const TensorSpec& spec, WeightType type, const void* data, std::size_t count, Weight& out,
                        bool keep_16_bit) {
    out = Weight{};
    return load_weight_rows(spec, type, data, RowRange{0, tensor_rows(spec.shape)}, count, out, keep_16_bit);
}

namespace {

// Two plain loops the compiler vectorizes: no branch per element.
void widen_bfloat16(const std::uint16_t* halves, std::size_t count, float* out) {
    for (std::size_t i = 0; i < count; ++i) out[i] = bfloat16_to_float(halves[i]);
}
void widen_float16(const std::uint16_t* halves, std::size_t count, float* out) {
    for (std::size_t i = 0; i < count; ++i) out[i] = finite_float16_to_float(halves[i]);
}

}  // namespace

PackedMatrix packed(const Weight& w) {
    PackedMatrix view;
    view.inner = w.inner;
    view.cols = w.cols;
    if (w.sixteen_bit()) {
        view.halves = w.halves.data();
        view.widen = w.half_type == WeightType::bf16 ? widen_bfloat16 : widen_float16;
    } else {
        view.panels = w.values.data();
    }
    return view;
}

}  // namespace attnlens::model
