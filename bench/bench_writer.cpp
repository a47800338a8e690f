// Writer throughput (issue #8): untold::builder from encoded meshes to the
// file's bytes in memory, for a 1000-mesh scene with 64 MiB of geometry.
// bytes_per_second counts output bytes; vs_memcpy = that throughput / memcpy
// of as many bytes in the same run (1.0 = as fast as copying the output once);
// size_ratio = output size / uncompressed output size; vs_memcpy_fresh =
// throughput / memcpy of as many bytes into a new buffer (page faults
// included, as for any writer's output); vs_floor = throughput /
// write_floor's: one fresh output buffer with every vertex and index copied
// into it once (the least any writer of this file does).
//
//   write_build/METHOD    add_* calls + finish() (what a converter pays)
//   write_finish/METHOD   finish() alone on a filled builder (layout,
//                         compression, hashes, the one copy into the result)
//   write_stream/METHOD   write(sink) alone on a filled builder, into a sink
//                         that only counts: what streaming to a file costs
//                         besides the kernel's copy into the page cache
//
// Default write options (content hash, and block digests when the builder
// writes them by default); _nohash turns the content hash off, _1thread
// sets write_options::threads = 1 (CPU time is the process's, so threads
// show in the Time column, not in the ratios). Peak memory:
// untold_write_driver under /usr/bin/time -v (docs/benchmarks.md).
//
//   untold_bench --benchmark_filter='write_'
#include "bench_common.hpp"

#include <cstring>
#include <memory>

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

untold::write_options options_for(untold::compression c, bool hash, unsigned threads = 0) {
  untold::write_options o = write_options_for({.compression = c});
  o.content_hash = hash;
  o.block_digests.reset();  // the builder's default
  o.threads = threads;
  return o;
}

std::size_t uncompressed_size() {
  static const std::size_t size = [] {
    untold::builder b;
    fill(b, writer_input());
    untold::write_options o = options_for(untold::compression::none, false);
    o.block_digests = false;
    return b.finish(o)->size();
  }();
  return size;
}

void write_memcpy(benchmark::State& state) {
  const std::vector<std::byte> in(uncompressed_size(), std::byte{2});
  memcpy_baseline(state, "write/memcpy", {in});
}

// memcpy of the output's size into fresh memory each time (a new buffer's
// page faults included): what producing the output once costs at best.
void write_memcpy_fresh(benchmark::State& state) {
  const std::vector<std::byte> in(uncompressed_size(), std::byte{2});
  const double t = cpu_loop(state, [&] {
    const std::unique_ptr<std::byte[]> out(new std::byte[in.size()]);
    std::memcpy(out.get(), in.data(), in.size());
    benchmark::DoNotOptimize(out.get());
    benchmark::ClobberMemory();
  });
  set_baseline(state, "write/memcpy_fresh", t);
  set_bytes(state, in.size());
}

void write_floor(benchmark::State& state) {
  const auto& s = writer_input();
  const std::size_t size = uncompressed_size();
  const double t = cpu_loop(state, [&] {
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
  set_baseline(state, "write/floor", t);
  set_bytes(state, size);
}

void report(benchmark::State& state, double seconds, std::size_t size) {
  set_bytes(state, size);
  speed_ratio(state, "vs_floor", "write/floor", seconds,
              static_cast<double>(size) / static_cast<double>(uncompressed_size()));
  speed_ratio(state, "vs_memcpy", "write/memcpy", seconds,
              static_cast<double>(size) / static_cast<double>(uncompressed_size()));
  speed_ratio(state, "vs_memcpy_fresh", "write/memcpy_fresh", seconds,
              static_cast<double>(size) / static_cast<double>(uncompressed_size()));
  state.counters["size_ratio"] = static_cast<double>(size) / static_cast<double>(uncompressed_size());
}

void write_build(benchmark::State& state, untold::compression c, bool hash, unsigned threads) {
  const auto& s = writer_input();
  const auto options = options_for(c, hash, threads);
  std::size_t size = 0;
  const double t = cpu_loop(state, [&] {
    untold::builder b;
    fill(b, s);
    auto file = b.finish(options);
    if (!file) state.SkipWithError("finish failed");
    size = file ? file->size() : 0;
    benchmark::DoNotOptimize(file);
  });
  report(state, t, size);
}

void write_finish(benchmark::State& state, untold::compression c, bool hash) {
  untold::builder b;
  fill(b, writer_input());
  const auto options = options_for(c, hash);
  std::size_t size = 0;
  const double t = cpu_loop(state, [&] {
    auto file = b.finish(options);
    if (!file) state.SkipWithError("finish failed");
    size = file ? file->size() : 0;
    benchmark::DoNotOptimize(file);
  });
  report(state, t, size);
}

void write_stream(benchmark::State& state, untold::compression c, bool hash) {
  untold::builder b;
  fill(b, writer_input());
  const auto options = options_for(c, hash);
  std::size_t size = 0;
  const double t = cpu_loop(state, [&] {
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
  report(state, t, size);
}

BENCHMARK(write_memcpy);
BENCHMARK(write_memcpy_fresh);
BENCHMARK(write_floor);
BENCHMARK_CAPTURE(write_build, none, untold::compression::none, true, 0);
BENCHMARK_CAPTURE(write_build, none_nohash, untold::compression::none, false, 0);
BENCHMARK_CAPTURE(write_build, lz4, untold::compression::lz4, true, 0);
BENCHMARK_CAPTURE(write_build, zstd, untold::compression::zstd, true, 0);
BENCHMARK_CAPTURE(write_build, zstd_1thread, untold::compression::zstd, true, 1);
BENCHMARK_CAPTURE(write_finish, none, untold::compression::none, true);
BENCHMARK_CAPTURE(write_finish, none_nohash, untold::compression::none, false);
BENCHMARK_CAPTURE(write_stream, none, untold::compression::none, true);
BENCHMARK_CAPTURE(write_stream, none_nohash, untold::compression::none, false);

}  // namespace
