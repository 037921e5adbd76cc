// An array of floats (or 16-bit weight patterns) whose allocation can fail
// without ending the program.
//
// The WebAssembly module has no C++ exceptions: when memory runs out,
// operator new (nothrow included, in emscripten's libc++) aborts the whole
// module. Weights and activations are the allocations that can be hundreds
// of megabytes, so they come from malloc, which returns null instead
// (-sABORTING_MALLOC=0), and the caller reports an error string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>

namespace attnlens {

// A wasm32 memory holds at most 2 GiB here (-sMAXIMUM_MEMORY=2GB).
constexpr std::uint64_t kMaxMemoryBytes = std::uint64_t(1) << 31;

constexpr std::size_t kCacheLine = 64;

template <typename T>
class Buffer {
public:
    Buffer() = default;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer(Buffer&& other) noexcept { swap(other); }
    Buffer& operator=(Buffer&& other) noexcept {
        Buffer(std::move(other)).swap(*this);
        return *this;
    }
    ~Buffer() { std::free(values_); }

    // Replaces the contents with `count` uninitialized values (every user
    // writes all of them first). False, leaving the buffer empty, when memory
    // ran out.
    //
    // On a cache line of its own: threads split products by 16-column panels,
    // 64 bytes of every row, and at malloc's 8- or 16-byte alignment each such
    // piece shared a line with its neighbour's, which the other thread was
    // writing at the same moment (S4's K and V on two threads: 4.0 -> 3.5 ms;
    // web/docs/performance.md, round 15).
    bool allocate(std::size_t count) {
        release();
        if (count == 0) return true;
        if (count > std::size_t(-1) / sizeof(T)) return false;
        // (posix_memalign, not aligned_alloc: no size rounded up to the line,
        // so a buffer holds the bytes it reports.)
        void* values = nullptr;
        if (posix_memalign(&values, kCacheLine, count * sizeof(T)) != 0) return false;
        values_ = static_cast<T*>(values);
        size_ = count;
        return true;
    }
    void release() {
        std::free(values_);
        values_ = nullptr;
        size_ = 0;
    }

    T* data() { return values_; }
    const T* data() const { return values_; }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T& operator[](std::size_t i) { return values_[i]; }
    T operator[](std::size_t i) const { return values_[i]; }

private:
    void swap(Buffer& other) noexcept {
        std::swap(values_, other.values_);
        std::swap(size_, other.size_);
    }

    T* values_ = nullptr;
    std::size_t size_ = 0;
};

using FloatBuffer = Buffer<float>;
// F16 or BF16 bit patterns, as a checkpoint stores them.
using HalfBuffer = Buffer<std::uint16_t>;

// Allocates each of the `count` (buffer, floats) pairs at `buffers`, all or
// none: "" or "out of memory: <what> for <tokens> tokens needs <bytes> bytes".
// One function for every list type: as a template it was compiled once per
// list type, each copy (its message included) in the module's download.
inline std::string allocate_each(const std::pair<FloatBuffer*, std::uint64_t>* buffers, std::size_t count,
                                 const char* what, std::size_t tokens) {
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < count; ++i) total += buffers[i].second;
    const std::string error = std::string("out of memory: ") + what + " for " + std::to_string(tokens) +
                              " tokens needs " + std::to_string(total * sizeof(float)) + " bytes";
    if (total * sizeof(float) > kMaxMemoryBytes) return error;
    for (std::size_t i = 0; i < count; ++i)
        if (!buffers[i].first->allocate(static_cast<std::size_t>(buffers[i].second))) {
            for (std::size_t j = 0; j < count; ++j) buffers[j].first->release();
            return error;
        }
    return {};
}

// The same for a vector of pairs (or anything with data() and size()).
template <class Buffers>
std::string allocate_each(const Buffers& buffers, const char* what, std::size_t tokens) {
    return allocate_each(buffers.data(), buffers.size(), what, tokens);
}

inline std::string allocate_all(std::initializer_list<std::pair<FloatBuffer*, std::uint64_t>> buffers,
                                const char* what, std::size_t tokens) {
    return allocate_each(buffers.begin(), buffers.size(), what, tokens);
}

}  // namespace attnlens
