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
// Files, side by side with cgltf (issue 30): a 112 MB grid (one mesh, 2.0 M
// vertices, 4.0 M triangles; .untold and .glb written under
// $UNTOLD_BENCH_DIR) and 2CylinderEngine ($UNTOLD_BENCH_CYLINDER_GLB, default
// Debian assimp-testmodels', and its cooked .untold, $UNTOLD_BENCH_CYLINDER,
// default $UNTOLD_BENCH_DIR/2CylinderEngine.untold: bench/run.sh cooks it);
// page cache warm, wall time:
//
//   file/cgltf/INPUT             cgltf_parse_file + cgltf_load_buffers +
//                                cgltf_validate + cgltf_free: cgltf's whole
//                                load (only with -DUNTOLD_BENCH_CGLTF_DIR=a
//                                cgltf checkout; bench/run.sh takes it from
//                                $UNTOLD_BENCH_CGLTF_DIR)
//   file/fastgltf/INPUT          fastgltf::MappedGltfFile + Parser::loadGltf
//                                (Options::None: the GLB buffer loaded) +
//                                fastgltf::validate (with
//                                -DUNTOLD_BENCH_FASTGLTF_DIR=a fastgltf
//                                checkout and libsimdjson-dev)
//   file/untold_default/INPUT    open_file with default options
//   file/untold_verified/INPUT/threads:N  open_file with integrity::full and
//                                deep checks, the pass on N threads
//                                (thread_pool.hpp; 1 = no executor): every
//                                block digest (which a version 3 integrity
//                                chunk ties to the contentHash), deep checks
//   file/untold_strict/INPUT/threads:N  the same with integrity::strict:
//                                the contentHash recomputed over the file
//                                too, one serial SHA-256 pass
//   file/decode_floor/INPUT      memcpy into new arrays of the output's size
//   file/decode/INPUT            every mesh's vertices decoded into new
//                                position, normal, tangent and uv0 arrays
//                                (decode_pbr_vertices, uninitialised storage)
//
// Counters: x_cgltf, x_fastgltf = time / the peer's (same run); x_floor =
// decode / floor;
// cpu_ms = process CPU time per iteration, all threads.
//
// Counters on the peers: untold_*_ratio = untold time / peer time for the same
// scene in the same run (0.01 = untold takes 1% of the peer's time).
// file_mb = the loaded file's size. Arguments: meshes, MiB of .untold geometry.
//
//   untold_bench --benchmark_filter='^load/'
#include "bench_common.hpp"

#include <cmath>
#include <limits>

#include <untold/thread_pool.hpp>    // the verified open's executor
#include <untold/vertex_decode.hpp>  // bulk decode; untold.hpp leaves it out

#if defined(UNTOLD_BENCH_HAVE_TINYGLTF)
#include <tiny_gltf.h>
#endif
#if defined(UNTOLD_BENCH_HAVE_CGLTF)
#define CGLTF_IMPLEMENTATION
#include <cgltf.h>
#endif
#if defined(UNTOLD_BENCH_HAVE_FASTGLTF)
#include <fastgltf/core.hpp>
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

// ---- files, side by side with cgltf --------------------------------------------------

struct file_input {
  std::filesystem::path untold, glb;
};

std::filesystem::path env_path(const char* name, const std::filesystem::path& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::filesystem::path(value) : fallback;
}

/// The grid: one mesh of 2.0 M vertices and 4.0 M triangles, 112 MB of geometry.
const file_input& grid_files() {
  static const file_input files = [] {
    const scene_spec spec{.meshes = 1, .geometry_bytes = 112'000'000};
    file_input f{untold_scene_file(spec), bench_dir() / (scene_key(spec) + ".glb")};
    if (!std::filesystem::exists(f.glb)) {
      const auto& glb = glb_scene(spec);
      if (!untold::write_file(f.glb, glb)) std::abort();
    }
    return f;
  }();
  return files;
}

const file_input& cylinder_files() {
  static const file_input files{
      env_path("UNTOLD_BENCH_CYLINDER", bench_dir() / "2CylinderEngine.untold"),
      env_path("UNTOLD_BENCH_CYLINDER_GLB",
               "/usr/share/assimp/models/glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb")};
  return files;
}

