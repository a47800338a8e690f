// bench/bench_udm.cpp - Pragma UDM: tree parse and PMDL vertex extraction
// against their floors, measured in the same run:
//   udm/memcpy_vertices      memcpy of the decompressed vertex bytes
//   udm/raw_lz4_decode       LZ4_decompress_safe of the stored vertex and index blocks
//   udm/parse_model          open_document of the model (validation + both LZ4 decodes)
//   udm/extract_positions    positions out of the parsed struct array (scaled to metres)
//   udm/import_model         import_pmdl (everything cook needs), from bytes
//   udm/fresh_streams        what the import's output alone costs: the neutral
//                            mesh's five std::vectors of the model's sizes,
//                            allocated and zero-filled (resize), then freed
//   udm/check_values         check_pmdl_values on the parsed model (UDM-PMDL-FINITE)
//   udm/parse_tree_small     a structure-heavy file: 100k elements with 3 small values each
// The model is generated in memory: one sub-mesh of 262144 vertices (48-byte
// structs, 12 MiB) and 786432 uint32 indices (3 MiB), both ArrayLz4.
#include <benchmark/benchmark.h>

#include <lz4.h>

#include <cstring>
#include <vector>

#include <untold/udm/udm.hpp>

namespace {

namespace u = untold::udm;

constexpr std::uint32_t vertex_count = 1u << 18;

struct model_fixture {
  std::vector<std::byte> file;
  u::property vertices, indices;  // the ArrayLz4 properties (compressed bytes)
  std::size_t vertex_bytes = 0, index_bytes = 0;
};

const model_fixture& model() {
  static const model_fixture m = [] {
    model_fixture f;
    u::struct_layout vl{{u::type::vector3, u::type::vector2, u::type::vector3, u::type::vector4}, {"pos", "uv", "n", "t"}};
    std::vector<std::byte> verts(std::size_t{vertex_count} * vl.size());
    for (std::uint32_t i = 0; i < vertex_count; ++i) {
      std::byte* v = verts.data() + std::size_t{i} * vl.size();
      const float x = static_cast<float>(i % 512), y = static_cast<float>(i / 512);
      u::store_value(v, u::vec3{x, y, 0.5f * x - 0.25f * y});
      u::store_value(v + 12, u::vec2{x / 512, y / 512});
      u::store_value(v + 20, u::vec3{0, 0, 1});
      u::store_value(v + 32, u::vec4{1, 0, 0, 1});
    }
    std::vector<std::uint32_t> idx;
    idx.reserve(3 * vertex_count);
    for (std::uint32_t i = 0; i < vertex_count; ++i) idx.insert(idx.end(), {i, (i + 1) % vertex_count, (i + 512) % vertex_count});
    f.vertex_bytes = verts.size();
    f.index_bytes = idx.size() * 4;
    f.vertices = u::compress_array(u::make_struct_array(vl, vertex_count, verts)).value();
    f.indices = u::compress_array(u::make_array<std::uint32_t>(idx)).value();
    u::property sub = u::make_element();
    sub.add("vertices", f.vertices);
    sub.add("indices", f.indices);
    sub.add("geometryType", u::make_string("Triangles"));
    u::property mesh = u::make_element();
    mesh.add("subMeshes", u::make_array_of(u::type::element, {u::make_asset("PMESH", 1, std::move(sub))}));
    u::property group = u::make_element();
    group.add("meshes", u::make_array_of(u::type::element, {std::move(mesh)}));
    u::property groups = u::make_element();
    groups.add("body", std::move(group));
    u::property data = u::make_element();
    data.add("materials", u::make_array_of(u::type::string, {u::make_string("white")}));
    data.add("meshGroups", std::move(groups));
    f.file = u::write_binary(u::make_asset("PMDL", 1, std::move(data))).value();
    return f;
  }();
  return m;
}

const std::vector<std::byte>& small_tree() {
  static const std::vector<std::byte> file = [] {
    u::property data = u::make_element();
    std::vector<u::property> items;
    items.reserve(100000);
    for (int i = 0; i < 100000; ++i) {
      u::property e = u::make_element();
      e.add("index", u::make_value<std::uint32_t>(static_cast<std::uint32_t>(i)));
      e.add("name", u::make_string("bone" + std::to_string(i)));
      e.add("pose", u::make_value(u::scaled_transform{}));
      items.push_back(std::move(e));
    }
    data.add("items", u::make_array_of(u::type::element, std::move(items)));
    return u::write_binary(u::make_asset("TEST", 1, std::move(data))).value();
  }();
  return file;
}

void udm_memcpy_vertices(benchmark::State& state) {
  const model_fixture& m = model();
  std::vector<std::byte> src(m.vertex_bytes, std::byte{1}), dst(m.vertex_bytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * m.vertex_bytes));
}

