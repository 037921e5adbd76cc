// An array of floats whose allocation can fail without ending the program.
//
// The WebAssembly module has no C++ exceptions: when memory runs out,
// operator new (nothrow included, in emscripten's libc++) aborts the whole
// module. Weights and activations are the allocations that can be hundreds
// of megabytes, so they come from malloc, which returns null instead
// (-sABORTING_MALLOC=0), and the caller reports an error string.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <utility>

namespace attnlens::model {

class FloatBuffer {
public:
    FloatBuffer() = default;
    FloatBuffer(const FloatBuffer&) = delete;
    FloatBuffer& operator=(const FloatBuffer&) = delete;
    FloatBuffer(FloatBuffer&& other) noexcept { swap(other); }
    FloatBuffer& operator=(FloatBuffer&& other) noexcept {
        FloatBuffer(std::move(other)).swap(*this);
        return *this;
    }
    ~FloatBuffer() { std::free(values_); }

    // Replaces the contents with `count` uninitialized floats (every user
    // writes all of them first). False, leaving the buffer empty, when memory
    // ran out.
    bool allocate(std::size_t count) {
        release();
        if (count == 0) return true;
        if (count > std::size_t(-1) / sizeof(float)) return false;
        values_ = static_cast<float*>(std::malloc(count * sizeof(float)));
        if (!values_) return false;
        size_ = count;
        return true;
    }
    void release() {
        std::free(values_);
        values_ = nullptr;
        size_ = 0;
    }

    float* data() { return values_; }
    const float* data() const { return values_; }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    float& operator[](std::size_t i) { return values_[i]; }
    float operator[](std::size_t i) const { return values_[i]; }

private:
    void swap(FloatBuffer& other) noexcept {
        std::swap(values_, other.values_);
        std::swap(size_, other.size_);
    }

    float* values_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace attnlens::model
