#include "threads.hpp"

#include <algorithm>
#include <atomic>
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

void run_parts(std::size_t parts, std::size_t threads, const std::function<void(std::size_t, std::size_t)>& work) {
    if (threads <= 1) {
        for (std::size_t part = 0; part < parts; ++part) work(part, 0);
        return;
    }
    std::atomic<std::size_t> next{0};
    auto take_parts = [&](std::size_t thread) {
        for (std::size_t part = next++; part < parts; part = next++) work(part, thread);
    };
    std::vector<std::thread> helpers;
    helpers.reserve(threads - 1);
    for (std::size_t thread = 1; thread < threads; ++thread) helpers.emplace_back(take_parts, thread);
    take_parts(0);
    for (auto& helper : helpers) helper.join();
}

std::size_t ThreadPolicy::for_stage(double work, std::size_t parts) const {
    std::size_t threads = limit;
    if (automatic) threads = std::min(threads, static_cast<std::size_t>(work / 2e6));
    return std::max<std::size_t>(1, std::min(threads, parts));
}

}  // namespace attnlens
