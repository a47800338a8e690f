// bench/bench_urho3d.cpp - Urho3D readers against the floor in the same run:
//   u3d/mdl_memcpy        copy the .mdl bytes (the floor of any reader)
//   u3d/mdl_open          open_model: every structural rule, views into the buffer
//   u3d/mdl_open_deep     + index values, blend indices, finite floats
//   u3d/pak_lz4_raw       LZ4_decompress_safe over the package's blocks, no checks
//   u3d/pak_extract       open_package + extract every entry (+ SDBM checksums)
//                         into a std::vector (which zero-fills what it grows)
//   u3d/pak_extract_into  the same into one buffer the caller reuses
//                         (extract_entry_into): the floor's memory, the same checks
//   u3d/pak_sdbm          the SDBM checksums alone, over the uncompressed bytes
// The inputs are generated in memory (a 200k-vertex skinned UMD2 model and a
// ULZ4 package of it plus text), so the numbers need no data files.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <untold/urho3d/urho3d.hpp>

#if UNTOLD_HAS_LZ4
#include <lz4.h>
#endif

namespace {

namespace u3 = untold::urho3d;

struct inputs {
  std::vector<std::byte> mdl;
  std::vector<std::byte> text;
  std::vector<std::byte> pak;
  std::uint64_t pak_uncompressed = 0;
};

const inputs& data() {
  static const inputs in = [] {
    inputs r;
    constexpr std::uint32_t side = 448;  // ~200k vertices
    std::vector<u3::vertex_element> elements = {
        {u3::element_type::vector3, u3::element_semantic::position, 0, 0},
        {u3::element_type::vector3, u3::element_semantic::normal, 0, 0},
        {u3::element_type::vector2, u3::element_semantic::texcoord, 0, 0},
        {u3::element_type::vector4, u3::element_semantic::blend_weights, 0, 0},
        {u3::element_type::ubyte4, u3::element_semantic::blend_indices, 0, 0}};
    const std::uint32_t stride = u3::layout(elements);
    std::vector<std::byte> vertices(std::size_t{side} * side * stride);
    for (std::uint32_t y = 0; y < side; ++y)
      for (std::uint32_t x = 0; x < side; ++x) {
        std::byte* v = vertices.data() + (std::size_t{y} * side + x) * stride;
        const float f[12] = {float(x), std::sin(float(x + y) * 0.01f), float(y), 0, 1, 0, x / float(side), y / float(side), 0.5f, 0.5f, 0, 0};
        for (int k = 0; k < 12; ++k) untold::store_le_unchecked<float>(v + 4 * k, f[k]);
        v[48] = std::byte{static_cast<unsigned char>(x % 4)};
        v[49] = std::byte{static_cast<unsigned char>(y % 4)};
        v[50] = v[51] = std::byte{0};
      }
    std::vector<std::byte> indices;
    for (std::uint32_t y = 0; y + 1 < side; ++y)
      for (std::uint32_t x = 0; x + 1 < side; ++x) {
        const std::uint32_t i = y * side + x;
        for (std::uint32_t k : {i, i + side, i + 1, i + 1, i + side, i + side + 1}) {
          const std::size_t at = indices.size();
          indices.resize(at + 4);
          untold::store_le_unchecked<std::uint32_t>(indices.data() + at, k);
        }
      }
    u3::model m;
    m.kind = u3::model_kind::umd2;
    m.vertex_buffers.push_back({.vertex_count = side * side, .legacy_mask = 0, .elements = elements,
                                .vertex_size = stride, .morph_range_start = 0, .morph_range_count = 0,
                                .data = vertices});
    m.index_buffers.push_back({static_cast<std::uint32_t>(indices.size() / 4), 4, indices});
    m.geometries.push_back({{}, {{0, u3::primitive_type::triangle_list, 0, 0, 0, static_cast<std::uint32_t>(indices.size() / 4)}}});
    for (int b = 0; b < 4; ++b) {
      u3::bone bone;
      bone.name = b == 0 ? "root" : b == 1 ? "a" : b == 2 ? "b" : "c";
      bone.parent = b == 0 ? 0 : static_cast<std::uint32_t>(b - 1);  // a chain
      m.bones.push_back(bone);
    }
    m.bounds_max = {float(side), 1, float(side)};
    r.mdl = *u3::write_model(m);
    std::string words;
    for (int i = 0; words.size() < (1u << 20); ++i) words += "<element name=\"node" + std::to_string(i % 977) + "\" value=\"1 0 0\"/>\n";
    r.text.resize(words.size());
    std::memcpy(r.text.data(), words.data(), words.size());
    const std::vector<u3::package_input> files = {{"Models/Grid.mdl", r.mdl}, {"Scenes/Scene.xml", r.text}};
    r.pak = *u3::write_package(files, {.compress = true});
    r.pak_uncompressed = r.mdl.size() + r.text.size();
    return r;
  }();
  return in;
}

void mdl_memcpy(benchmark::State& state) {
  const auto& in = data();
  std::vector<std::byte> copy(in.mdl.size());
  for (auto _ : state) {
    std::memcpy(copy.data(), in.mdl.data(), in.mdl.size());
    benchmark::DoNotOptimize(copy.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.mdl.size()));
}

void mdl_open(benchmark::State& state, bool deep) {
  const auto& in = data();
  for (auto _ : state) {
    auto m = u3::open_model(in.mdl, {.deep_checks = deep});
    if (!m) state.SkipWithError("open_model failed");
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.mdl.size()));
}

