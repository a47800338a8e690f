// untold against the peers (issue #8): the same generated scene as .untold and
// as binary glTF (.glb, glb_writer.hpp), both in memory, loaded to the same
// point: vertex and index data in memory and validated (every index below the
// vertex count, every position finite and inside the declared bounds).
//
//   load/untold_open        untold::open (record rules, no content hash) and
//                           every mesh's vertex/index span: packed, zero-copy
//   load/untold_default     the same with default open_options: the file's
//                           block digests (written by default) checked for
//                           the header, table and metadata (integrity::lazy)
//   load/untold_deep        + the deep checks (R-INDEX-VALUE, R-FINITE, R-BOUNDS)
//   load/untold_deep_decode + every mesh decoded to float streams (position,
//                           normal, tangent, uv0): what assimp hands over
//   load/tinygltf           TinyGLTF::LoadBinaryFromMemory (images by URI are
//                           not read) + accessor range checks + the same value
//                           checks on the accessors
//   load/assimp             aiImportFileFromMemory(..., aiProcess_ValidateDataStructure, "glb")
//
// Counters on the peers: untold_*_ratio = untold time / peer time for the same
// scene in the same run (0.01 = untold takes 1% of the peer's time).
// file_mb = the loaded file's size. Arguments: meshes, MiB of .untold geometry.
//
//   untold_bench --benchmark_filter='^load/'
#include "bench_common.hpp"

#include <cmath>
#include <limits>

#include <untold/vertex_decode.hpp>  // bulk decode; untold.hpp leaves it out

#if defined(UNTOLD_BENCH_HAVE_TINYGLTF)
#include <tiny_gltf.h>
#endif
#if defined(UNTOLD_BENCH_HAVE_ASSIMP)
#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#endif

