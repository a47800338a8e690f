// `untold convert` from and to assetc (.hmesh + .hmat/.hanim/.hman, issue 29):
// what `untold build` compiled survives .hmesh -> scene -> .hmesh (geometry,
// meshlets, LODs, skin, skeleton, clips, material rows, textures), a .hmesh
// goes to glTF and back, an Urho3D model becomes a .hmesh, and convert from
// and to assetc stays within the budget at 1x, 10x, 100x.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <untold/assetc/assetc.hpp>
#include <untold/convert/to_assetc.hpp>

#include "assetc_build.hpp"
#include "budget_support.hpp"

using namespace cli_test;
namespace ab = untold::tools::assetc_build;
namespace ac = untold::assetc;
namespace cv = untold::convert;
using bytes_t = std::vector<std::byte>;

namespace {



/// A runtime tree `untold build` made of a textured box, a multi-material
/// engine and a skinned + animated glTF.
fs::path built_tree(const std::string& name) {
  const fs::path root = scratch(name);
  const fs::path a = root / "assets";
  for (const char* f : {"BoxTextured.gltf", "BoxTextured0.bin", "CesiumLogoFlat.png"})
    copy_into(assimp_model(std::string("glTF2/BoxTextured-glTF/") + f), a / "models/box" / f);
  copy_into(assimp_model("glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb"), a / "models/engine.glb");
  copy_into(assimp_model("glTF2/simple_skin/simple_skin.gltf"), a / "models/skin.gltf");
  ab::build_options o;
  o.input = a;
  o.output = root / "runtime";
  const ab::build_result r = ab::build(o);
  REQUIRE(r.exit_code(false) == 0);
  return root;
}

bool same_chunk(const ac::hmesh& a, const ac::hmesh& b, ac::chunk_id id) {
  const auto x = a.chunk(id), y = b.chunk(id);
  if (!x || !y) return x.has_value() == y.has_value();
  return std::equal(x->begin(), x->end(), y->begin(), y->end());
}

}  // namespace

