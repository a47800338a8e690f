// Budget tests (issue 27) of the assetc family and of .untold: every command
// that reads them (info --json, validate --deep, dump, dump --json, check
// DIR, and cook of a generated glTF into .untold) runs on generated inputs
// at three sizes (1x, 10x, 100x), and its peak heap and output must stay
// within "k x input + C" (budget_support.hpp; no timing). A stage whose
// memory or output grew faster than the input (a whole report held in
// memory, a quadratic lookup) fails the 100x run. The bounds are stated in
// SECURITY.md, "The budget".
#include "budget_support.hpp"

#include <cmath>
#include <functional>

#include <untold/assetc/assetc.hpp>
#include <untold/untold.hpp>

using namespace cli_test;

namespace {

namespace ua = untold::assetc;

constexpr std::uint32_t scales[] = {1, 10, 100};

template <class R>
std::vector<std::byte> must(R r) {
  REQUIRE_MESSAGE(r.has_value(), r.error().describe());
  return std::move(*r);
}

// ---- generated assetc files: each about 4-15 KB at scale 1 -------------------------------

std::vector<std::byte> make_hmesh(std::uint32_t s) {
  const std::uint32_t vertices = 128 * s, triangles = 128 * s;
  std::vector<std::byte> vtx(std::size_t{vertices} * untold::gpu_vertex_stride);
  for (std::uint32_t v = 0; v < vertices; ++v) {
    const float p[3] = {static_cast<float>(v % 97), static_cast<float>(v / 97), 0};
    std::memcpy(vtx.data() + std::size_t{v} * untold::gpu_vertex_stride, p, sizeof p);
  }
  std::vector<std::uint32_t> idx;
  for (std::uint32_t t = 0; t < triangles; ++t)
    for (std::uint32_t c = 0; c < 3; ++c) idx.push_back((t + c) % vertices);
  std::vector<ua::joint> joints(8 * s);
  for (std::uint32_t j = 1; j < joints.size(); ++j) joints[j].parent = static_cast<std::int32_t>(j - 1);
  std::vector<std::uint64_t> materials(8 * s, ua::hash_ref("m"));
  const ua::submesh sub{.first_index = 0, .index_count = static_cast<std::uint32_t>(idx.size()), .material_slot = 0};
  ua::hmesh_input in;
  in.vertices = vtx;
  in.indices = idx;
  in.materials = materials;
  in.submeshes = std::span(&sub, 1);
  in.skeleton = joints;
  return must(ua::write_hmesh(in));
}

std::vector<std::byte> make_hmat(std::uint32_t s) {
  std::vector<ua::material> rows(32 * s);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].base_color_tex = ua::hash_ref("t/" + std::to_string(i % 7));
  return must(ua::write_hmat(rows));
}

/// Entries naming files that do not exist: each one is a check problem.
std::vector<std::byte> make_hman(std::uint32_t s) {
  std::vector<std::string> paths;
  for (std::uint32_t i = 0; i < 256 * s; ++i) paths.push_back("t/" + std::to_string(i) + ".ktx2");
  std::vector<ua::manifest_entry> entries;
  for (const std::string& p : paths) entries.push_back({ua::hash_ref(ua::strip_extension(p)), 0, 1, p});
  return must(ua::write_hman(entries));
}

std::vector<std::byte> make_hpack(std::uint32_t s) {
  std::vector<std::string> paths;
  const std::vector<std::byte> payload(40, std::byte{7});
  for (std::uint32_t i = 0; i < 64 * s; ++i) paths.push_back("f/" + std::to_string(i) + ".bin");
  std::vector<ua::pack_file> files;
  for (const std::string& p : paths) files.push_back({p, payload});
  return must(ua::write_hpack(files));
}

std::vector<std::byte> make_hanim(std::uint32_t s) {
  std::vector<float> times(32), values(32 * 4);
  for (std::size_t k = 0; k < times.size(); ++k) times[k] = static_cast<float>(k);
  std::vector<ua::anim_channel_input> channels;
  for (std::uint32_t j = 0; j < 4; ++j) {
    channels.push_back({.joint = j, .path = ua::anim_path::translation, .times = times,
                        .values = std::span(values).first(times.size() * 3)});
    channels.push_back({.joint = j, .path = ua::anim_path::rotation, .times = times, .values = values});
  }
  std::vector<std::string> names;
  for (std::uint32_t c = 0; c < 2 * s; ++c) names.push_back("clip" + std::to_string(c));
  std::vector<ua::anim_clip_input> clips;
  for (const std::string& n : names) clips.push_back({n, 31, channels});
  return must(ua::write_hanim(clips));
}

struct generated {
  const char* name;
  std::vector<std::byte> (*make)(std::uint32_t);
};
constexpr generated assetc_files[] = {{"mesh.hmesh", make_hmesh}, {"mesh.hmat", make_hmat},
                                      {"assets.hman", make_hman}, {"runtime.hpack", make_hpack},
                                      {"mesh.hanim", make_hanim}};

