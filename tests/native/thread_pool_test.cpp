// run_parts' helpers live on between calls and are woken for each one
// (src/attention/threads.cpp). What must hold whatever the timing: every
// part runs exactly once per call, on a thread index below the call's thread
// count, and every call returns only after all its parts are done. A lost
// wake-up would hang here; a part run twice or skipped shows in the counts.
// CI also runs these under ThreadSanitizer (build/tsan).
#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <deque>
#include <thread>
#include <vector>

#include "attention/threads.hpp"

namespace {

struct CallRecord {
    std::vector<std::atomic<int>> runs;
    std::atomic<std::size_t> highest_thread{0};
    std::atomic<bool> helper_ran{false};

    explicit CallRecord(std::size_t parts) : runs(parts) {}

    void note(std::size_t part, std::size_t thread) {
        runs[part].fetch_add(1);
        std::size_t seen = highest_thread.load();
        while (thread > seen && !highest_thread.compare_exchange_weak(seen, thread)) {
        }
        if (thread != 0) helper_ran = true;
    }

    bool each_part_ran_once() const {
        for (const auto& count : runs)
            if (count.load() != 1) return false;
        return true;
    }
};

// A part long enough that the helpers get some of them.
float busy_work(std::size_t part) {
    float sum = 0;
    for (std::size_t i = 0; i < 20000; ++i) sum += float((i ^ part) & 7) * 0.5f;
    return sum;
}

}  // namespace

TEST_CASE("run_parts' thread pool runs every part once per call, for many calls and changing thread counts", "[threads]") {
    const std::size_t thread_counts[] = {2, 3, 8, 2, 1, 5, 2};
    bool helpers_took_parts = false;
    for (int call = 0; call < 700; ++call) {
        const std::size_t threads = thread_counts[call % 7];
        const std::size_t parts = 1 + std::size_t(call) % 23;
        CallRecord record(parts);
        std::atomic<float> sink{0};
        attnlens::run_parts(parts, threads, [&](std::size_t part, std::size_t thread) {
            record.note(part, thread);
            if (call % 50 == 0) sink = sink + busy_work(part);
        });
        INFO("call " << call << ": " << parts << " parts on " << threads << " threads");
        REQUIRE(record.each_part_ran_once());
        REQUIRE(record.highest_thread.load() < threads);
        helpers_took_parts = helpers_took_parts || record.helper_ran.load();
    }
    // Not a timing claim: 14 calls have slow parts, and a helper that never
    // ran a part in any of them would mean the pool does not work at all.
    CHECK(helpers_took_parts);
}

TEST_CASE("run_parts called from inside a part, or from two threads at once, still runs every part once", "[threads]") {
    SECTION("nested: the inner call runs on the thread that makes it") {
        CallRecord outer(6);
        std::vector<std::atomic<int>> inner_runs(6 * 10);
        std::atomic<std::size_t> highest_inner_thread{0};
        attnlens::run_parts(6, 2, [&](std::size_t part, std::size_t thread) {
            outer.note(part, thread);
            attnlens::run_parts(10, 2, [&](std::size_t inner, std::size_t inner_thread) {
                // Catch2's assertions are not thread-safe: record, check after.
                if (inner_thread > highest_inner_thread) highest_inner_thread = inner_thread;
                inner_runs[part * 10 + inner].fetch_add(1);
            });
        });
        CHECK(outer.each_part_ran_once());
        CHECK(highest_inner_thread.load() == 0);
        for (const auto& count : inner_runs) CHECK(count.load() == 1);
    }
    SECTION("concurrent callers: whichever finds the pool busy loops alone") {
        std::deque<CallRecord> records;  // deque: records hold atomics, which do not move
        for (int i = 0; i < 2 * 200; ++i) records.emplace_back(17);
        auto caller = [&](std::size_t first) {
            for (std::size_t call = 0; call < 200; ++call) {
                CallRecord& record = records[first + call];
                attnlens::run_parts(17, 2, [&](std::size_t part, std::size_t thread) { record.note(part, thread); });
            }
        };
        std::thread other(caller, 200);
        caller(0);
        other.join();
        for (const auto& record : records) {
            CHECK(record.each_part_ran_once());
            CHECK(record.highest_thread.load() < 2);
        }
    }
}

TEST_CASE("wake_helpers before a call, or from another thread during calls, changes no call's parts", "[threads]") {
    std::deque<CallRecord> records;
    for (int i = 0; i < 300; ++i) records.emplace_back(1 + std::size_t(i) % 19);
    std::atomic<bool> done{false};
    // Another thread waking the pool while runs start, run and end: it must
    // neither take a run's place nor hand helpers a part twice.
    std::thread waker([&] {
        while (!done) attnlens::wake_helpers(3);
    });
    for (std::size_t call = 0; call < records.size(); ++call) {
        const std::size_t threads = 1 + call % 3;
        if (call % 2 == 0) attnlens::wake_helpers(threads);
        CallRecord& record = records[call];
        attnlens::run_parts(record.runs.size(), threads, [&](std::size_t part, std::size_t thread) {
            record.note(part, thread);
        });
    }
    done = true;
    waker.join();
    for (std::size_t call = 0; call < records.size(); ++call) {
        INFO("call " << call);
        CHECK(records[call].each_part_ran_once());
        CHECK(records[call].highest_thread.load() < 1 + call % 3);
    }
}