namespace {

using namespace untold_bench;

scene_spec spec_of(const benchmark::State& state) {
  return scene_mb(static_cast<std::uint32_t>(state.range(0)), static_cast<std::uint64_t>(state.range(1)));
}
std::string key_of(const char* what, const benchmark::State& state) {
  return std::string(what) + "/" + std::to_string(state.range(0)) + "/" + std::to_string(state.range(1));
}

enum class untold_level { open, default_open, deep, deep_decode };

void load_untold(benchmark::State& state, untold_level level) {
  const auto& file = untold_scene(spec_of(state));
  untold::open_options options{.deep_checks = level >= untold_level::deep, .verify_hash = false};
  if (level == untold_level::default_open) options = {};
  std::uint64_t bytes = 0;
  const double s = cpu_loop(state, [&] {
    auto a = untold::open(file, options);
    if (!a) {
      state.SkipWithError("open failed");
      return;
    }
    std::vector<std::vector<float>> streams;
    if (level == untold_level::deep_decode) streams.reserve(4 * a->meshes().size());  // references below stay valid
    for (const untold::mesh_record& m : a->meshes()) {
      const untold::byte_span v = a->vertices(m), i = a->indices(m);
      bytes += v.size() + i.size();
      if (level != untold_level::deep_decode) continue;
      const std::size_t n = v.size() / untold::vertex_stride_pbr_static_v1;
      auto& pos = streams.emplace_back(3 * n);
      auto& nrm = streams.emplace_back(3 * n);
      auto& tan = streams.emplace_back(4 * n);
      auto& uv = streams.emplace_back(2 * n);
      if (!untold::decode_pbr_vertices(v, untold::pbr_vertex_streams{.positions = pos, .normals = nrm,
                                                                      .tangents = tan, .uv0 = uv}))
        state.SkipWithError("decode failed");
    }
    benchmark::DoNotOptimize(streams);
    benchmark::DoNotOptimize(a);
  });
  static const char* const names[] = {"untold_open", "untold_default", "untold_deep", "untold_deep_decode"};
  set_baseline(state, key_of(names[static_cast<int>(level)], state), s);
  state.counters["file_mb"] = static_cast<double>(file.size()) / (1 << 20);
  benchmark::DoNotOptimize(bytes);
}

[[maybe_unused]] void report_peer(benchmark::State& state, double seconds, std::size_t file_size) {
  speed_ratio(state, "untold_open_ratio", key_of("untold_open", state), seconds);
  speed_ratio(state, "untold_default_ratio", key_of("untold_default", state), seconds);
  speed_ratio(state, "untold_deep_ratio", key_of("untold_deep", state), seconds);
  speed_ratio(state, "untold_decode_ratio", key_of("untold_deep_decode", state), seconds);
  state.counters["file_mb"] = static_cast<double>(file_size) / (1 << 20);
}

#if defined(UNTOLD_BENCH_HAVE_TINYGLTF)
// Images are referenced by URI; like untold, the loader does not read them.
bool no_file(const std::string&, void*) { return false; }
std::string same_path(const std::string& p, void*) { return p; }
bool no_read(std::vector<unsigned char>*, std::string*, const std::string&, void*) { return false; }
bool no_write(std::string*, const std::string&, const std::vector<unsigned char>&, void*) { return false; }

/// The bytes of accessor `index` if they lie inside their view and buffer
/// (tightly packed or strided), else nullptr; `size` = bytes per element.
const unsigned char* accessor_data(const tinygltf::Model& model, int index, std::size_t& count, std::size_t& size,
                                   std::size_t& stride) {
  if (index < 0 || static_cast<std::size_t>(index) >= model.accessors.size()) return nullptr;
  const tinygltf::Accessor& a = model.accessors[static_cast<std::size_t>(index)];
  if (a.bufferView < 0 || static_cast<std::size_t>(a.bufferView) >= model.bufferViews.size()) return nullptr;
  const tinygltf::BufferView& v = model.bufferViews[static_cast<std::size_t>(a.bufferView)];
  if (v.buffer < 0 || static_cast<std::size_t>(v.buffer) >= model.buffers.size()) return nullptr;
  const tinygltf::Buffer& b = model.buffers[static_cast<std::size_t>(v.buffer)];
  const int components = tinygltf::GetNumComponentsInType(static_cast<std::uint32_t>(a.type));
  const int component_size = tinygltf::GetComponentSizeInBytes(static_cast<std::uint32_t>(a.componentType));
  if (components <= 0 || component_size <= 0) return nullptr;
  count = a.count;
  size = static_cast<std::size_t>(components * component_size);
  stride = v.byteStride ? v.byteStride : size;
  if (v.byteOffset > b.data.size() || v.byteLength > b.data.size() - v.byteOffset) return nullptr;
  if (count != 0 && (a.byteOffset > v.byteLength || (count - 1) * stride + size > v.byteLength - a.byteOffset))
    return nullptr;
  return b.data.data() + v.byteOffset + a.byteOffset;
}

/// What an engine checks before upload: ranges, index values, positions
/// finite and inside the accessor's min/max. Returns false on any problem.
bool validate_gltf(const tinygltf::Model& model) {
  for (const tinygltf::Mesh& mesh : model.meshes) {
    for (const tinygltf::Primitive& p : mesh.primitives) {
      std::size_t vertex_count = 0;
      for (const auto& [name, accessor] : p.attributes) {
        std::size_t count = 0, size = 0, stride = 0;
        const unsigned char* data = accessor_data(model, accessor, count, size, stride);
        if (!data) return false;
        if (vertex_count != 0 && count != vertex_count) return false;
        vertex_count = count;
        if (name != "POSITION") continue;
        const tinygltf::Accessor& a = model.accessors[static_cast<std::size_t>(accessor)];
        if (a.componentType != TINYGLTF_COMPONENT_TYPE_FLOAT || a.minValues.size() != 3 || a.maxValues.size() != 3)
          return false;
        float lo[3], hi[3];
        for (int c = 0; c < 3; ++c) {
          lo[c] = static_cast<float>(a.minValues[static_cast<std::size_t>(c)]);
          hi[c] = static_cast<float>(a.maxValues[static_cast<std::size_t>(c)]);
        }
        for (std::size_t i = 0; i < count; ++i) {
          float xyz[3];
          std::memcpy(xyz, data + i * stride, 12);
          for (int c = 0; c < 3; ++c)
            if (!std::isfinite(xyz[c]) || xyz[c] < lo[c] || xyz[c] > hi[c]) return false;
        }
      }
      std::size_t count = 0, size = 0, stride = 0;
      const unsigned char* data = accessor_data(model, p.indices, count, size, stride);
      if (!data) return false;
      std::uint32_t largest = 0;
      if (size == 2) {
        for (std::size_t i = 0; i < count; ++i) {
          std::uint16_t v;
          std::memcpy(&v, data + i * stride, 2);
          largest = std::max<std::uint32_t>(largest, v);
        }
      } else {
        for (std::size_t i = 0; i < count; ++i) {
          std::uint32_t v;
          std::memcpy(&v, data + i * stride, 4);
          largest = std::max(largest, v);
        }
      }
      if (count != 0 && largest >= vertex_count) return false;
    }
  }
  return true;
}

void load_tinygltf(benchmark::State& state) {
  const auto& file = glb_scene(spec_of(state));
  const double s = cpu_loop(state, [&] {
    tinygltf::TinyGLTF loader;
    loader.SetFsCallbacks({no_file, same_path, no_read, no_write, nullptr});
    tinygltf::Model model;
    std::string err, warn;
    const bool ok = loader.LoadBinaryFromMemory(&model, &err, &warn, reinterpret_cast<const unsigned char*>(file.data()),
                                                static_cast<unsigned int>(file.size()));
    if (!ok || !validate_gltf(model)) state.SkipWithError(("tinygltf: " + err).c_str());
    benchmark::DoNotOptimize(model);
  });
  report_peer(state, s, file.size());
}
#endif

#if defined(UNTOLD_BENCH_HAVE_ASSIMP)
void load_assimp(benchmark::State& state) {
  const auto& file = glb_scene(spec_of(state));
  const double s = cpu_loop(state, [&] {
    const aiScene* scene = aiImportFileFromMemory(reinterpret_cast<const char*>(file.data()),
                                                  static_cast<unsigned int>(file.size()),
                                                  aiProcess_ValidateDataStructure, "glb");
    if (!scene || scene->mNumMeshes == 0) state.SkipWithError(aiGetErrorString());
    benchmark::DoNotOptimize(scene);
    aiReleaseImport(scene);
  });
  report_peer(state, s, file.size());
}
#endif

// Scene size at 1000 meshes, then metadata size at 16 MiB of geometry.
void scenes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"meshes", "geometry_mb"});
  for (const int mb : {1, 16, 64, 256}) b->Args({1000, mb});
  for (const int meshes : {10, 100, 10000}) b->Args({meshes, 16});
}

BENCHMARK_CAPTURE(load_untold, untold_open, untold_level::open)->Name("load/untold_open")->Apply(scenes);
BENCHMARK_CAPTURE(load_untold, untold_default, untold_level::default_open)->Name("load/untold_default")->Apply(scenes);
BENCHMARK_CAPTURE(load_untold, untold_deep, untold_level::deep)->Name("load/untold_deep")->Apply(scenes);
BENCHMARK_CAPTURE(load_untold, untold_deep_decode, untold_level::deep_decode)
    ->Name("load/untold_deep_decode")
    ->Apply(scenes);
#if defined(UNTOLD_BENCH_HAVE_TINYGLTF)
BENCHMARK(load_tinygltf)->Name("load/tinygltf")->Apply(scenes);
#endif
#if defined(UNTOLD_BENCH_HAVE_ASSIMP)
BENCHMARK(load_assimp)->Name("load/assimp")->Apply(scenes);
#endif

}  // namespace