void pak_lz4_raw(benchmark::State& state) {
#if UNTOLD_HAS_LZ4
  const auto& in = data();
  auto p = u3::open_package(in.pak);
  if (!p) {
    state.SkipWithError("open_package failed");
    return;
  }
  std::vector<char> out(in.pak_uncompressed);
  for (auto _ : state) {
    std::size_t written = 0;
    for (const auto& e : p->entries) {
      std::size_t pos = e.offset;
      for (std::uint32_t b = 0; b < e.blocks; ++b) {
        const auto unpacked = untold::load_le_unchecked<std::uint16_t>(in.pak.data() + pos);
        const auto packed = untold::load_le_unchecked<std::uint16_t>(in.pak.data() + pos + 2);
        LZ4_decompress_safe(reinterpret_cast<const char*>(in.pak.data() + pos + 4), out.data() + written, packed, unpacked);
        pos += 4 + packed;
        written += unpacked;
      }
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.pak_uncompressed));
#else
  state.SkipWithError("built without LZ4");
#endif
}

void pak_extract(benchmark::State& state) {
  const auto& in = data();
  std::vector<std::byte> out;
  for (auto _ : state) {
    auto p = u3::open_package(in.pak);
    if (!p) state.SkipWithError("open_package failed");
    for (const auto& e : p->entries)
      if (!u3::extract_entry(*p, e, out)) state.SkipWithError("extract failed");
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.pak_uncompressed));
}

void pak_extract_into(benchmark::State& state) {
  const auto& in = data();
  std::vector<std::byte> buffer(in.pak_uncompressed);  // as the floor's, allocated once
  for (auto _ : state) {
    auto p = u3::open_package(in.pak);
    if (!p) state.SkipWithError("open_package failed");
    for (const auto& e : p->entries)
      if (!u3::extract_entry_into(*p, e, std::span(buffer).first(e.size))) state.SkipWithError("extract failed");
    benchmark::DoNotOptimize(buffer.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.pak_uncompressed));
}

void pak_sdbm(benchmark::State& state) {
  const auto& in = data();
  for (auto _ : state) {
    std::uint32_t sum = u3::sdbm(in.mdl);
    sum = u3::sdbm(in.text, sum);
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in.pak_uncompressed));
}

BENCHMARK(mdl_memcpy)->Name("u3d/mdl_memcpy");
BENCHMARK_CAPTURE(mdl_open, structural, false)->Name("u3d/mdl_open");
BENCHMARK_CAPTURE(mdl_open, deep, true)->Name("u3d/mdl_open_deep");
BENCHMARK(pak_lz4_raw)->Name("u3d/pak_lz4_raw");
BENCHMARK(pak_extract)->Name("u3d/pak_extract");
BENCHMARK(pak_extract_into)->Name("u3d/pak_extract_into");
BENCHMARK(pak_sdbm)->Name("u3d/pak_sdbm");

}  // namespace
