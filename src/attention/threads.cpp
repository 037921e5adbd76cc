#include "threads.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace attnlens {

std::size_t max_threads() {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
    return 1;  // no thread support: std::thread would abort
#elif defined(ATTNLENS_THREADS)
    return ATTNLENS_THREADS;
#else
    return 1;  // native builds and the browser modules stay single-threaded unless asked
#endif
}

std::size_t usable_threads(std::size_t requested) {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
    (void)requested;
    return 1;
#else
    return std::max<std::size_t>(1, requested);
#endif
}

namespace {

// Helpers that stay alive between runs and wait for the next one, so a stage
// costs a wake-up instead of a thread start: in WebAssembly every std::thread
// is a message to a pthread worker and back (a GPT-2 forward has 73 stages).
// A helper spins for a short while after a run, because the next stage of a
// forward usually follows within microseconds, then sleeps on a condition
// variable (a futex: Atomics.wait in WebAssembly), so an idle page burns no
// core.
//
// One run at a time: a second caller (another thread, or a part calling
// run_parts again) finds the pool busy and runs its parts as a plain loop,
// which gives the same bits.
class HelperPool {
public:
    ~HelperPool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_.store(true, std::memory_order_release);
        }
        wake_.notify_all();
        for (auto& helper : helpers_) helper.join();
    }

    // Runs the parts on the calling thread and threads - 1 helpers; false
    // when the pool is busy with another run (the caller then loops alone).
    bool run(std::size_t parts, std::size_t threads, const std::function<void(std::size_t, std::size_t)>& work) {
        if (!start(parts, threads, work)) return false;
        finish();
        return true;
    }

    // The first half of run(): hands the parts to threads - 1 helpers and
    // returns at once; false when the pool is busy. finish() must follow.
    bool start(std::size_t parts, std::size_t threads, const std::function<void(std::size_t, std::size_t)>& work) {
        // A flag, not a mutex: a part calling run_parts again would try to
        // lock a mutex its own thread holds.
        if (running_.exchange(true, std::memory_order_acquire)) return false;
        const std::size_t helpers = threads - 1;
        while (helpers_.size() < helpers) {
            const std::size_t index = helpers_.size();
            helpers_.emplace_back([this, index] { serve(index); });
        }
        work_ = &work;
        parts_ = parts;
        next_.store(0, std::memory_order_relaxed);
        pending_.store(helpers, std::memory_order_relaxed);
        {
            // The run's number and its helper count travel in one word, so
            // a helper that reads it knows at once whether it takes part.
            std::lock_guard<std::mutex> lock(mutex_);
            const std::uint64_t run_number = (job_.load(std::memory_order_relaxed) >> 16) + 1;
            job_.store((run_number << 16) | helpers, std::memory_order_release);
        }
        wake_.notify_all();
        return true;
    }

    // Wakes threads - 1 helpers (started if need be) to spin for up to
    // kWarmSpin instead of kSpin, unless the pool is busy: a caller that
    // will start a run soon, after work of its own, lets them wake meanwhile.
    void warm(std::size_t threads) {
        if (running_.exchange(true, std::memory_order_acquire)) return;
        while (helpers_.size() < threads - 1) {
            const std::size_t index = helpers_.size();
            helpers_.emplace_back([this, index] { serve(index); });
        }
        warm_until_.store((Clock::now() + kWarmSpin).time_since_epoch().count(), std::memory_order_relaxed);
        {
            // A run of no helpers: each wakes, takes no part, and waits again.
            std::lock_guard<std::mutex> lock(mutex_);
            const std::uint64_t run_number = (job_.load(std::memory_order_relaxed) >> 16) + 1;
            job_.store(run_number << 16, std::memory_order_release);
        }
        running_.store(false, std::memory_order_release);
        wake_.notify_all();
    }

    // The second half: the calling thread takes the parts left, then waits
    // for the helpers to finish theirs.
    void finish() {
        take_parts(0);
        wait_until([this] { return pending_.load(std::memory_order_acquire) == 0; }, done_);
        running_.store(false, std::memory_order_release);
    }

