// Upload path (docs/gpu.md, docs/benchmarks.md "GPU upload"): a .untold file
// on disk -> mapped -> every mesh's vertex and index bytes copied, one memcpy
// each, into a staging buffer, against memcpy of the same number of bytes in
// one call (the floor) in the same run. With a Vulkan device
// (UNTOLD_BENCH_HAVE_VULKAN, lavapipe here) the destination is also a mapped
// host-visible VkBuffer, which is where an engine's staging copy goes.
//
// Scene: 256 meshes, 64 MiB of geometry, uncompressed (the case where the
// file's bytes are the GPU's bytes; a compressed chunk is decoded first, see
// "Per-chunk decode"). The page cache is warm.
#include "bench_common.hpp"

#ifdef UNTOLD_BENCH_HAVE_VULKAN
#include "vulkan_offscreen.hpp"
#endif

namespace {

using namespace untold_bench;

const scene_spec gpu_scene = scene_mb(256, 64);

/// The mapped, opened scene file (opened once per process).
const untold::mapped_asset& mapped_scene() {
  static untold::mapped_asset opened = [] {
    auto a = untold::open_file(untold_scene_file(gpu_scene));
    if (!a) {
      std::fprintf(stderr, "open: %s\n", a.error().describe().c_str());
      std::abort();
    }
    return std::move(*a);
  }();
  return opened;
}

std::uint64_t geometry_bytes(const untold::asset& a) {
  std::uint64_t total = 0;
  for (const untold::mesh_record& m : a.meshes()) total += a.vertices(m).size() + a.indices(m).size();
  return total;
}

/// One memcpy per buffer of every mesh into `dst` (large enough), back to back.
void copy_meshes(const untold::asset& a, std::byte* dst) {
  for (const untold::mesh_record& m : a.meshes()) {
    const untold::byte_span v = a.vertices(m), i = a.indices(m);
    std::memcpy(dst, v.data(), v.size());
    std::memcpy(dst + v.size(), i.data(), i.size());
    dst += v.size() + i.size();
  }
}

void per_mesh_counters(benchmark::State& state, const untold::asset& a, double seconds) {
  const double meshes = static_cast<double>(a.meshes().size());
  state.counters["meshes"] = meshes;
  state.counters["bytes_per_mesh"] = static_cast<double>(geometry_bytes(a)) / meshes;
  if (state.iterations() > 0)
    state.counters["us_per_mesh"] = 1e6 * seconds / static_cast<double>(state.iterations()) / meshes;
  set_bytes(state, geometry_bytes(a));
  speed_ratio(state, "vs_memcpy", "gpu_memcpy", seconds);
}

/// The floor: the same number of bytes, heap to heap, one memcpy.
void gpu_upload_memcpy(benchmark::State& state) {
  const std::uint64_t n = geometry_bytes(mapped_scene().asset);
  std::vector<std::byte> src(n, std::byte{2}), dst(n, std::byte{1});
  const double s = cpu_loop(state, [&] {
    std::memcpy(dst.data(), src.data(), n);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  });
  set_baseline(state, "gpu_memcpy", s);
  set_bytes(state, n);
}

/// Mapped file (opened once) -> staging buffer in ordinary memory, per mesh.
void gpu_upload_mapped_to_staging(benchmark::State& state) {
  const untold::asset& a = mapped_scene().asset;
  std::vector<std::byte> staging(geometry_bytes(a), std::byte{1});
  const double s = cpu_loop(state, [&] {
    copy_meshes(a, staging.data());
    benchmark::DoNotOptimize(staging.data());
    benchmark::ClobberMemory();
  });
  per_mesh_counters(state, a, s);
}

/// The whole path per iteration: open_file (map, header/table/metadata
/// rules) then the per-mesh copies; the fresh mapping faults its pages in.
/// Argument 1: the default open (integrity::lazy; the file has the writer's
/// default block digests, so the open verifies the metadata only and the
/// copies below, through the plain accessors, are not verified); 0:
/// verify_hash = false.
void gpu_upload_open_map_copy(benchmark::State& state) {
  const std::filesystem::path path = untold_scene_file(gpu_scene);
  const untold::asset& reference = mapped_scene().asset;
  std::vector<std::byte> staging(geometry_bytes(reference), std::byte{1});
  untold::open_options options;
  options.verify_hash = state.range(0) != 0;
  const double s = cpu_loop(state, [&] {
    auto opened = untold::open_file(path, options);
    if (!opened) std::abort();
    copy_meshes(opened->asset, staging.data());
    benchmark::DoNotOptimize(staging.data());
    benchmark::ClobberMemory();
  });
  per_mesh_counters(state, reference, s);
}

#ifdef UNTOLD_BENCH_HAVE_VULKAN
/// Mapped file -> a mapped host-visible VkBuffer (an engine's staging buffer).
void gpu_upload_mapped_to_vkbuffer(benchmark::State& state) {
  std::string why_not;
  const auto device = untold::vulkan::device::create(why_not, "untold_bench");
  if (!device) {
    state.SkipWithError(("no Vulkan device: " + why_not).c_str());
    return;
  }
  const untold::asset& a = mapped_scene().asset;
  const auto buffer = device->make_buffer(geometry_bytes(a), VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
  if (!buffer) {
    state.SkipWithError("cannot allocate a host-visible buffer");
    return;
  }
  auto* dst = static_cast<std::byte*>(buffer->mapped);
  const double s = cpu_loop(state, [&] {
    copy_meshes(a, dst);
    benchmark::DoNotOptimize(dst);
    benchmark::ClobberMemory();
  });
  per_mesh_counters(state, a, s);
  state.SetLabel(device->name());
}
#endif

}  // namespace

// CPU time (cpu_loop), like bench_vertex.cpp: steadier on a shared machine.
BENCHMARK(gpu_upload_memcpy)->Unit(benchmark::kMillisecond);
BENCHMARK(gpu_upload_mapped_to_staging)->Unit(benchmark::kMillisecond);
BENCHMARK(gpu_upload_open_map_copy)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
#ifdef UNTOLD_BENCH_HAVE_VULKAN
BENCHMARK(gpu_upload_mapped_to_vkbuffer)->Unit(benchmark::kMillisecond);
#endif
