// The one thread policy of the core: how many threads a stage of work gets,
// and how its independent parts are handed out. Multi-head layers
// (multi_head.cpp), stacked heads (attention.cpp) and the model forward
// (src/model) all split their stages through it, so results are
// bit-identical for any thread count: a stage is cut into parts whose
// results do not depend on which thread computes them or on what else runs.
#pragma once

#include <cstddef>
#include <functional>

namespace attnlens {

// Threads the core may use: ATTNLENS_THREADS (the WebAssembly pthreads
// modules define it as their worker pool size + 1), else 1. Always 1 in a
// WebAssembly build without thread support.
std::size_t max_threads();

// `requested` threads limited to what this build can run: at least 1, and 1
// in a WebAssembly build without thread support.
std::size_t usable_threads(std::size_t requested);

// Runs work(part, thread) for every part in [0, parts) on `threads`
// threads (from usable_threads()): the calling thread and threads - 1
// helpers that live on between calls (started at first use, then woken for
// each call), returning when all parts are done. A call made while another
// is running (from another thread, or from inside a part) runs its parts on
// its own thread. Each thread takes the next part nobody has taken yet, so
// a thread that starts late or shares its core with another process leaves
// more parts to the others (a fixed split waits for the slowest). The result of a part must not depend on which
// thread runs it: `thread` only picks its scratch. The parts must not
// allocate memory that could grow a WebAssembly heap: size every buffer
// before. One thread is a plain loop.
void run_parts(std::size_t parts, std::size_t threads, const std::function<void(std::size_t, std::size_t)>& work);

// Wakes the helpers a run of `threads` threads would use (a no-op on one
// thread), so that a run_parts or BackgroundParts started within about 2 ms
// finds them spinning instead of asleep (web/lib wakes them before copying
// a layer's inputs into the heap). Results are unchanged: it runs no part.
void wake_helpers(std::size_t threads);

// run_parts in two halves, for a caller with something else to do while the
// helpers start (web/lib copies a layer's K, V and W_O matrices into the
// heap while the helper projects Q). The constructor hands the parts to
// threads - 1 helpers and returns at once; finish() (or the destructor) has
// the calling thread take the parts nobody has taken yet and returns when
// all are done. The same parts as run_parts, so the same bits. While it
// runs, other run_parts calls find the pool busy and loop alone; so do
// these parts, on the calling thread in finish(), when the pool was busy or
// threads is 1.
class BackgroundParts {
public:
    BackgroundParts(std::size_t parts, std::size_t threads, std::function<void(std::size_t, std::size_t)> work);
    ~BackgroundParts();
    BackgroundParts(const BackgroundParts&) = delete;
    BackgroundParts& operator=(const BackgroundParts&) = delete;
    void finish();

private:
    std::function<void(std::size_t, std::size_t)> work_;  // the pool keeps a pointer to it until finish()
    std::size_t parts_;
    bool started_ = false, finished_ = false;
};

// How many threads a stage of `work` multiply-adds in `parts` independent
// parts gets. Explicit (exactly(n)): n, whatever the size, which tests use
// to compare thread counts bit for bit. Automatic: one more thread for
// every 2 M multiply-adds, up to max_threads(). The threshold was measured
// when each stage started its helper anew (a message to a worker in
// WebAssembly, about 0.1 ms: some 1.5 M multiply-adds of one thread's time);
// a pooled helper is cheaper to wake, but splitting a stage still costs its
// parts' packing and cache traffic, so it stays. Never more threads than
// parts.
struct ThreadPolicy {
    std::size_t limit = 1;
    bool automatic = true;

    static ThreadPolicy automatic_up_to_max() { return {max_threads(), true}; }
    static ThreadPolicy exactly(std::size_t threads) { return {usable_threads(threads), false}; }

    std::size_t for_stage(double work, std::size_t parts) const;
};

// The work, in multiply-adds, of a stage that does `multiply_adds` with
// `floats` values it reads once from memory (a product's weights, a head's
// kept keys and values): the larger of the two, each float read counting
// as kFloatReadWork multiply-adds. With one row (a cached run's one new
// position) the reads, not the arithmetic, take the time: in Node 20, one
// thread, GPT-2 small's layer products of one row read their 340 MB of
// float32 weights at ~0.36 ns a float, while a multiply-add of the SIMD
// product takes ~0.07 ns. Counted as multiply-adds alone, every product of
// such a run stayed on one thread, which cannot use all of the memory
// bandwidth two cores have.
constexpr double kFloatReadWork = 8.0;
inline double stage_work(double multiply_adds, double floats) {
    return multiply_adds > kFloatReadWork * floats ? multiply_adds : kFloatReadWork * floats;
}

}  // namespace attnlens
