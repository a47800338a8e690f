// untold/thread_pool.hpp - an executor (executor.hpp) on threads of its own,
// for callers without a job system. Opt-in: the reader never includes it, so
// translation units that open files do not pay for <thread>.
//
//   untold::thread_pool pool(2);           // 1 worker + the thread that calls open
//   untold::open_options o{.deep_checks = true, .integrity = untold::integrity::full};
//   o.executor = pool.executor();
//   auto a = untold::open(file, o);        // block digests verified on 2 threads
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "executor.hpp"

namespace untold {

/// `threads` - 1 worker threads, started here and joined by the destructor;
/// the thread that runs a batch takes jobs too, so a batch runs on
/// `threads` threads. One batch at a time: a batch started while another
/// runs (another thread's, or a job's own) runs on its caller's thread.
class thread_pool {
 public:
  explicit thread_pool(unsigned threads) : threads_(threads == 0 ? 1 : threads) {
    workers_.reserve(threads_ - 1);
    for (unsigned i = 1; i < threads_; ++i) workers_.emplace_back([this] { work(); });
  }
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  /// The executor to put in open_options::executor; valid while the pool lives.
  [[nodiscard]] untold::executor executor() noexcept { return {&thread_pool::run_batch, this, threads_}; }
  [[nodiscard]] unsigned threads() const noexcept { return threads_; }

 private:
  static void run_batch(void* self, std::size_t jobs, job_function job, void* context) {
    auto& pool = *static_cast<thread_pool*>(self);
    std::unique_lock<std::mutex> batch(pool.batch_mutex_, std::try_to_lock);
    if (!batch.owns_lock()) {  // busy: run this batch here
      for (std::size_t i = 0; i < jobs; ++i) job(context, i);
      return;
    }
    {
      // A worker late for the previous batch may still be looking at it.
      std::unique_lock<std::mutex> lock(pool.mutex_);
      pool.idle_.wait(lock, [&] { return pool.active_ == 0; });
      pool.job_ = job;
      pool.context_ = context;
      pool.jobs_ = jobs;
      pool.next_.store(0, std::memory_order_relaxed);
      ++pool.generation_;
    }
    pool.wake_.notify_all();
    pool.drain();
    // Every job is claimed; wait for the workers still running theirs.
    std::unique_lock<std::mutex> lock(pool.mutex_);
    pool.idle_.wait(lock, [&] { return pool.active_ == 0; });
  }

  void drain() noexcept {
    for (std::size_t i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < jobs_;) job_(context_, i);
  }

  void work() {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        ++active_;  // under the lock: the batch's caller waits for it to drop
      }
      drain();
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        --active_;
      }
      idle_.notify_all();
    }
  }

  unsigned threads_;
  std::vector<std::thread> workers_;
  std::mutex batch_mutex_;  // one batch at a time
  std::mutex mutex_;        // guards the batch fields, generation_, active_, stop_
  std::condition_variable wake_, idle_;
  job_function job_ = nullptr;
  void* context_ = nullptr;
  std::size_t jobs_ = 0;
  std::atomic<std::size_t> next_{0};
  std::uint64_t generation_ = 0;
  unsigned active_ = 0;
  bool stop_ = false;
};

}  // namespace untold
