// One weight tensor as the forward pass holds it: converted to float32 once,
// and, for the matrices every token is multiplied by, packed once into the
// kernels' panel layout (see src/kernels/simd_kernels.hpp), so no product
// repacks a weight.
#pragma once

#include <cstddef>
#include <string>

#include "float16.hpp"
#include "float_buffer.hpp"
#include "tensors.hpp"

namespace attnlens::model {

struct Weight {
    TensorLayout layout = TensorLayout::vector;
    // vector: `cols` values. rows: `inner` rows of `cols` values, row-major.
    // in_out / out_in: the right-hand operand B (inner x cols) of x B, in
    // panels: element (p, j) is at panel j / kPanelWidth, row p, column
    // j % kPanelWidth, panels of inner x kPanelWidth floats one after another.
    FloatBuffer values;
    std::size_t inner = 0, cols = 0;
    bool loaded = false;

    std::size_t bytes() const { return values.size() * sizeof(float); }
};

// Converts `count` elements of `type` at `data` (in the file's orientation,
// spec.shape) to float32 and stores them in `out` in spec.layout. Returns ""
// or a sentence naming the tensor and the problem: a count that disagrees
// with the shape, a value that is not finite (with its index), or memory
// that ran out. `out` is left empty unless it succeeds.
std::string load_weight(const TensorSpec& spec, WeightType type, const void* data, std::size_t count, Weight& out);

// out (rows x w.cols, row stride ldo) = in (rows x w.inner, row stride ldi) B
// (+ bias), for B = a packed weight; only columns [first, first + count)
// are computed, `first` a multiple of kernels::kPanelWidth: the unit a later
// split of one projection over threads would hand out.
void project_columns(const Weight& w, const Weight* bias, const float* in, std::size_t ldi, std::size_t rows,
                     float* out, std::size_t ldo, std::size_t first, std::size_t count);
// All columns.
void project(const Weight& w, const Weight* bias, const float* in, std::size_t ldi, std::size_t rows, float* out,
             std::size_t ldo);

// Column j of a packed B (its `inner` values), e.g. row j of an embedding E
// kept only as the panels of E^T: a tied LM head then costs no second copy.
void gather_column(const Weight& w, std::size_t j, float* out);

// Columns [first, first + count) of a packed B as a dense inner x count
// matrix (row stride ldo), i.e. in [in, out] orientation: for step-by-step views.
void unpack_columns(const Weight& w, std::size_t first, std::size_t count, float* out, std::size_t ldo);

}  // namespace attnlens::model