TEST_CASE("convert: what untold build wrote survives .hmesh -> scene -> .hmesh") {
  const fs::path root = built_tree("assetc_convert_round_trip");
  const fs::path out = root / "out";
  fs::create_directories(out);
  for (const std::string model : {"box/BoxTextured", "engine", "skin"}) {
    CAPTURE(model);
    const fs::path source = root / "runtime/models" / (std::string(model) + ".hmesh");
    const fs::path target = out / (fs::path(model).filename().string() + ".hmesh");
    const run_result run = run_untold("convert -q " + quoted(source) + " " + quoted(target));
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    const bytes_t a_bytes = read_bytes(source), b_bytes = read_bytes(target);
    auto a = ac::open_hmesh(a_bytes, ac::open_options{.limits = {}, .deep_checks = true, .budget = nullptr});
    auto b = ac::open_hmesh(b_bytes, ac::open_options{.limits = {}, .deep_checks = true, .budget = nullptr});
    REQUIRE(a);
    REQUIRE(b);
    // The compiler's vertex order, LODs and meshlets (remade by the same builder) come back byte for byte;
    // the vertices in the same order, positions and uvs exactly, normals (and tangents when stored) within
    // one step of the 16-bit octahedral code: the decoded vector re-encodes to the same code or a neighbour.
    const auto va = a->vertices(), vb = b->vertices();
    REQUIRE(va.size() == vb.size());
    const bool tangents = (a->desc().flags & ac::desc_flag_tangents) != 0;
    std::size_t moved = 0;
    for (std::size_t v = 0; v < va.size(); ++v) {
      const untold::gpu_vertex x = va[v], y = vb[v];
      bool same = x.position == y.position && x.uv == y.uv;
      for (int k = 0; k < 3; ++k) same = same && std::fabs(x.normal[k] - y.normal[k]) <= 1e-4f;
      for (int k = 0; tangents && k < 4; ++k) same = same && std::fabs(x.tangent[k] - y.tangent[k]) <= 1e-4f;
      moved += same ? 0 : 1;
    }
    CHECK(moved == 0);
    for (const ac::chunk_id id : {ac::chunk_id::bnds, ac::chunk_id::idxs, ac::chunk_id::mlet,
                                  ac::chunk_id::mlvr, ac::chunk_id::mltr, ac::chunk_id::mlbn, ac::chunk_id::subm,
                                  ac::chunk_id::skin, ac::chunk_id::skel, ac::chunk_id::lodi, ac::chunk_id::lodt}) {
      const std::string chunk(ac::fourcc_chars(ac::fourcc_of(id)).data());
      CAPTURE(chunk);
      CHECK(same_chunk(*a, *b, id));
    }
    CHECK(a->desc() == b->desc());
    CHECK(ac::check_meshlet_coverage(*b));
    // Material rows: factors and flags kept, a texture in the same slots.
    const bytes_t hmat_a = read_bytes(fs::path(source).replace_extension(".hmat"));  // the view needs its bytes alive
    auto ma = ac::open_hmat(hmat_a, ac::open_options{.limits = {}, .deep_checks = true, .budget = nullptr});
    const bytes_t hmat_b = read_bytes(fs::path(target).replace_extension(".hmat"));
    auto mb = ac::open_hmat(hmat_b, ac::open_options{.limits = {}, .deep_checks = true, .budget = nullptr});
    REQUIRE(ma);
    REQUIRE(mb);
    REQUIRE(ma->size() == mb->size());
    for (std::size_t i = 0; i < ma->size(); ++i) {
      ac::material x = ma->rows()[i], y = mb->rows()[i];
      for (std::size_t t = 0; t < 5; ++t) CHECK((x.textures()[t] == 0) == (y.textures()[t] == 0));
      x.base_color_tex = x.metallic_roughness_tex = x.normal_tex = x.occlusion_tex = x.emissive_tex = 0;
      y.base_color_tex = y.metallic_roughness_tex = y.normal_tex = y.occlusion_tex = y.emissive_tex = 0;
      CHECK(x == y);
    }
    // Clips byte for byte.
    const fs::path anim = fs::path(source).replace_extension(".hanim");
    CHECK(fs::exists(anim) == fs::exists(fs::path(target).replace_extension(".hanim")));
    if (fs::exists(anim)) CHECK(read_bytes(anim) == read_bytes(fs::path(target).replace_extension(".hanim")));
  }
  // The box's texture: the same KTX2 bytes under the output's name, in its manifest; the set passes check.
  CHECK(read_bytes(out / "BoxTextured/tex_0.ktx2") == read_bytes(root / "runtime/models/box/BoxTextured/tex_0.ktx2"));
  const bytes_t hman_bytes = read_bytes(out / "BoxTextured.hman");
  auto manifest = ac::open_hman(hman_bytes, ac::open_options{.limits = {}, .deep_checks = true, .budget = nullptr});
  REQUIRE(manifest);
  REQUIRE(manifest->size() == 1);
  CHECK(manifest->entries()[0].path == "BoxTextured/tex_0.ktx2");
  CHECK(manifest->entries()[0].hash == ac::hash_ref("BoxTextured/tex_0"));
  std::map<std::string, bytes_t> files;
  for (const char* f : {"BoxTextured.hmesh", "BoxTextured.hmat", "BoxTextured.hman", "BoxTextured/tex_0.ktx2"})
    files[f] = read_bytes(out / f);
  std::vector<std::string> paths;
  for (const auto& [p, b] : files) paths.push_back(p);
  const ac::check_report check = ac::check_files(
      paths,
      [&files](std::string_view p) -> std::optional<untold::byte_span> {
        const auto it = files.find(std::string(p));
        if (it == files.end()) return std::nullopt;
        return untold::byte_span(it->second);
      },
      ac::open_options{.limits = {}, .deep_checks = true, .budget = nullptr});
  CHECK(check.problems.empty());
  // A second convert of the output (its own manifest beside it) is a fixed point.
  const run_result again = run_untold("convert -q " + quoted(out / "BoxTextured.hmesh") + " " +
                                      quoted(out / "again/BoxTextured.hmesh") + " --mkdir");
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(read_bytes(out / "again/BoxTextured.hmesh") == read_bytes(out / "BoxTextured.hmesh"));
  CHECK(read_bytes(out / "again/BoxTextured.hman") == read_bytes(out / "BoxTextured.hman"));
}

