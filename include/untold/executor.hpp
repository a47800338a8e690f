// untold/executor.hpp - how the library runs independent jobs: on the calling
// thread (the default), or through a function the caller provides.
//
//   untold::thread_pool pool(2);                        // thread_pool.hpp, opt-in
//   untold::open_options o{.integrity = untold::integrity::full, .deep_checks = true};
//   o.executor = pool.executor();                      // open verifies blocks on 2 threads
//
// The library starts no thread of its own. An executor is two words: a
// function and the caller's pointer it is called with, so an engine can hand
// the jobs to its own job system. No std::function and no <thread> here: the
// reader includes this header (docs/compile-time.md).
#pragma once

#include <cstddef>

namespace untold {

/// A job: job(context, index) for index in [0, jobs). Jobs of one run are
/// independent: each writes only its own results.
using job_function = void (*)(void* context, std::size_t index) noexcept;

/// Runs the jobs of a batch. `run(self, jobs, job, context)` must call
/// job(context, i) exactly once for every i in [0, jobs), on any threads and
/// in any order, and return only after every call has returned. Empty (run
/// == nullptr, the default): the jobs run on the calling thread, in order.
struct executor {
  void (*run)(void* self, std::size_t jobs, job_function job, void* context) = nullptr;
  void* self = nullptr;
  /// How many threads `run` spreads jobs over (a hint for how finely to cut
  /// the work; 1 when empty).
  unsigned threads = 1;

  [[nodiscard]] bool parallel() const noexcept { return run != nullptr && threads > 1; }
};

/// Runs job(context, i) for i in [0, jobs) through `e`, or in order on the
/// calling thread when `e` is empty or there is at most one job.
inline void run_jobs(const executor& e, std::size_t jobs, job_function job, void* context) noexcept {
  if (e.run != nullptr && jobs > 1) {
    e.run(e.self, jobs, job, context);
    return;
  }
  for (std::size_t i = 0; i < jobs; ++i) job(context, i);
}

/// run_jobs with a callable `body(index)` (noexcept; it must not throw).
template <class Body>
void run_jobs(const executor& e, std::size_t jobs, Body& body) noexcept {
  run_jobs(e, jobs, [](void* context, std::size_t i) noexcept { (*static_cast<Body*>(context))(i); }, &body);
}

}  // namespace untold