enum class input_file { grid, cylinder };
const char* input_name(input_file i) { return i == input_file::grid ? "grid" : "2CylinderEngine"; }

/// The input's files, or nullptr (and the benchmark skipped) when absent.
const file_input* input_or_skip(benchmark::State& state, input_file i) {
  const file_input& f = i == input_file::grid ? grid_files() : cylinder_files();
  if (std::filesystem::exists(f.untold) && std::filesystem::exists(f.glb)) return &f;
  state.SkipWithError(("missing " + f.untold.string() + " or " + f.glb.string() +
                       " (bench/run.sh cooks 2CylinderEngine.untold)").c_str());
  return nullptr;
}

/// Wall seconds of `body` per iteration, the files warm in the page cache.
template <class Body>
double warm_wall_loop(benchmark::State& state, Body&& body) {
  body();  // warm the page cache and the allocator
  const loop_seconds s = timed_loop(state, body);
  if (state.iterations() > 0) state.counters["cpu_ms"] = 1e3 * s.cpu / static_cast<double>(state.iterations());
  return s.wall;
}

[[maybe_unused]] std::string cgltf_key(input_file i) { return std::string("cgltf/") + input_name(i); }

#if defined(UNTOLD_BENCH_HAVE_CGLTF)
void file_cgltf(benchmark::State& state, input_file input) {
  const file_input* f = input_or_skip(state, input);
  if (!f) return;
  const std::string path = f->glb.string();
  const double s = warm_wall_loop(state, [&] {
    cgltf_options options{};
    cgltf_data* data = nullptr;
    if (cgltf_parse_file(&options, path.c_str(), &data) != cgltf_result_success ||
        cgltf_load_buffers(&options, data, path.c_str()) != cgltf_result_success ||
        cgltf_validate(data) != cgltf_result_success)
      state.SkipWithError("cgltf failed");
    benchmark::DoNotOptimize(data);
    cgltf_free(data);
  });
  set_baseline(state, cgltf_key(input), s);
  state.counters["file_mb"] = static_cast<double>(std::filesystem::file_size(f->glb)) / 1e6;
}
#endif

enum class untold_open { default_options, full_deep, strict_deep };

#if defined(UNTOLD_BENCH_HAVE_FASTGLTF)
void file_fastgltf(benchmark::State& state, input_file input) {
  const file_input* f = input_or_skip(state, input);
  if (!f) return;
  fastgltf::Parser parser;  // reused across loads, as its documentation advises
  const double s = warm_wall_loop(state, [&] {
    auto data = fastgltf::MappedGltfFile::FromPath(f->glb);
    if (!data) {
      state.SkipWithError("fastgltf: cannot map the file");
      return;
    }
    auto asset = parser.loadGltf(data.get(), f->glb.parent_path(), fastgltf::Options::None);
    if (asset.error() != fastgltf::Error::None || fastgltf::validate(asset.get()) != fastgltf::Error::None)
      state.SkipWithError("fastgltf failed");
    benchmark::DoNotOptimize(asset);
  });
  set_baseline(state, std::string("fastgltf/") + input_name(input), s);
  time_ratio(state, "x_cgltf", cgltf_key(input), s);
  state.counters["file_mb"] = static_cast<double>(std::filesystem::file_size(f->glb)) / 1e6;
}
#endif

void file_untold(benchmark::State& state, input_file input, untold_open how) {
  const file_input* f = input_or_skip(state, input);
  if (!f) return;
  const auto threads = static_cast<unsigned>(how == untold_open::default_options ? 1 : state.range(0));
  untold::thread_pool pool(threads);
  untold::open_options options{};
  if (how != untold_open::default_options) {
    options.deep_checks = true;
    options.integrity = how == untold_open::strict_deep ? untold::integrity::strict : untold::integrity::full;
    if (threads > 1) options.executor = pool.executor();
  }
  const double s = warm_wall_loop(state, [&] {
    auto a = untold::open_file(f->untold, options);
    if (!a) state.SkipWithError(a.error().describe().c_str());
    benchmark::DoNotOptimize(a);
  });
  time_ratio(state, "x_cgltf", cgltf_key(input), s);
  time_ratio(state, "x_fastgltf", std::string("fastgltf/") + input_name(input), s);
  state.counters["file_mb"] = static_cast<double>(std::filesystem::file_size(f->untold)) / 1e6;
}