TEST_CASE("convert: a skinned, animated .hmesh to glTF and back") {
  const fs::path root = built_tree("assetc_convert_gltf");
  const fs::path glb = root / "out/skin.glb";
  const run_result to_glb =
      run_untold("convert -q --mkdir " + quoted(root / "runtime/models/skin.hmesh") + " " + quoted(glb));
  REQUIRE_MESSAGE(to_glb.exit_code == 0, to_glb.err);
  const fs::path back = root / "out/back.hmesh";
  const run_result to_hmesh = run_untold("convert -q " + quoted(glb) + " " + quoted(back));
  REQUIRE_MESSAGE(to_hmesh.exit_code == 0, to_hmesh.err);
  const bytes_t a_bytes = read_bytes(root / "runtime/models/skin.hmesh"), b_bytes = read_bytes(back);
  auto a = ac::open_hmesh(a_bytes, ac::open_options{.limits = {}, .deep_checks = true, .budget = nullptr});
  auto b = ac::open_hmesh(b_bytes, ac::open_options{.limits = {}, .deep_checks = true, .budget = nullptr});
  REQUIRE(a);
  REQUIRE(b);
  CHECK(b->desc().index_count == a->desc().index_count);
  REQUIRE(b->skeleton().size() == a->skeleton().size());
  for (std::size_t j = 0; j < a->skeleton().size(); ++j) {
    CHECK(b->skeleton()[j].parent == a->skeleton()[j].parent);
    for (std::size_t k = 0; k < 16; ++k)
      CHECK(b->skeleton()[j].inverse_bind[k] == doctest::Approx(a->skeleton()[j].inverse_bind[k]).epsilon(1e-5));
  }
  CHECK(b->skin().size() == b->desc().vertex_count);
  const bytes_t clips_a = read_bytes(root / "runtime/models/skin.hanim"), clips_b = read_bytes(root / "out/back.hanim");
  auto ca = ac::open_hanim(clips_a, ac::open_options{.limits = {}, .deep_checks = true, .budget = nullptr});
  auto cb = ac::open_hanim(clips_b, ac::open_options{.limits = {}, .deep_checks = true, .budget = nullptr});
  REQUIRE(ca);
  REQUIRE(cb);
  REQUIRE(cb->all_channels().size() == ca->all_channels().size());
  CHECK(cb->all_channels()[0].key_count == ca->all_channels()[0].key_count);
  CHECK(cb->clips()[0].duration == doctest::Approx(ca->clips()[0].duration));
}

TEST_CASE("convert: an Urho3D model to .hmesh keeps its triangles and LOD levels") {
  const fs::path dir = scratch("assetc_convert_mdl");
  for (const char* model : {"Box.mdl", "TeaPot.mdl", "NinjaSnowWar/Potion.mdl"}) {
    CAPTURE(model);
    const fs::path out = dir / (fs::path(model).stem().string() + ".hmesh");
    const run_result run = run_untold("convert -q " + quoted(test_data(std::string("urho3d/Models/") + model)) + " " +
                                      quoted(out));
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    const bytes_t bytes = read_bytes(out);
    auto mesh = ac::open_hmesh(bytes, ac::open_options{.limits = {}, .deep_checks = true, .budget = nullptr});
    REQUIRE_MESSAGE(mesh, mesh.error().describe());
    CHECK(mesh->desc().index_count > 0);
    CHECK(mesh->desc().meshlet_count > 0);
    CHECK(ac::check_meshlet_coverage(*mesh));
    auto back = run_untold("convert -q " + quoted(out) + " " + quoted(dir / (fs::path(model).stem().string() + ".glb")));
    CHECK_MESSAGE(back.exit_code == 0, back.err);
  }
}