private:
    void take_parts(std::size_t thread) {
        for (std::size_t part = next_.fetch_add(1); part < parts_; part = next_.fetch_add(1)) (*work_)(part, thread);
    }

    void serve(std::size_t index) {
        std::uint64_t seen = 0;
        for (;;) {
            std::uint64_t job = seen;
            wait_until(
                [&] {
                    job = job_.load(std::memory_order_acquire);
                    return job != seen || stopping_.load(std::memory_order_acquire);
                },
                wake_);
            if (stopping_.load(std::memory_order_acquire)) return;
            seen = job;
            if (index >= (job & 0xffff)) continue;  // not needed in this run
            take_parts(index + 1);
            if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                std::lock_guard<std::mutex> lock(mutex_);  // no lost wake-up
                done_.notify_one();
            }
        }
    }

    // Spins on `ready` for up to kSpin, then sleeps on `signal` until it
    // holds. Whoever makes it hold does so under mutex_, then notifies.
    template <typename Ready>
    void wait_until(Ready ready, std::condition_variable& signal) {
        const auto deadline =
            std::max(Clock::now() + kSpin, Clock::time_point(Clock::duration(warm_until_.load(std::memory_order_relaxed))));
        for (unsigned spins = 1;; ++spins) {
            if (ready()) return;
            if (spins % 64 == 0 && Clock::now() > deadline) break;
        }
        std::unique_lock<std::mutex> lock(mutex_);
        signal.wait(lock, ready);
    }

    using Clock = std::chrono::steady_clock;
    static constexpr std::chrono::microseconds kSpin{100};
    // Waking a sleeping helper takes it 50-100 us in Chromium (Atomics.wait),
    // and the notify costs the caller some 30 (S4: web/docs/performance.md,
    // round 16); web/lib copies S4's first matrices in 0.3-0.4 ms.
    static constexpr std::chrono::microseconds kWarmSpin{2000};

    std::atomic<bool> running_{false};  // set for a whole run
    std::mutex mutex_;                  // guards sleeping and waking
    std::condition_variable wake_, done_;
    std::vector<std::thread> helpers_;
    std::atomic<std::uint64_t> job_{0};
    std::atomic<Clock::rep> warm_until_{0};  // helpers spin till then at least
    std::atomic<bool> stopping_{false};
    const std::function<void(std::size_t, std::size_t)>* work_ = nullptr;
    std::size_t parts_ = 0;
    std::atomic<std::size_t> next_{0};
    std::atomic<std::size_t> pending_{0};
};

HelperPool& pool() {
    static HelperPool pool;
    return pool;
}

}  // namespace

void run_parts(std::size_t parts, std::size_t threads, const std::function<void(std::size_t, std::size_t)>& work) {
    // usable_threads: 1 at compile time without thread support, which drops
    // the pool from those modules.
    if (usable_threads(threads) <= 1 || parts <= 1 || !pool().run(parts, threads, work)) {
        for (std::size_t part = 0; part < parts; ++part) work(part, 0);
    }
}

void wake_helpers(std::size_t threads) {
    if (usable_threads(threads) > 1) pool().warm(usable_threads(threads));
}

BackgroundParts::BackgroundParts(std::size_t parts, std::size_t threads,
                                 std::function<void(std::size_t, std::size_t)> work)
    : work_(std::move(work)), parts_(parts) {
    started_ = usable_threads(threads) > 1 && parts > 0 && pool().start(parts, threads, work_);
}

BackgroundParts::~BackgroundParts() { finish(); }

void BackgroundParts::finish() {
    if (finished_) return;
    finished_ = true;
    if (started_) return pool().finish();
    for (std::size_t part = 0; part < parts_; ++part) work_(part, 0);
}

std::size_t ThreadPolicy::for_stage(double work, std::size_t parts) const {
    std::size_t threads = limit;
    if (automatic) threads = std::min(threads, static_cast<std::size_t>(work / 2e6));
    return std::max<std::size_t>(1, std::min(threads, parts));
}

}  // namespace attnlens
