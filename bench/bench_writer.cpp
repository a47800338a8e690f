// Writer throughput (issue #8, #19): untold::builder from encoded meshes to
// the file's bytes, for a 1000-mesh scene with 64 MiB of geometry.
//
// Time: WALL time, for the writers and their baselines alike (every
// benchmark here is registered with UseRealTime(), so bytes_per_second is
// wall-based too). The writer runs hashing, block digests and compression on
// write_options::threads threads (default: all cores) and finish() copies
// while it hashes: only wall time credits that, and comparing a threaded
// writer's CPU time with a single-threaded memcpy's (what google-benchmark
// does by default: the main thread's CPU time) is meaningless. Wall time is
// disturbed by other processes: run on an idle machine, with
// --benchmark_repetitions=5 (ratios use the baselines' median). The process
// CPU time (every thread's) is reported too, as cpu_vs_memcpy: the writer's
// total work against memcpy's, steadier on a busy machine.
//
// bytes_per_second counts output bytes. Counters (throughput ratios, 1.0 =
// as fast as the baseline for the same output size):
//   vs_memcpy        wall: memcpy of the output's size into a buffer touched
//                    beforehand (the "x memcpy")
//   vs_memcpy_fresh  wall: memcpy into a new buffer each time (its page
//                    faults included, as for any writer that makes new memory)
//   vs_floor         wall: write_floor, one fresh output buffer with every
//                    vertex and index copied into it once
//   cpu_vs_memcpy    process CPU time against memcpy's
// (write_sha256: one SHA-256 over as many bytes, the content hash's ceiling)
//   writer_threads   write_options::threads as resolved (0 -> cores)
//   size_ratio       output size / uncompressed output size
//
//   write_build/X    add_* calls + finish() (what a converter pays)
//   write_finish/X   finish() alone on a filled builder (layout,
//                    compression, hashes, the one copy into the result)
//   write_stream/X   write(sink) alone on a filled builder, into a sink that
//                    only counts: streaming to a file, less the kernel's copy
//
// X: none = uncompressed with the DEFAULT write options (content hash on,
// block digests as the builder defaults); _nohash: content hash off (block
// digests still default); _digests: block digests on explicitly (content
// hash on); _digests_nohash: block digests on, content hash off; _plain:
// neither; _1thread: write_options::threads = 1.
//
// Physical limits on this machine kind (docs/benchmarks.md, "Writer"): the
// content hash is one serial SHA-256 over every stored byte (2.2 GB/s with
// SHA-NI, `openssl speed -evp sha256`), so a writer with it on cannot beat
// 2.2 GB/s whatever the thread count; fresh memory costs a page fault per
// 4 KiB (write_memcpy_fresh), which bounds finish().
//
//   untold_bench --benchmark_filter='write_' --benchmark_repetitions=5
// Peak memory: untold_write_driver under /usr/bin/time -v (docs/benchmarks.md).
#include "bench_common.hpp"

#include <cstring>
#include <memory>
#include <optional>
#include <string>