/// The vertex bytes of every mesh of an opened file.
std::vector<untold::byte_span> mesh_vertices(const untold::asset& a) {
  std::vector<untold::byte_span> spans;
  for (const untold::mesh_record& m : a.meshes()) spans.push_back(a.vertices(m));
  return spans;
}

// Floats per vertex of the decoded streams: position 3, normal 3, tangent 4, uv0 2.
constexpr std::size_t stream_floats[4] = {3, 3, 4, 2};

void file_decode(benchmark::State& state, input_file input, bool floor) {
  const file_input* f = input_or_skip(state, input);
  if (!f) return;
  auto a = untold::open_file(f->untold);
  if (!a) {
    state.SkipWithError(a.error().describe().c_str());
    return;
  }
  const std::vector<untold::byte_span> meshes = mesh_vertices(a->asset);
  const double s = warm_wall_loop(state, [&] {
    std::vector<std::unique_ptr<float[]>> arrays;
    arrays.reserve(4 * meshes.size());
    for (const untold::byte_span v : meshes) {
      const std::size_t n = v.size() / untold::vertex_stride_pbr_static_v1;
      float* out[4];
      for (int k = 0; k < 4; ++k) out[k] = arrays.emplace_back(std::make_unique_for_overwrite<float[]>(stream_floats[k] * n)).get();
      if (floor) {
        for (int k = 0; k < 4; ++k) std::memcpy(out[k], v.data(), stream_floats[k] * n * sizeof(float));
      } else if (!untold::decode_pbr_vertices(v, untold::pbr_vertex_streams{.positions = {out[0], 3 * n},
                                                                         .normals = {out[1], 3 * n},
                                                                         .tangents = {out[2], 4 * n},
                                                                         .uv0 = {out[3], 2 * n}})) {
        state.SkipWithError("decode failed");
      }
    }
    benchmark::DoNotOptimize(arrays.data());
    benchmark::ClobberMemory();
  });
  const std::string key = std::string("decode_floor/") + input_name(input);
  if (floor)
    set_baseline(state, key, s);
  else
    time_ratio(state, "x_floor", key, s);
  time_ratio(state, "x_cgltf", cgltf_key(input), s);
}

void file_benchmarks() {
  for (const input_file input : {input_file::grid, input_file::cylinder}) {
    const std::string name = input_name(input);
#if defined(UNTOLD_BENCH_HAVE_CGLTF)
    benchmark::RegisterBenchmark(("file/cgltf/" + name).c_str(), file_cgltf, input)->UseRealTime();
#endif
#if defined(UNTOLD_BENCH_HAVE_FASTGLTF)
    benchmark::RegisterBenchmark(("file/fastgltf/" + name).c_str(), file_fastgltf, input)->UseRealTime();
#endif
    benchmark::RegisterBenchmark(("file/untold_default/" + name).c_str(), file_untold, input,
                                 untold_open::default_options)
        ->UseRealTime();
    for (const auto& [how, what] : {std::pair{untold_open::full_deep, "verified"}, std::pair{untold_open::strict_deep, "strict"}})
      benchmark::RegisterBenchmark(("file/untold_" + std::string(what) + "/" + name).c_str(), file_untold, input, how)
          ->ArgName("threads")
          ->Arg(1)
          ->Arg(2)
          ->UseRealTime();
    benchmark::RegisterBenchmark(("file/decode_floor/" + name).c_str(), file_decode, input, true)->UseRealTime();
    benchmark::RegisterBenchmark(("file/decode/" + name).c_str(), file_decode, input, false)->UseRealTime();
  }
}
[[maybe_unused]] const int file_benchmarks_registered = (file_benchmarks(), 0);

}  // namespace