/// Runs `untold COMMAND FILE` for FILE = make(s) at every scale, within `bound`.
void check_scales(const std::string& test, const generated& g, const std::string& command, const budget_bound& bound) {
  const fs::path dir = scratch(test);
  for (const std::uint32_t s : scales) {
    const std::vector<std::byte> bytes = g.make(s);
    const fs::path path = write_bytes(dir / (std::to_string(s) + "_" + g.name), bytes);
    CAPTURE(command);
    CAPTURE(path);
    const measured_run m = run_untold_measured(command + " " + quoted(path));
    CHECK_MESSAGE(m.run.exit_code == 0, m.run.err);
    check_within(m, bytes.size(), bound);
  }
}

// ---- .untold and glTF ------------------------------------------------------------------

/// 64 x s entities, each with a one-triangle mesh and a material.
std::vector<std::byte> make_untold(std::uint32_t s) {
  untold::builder b;
  const std::array<float, 9> pos{0, 0, 0, 1, 0, 0, 0, 1, 0};
  const std::array<float, 9> nrm{0, 0, 1, 0, 0, 1, 0, 0, 1};
  const auto vertices = untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = pos, .normals = nrm});
  REQUIRE(vertices.has_value());
  const std::array<std::uint32_t, 3> idx{0, 1, 2};
  std::uint32_t parent = untold::none;
  for (std::uint32_t i = 0; i < 64 * s; ++i) {
    const std::string name = "e" + std::to_string(i);
    const auto e = b.add_entity({.name = name, .parent = i % 8 == 0 ? untold::none : parent});
    parent = e;
    const auto m = b.add_material({.name = name});
    b.add_mesh({.entity = e, .name = name, .material = m, .vertices = *vertices, .indices = idx});
  }
  return must(b.finish());
}

std::string base64(std::span<const std::byte> bytes) {
  static constexpr char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string s;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 3; ++k) v = v << 8 | (k < n ? static_cast<std::uint8_t>(bytes[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) s += k <= n ? digits[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return s;
}

/// A glTF 2.0 grid of n x n vertices, positions and uint32 indices in one
/// base64 buffer (a single file: no side files to count).
std::string make_gltf(std::uint32_t n) {
  std::vector<std::byte> buffer;
  const auto put = [&buffer](const void* p, std::size_t size) {
    const auto* b = static_cast<const std::byte*>(p);
    buffer.insert(buffer.end(), b, b + size);
  };
  for (std::uint32_t y = 0; y < n; ++y)
    for (std::uint32_t x = 0; x < n; ++x) {
      const float p[3] = {static_cast<float>(x), static_cast<float>(y), std::sin(static_cast<float>(x * y))};
      put(p, sizeof p);
    }
  const std::size_t positions = buffer.size();
  std::uint32_t indices = 0;
  for (std::uint32_t y = 0; y + 1 < n; ++y)
    for (std::uint32_t x = 0; x + 1 < n; ++x) {
      const std::uint32_t a = y * n + x, q[6] = {a, a + 1, a + n, a + 1, a + n + 1, a + n};
      put(q, sizeof q);
      indices += 6;
    }
  const float extent = static_cast<float>(n - 1);
  return R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],)"
         R"("meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":1}]}],)"
         R"("accessors":[{"bufferView":0,"componentType":5126,"count":)" +
         std::to_string(n * n) + R"(,"type":"VEC3","min":[0,0,-1],"max":[)" + std::to_string(extent) + "," +
         std::to_string(extent) + R"(,1]},{"bufferView":1,"componentType":5125,"count":)" + std::to_string(indices) +
         R"(,"type":"SCALAR"}],"bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":)" + std::to_string(positions) +
         R"(},{"buffer":0,"byteOffset":)" + std::to_string(positions) + R"(,"byteLength":)" +
         std::to_string(buffer.size() - positions) + R"(}],"buffers":[{"byteLength":)" + std::to_string(buffer.size()) +
         R"(,"uri":"data:application/octet-stream;base64,)" + base64(buffer) + R"("}]})";
}

}  // namespace

TEST_CASE("budget: assetc info --json, validate --deep, dump and dump --json at 1x, 10x, 100x") {
  // Readers hold views of the mapped file plus one small struct per entry
  // (measured: at most 1.4 x the input, a .hman's entry vector); info and
  // validate print a fixed-size summary. dump builds one JSON value per
  // record: at most 35 x the input (a .hanim's keys, 16-20 bytes each), and
  // prints at most 9.5 x.
  const budget_bound info{.heap_per_input_byte = 3, .heap_constant = 1 << 20, .output_per_input_byte = 0.05,
                          .output_constant = 8192};
  const budget_bound dump{.heap_per_input_byte = 48, .heap_constant = 1 << 20, .output_per_input_byte = 12,
                          .output_constant = 64 << 10};
  for (const generated& g : assetc_files) {
    CAPTURE(g.name);
    check_scales("budget_assetc_info", g, "info --json", info);
    check_scales("budget_assetc_validate", g, "validate --deep", info);
    check_scales("budget_assetc_dump_json", g, "dump --json", dump);
    check_scales("budget_assetc_dump", g, "dump", dump);
  }
}

