// assetc/import.hpp (runtime files -> scene) and convert/to_assetc.hpp
// (scene -> runtime files): the quad fixture round trip (triangles compared
// as vertex tuples, since submeshes get their own vertices), what each side
// reports, hostile inputs and the budget.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include <untold/assetc/import.hpp>
#include <untold/convert/to_assetc.hpp>

#include "assetc_support.hpp"

using namespace hm_test;
namespace cv = untold::convert;

namespace {

std::uint64_t reported(const cv::conversion_report& r, const std::string& what, cv::report_entry::kind k) {
  std::uint64_t n = 0;
  for (const auto& e : r.entries)
    if (e.what == what && e.severity == k) n += e.count;
  return n;
}

/// Every triangle of submesh `s` (LOD0, or LOD row `lod` >= 0) as its
/// corners' packed GpuVertex + SKIN row, each rotated so the smallest corner
/// leads, sorted: what a triangle looks like whatever the vertex order.
using corner = std::vector<std::byte>;
std::vector<std::array<corner, 3>> triangles(const ua::hmesh& m, std::size_t s, int lod = -1) {
  std::vector<std::uint32_t> idx;
  if (lod < 0) {
    for (std::size_t i = 0; i < m.submesh_indices(s).size(); ++i) idx.push_back(m.submesh_indices(s)[i]);
  } else {
    const ua::mesh_lod row = m.lods(s)[static_cast<std::size_t>(lod)];
    for (const std::uint32_t i : m.lod_index_range(row)) idx.push_back(i);
  }
  const auto vertex = [&](std::uint32_t v) {
    corner c(m.vertices().bytes().begin() + v * 28, m.vertices().bytes().begin() + (v + 1) * 28);
    if (!m.skin().empty()) c.insert(c.end(), m.skin().bytes().begin() + v * 24, m.skin().bytes().begin() + (v + 1) * 24);
    return c;
  };
  std::vector<std::array<corner, 3>> out;
  for (std::size_t i = 0; i + 2 < idx.size(); i += 3) {
    std::array<corner, 3> t{vertex(idx[i]), vertex(idx[i + 1]), vertex(idx[i + 2])};
    while (t[0] > t[1] || t[0] > t[2]) t = {t[1], t[2], t[0]};
    out.push_back(t);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("assetc import: the quad fixture as a scene") {
  const bytes file = read_data("assetc/quad.hmesh");
  auto s = ua::import_files({.hmesh = span(file)}, "quad", {});
  REQUIRE_MESSAGE(s, s.error().describe());
  REQUIRE(s->meshes.size() == 2);
  REQUIRE(s->nodes.size() == 1);
  CHECK(s->nodes[0].meshes == std::vector<std::uint32_t>{0, 1});
  // Submesh 0: indices 0 1 2, its LOD row 0 1 3 adds vertex 3.
  const cv::mesh& m0 = s->meshes[0];
  CHECK(m0.indices == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(m0.vertex_count() == 4);
  REQUIRE(m0.lods.size() == 1);
  CHECK(m0.lods[0].indices == std::vector<std::uint32_t>{0, 1, 3});
  CHECK(m0.material == 1);
  CHECK(m0.positions == std::vector<float>(std::begin(quad_positions), std::end(quad_positions)));
  CHECK(m0.uv0 == std::vector<float>(std::begin(quad_uvs), std::end(quad_uvs)));
  CHECK(m0.tangents.size() == 16);  // DESC says tangents
  // Submesh 1: 2 1 3 -> its own vertices 0 1 2; the stalled LOD row is a copy of LOD0.
  const cv::mesh& m1 = s->meshes[1];
  CHECK(m1.indices == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(m1.positions == std::vector<float>{0, 1, 0, 1, 0, 0, 1, 1, 0});
  REQUIRE(m1.lods.size() == 1);
  CHECK(m1.lods[0].indices == m1.indices);
  CHECK(m1.material == cv::no_ref);
  // Skeleton and skin: SKIN indexes the skeleton.
  REQUIRE(s->skeletons.size() == 1);
  REQUIRE(s->skeletons[0].joints.size() == 2);
  CHECK(s->skeletons[0].joints[1].parent == 0);
  CHECK(s->skeletons[0].joints[1].rest.translation == std::array<float, 3>{0, 1, 0});
  CHECK(s->skeletons[0].joints[1].name == "joint_1");
  REQUIRE(s->skins.size() == 1);
  CHECK(s->skins[0].joints == std::vector<std::uint32_t>{0, 1});
  CHECK(m0.joints[2] == std::array<std::uint16_t, 4>{0, 1, 0, 0});
  CHECK(m0.weights[2] == std::array<float, 4>{0.5f, 0.5f, 0, 0});
  // Two MTRL slots, no .hmat: default materials, reported.
  REQUIRE(s->materials.size() == 2);
  const auto& r = s->report;
  CHECK(reported(r, "material parameters", cv::report_entry::kind::dropped) == 2);
  CHECK(reported(r, "material names", cv::report_entry::kind::changed) == 2);
  CHECK(reported(r, "stalled LOD levels", cv::report_entry::kind::changed) == 1);
  CHECK(reported(r, "meshlets", cv::report_entry::kind::info) == 1);
  CHECK(reported(r, "unknown chunks", cv::report_entry::kind::dropped) == 1);
  CHECK(reported(r, "joint names", cv::report_entry::kind::info) == 2);
}

TEST_CASE("assetc import -> to_assetc: triangles, LODs, skin, skeleton, materials and clips survive") {
  const bytes mesh_file = read_data("assetc/quad.hmesh");
  // A .hmat with both rows, a .hanim of joint 1, a manifest for one texture.
  std::vector<ua::material> rows(2);
  rows[1].base_color = {0.25f, 0.5f, 0.75f, 1};
  rows[1].roughness = 0.125f;
  rows[1].flags = ua::material::make_flags(true, ua::alpha_mode::mask);
  rows[1].base_color_tex = ua::hash_ref("models/quad/tex_0");
  const bytes hmat = *ua::write_hmat(rows);
  const std::vector<ua::manifest_entry> entries{{ua::hash_ref("models/quad/tex_0"), 0, 1, "models/quad/tex_0.ktx2"}};
  const bytes hman = *ua::write_hman(entries);
  const std::vector<float> times{0, 0.5f, 1}, values{0, 0, 0, 1, 0, 0.7071f, 0, 0.7071f, 0, 1, 0, 0};
  const std::vector<ua::anim_channel_input> channels{
      {.joint = 1, .path = ua::anim_path::rotation, .interp = ua::anim_interp::step, .times = times, .values = values}};
  const std::vector<ua::anim_clip_input> clips{{.name = "Wave", .duration = 1, .channels = channels}};
  const bytes hanim = *ua::write_hanim(clips);

  auto s = ua::import_files({.hmesh = span(mesh_file), .hmat = span(hmat), .hanim = span(hanim), .hman = span(hman)},
                            "quad", {});
  REQUIRE_MESSAGE(s, s.error().describe());
  REQUIRE(s->textures.size() == 1);
  CHECK(s->textures[0].uri == "models/quad/tex_0.ktx2");
  CHECK(s->textures[0].srgb);
  CHECK(s->materials[1].base_color_texture.texture == 0);
  CHECK(s->materials[1].alpha == cv::alpha_mode::mask);
  CHECK(s->materials[1].double_sided);
  REQUIRE(s->animations.size() == 1);
  CHECK(s->animations[0].name == "Wave");
  CHECK(s->animations[0].channels[0].interp == cv::interpolation::step);

  cv::to_assetc_options o;
  o.source_ref = "models/quad";
  cv::conversion_report report;
  auto out = cv::to_assetc(*s, o, report);
  REQUIRE_MESSAGE(out, out.error().describe());
  auto a = ua::open_hmesh(span(mesh_file), {.deep_checks = true});
  auto b = ua::open_hmesh(out->hmesh, {.deep_checks = true});
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(b->desc().submesh_count == 2);
  CHECK(b->desc().flags == a->desc().flags);
  CHECK(b->lod_count() == 1);
  for (std::size_t sm = 0; sm < 2; ++sm) {
    CAPTURE(sm);
    CHECK(triangles(*b, sm) == triangles(*a, sm));
    // A stalled row stays stalled.
    CHECK(b->lods(sm)[0].index_count == a->lods(sm)[0].index_count);
    if (a->lods(sm)[0].index_count != 0) CHECK(triangles(*b, sm, 0) == triangles(*a, sm, 0));
  }
  CHECK(b->skeleton().bytes().size() == a->skeleton().bytes().size());
  CHECK(std::equal(b->skeleton().bytes().begin(), b->skeleton().bytes().end(), a->skeleton().bytes().begin()));
  // Meshlets are the hooks' (none given here): the writer does not invent them.
  CHECK(b->desc().meshlet_count == 0);
  // Materials: the used one, its row kept; the texture ref is the same name.
  REQUIRE(b->materials().size() == 1);
  CHECK(b->submeshes()[0].material_slot == 0);
  CHECK(b->submeshes()[1].material_slot == ua::no_material);
  auto m = ua::open_hmat(out->hmat, {.deep_checks = true});
  REQUIRE(m);
  REQUIRE(m->size() == 1);
  CHECK(m->rows()[0] == rows[1]);
  REQUIRE(out->textures.size() == 1);
  CHECK(out->textures[0].ref == ua::hash_ref("models/quad/tex_0"));
  CHECK(out->textures[0].srgb);
  // The clip, byte for byte.
  CHECK(out->hanim == hanim);
  CHECK(reported(report, "materials no submesh uses", cv::report_entry::kind::info) == 1);
  CHECK(reported(report, "joint names", cv::report_entry::kind::info) == 2);
  CHECK_FALSE(report.lost_anything());
}

TEST_CASE("to_assetc: what assetc cannot hold is reported, hooks are used, spline keys kept") {
  cv::scene s;
  cv::mesh m;
  m.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  m.indices = {0, 1, 2};
  m.colors = std::vector<float>(12, 1.0f);
  m.uv1 = std::vector<float>(6, 0.0f);
  m.morphs.push_back({.name = "smile", .default_weight = 0, .position_deltas = std::vector<float>(9, 0.0f)});
  m.lods.push_back({.switch_distance = 10, .indices = {0, 1, 2}});
  s.meshes.push_back(m);
  s.nodes.push_back({.name = "root", .meshes = {0}});
  s.lights.push_back({});
  s.cameras.push_back({});
  s.materials.push_back({.name = "glass", .emissive_strength = 2, .transmission = 0.5f});
  s.meshes[0].material = 0;
  s.nodes[0].local.translation = {1, 2, 3};
  cv::animation a{.name = "spin", .duration = 1, .channels = {}};
  a.channels.push_back({.node = 0, .path = cv::anim_path::translation, .times = {0}, .values = {0, 0, 0}});
  s.animations.push_back(a);
  std::size_t optimised = 0, meshleted = 0;
  cv::to_assetc_options o;
  o.optimise = [&](cv::assetc_submesh&) { ++optimised; };
  o.build_meshlets = [&](const cv::assetc_submesh&, std::uint32_t, cv::assetc_meshlets&) { ++meshleted; };
  cv::conversion_report r;
  auto out = cv::to_assetc(s, o, r);
  REQUIRE_MESSAGE(out, out.error().describe());
  CHECK(optimised == 1);
  CHECK(meshleted == 1);
  using k = cv::report_entry::kind;
  CHECK(reported(r, "lights", k::dropped) == 1);
  CHECK(reported(r, "cameras", k::dropped) == 1);
  CHECK(reported(r, "morph targets", k::dropped) == 1);
  CHECK(reported(r, "vertex colours", k::dropped) == 1);
  CHECK(reported(r, "uv sets beyond uv0", k::dropped) == 1);
  CHECK(reported(r, "LOD switch distances", k::dropped) == 1);
  CHECK(reported(r, "transmission", k::dropped) == 1);
  CHECK(reported(r, "emissive strength", k::changed) == 1);
  CHECK(reported(r, "node transforms", k::changed) == 1);
  CHECK(reported(r, "channels on non-joint nodes", k::dropped) == 1);
  CHECK(reported(r, "clips without joint channels", k::dropped) == 1);
  CHECK(out->hanim.empty());
  auto mesh = ua::open_hmesh(out->hmesh, {.deep_checks = true});
  REQUIRE(mesh);
  // The baked translation; the LOD equal to LOD0 is a stalled row.
  CHECK(mesh->vertices().position(0) == std::array<float, 3>{1, 2, 3});
  REQUIRE(mesh->lod_count() == 1);
  CHECK(mesh->lods(0)[0].index_count == 0);

  // A cubic-spline joint channel keeps its key values (linear).
  cv::scene skinned;
  skinned.meshes.push_back({.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0}, .joints = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}},
                            .weights = {{1, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}}, .indices = {0, 1, 2}, .skin = 0});
  skinned.nodes.push_back({.name = "root", .meshes = {0}});
  skinned.skeletons.push_back({.name = "k", .joints = {{.name = "hip"}}});
  skinned.skins.push_back({.skeleton = 0, .joints = {0}});
  cv::animation walk{.name = "walk", .duration = 1, .channels = {}};
  walk.channels.push_back({.skeleton = 0, .joint = 0, .path = cv::anim_path::translation,
                           .interp = cv::interpolation::cubic_spline, .times = {0, 1},
                           .values = {9, 9, 9, 1, 2, 3, 9, 9, 9, 9, 9, 9, 4, 5, 6, 9, 9, 9}});
  skinned.animations.push_back(walk);
  cv::conversion_report r2;
  auto out2 = cv::to_assetc(skinned, {}, r2);
  REQUIRE_MESSAGE(out2, out2.error().describe());
  auto clips = ua::open_hanim(out2->hanim, {.deep_checks = true});
  REQUIRE(clips);
  const ua::anim_channel ch = clips->channels(0)[0];
  REQUIRE(ch.key_count == 2);
  CHECK(ch.value(0, 0) == 1);
  CHECK(ch.value(1, 2) == 6);
  CHECK(reported(r2, "cubic-spline channels", k::changed) == 1);
}

TEST_CASE("assetc import: hostile inputs") {
  const bytes mesh_file = read_data("assetc/quad.hmesh");
  SUBCASE("HM-CHECK-MATERIALS: a .hmat whose row count is not DESC.materialCount") {
    const std::vector<ua::material> rows(3);
    const bytes hmat = *ua::write_hmat(rows);
    auto s = ua::import_files({.hmesh = span(mesh_file), .hmat = span(hmat)}, "quad", {});
    REQUIRE_FALSE(s);
    CHECK(std::string(s.error().rule_id()) == "HM-CHECK-MATERIALS");
    CHECK(s.error().context.value == 3);
  }
  SUBCASE("HM-CHECK-JOINT: a clip animating a joint the SKEL does not have") {
    const std::vector<float> times{0}, values{0, 0, 0};
    const std::vector<ua::anim_channel_input> channels{{.joint = 2, .times = times, .values = values}};
    const std::vector<ua::anim_clip_input> clips{{.name = "c", .duration = 0, .channels = channels}};
    const bytes hanim = *ua::write_hanim(clips);
    auto s = ua::import_files({.hmesh = span(mesh_file), .hanim = span(hanim)}, "quad", {});
    REQUIRE_FALSE(s);
    CHECK(std::string(s.error().rule_id()) == "HM-CHECK-JOINT");
    CHECK(s.error().context.value == 2);
  }
  SUBCASE("a reader's rule comes back as is (deep checks on)") {
    bytes bad = mesh_file;
    wr32(bad, chunk_at(bad, "IDXS"), 4);  // index 4 of 4 vertices (16-bit indices: low half)
    auto s = ua::import_files({.hmesh = span(bad)}, "quad", {});
    REQUIRE_FALSE(s);
    CHECK(std::string(s.error().rule_id()) == "HM-INDEX-VALUE");
  }
  SUBCASE("HM-LIMITS: many submeshes over one index range cost their copies") {
    // 4000 submeshes each drawing the same 3000 triangles: 12 M index copies from a ~0.3 MB file.
    std::vector<float> pos;
    for (int v = 0; v < 3000; ++v) pos.insert(pos.end(), {static_cast<float>(v), 0, 0});
    auto vtx = untold::encode_gpu_vertices(untold::gpu_vertex_input{.positions = pos});
    REQUIRE(vtx);
    std::vector<std::uint32_t> idx;
    for (std::uint32_t t = 0; t < 3000; ++t) idx.insert(idx.end(), {t, (t + 1) % 3000, (t + 2) % 3000});
    const auto file_with = [&](std::size_t submeshes) {
      std::vector<ua::submesh> subs(submeshes, ua::submesh{.first_index = 0, .index_count = 9000});
      ua::hmesh_input in;
      in.vertices = *vtx;
      in.indices = idx;
      in.submeshes = subs;
      auto file = ua::write_hmesh(in);
      REQUIRE(file);
      return *file;
    };
    const bytes hostile = file_with(4000);
    auto s = ua::import_files({.hmesh = span(hostile)}, "many", {});
    REQUIRE_FALSE(s);
    CHECK(std::string(s.error().rule_id()) == "HM-LIMITS");
    // A shared budget is the one charged.
    const bytes few = file_with(40);
    untold::budget shared(untold::limits{}, few.size());
    auto ok = ua::import_files({.hmesh = span(few)}, "few", {.budget = &shared});
    REQUIRE_MESSAGE(ok, ok.error().describe());
    CHECK(ok->meshes.size() == 40);
    CHECK(shared.work().used >= 40u * 9000u);
  }
}
