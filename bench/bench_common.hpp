// bench/bench_common.hpp - what the scene benchmarks share: ratios against a
// baseline measured earlier in the same run, and the generated scenes (in
// memory, or on disk under $UNTOLD_BENCH_DIR, default /tmp/untold-bench).
//
// Ratios. A baseline benchmark records its seconds per iteration under a key
// (every repetition; the median is used); a later benchmark turns its own
// seconds per iteration into a counter against it. A benchmark run without
// its baseline (filtered out) has no ratio counter. Baselines are registered
// before the benchmarks that use them, so they run first.
#pragma once

#include "glb_writer.hpp"
#include "scene_generator.hpp"

#include <untold/untold.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace untold_bench {

/// Process CPU seconds (what bench_vertex.cpp uses too): less disturbed by a
/// busy machine than wall time, for benchmarks that do no I/O.
[[nodiscard]] inline double cpu_seconds() noexcept {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
[[nodiscard]] inline double wall_seconds() noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Minor page faults of this process so far: fresh memory costs one per 4 KiB
/// page touched, which on this VM is a large part of writing big buffers.
[[nodiscard]] inline long minor_faults() noexcept {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

struct loop_seconds {
  double wall = 0;  // steady clock
  double cpu = 0;   // process CPU time: every thread's
};

/// Runs `body` once per iteration and returns the wall and process CPU
/// seconds the loop took; counter page_faults = minor page faults per
/// iteration. For code that runs threads, compare wall with wall (register
/// with UseRealTime() so bytes_per_second uses it too) or CPU with CPU.
template <class Body>
loop_seconds timed_loop(benchmark::State& state, Body&& body) {
  const long f0 = minor_faults();
  const double w0 = wall_seconds(), c0 = cpu_seconds();
  for (auto _ : state) body();
  const loop_seconds t{wall_seconds() - w0, cpu_seconds() - c0};
  state.counters["page_faults"] =
      benchmark::Counter(static_cast<double>(minor_faults() - f0), benchmark::Counter::kAvgIterations);
  return t;
}

/// timed_loop's process CPU seconds.
template <class Body>
double cpu_loop(benchmark::State& state, Body&& body) {
  return timed_loop(state, body).cpu;
}

/// Runs `prepare` untimed and `body` timed, once per iteration, reporting the
/// wall time of `body` as the iteration time (register with UseManualTime());
/// returns the total. For I/O, where waiting is the cost.
template <class Prepare, class Body>
double wall_loop(benchmark::State& state, Prepare&& prepare, Body&& body) {
  double total = 0;
  for (auto _ : state) {
    prepare();
    const double t0 = wall_seconds();
    body();
    const double t = wall_seconds() - t0;
    state.SetIterationTime(t);
    total += t;
  }
  return total;
}

struct baseline_run {
  std::int64_t iterations;
  double seconds_per_iteration;
};
inline std::map<std::string, std::vector<baseline_run>>& baseline_table() {
  static std::map<std::string, std::vector<baseline_run>> table;  // key -> every run of the baseline
  return table;
}

/// Records `seconds` (for the whole loop) as one run of baseline `key`.
inline void set_baseline(benchmark::State& state, const std::string& key, double seconds) {
  if (state.iterations() > 0)
    baseline_table()[key].push_back({state.iterations(), seconds / static_cast<double>(state.iterations())});
}

/// The median seconds per iteration of baseline `key`, or 0 when it did not
/// run. Only the runs with the most iterations count: google-benchmark first
/// runs a benchmark with fewer iterations to size it, and every repetition
/// then runs that size.
[[nodiscard]] inline double baseline(const std::string& key) {
  const auto it = baseline_table().find(key);
  if (it == baseline_table().end() || it->second.empty()) return 0;
  std::int64_t most = 0;
  for (const baseline_run& r : it->second) most = std::max(most, r.iterations);
  std::vector<double> v;
  for (const baseline_run& r : it->second)
    if (r.iterations == most) v.push_back(r.seconds_per_iteration);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

/// Counter `name` = (this benchmark's time per iteration) / (baseline `key`'s).
/// `work_ratio` scales for different work per iteration (this / baseline).
inline void time_ratio(benchmark::State& state, const char* name, const std::string& key, double seconds,
                       double work_ratio = 1.0) {
  const double base = baseline(key);
  if (base > 0 && state.iterations() > 0)
    state.counters[name] = seconds / static_cast<double>(state.iterations()) / (base * work_ratio);
}

/// Counter `name` = (this throughput) / (baseline throughput) for the same
/// bytes per iteration: 1.0 = as fast as the baseline, 0.5 = half as fast.
inline void speed_ratio(benchmark::State& state, const char* name, const std::string& key, double seconds,
                        double work_ratio = 1.0) {
  const double base = baseline(key);
  if (base > 0 && seconds > 0 && state.iterations() > 0)
    state.counters[name] = base * work_ratio / (seconds / static_cast<double>(state.iterations()));
}

inline void set_bytes(benchmark::State& state, std::uint64_t bytes_per_iteration) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes_per_iteration));
}