TEST_CASE("budget: convert from and to assetc at 1x, 10x, 100x") {
  // The importer's scene (72 B a vertex), the writer's copies and files and
  // the target's bytes, each linear in the .hmesh (measured below the bound
  // with room to spare).
  const budget_bound bound{.heap_per_input_byte = 64, .heap_constant = 8 << 20, .output_per_input_byte = 8,
                           .output_constant = 64 << 10};
  for (const char* extension : {".hmesh", ".glb", ".mdl", ".untold"}) {
    const fs::path dir = scratch(std::string("budget_convert_assetc") + (extension + 1));
    for (const std::uint32_t n : {20u, 63u, 200u}) {
      // An n x n grid (about 14 KB at n = 20): two submeshes, one LOD level, a skeleton and a clip.
      cv::scene s;
      for (int half = 0; half < 2; ++half) {
        cv::mesh m;
        for (std::uint32_t y = 0; y < n; ++y)
          for (std::uint32_t x = 0; x < n; ++x) {
            m.positions.insert(m.positions.end(), {static_cast<float>(x), static_cast<float>(y), static_cast<float>(half)});
            m.uv0.insert(m.uv0.end(), {static_cast<float>(x) / static_cast<float>(n), static_cast<float>(y) / static_cast<float>(n)});
            m.joints.push_back({0, 1, 0, 0});
            m.weights.push_back({0.5f, 0.5f, 0, 0});
          }
        for (std::uint32_t y = 0; y + 1 < n; ++y)
          for (std::uint32_t x = 0; x + 1 < n; ++x) {
            const std::uint32_t a = y * n + x;
            m.indices.insert(m.indices.end(), {a, a + 1, a + n, a + 1, a + n + 1, a + n});
          }
        m.lods.push_back({.switch_distance = 0, .indices = std::vector<std::uint32_t>(m.indices.begin(), m.indices.begin() + static_cast<std::ptrdiff_t>(m.indices.size() / 2 / 3 * 3))});
        m.skin = 0;
        s.meshes.push_back(std::move(m));
      }
      s.nodes.push_back({.name = "grid", .meshes = {0, 1}});
      s.skeletons.push_back({.name = "k", .joints = {{.name = "a"}, {.name = "b", .parent = 0}}});
      s.skins.push_back({.skeleton = 0, .joints = {0, 1}});
      cv::animation clip{.name = "wave", .duration = 1, .channels = {}};
      clip.channels.push_back({.skeleton = 0, .joint = 1, .path = cv::anim_path::translation, .times = {0, 1},
                               .values = {0, 0, 0, 0, 1, 0}});
      s.animations.push_back(clip);
      cv::conversion_report report;
      auto files = cv::to_assetc(s, {.source_ref = "grid"}, report);
      REQUIRE(files);
      const fs::path input = dir / ("in" + std::to_string(n)) / "grid.hmesh";
      fs::create_directories(input.parent_path());
      std::ofstream(input, std::ios::binary)
          .write(reinterpret_cast<const char*>(files->hmesh.data()), static_cast<std::streamsize>(files->hmesh.size()));
      std::ofstream(fs::path(input).replace_extension(".hanim"), std::ios::binary)
          .write(reinterpret_cast<const char*>(files->hanim.data()), static_cast<std::streamsize>(files->hanim.size()));
      const std::uint64_t input_bytes = files->hmesh.size() + files->hanim.size();
      const fs::path out = dir / ("out" + std::to_string(n));
      CAPTURE(extension);
      CAPTURE(n);
      const measured_run m =
          run_untold_measured("convert -q -p " + quoted(input) + " " + quoted(out / (std::string("grid") + extension)),
                              {out});
      REQUIRE_MESSAGE(m.run.exit_code == 0, m.run.err);
      check_within(m, input_bytes, bound);
    }
  }
}