TEST_CASE("budget: check DIR streams its report (text and JSON) at 1x, 10x, 100x") {
  // Every .hman entry names a missing file: one problem each, printed as it
  // is found (measured: heap 0.4 x the tree, output 4.4 x with --json).
  // Holding the report, as check did, took ~5 KB of heap per 13-byte entry.
  const budget_bound bound{.heap_per_input_byte = 2, .heap_constant = 1 << 20, .output_per_input_byte = 8,
                           .output_constant = 8192};
  for (const bool as_json : {false, true}) {
    CAPTURE(as_json);
    for (const std::uint32_t s : scales) {
      const fs::path dir = scratch("budget_check_" + std::to_string(s));
      std::uint64_t input = 0;
      for (const generated& g : assetc_files) input += fs::file_size(write_bytes(dir / g.name, g.make(s)));
      const measured_run m = run_untold_measured(std::string("check ") + (as_json ? "--json --deep " : "--deep ") +
                                                 quoted(dir));
      CHECK(m.run.exit_code == 1);  // the manifest's files are missing
      const std::string entries = as_json ? "\"manifestEntries\": " + std::to_string(256 * s)
                                          : std::to_string(256 * s) + " entries";
      CHECK(m.run.out.find(entries) != std::string::npos);
      check_within(m, input, bound);
    }
  }
}

TEST_CASE("budget: .untold info --json, validate --deep, dump and dump --json at 1x, 10x, 100x") {
  const generated untold_file{"tile.untold", make_untold};
  // info lists the chunk table (at most limits::max_chunks rows) and counts.
  const budget_bound summary{.heap_per_input_byte = 1, .heap_constant = 1 << 20, .output_per_input_byte = 0.05,
                             .output_constant = 16 << 10};
  check_scales("budget_untold_info", untold_file, "info --json", summary);
  check_scales("budget_untold_validate", untold_file, "validate --deep", summary);
  // dump streams record by record: heap stays at one record plus the entity
  // tree's index (measured 0.1 x); output 4.8 x with --json.
  const budget_bound dump{.heap_per_input_byte = 1, .heap_constant = 1 << 20, .output_per_input_byte = 8,
                          .output_constant = 16 << 10};
  check_scales("budget_untold_dump", untold_file, "dump", dump);
  check_scales("budget_untold_dump_json", untold_file, "dump --json", dump);
}

TEST_CASE("budget: cook of a generated glTF at 1x, 10x, 100x") {
  // assimp's scene, the neutral scene and the writer's buffers, each linear
  // (measured: 15.5 x the glTF's bytes; the .untold is 0.9 x).
  const budget_bound bound{.heap_per_input_byte = 24, .heap_constant = 4 << 20, .output_per_input_byte = 2,
                           .output_constant = 8192};
  const fs::path dir = scratch("budget_cook_gltf");
  for (const std::uint32_t n : {16u, 50u, 160u}) {
    const fs::path gltf = dir / ("grid" + std::to_string(n) + ".gltf");
    std::ofstream(gltf, std::ios::binary) << make_gltf(n);
    const fs::path out = dir / ("grid" + std::to_string(n) + ".untold");
    const measured_run m = run_untold_measured("cook -q " + quoted(gltf) + " -o " + quoted(out), {out});
    REQUIRE_MESSAGE(m.run.exit_code == 0, m.run.err);
    check_within(m, fs::file_size(gltf), bound);
  }
}

TEST_CASE("budget: convert of a .untold to .glb, .gltf, .mdl and .untold at 1x, 10x, 100x") {
  // from_untold's scene (every entity a node, every record a mesh) and the
  // writer's output, each linear in the file; the writer reads its output
  // back before it is written.
  const budget_bound bound{.heap_per_input_byte = 64, .heap_constant = 8 << 20, .output_per_input_byte = 8,
                           .output_constant = 64 << 10};
  for (const char* extension : {".glb", ".gltf", ".mdl", ".untold"}) {
    const fs::path dir = scratch(std::string("budget_convert_untold") + (extension + 1));
    for (const std::uint32_t s : scales) {
      const std::vector<std::byte> bytes = make_untold(s);
      const fs::path path = write_bytes(dir / (std::to_string(s) + "_tile.untold"), bytes);
      const fs::path out = dir / ("out" + std::to_string(s));
      CAPTURE(extension);
      CAPTURE(s);
      const measured_run m =
          run_untold_measured("convert -q -p " + quoted(path) + " " + quoted(out / (std::string("tile") + extension)),
                              {out});
      CHECK_MESSAGE(m.run.exit_code == 0, m.run.err);
      CHECK(fs::exists(out / (std::string("tile") + extension)));
      check_within(m, bytes.size(), bound);
    }
  }
}
