// One weight tensor as the forward pass holds it: converted to float32 once,
// and, for the matrices every token is multiplied by, packed once into the
// kernels' panel layout (see src/kernels/simd_kernels.hpp), so no product
// repacks a weight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../attention/packed_matrix.hpp"
#include "float16.hpp"
#include "../attention/float_buffer.hpp"
#include "tensors.hpp"

namespace attnlens::model {

struct Weight {
    TensorLayout layout = TensorLayout::vector;
    // vector: `cols` values. rows: `inner` rows of `cols` values, row-major.
    // in_out / out_in: the right-hand operand B (inner x cols) of x B, in
    // panels: element (p, j) is at panel j / kPanelWidth, row p, column
    // j % kPanelWidth, panels of inner x kPanelWidth floats one after another.
    FloatBuffer values;
    // in_out / out_in weights of an F16 or BF16 checkpoint loaded with
    // keep_16_bit: the same panel layout at 2 bytes a weight, in `halves`
    // (`values` stays empty); `half_type` says which of the two.
    HalfBuffer halves;
    WeightType half_type = WeightType::f32;
    std::size_t inner = 0, cols = 0;
    // TensorSpec::head_interleave: the file's row (or value) r is stored as
    // column stored_column(r).
    std::size_t head_interleave = 0;
    // Rows of the file's tensor stored so far (see RowRange); `loaded` once
    // all of them are.
    std::size_t rows_loaded = 0;
    bool loaded = false;

    bool sixteen_bit() const { return half_type != WeightType::f32; }
    std::size_t bytes() const { return values.size() * sizeof(float) + halves.size() * sizeof(std::uint16_t); }
};

// A run of a tensor's rows in the file's orientation: a tensor of shape
// [r, c, ...] has r rows of c x ... values (a 1-D tensor [n]: n rows of one
// value). Rows of a matrix [in, out] (in_out) are rows of B; rows of
// [out, in] (out_in, embeddings) are columns of B, i.e. panel columns.
struct RowRange {
    std::size_t first = 0, count = 0;
};

// Rows of a tensor of `shape`, and values per row.
std::size_t tensor_rows(const std::vector<std::size_t>& shape);

// Bytes a tensor of `spec` arriving in `type` takes once loaded: what
// load_weight_rows allocates for it (JavaScript asks, to choose the storage).
std::uint64_t stored_bytes(const TensorSpec& spec, WeightType type, bool keep_16_bit);
std::size_t row_values(const std::vector<std::size_t>& shape);

// Converts rows `range` of the tensor (`count` elements of `type` at
// `data`: range.count rows of row_values(spec.shape) values) to float32 and
// stores them in place in `out`, in spec.layout. The rows arrive in order:
// the first range starts at row 0 and allocates the whole tensor, each next
// one starts where the last ended, and the one that reaches the last row
// marks `out` loaded. A tensor can so be staged a few megabytes at a time;
// any split of the rows gives the same floats as loading it whole.
// Returns "" or a sentence naming the tensor and the problem: a count that
// disagrees with the shape or the range, rows out of order or past the end,
// a value that is not finite (with its index in the whole tensor), or memory
// that ran out. On any error `out` is left empty (rows stored before are
// dropped: the tensor must be loaded again from row 0).
// keep_16_bit: an F16 or BF16 matrix (in_out / out_in) is stored in
// `halves` instead (vectors and rows are float32 always: they are small).
std::string load_weight_rows(const TensorSpec& spec, WeightType type, const void* data, RowRange range,
                             std::size_t count, Weight& out, bool keep_16_bit = false);

// The whole tensor at once: load_weight_rows of every row.
std::string load_weight(const TensorSpec& spec, WeightType type, const void* data, std::size_t count, Weight& out,
                        bool keep_16_bit = false);

// The packed view the products take (attention/packed_matrix.hpp): its
// float32 panels, or its 16-bit ones with the widening of its type.
PackedMatrix packed(const Weight& w);

// A bias's values, or null when it is not loaded (a bias-free layer).
inline const float* bias_values(const Weight& bias) { return bias.loaded ? bias.values.data() : nullptr; }

}  // namespace attnlens::model