void udm_raw_lz4_decode(benchmark::State& state) {
  const model_fixture& m = model();
  std::vector<std::byte> v(m.vertex_bytes), i(m.index_bytes);
  for (auto _ : state) {
    const int a = LZ4_decompress_safe(reinterpret_cast<const char*>(m.vertices.bytes.data()), reinterpret_cast<char*>(v.data()),
                                      static_cast<int>(m.vertices.bytes.size()), static_cast<int>(v.size()));
    const int b = LZ4_decompress_safe(reinterpret_cast<const char*>(m.indices.bytes.data()), reinterpret_cast<char*>(i.data()),
                                      static_cast<int>(m.indices.bytes.size()), static_cast<int>(i.size()));
    benchmark::DoNotOptimize(a + b);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (m.vertex_bytes + m.index_bytes)));
}

void udm_parse_model(benchmark::State& state) {
  const model_fixture& m = model();
  for (auto _ : state) {
    auto doc = u::open_document(m.file);
    if (!doc) state.SkipWithError("parse failed");
    benchmark::DoNotOptimize(doc);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (m.vertex_bytes + m.index_bytes)));
}

void udm_extract_positions(benchmark::State& state) {
  const model_fixture& m = model();
  auto doc = u::open_document(m.file);
  auto pm = u::pmdl_from_document(*doc);
  if (!pm || pm->sub_meshes.empty()) {
    state.SkipWithError("pmdl_from_document failed");
    return;
  }
  const u::pmdl_sub_mesh& s = pm->sub_meshes[0];
  std::vector<float> out(3 * s.vertex_count());
  for (auto _ : state) {
    u::extract_positions(s, out, 0.025f);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * m.vertex_bytes));
}

void udm_import_model(benchmark::State& state) {
  const model_fixture& m = model();
  for (auto _ : state) {
    auto scene = u::import_pmdl(m.file);
    if (!scene) state.SkipWithError("import failed");
    benchmark::DoNotOptimize(scene);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (m.vertex_bytes + m.index_bytes)));
}

void udm_fresh_streams(benchmark::State& state) {
  const model_fixture& m = model();
  for (auto _ : state) {
    untold::convert::mesh mesh;
    mesh.positions.resize(3 * std::size_t{vertex_count});
    mesh.normals.resize(3 * std::size_t{vertex_count});
    mesh.tangents.resize(4 * std::size_t{vertex_count});
    mesh.uv0.resize(2 * std::size_t{vertex_count});
    mesh.indices.resize(m.index_bytes / 4);
    benchmark::DoNotOptimize(mesh.positions.data());
    benchmark::DoNotOptimize(mesh.indices.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (m.vertex_bytes + m.index_bytes)));
}

void udm_check_values(benchmark::State& state) {
  const model_fixture& m = model();
  auto doc = u::open_document(m.file);
  auto pm = u::pmdl_from_document(*doc);
  if (!pm) {
    state.SkipWithError("pmdl_from_document failed");
    return;
  }
  for (auto _ : state) {
    auto s = u::check_pmdl_values(*pm);
    if (!s) state.SkipWithError("check failed");
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * m.vertex_bytes));
}

void udm_parse_tree_small(benchmark::State& state) {
  const std::vector<std::byte>& f = small_tree();
  std::uint64_t properties = 0;
  for (auto _ : state) {
    auto doc = u::open_document(f);
    if (!doc) state.SkipWithError("parse failed");
    properties = doc->stats().property_count;
    benchmark::DoNotOptimize(doc);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * f.size()));
  state.counters["properties"] = static_cast<double>(properties);
  state.counters["properties_per_s"] =
      benchmark::Counter(static_cast<double>(properties), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(udm_memcpy_vertices)->Unit(benchmark::kMicrosecond);
BENCHMARK(udm_raw_lz4_decode)->Unit(benchmark::kMicrosecond);
BENCHMARK(udm_parse_model)->Unit(benchmark::kMicrosecond);
BENCHMARK(udm_extract_positions)->Unit(benchmark::kMicrosecond);
BENCHMARK(udm_import_model)->Unit(benchmark::kMicrosecond);
BENCHMARK(udm_fresh_streams)->Unit(benchmark::kMicrosecond);
BENCHMARK(udm_check_values)->Unit(benchmark::kMicrosecond);
BENCHMARK(udm_parse_tree_small)->Unit(benchmark::kMicrosecond);

}  // namespace