namespace {

using namespace untold_bench;

constexpr std::uint32_t writer_meshes = 1000;
constexpr std::uint64_t writer_mb = 64;

/// The scene's meshes encoded once (vertex encoding is not the writer's cost).
struct encoded_scene {
  scene_plan plan;
  std::vector<std::vector<std::byte>> vertices;
  std::vector<std::vector<std::uint32_t>> indices;
};

const encoded_scene& writer_input() {
  static const encoded_scene scene = [] {
    encoded_scene s{plan_scene(scene_mb(writer_meshes, writer_mb)), {}, {}};
    for (std::uint32_t i = 0; i < s.plan.meshes.size(); ++i) {
      mesh_geometry g = make_geometry(s.plan, i);
      s.vertices.push_back(*encode_vertices(g));
      s.indices.push_back(std::move(g.indices));
    }
    return s;
  }();
  return scene;
}

void fill(untold::builder& b, const encoded_scene& s) {
  add_scene_metadata(b, s.plan);
  for (std::uint32_t i = 0; i < s.plan.meshes.size(); ++i) {
    const mesh_plan& m = s.plan.meshes[i];
    b.add_mesh({.entity = m.entity, .name = "mesh_" + std::to_string(i), .material = m.material,
                .vertices = s.vertices[i], .indices = s.indices[i], .index_type = m.index_type});
  }
}

/// A benchmarked writer configuration (std::nullopt: the builder's default).
struct writer_case {
  untold::compression compression = untold::compression::none;
  bool content_hash = true;
  std::optional<bool> block_digests{};
  unsigned threads = 0;
};

untold::write_options options_for(const writer_case& c) {
  untold::write_options o = write_options_for({.compression = c.compression});
  o.content_hash = c.content_hash;
  o.block_digests = c.block_digests;
  o.threads = c.threads;
  return o;
}

std::size_t uncompressed_size() {
  static const std::size_t size = [] {
    untold::builder b;
    fill(b, writer_input());
    return b.finish(options_for({.content_hash = false, .block_digests = false}))->size();
  }();
  return size;
}

void write_memcpy(benchmark::State& state) {
  const std::vector<std::byte> in(uncompressed_size(), std::byte{2});
  memcpy_baseline(state, "write/memcpy", {in});  // also "write/memcpy@wall"
}

// Records a baseline's wall time under `key` and its process CPU time under key@cpu.
void set_baselines(benchmark::State& state, const std::string& key, loop_seconds t) {
  set_baseline(state, key, t.wall);
  set_baseline(state, key + "@cpu", t.cpu);
}

// memcpy of the output's size into fresh memory each time (a new buffer's
// page faults included): what producing the output once costs at best.
void write_memcpy_fresh(benchmark::State& state) {
  const std::vector<std::byte> in(uncompressed_size(), std::byte{2});
  const loop_seconds t = timed_loop(state, [&] {
    const std::unique_ptr<std::byte[]> out(new std::byte[in.size()]);
    std::memcpy(out.get(), in.data(), in.size());
    benchmark::DoNotOptimize(out.get());
    benchmark::ClobberMemory();
  });
  set_baselines(state, "write/memcpy_fresh", t);
  set_bytes(state, in.size());
}

void write_floor(benchmark::State& state) {
  const auto& s = writer_input();
  const std::size_t size = uncompressed_size();
  const loop_seconds t = timed_loop(state, [&] {
    const std::unique_ptr<std::byte[]> file(new std::byte[size]);
    std::size_t at = 0;
    for (const auto& v : s.vertices) {
      std::memcpy(file.get() + at, v.data(), v.size());
      at += v.size();
    }
    for (std::size_t i = 0; i < s.indices.size(); ++i) {
      if (s.plan.meshes[i].index_type == untold::index_type::uint16) {
        for (const std::uint32_t x : s.indices[i]) {
          untold::store_le_unchecked<std::uint16_t>(file.get() + at, static_cast<std::uint16_t>(x));
          at += 2;
        }
      } else {
        std::memcpy(file.get() + at, s.indices[i].data(), 4 * s.indices[i].size());
        at += 4 * s.indices[i].size();
      }
    }
    benchmark::DoNotOptimize(file.get());
    benchmark::ClobberMemory();
  });
  set_baselines(state, "write/floor", t);
  set_bytes(state, size);
}

// One SHA-256 over the output's size (OpenSSL's, SHA-NI when the CPU has
// it): the content hash is exactly that, serial by definition (R-HASH), so
// its vs_memcpy is the ceiling of any writer's with the content hash on.
void write_sha256(benchmark::State& state) {
  const std::vector<std::byte> in(uncompressed_size(), std::byte{2});
  const loop_seconds t = timed_loop(state, [&] {
    untold::sha256 hasher;
    hasher.update(in);
    auto digest = hasher.finish();
    benchmark::DoNotOptimize(digest);
  });
  speed_ratio(state, "vs_memcpy", "write/memcpy@wall", t.wall);
  speed_ratio(state, "cpu_vs_memcpy", "write/memcpy", t.cpu);
  set_bytes(state, in.size());
}

void report(benchmark::State& state, loop_seconds t, std::size_t size, const writer_case& c) {
  set_bytes(state, size);
  const double work = static_cast<double>(size) / static_cast<double>(uncompressed_size());
  speed_ratio(state, "vs_floor", "write/floor", t.wall, work);
  speed_ratio(state, "vs_memcpy", "write/memcpy@wall", t.wall, work);
  speed_ratio(state, "vs_memcpy_fresh", "write/memcpy_fresh", t.wall, work);
  speed_ratio(state, "cpu_vs_memcpy", "write/memcpy", t.cpu, work);
  state.counters["writer_threads"] = untold::detail::worker_threads(c.threads);
  state.counters["size_ratio"] = work;
}

void write_build(benchmark::State& state, writer_case c) {
  const auto& s = writer_input();
  const auto options = options_for(c);
  std::size_t size = 0;
  const loop_seconds t = timed_loop(state, [&] {
    untold::builder b;
    fill(b, s);
    auto file = b.finish(options);
    if (!file) state.SkipWithError("finish failed");
    size = file ? file->size() : 0;
    benchmark::DoNotOptimize(file);
  });
  report(state, t, size, c);
}

void write_finish(benchmark::State& state, writer_case c) {
  untold::builder b;
  fill(b, writer_input());
  const auto options = options_for(c);
  std::size_t size = 0;
  const loop_seconds t = timed_loop(state, [&] {
    auto file = b.finish(options);
    if (!file) state.SkipWithError("finish failed");
    size = file ? file->size() : 0;
    benchmark::DoNotOptimize(file);
  });
  report(state, t, size, c);
}

void write_stream(benchmark::State& state, writer_case c) {
  untold::builder b;
  fill(b, writer_input());
  const auto options = options_for(c);
  std::size_t size = 0;
  const loop_seconds t = timed_loop(state, [&] {
    size = 0;
    const auto written = b.write(
        [&size](untold::byte_span piece) {
          size += piece.size();
          benchmark::DoNotOptimize(piece.data());
          return true;
        },
        options);
    if (!written) state.SkipWithError("write failed");
  });
  report(state, t, size, c);
}

constexpr writer_case defaults{};
constexpr writer_case nohash{.content_hash = false};
constexpr writer_case digests{.block_digests = true};
constexpr writer_case digests_nohash{.content_hash = false, .block_digests = true};
constexpr writer_case plain{.content_hash = false, .block_digests = false};
constexpr writer_case one_thread{.threads = 1};

BENCHMARK(write_memcpy)->UseRealTime();
BENCHMARK(write_memcpy_fresh)->UseRealTime();
BENCHMARK(write_floor)->UseRealTime();
BENCHMARK(write_sha256)->UseRealTime();
BENCHMARK_CAPTURE(write_build, none, defaults)->UseRealTime();
BENCHMARK_CAPTURE(write_build, none_nohash, nohash)->UseRealTime();
BENCHMARK_CAPTURE(write_build, none_plain, plain)->UseRealTime();
BENCHMARK_CAPTURE(write_build, lz4, writer_case{.compression = untold::compression::lz4})->UseRealTime();
BENCHMARK_CAPTURE(write_build, zstd, writer_case{.compression = untold::compression::zstd})->UseRealTime();
BENCHMARK_CAPTURE(write_build, zstd_1thread, writer_case{.compression = untold::compression::zstd, .threads = 1})
    ->UseRealTime();
BENCHMARK_CAPTURE(write_finish, none, defaults)->UseRealTime();
BENCHMARK_CAPTURE(write_finish, none_1thread, one_thread)->UseRealTime();
BENCHMARK_CAPTURE(write_finish, none_nohash, nohash)->UseRealTime();
BENCHMARK_CAPTURE(write_finish, none_digests, digests)->UseRealTime();
BENCHMARK_CAPTURE(write_finish, none_digests_nohash, digests_nohash)->UseRealTime();
BENCHMARK_CAPTURE(write_finish, none_plain, plain)->UseRealTime();
BENCHMARK_CAPTURE(write_stream, none, defaults)->UseRealTime();
BENCHMARK_CAPTURE(write_stream, none_nohash, nohash)->UseRealTime();
BENCHMARK_CAPTURE(write_stream, none_digests, digests)->UseRealTime();
BENCHMARK_CAPTURE(write_stream, none_plain, plain)->UseRealTime();

}  // namespace
