// A matrix B that inputs are multiplied by (x B), held in the kernels'
// panel layout (src/kernels/simd_kernels.hpp): element (p, j) is at panel
// j / kPanelWidth, row p, column j % kPanelWidth, panels of inner x
// kPanelWidth floats one after another. A model packs its weights once at
// load (src/model/weight.hpp); multi_head_attention packs the caller's
// matrices per call. Every product of the multi-head layer goes through here.
#pragma once

#include <atomic>
#include <cstddef>
#include <initializer_list>
#include <cstdint>
#include <memory>

#include "threads.hpp"

namespace attnlens {

// Widens `count` 16-bit patterns to float32 (F16 or BF16: the model knows which).
using WidenHalves = void (*)(const std::uint16_t* halves, std::size_t count, float* out);

// The largest |value| the packings of a row-major matrix saw, kept as
// max_magnitude's bits (Infinity and NaN above every finite value): a
// caller's matrix, packed by each product anyway, is checked for NaN and
// Infinity on the way instead of by a scan of its own. Parts packed on
// different threads raise it in any order: a maximum, so the same result.
class LargestMagnitude {
public:
    void raise(float magnitude);
    float value() const;

private:
    std::atomic<std::int32_t> bits_{0};
};

// A view of B, inner x cols, in one of three storages: float32 panels;
// 16-bit panels widened a panel at a time by `widen`; or a row-major float32
// matrix (a caller's, used once) packed by each product a panel at a time
// into its thread's scratch and multiplied while still in cache. All three
// give the arithmetic of float32 panels of the same values.
struct PackedMatrix {
    const float* panels = nullptr;
    const std::uint16_t* halves = nullptr;
    WidenHalves widen = nullptr;
    const float* row_major = nullptr;  // row stride cols
    std::size_t inner = 0, cols = 0;
    // Row-major only: null, or raised by every packing of a part of B, so
    // that a call that packs all of B has found max |B|.
    LargestMagnitude* largest = nullptr;

    bool sixteen_bit() const { return halves != nullptr; }
};

// How a product runs: the thread policy, and the scratch of matrices that
// are not float32 panels, one per thread (`panel_stride` floats apart; see
// product_scratch), allocated before any thread starts.
struct ProductRun {
    ThreadPolicy policy;
    float* panel_scratch = nullptr;
    std::size_t panel_stride = 0;
};

// The scratch the products of a row-major inner x cols matrix need on up to
// `limit` threads: `floats` in all, `stride` floats per thread
// (ProductRun::panel_stride).
struct ProductScratch {
    std::size_t floats = 0, stride = 0;
};
ProductScratch row_major_scratch(std::size_t inner, std::size_t cols, std::size_t limit);

// out (rows x w.cols, row stride ldo) = in (rows x w.inner, row stride ldi) B
// (+ bias), only columns [first, first + count), `first` a multiple of
// kernels::kPanelWidth: the unit project() hands to threads. A 16-bit B is
// widened, a row-major B packed, a panel at a time into `panel_scratch`
// (w.inner x kPanelWidth floats); unused for float32 panels.
void project_columns(const PackedMatrix& w, const float* bias, const float* in, std::size_t ldi, std::size_t rows,
                     float* out, std::size_t ldo, std::size_t first, std::size_t count,
                     float* panel_scratch = nullptr);
// All columns, split by panels over the threads run.policy gives a product
// of this size. Every output element is summed in the same order whatever
// the split (never along the inner dimension): the same bits on any thread
// count. A 16-bit w needs run.panel_scratch for every thread the policy may use.
void project(const PackedMatrix& w, const float* bias, const float* in, std::size_t ldi, std::size_t rows, float* out,
             std::size_t ldo, const ProductRun& run);

// One product of project_together(): out = in w (+ bias), as project() takes it.
struct Product {
    const PackedMatrix* w;
    const float* bias;  // null = none
    const float* in;
    std::size_t ldi, rows;
    float* out;
    std::size_t ldo;
};
// project() of several products in one stage: their parts go to the same
// threads in one round, so no thread waits at the end of one product for
// the others to finish before the next begins (Q, K and V of a layer). The
// same bits as project() of each, on any thread count.
void project_together(std::initializer_list<Product> products, const ProductRun& run);

// The threads project() splits this product over under `policy` (1: it
// runs whole on the calling thread). Its `in` and `out` are not read.
std::size_t product_threads(const Product& product, const ThreadPolicy& policy);

// project() of one product started on the helper threads (threads.hpp:
// BackgroundParts), for a caller that writes other inputs meanwhile; the
// product is done once the returned parts' finish() returns. The same bits
// as project().
std::unique_ptr<BackgroundParts> project_in_background(const Product& product, const ProductRun& run);

// Column j of B (its `inner` values), e.g. row j of an embedding E kept
// only as the panels of E^T.
void gather_column(const PackedMatrix& w, std::size_t j, float* out);

// Columns [first, first + count) of B as a dense inner x count matrix (row
// stride ldo), i.e. in [in, out] orientation: for step-by-step views. Only
// B's first `rows` rows when given (the kept positions of panels that have
// room for more, packed_cache.hpp).
void unpack_columns(const PackedMatrix& w, std::size_t first, std::size_t count, float* out, std::size_t ldo,
                    std::size_t rows = std::size_t(-1));

// Writing float32 panels (inner x cols B, the layout above) a part at a
// time: a model's weights arrive a block of rows at a time
// (src/model/weight.cpp), a causal model's kept keys and values a position
// at a time (packed_cache.hpp).

// Column j of B := `column` (inner values).
void pack_column(const float* column, std::size_t inner, std::size_t j, float* panels);

// Rows [first, first + count) of B := b (count x cols, row stride ldb), in
// every panel; `inner` is B's row count (the panels' length), columns past
// `cols` in the last panel zero.
void pack_rows_into(const float* b, std::size_t ldb, std::size_t first, std::size_t count, std::size_t inner,
                    std::size_t cols, float* panels);

// Columns [first, first + count) of B = K^T := rows of K (count x inner,
// row stride ldk). Columns that start inside a panel are written one by one
// (over the padding an earlier call left), whole panels by the kernels'
// packer, which zero-pads the columns past the last one written.
void pack_transposed_rows_into(const float* k, std::size_t ldk, std::size_t first, std::size_t count,
                               std::size_t inner, float* panels);

}  // namespace attnlens