/// Baseline `key` (process CPU time; `key` + "@wall": wall time): memcpy of
/// `sources`, one after the other, into a buffer touched beforehand (no page
/// faults: the cost of moving the bytes once).
inline void memcpy_baseline(benchmark::State& state, const std::string& key,
                            std::initializer_list<untold::byte_span> sources) {
  std::size_t total = 0;
  for (const untold::byte_span& source : sources) total += source.size();
  std::vector<std::byte> out(total, std::byte{1});
  const loop_seconds s = timed_loop(state, [&] {
    std::byte* p = out.data();
    for (const untold::byte_span& source : sources) {
      std::memcpy(p, source.data(), source.size());
      p += source.size();
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  });
  set_baseline(state, key, s.cpu);
  set_baseline(state, key + "@wall", s.wall);
  set_bytes(state, total);
}

// ---- scenes --------------------------------------------------------------------------

[[nodiscard]] inline std::string scene_key(const scene_spec& s) {
  std::string key;  // appended piece by piece: g++ 12 -Wrestrict misfires on "literal" + std::string
  for (const auto& [tag, value] : {std::pair{"m", s.meshes + std::uint64_t{0}}, std::pair{"_g", s.geometry_bytes},
                                   std::pair{"_c", std::uint64_t{static_cast<unsigned>(s.compression)}},
                                   std::pair{"_l", static_cast<std::uint64_t>(s.level)},
                                   std::pair{"_s", std::uint64_t{s.seed}}}) {
    key += tag;
    key += std::to_string(value);
  }
  // Named by what the file holds: files without block digests keep the
  // names they had before digests were written by default; files with them
  // name the integrity chunk's version, so that a file an older writer left
  // on disk is not measured as this one's.
  if (write_options_for(s).writes_block_digests()) key += "_d" + std::to_string(untold::integrity_chunk_version);
  return key;
}

[[nodiscard]] inline scene_spec scene_mb(std::uint32_t meshes, std::uint64_t geometry_mb,
                                         untold::compression c = untold::compression::none) {
  return {.meshes = meshes, .geometry_bytes = geometry_mb << 20, .compression = c};
}

/// The scene as a .untold file in memory, made once per process.
inline const std::vector<std::byte>& untold_scene(const scene_spec& spec) {
  static std::map<std::string, std::vector<std::byte>> cache;
  auto& bytes = cache[scene_key(spec)];
  if (bytes.empty()) {
    auto file = write_untold(plan_scene(spec));
    if (!file) {
      std::fprintf(stderr, "scene generation failed: %s\n", file.error().describe().c_str());
      std::abort();
    }
    bytes = std::move(*file);
  }
  return bytes;
}

/// The same scene as a .glb file in memory, made once per process.
inline const std::vector<std::byte>& glb_scene(const scene_spec& spec) {
  static std::map<std::string, std::vector<std::byte>> cache;
  auto& bytes = cache[scene_key(spec)];
  if (bytes.empty()) bytes = write_glb(plan_scene(spec));
  return bytes;
}

[[nodiscard]] inline std::filesystem::path bench_dir() {
  const char* dir = std::getenv("UNTOLD_BENCH_DIR");
  return dir && *dir ? std::filesystem::path(dir) : std::filesystem::path("/tmp/untold-bench");
}

/// The scene as a .untold file on disk, written (and synced) once; later runs
/// reuse it. The name encodes the spec.
inline std::filesystem::path untold_scene_file(const scene_spec& spec) {
  const std::filesystem::path path = bench_dir() / (scene_key(spec) + ".untold");
  if (std::filesystem::exists(path)) return path;
  std::filesystem::create_directories(bench_dir());
  auto file = write_untold(plan_scene(spec));
  if (!file || !untold::write_file(path, *file)) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::abort();
  }
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd >= 0) {  // dirty pages cannot be dropped: write them out now
    (void)::fsync(fd);
    ::close(fd);
  }
  return path;
}

/// Drops `path` from the page cache (clean pages only; no mapping may hold them).
inline bool drop_from_page_cache(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  const bool ok = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  ::close(fd);
  return ok;
}

}  // namespace untold_bench
