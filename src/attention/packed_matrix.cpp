#include "packed_matrix.hpp"

#include <algorithm>
#include <functional>
#include <vector>

#include "../kernels/kernels.hpp"

namespace attnlens {

namespace {

constexpr std::size_t kPanelWidth = kernels::kPanelWidth;

std::size_t panels_of(std::size_t cols) { return (cols + kPanelWidth - 1) / kPanelWidth; }

// Parts project() cuts a product with B of `cols` columns into on `threads`
// threads. A part is short, so no thread waits long for the others at a
// stage's end, and costs only an atomic increment to take. A row-major B goes
// one panel to a part: each part packs only the panel it multiplies next, so
// it is still in cache (S4 on two threads: 48 parts of 0.09 ms instead of 8
// of 0.55 ms). Panels B already holds go up to 16 parts per thread when A
// has many rows: a model's products over 128 tokens (GPT-2 small's MLP: 192
// panels) in 4 parts per thread left a part of 1.6 ms at each stage's end,
// and M on two threads ran 4-6% slower than with 16 (32 read the same as
// 16). A product of a few rows (typing: one) streams B from memory, where
// longer runs of panels read faster: 4 parts per thread (web/docs/
// performance.md, round 17).
constexpr std::size_t kManyRows = 16;

std::size_t part_count(bool row_major, std::size_t rows, std::size_t cols, std::size_t threads) {
    const std::size_t panels = panels_of(cols);
    if (threads == 1) return 1;
    if (row_major) return panels;
    return std::min(panels, (rows >= kManyRows ? 16 : 4) * threads);
}

// Element p of column j, whichever way it is stored.
float packed_element(const PackedMatrix& w, std::size_t p, std::size_t j) {
    if (w.row_major) return w.row_major[p * w.cols + j];
    const std::size_t index = j / kPanelWidth * w.inner * kPanelWidth + p * kPanelWidth + j % kPanelWidth;
    if (!w.sixteen_bit()) return w.panels[index];
    float value;
    w.widen(w.halves + index, 1, &value);
    return value;
}

}  // namespace

void LargestMagnitude::raise(float magnitude) {
    const std::int32_t raised = scalar::magnitude_bits(magnitude);
    std::int32_t seen = bits_.load(std::memory_order_relaxed);
    while (raised > seen && !bits_.compare_exchange_weak(seen, raised, std::memory_order_relaxed)) {
    }
}

float LargestMagnitude::value() const { return scalar::float_from_bits(bits_.load(std::memory_order_relaxed)); }

ProductScratch row_major_scratch(std::size_t inner, std::size_t cols, std::size_t limit) {
    // Each thread packs one panel at a time (project_columns).
    const std::size_t stride = kernels::packed_size(inner, std::min(cols, kPanelWidth));
    return {limit * stride, stride};
}

void project_columns(const PackedMatrix& w, const float* bias, const float* in, std::size_t ldi, std::size_t rows,
                     float* out, std::size_t ldo, std::size_t first, std::size_t count, float* panel_scratch) {
    if (w.row_major || w.sixteen_bit()) {
        // A panel at a time: packed (or widened) into the scratch and
        // multiplied while it is still in L1. Packing all of a 768 x 768
        // matrix first (2.4 MB) sent it out of L2 before the product read it
        // back. matmul_packed runs panel after panel anyway: the same arithmetic.
        for (std::size_t j = first; j < first + count; j += kPanelWidth) {
            const std::size_t width = std::min(kPanelWidth, first + count - j);
            if (w.row_major) {
                const float largest = kernels::pack_panels(w.row_major + j, w.cols, w.inner, width, panel_scratch);
                if (w.largest) w.largest->raise(largest);
            } else {
                w.widen(w.halves + j * w.inner, w.inner * kPanelWidth, panel_scratch);
            }
            kernels::matmul_packed(in, ldi, panel_scratch, w.inner, out + j, ldo, rows, w.inner, width,
                                   bias ? bias + j : nullptr);
        }
    } else {
        const float* panels = w.panels + first / kPanelWidth * w.inner * kPanelWidth;
        kernels::matmul_packed(in, ldi, panels, w.inner, out + first, ldo, rows, w.inner, count,
                               bias ? bias + first : nullptr);
    }
}

void project(const PackedMatrix& w, const float* bias, const float* in, std::size_t ldi, std::size_t rows, float* out,
             std::size_t ldo, const ProductRun& run) {
    project_together({{&w, bias, in, ldi, rows, out, ldo}}, run);
}

namespace {

// How project_together() cuts its products: `parts` parts for `threads`
// threads, and the work of part p on thread t.
struct ProductSplit {
    std::size_t parts = 0, threads = 1;
    std::function<void(std::size_t, std::size_t)> work;
};

// The threads `policy` gives a stage of these products: by their work, at
// most one per panel.
std::size_t stage_threads(const std::vector<Product>& products, const ThreadPolicy& policy) {
    double work = 0;
    std::size_t panels = 0;
    for (const Product& p : products) {
        const double weights = double(p.w->inner) * double(p.w->cols);
        work += stage_work(double(p.rows) * weights, weights);
        panels += panels_of(p.w->cols);
    }
    return policy.for_stage(work, panels);
}

ProductSplit split_products(std::vector<Product> products, const ProductRun& run) {
    ProductSplit split;
    split.threads = stage_threads(products, run.policy);
    if (split.threads == 1) {  // each product whole, its W packed at once
        split.parts = products.size();
        split.work = [products, run](std::size_t k, std::size_t) {
            const Product& p = products[k];
            project_columns(*p.w, p.bias, p.in, p.ldi, p.rows, p.out, p.ldo, 0, p.w->cols, run.panel_scratch);
        };
        return split;
    }
    // Each product cut into several parts per thread, so a thread slowed by
    // another process leaves its share to the others (run_parts hands parts
    // out in turn); the products' parts one after another.
    std::vector<std::size_t> first_part;  // the index of each product's first part
    for (const Product& p : products) {
        first_part.push_back(split.parts);
        split.parts += part_count(p.w->row_major != nullptr, p.rows, p.w->cols, split.threads);
    }
    split.work = [products, first_part, parts = split.parts, run](std::size_t part, std::size_t thread) {
        const std::size_t k = std::upper_bound(first_part.begin(), first_part.end(), part) - first_part.begin() - 1;
        const Product& p = products[k];
        const std::size_t own_parts = (k + 1 < first_part.size() ? first_part[k + 1] : parts) - first_part[k];
        const std::size_t local = part - first_part[k], product_panels = panels_of(p.w->cols);
        const std::size_t first = local * product_panels / own_parts * kPanelWidth;
        const std::size_t end = std::min(p.w->cols, (local + 1) * product_panels / own_parts * kPanelWidth);
        project_columns(*p.w, p.bias, p.in, p.ldi, p.rows, p.out, p.ldo, first, end - first,
                        run.panel_scratch ? run.panel_scratch + thread * run.panel_stride : nullptr);
    };
    return split;
}

}  // namespace

void project_together(std::initializer_list<Product> products, const ProductRun& run) {
    const ProductSplit split = split_products({products.begin(), products.end()}, run);
    run_parts(split.parts, split.threads, split.work);
}

std::size_t product_threads(const Product& product, const ThreadPolicy& policy) {
    return stage_threads({product}, policy);
}

std::unique_ptr<BackgroundParts> project_in_background(const Product& product, const ProductRun& run) {
    ProductSplit split = split_products({product}, run);
    return std::make_unique<BackgroundParts>(split.parts, split.threads, std::move(split.work));
}

void gather_column(const PackedMatrix& w, std::size_t j, float* out) {
    for (std::size_t p = 0; p < w.inner; ++p) out[p] = packed_element(w, p, j);
}

void unpack_columns(const PackedMatrix& w, std::size_t first, std::size_t count, float* out, std::size_t ldo,
                    std::size_t rows) {
    // Row by row, so that consecutive columns are read where they lie
    // together (a row-major row, a panel's row).
    for (std::size_t p = 0; p < std::min(rows, w.inner); ++p) {
        if (w.row_major) {
            std::copy_n(w.row_major + p * w.cols + first, count, out + p * ldo);
            continue;
        }
        for (std::size_t c = 0; c < count; ++c) out[p * ldo + c] = packed_element(w, p, first + c);
    }
}

void pack_column(const float* column, std::size_t inner, std::size_t j, float* panels) {
    float* packed = panels + j / kPanelWidth * inner * kPanelWidth + j % kPanelWidth;
    for (std::size_t p = 0; p < inner; ++p) packed[p * kPanelWidth] = column[p];
}

void pack_rows_into(const float* b, std::size_t ldb, std::size_t first, std::size_t count, std::size_t inner,
                    std::size_t cols, float* panels) {
    for (std::size_t j = 0; j < cols; j += kPanelWidth)
        kernels::pack_panels(b + j, ldb, count, std::min(kPanelWidth, cols - j),
                             panels + j / kPanelWidth * inner * kPanelWidth + first * kPanelWidth);
}

void pack_transposed_rows_into(const float* k, std::size_t ldk, std::size_t first, std::size_t count,
                               std::size_t inner, float* panels) {
    std::size_t r = 0;
    for (; r < count && (first + r) % kPanelWidth != 0; ++r) pack_column(k + r * ldk, inner, first + r, panels);
    if (r < count)
        kernels::pack_transposed_panels(k + r * ldk, ldk, count - r, inner,
                                        panels + (first + r) / kPanelWidth * inner * kPanelWidth);
}

}  // namespace attnlens
