// convert::to_urho3d: the neutral scene written as Urho3D .mdl + .ani + a
// material list. Round trips: Urho3D -> scene -> Urho3D -> scene keeps the
// geometry, skeleton and clips exactly (after canonical ordering of the
// triangles); .untold -> scene -> .mdl -> scene keeps a skinned, animated
// model; the report names what Urho3D cannot hold.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <untold/convert/from_untold.hpp>
#include <untold/convert/to_untold.hpp>
#include <untold/convert/to_urho3d.hpp>
#include <untold/reader.hpp>
#include <untold/urho3d/import.hpp>

#include "convert/scene_support.hpp"
#include "u3d_support.hpp"

namespace u3 = untold::urho3d;
namespace cv = untold::convert;
using namespace u3d_test;

namespace {

const cv::report_entry* find(const cv::conversion_report& r, std::string_view what) {
  for (const auto& e : r.entries)
    if (e.what == what) return &e;
  return nullptr;
}

/// One vertex with every attribute the scene carries, as bit patterns (some
/// fixtures store NaN normals, which must come back as they were).
using vertex_facts = std::vector<std::uint32_t>;

vertex_facts facts(const cv::mesh& m, std::uint32_t v, const cv::scene& s) {
  vertex_facts f;
  const auto add = [&](const std::vector<float>& stream, std::size_t n) {
    if (stream.empty()) return;
    for (std::size_t k = 0; k < n; ++k) f.push_back(std::bit_cast<std::uint32_t>(stream[n * v + k]));
  };
  add(m.positions, 3), add(m.normals, 3), add(m.tangents, 4), add(m.uv0, 2), add(m.uv1, 2), add(m.colors, 4);
  for (const auto& uv : m.extra_uvs) add(uv, 2);
  if (!m.joints.empty()) {
    // Joints by name, through the skin's palette: palettes may be numbered differently.
    for (std::size_t k = 0; k < 4; ++k) {
      const float w = m.weights[v][k];
      f.push_back(std::bit_cast<std::uint32_t>(w));
      f.push_back(w == 0 ? cv::no_ref : s.skins[m.skin].joints[m.joints[v][k]]);
    }
  }
  for (const auto& t : m.morphs) add(t.position_deltas, 3), add(t.normal_deltas, 3), add(t.tangent_deltas, 3);
  return f;
}

/// A mesh's triangles (or lines / points) as vertex facts, each primitive
/// rotated to start at its smallest vertex and the list sorted: the same
/// geometry whatever the vertex and primitive order.
std::vector<std::vector<vertex_facts>> canonical(const cv::mesh& m, const std::vector<std::uint32_t>& indices,
                                                 const cv::scene& s) {
  const std::size_t n = m.primitive == cv::topology::triangle_list ? 3 : m.primitive == cv::topology::line_list ? 2 : 1;
  std::vector<std::vector<vertex_facts>> out;
  for (std::size_t i = 0; i + n <= indices.size(); i += n) {
    std::vector<vertex_facts> prim;
    for (std::size_t k = 0; k < n; ++k) prim.push_back(facts(m, indices[i + k], s));
    std::rotate(prim.begin(), std::min_element(prim.begin(), prim.end()), prim.end());
    out.push_back(std::move(prim));
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Clip channels by (joint name, path): times and values.
std::map<std::tuple<std::string, int>, std::pair<std::vector<float>, std::vector<float>>> channels_of(
    const cv::scene& s, const cv::animation& a) {
  std::map<std::tuple<std::string, int>, std::pair<std::vector<float>, std::vector<float>>> out;
  for (const auto& c : a.channels)
    out[{s.skeletons[c.skeleton].joints[c.joint].name, static_cast<int>(c.path)}] = {c.times, c.values};
  return out;
}

/// x and y hold the same meshes (in order, canonical triangles), skeleton
/// and clips.
void check_same(const cv::scene& x, const cv::scene& y) {
  REQUIRE(x.meshes.size() == y.meshes.size());
  for (std::size_t i = 0; i < x.meshes.size(); ++i) {
    INFO("mesh " << i << " " << x.meshes[i].name);
    const cv::mesh &a = x.meshes[i], &b = y.meshes[i];
    CHECK(a.primitive == b.primitive);
    CHECK(a.vertex_count() == b.vertex_count());
    CHECK(canonical(a, a.indices, x) == canonical(b, b.indices, y));
    REQUIRE(a.lods.size() == b.lods.size());
    for (std::size_t l = 0; l < a.lods.size(); ++l) {
      CHECK(a.lods[l].switch_distance == b.lods[l].switch_distance);
      CHECK(canonical(a, a.lods[l].indices, x) == canonical(b, b.lods[l].indices, y));
    }
    REQUIRE(a.morphs.size() == b.morphs.size());
    for (std::size_t t = 0; t < a.morphs.size(); ++t) {
      CHECK(a.morphs[t].name == b.morphs[t].name);
      CHECK(a.morphs[t].default_weight == b.morphs[t].default_weight);
    }
  }
  REQUIRE(x.skeletons.size() == y.skeletons.size());
  for (std::size_t k = 0; k < x.skeletons.size(); ++k) {
    const auto &a = x.skeletons[k].joints, &b = y.skeletons[k].joints;
    REQUIRE(a.size() == b.size());
    for (std::size_t j = 0; j < a.size(); ++j) {
      INFO("joint " << a[j].name);
      CHECK(a[j].name == b[j].name);
      CHECK(a[j].parent == b[j].parent);
      CHECK(a[j].rest.translation == b[j].rest.translation);
      CHECK(a[j].rest.rotation == b[j].rest.rotation);
      CHECK(a[j].rest.scale == b[j].rest.scale);
      CHECK(a[j].inverse_bind == b[j].inverse_bind);
    }
  }
  REQUIRE(x.animations.size() == y.animations.size());
  for (std::size_t c = 0; c < x.animations.size(); ++c) {
    CHECK(x.animations[c].name == y.animations[c].name);
    CHECK(x.animations[c].duration == y.animations[c].duration);
    CHECK(channels_of(x, x.animations[c]) == channels_of(y, y.animations[c]));
  }
}

struct urho_trip {
  cv::scene first, second;
  cv::urho3d_output files;
  cv::conversion_report report;
};

/// .mdl + .ani -> scene -> Urho3D -> scene.
urho_trip urho_round_trip(const bytes& mdl, const std::vector<bytes>& anis) {
  std::vector<untold::byte_span> spans(anis.begin(), anis.end());
  auto first = u3::import_files(mdl, spans);
  REQUIRE_MESSAGE(first, first.error().describe());
  cv::conversion_report report;
  auto out = cv::to_urho3d(*first, {}, report);
  REQUIRE_MESSAGE(out, out.error().describe());
  std::vector<untold::byte_span> written;
  for (const auto& [name, data] : out->animations) written.emplace_back(data);
  auto second = u3::import_files(out->model, written);
  REQUIRE_MESSAGE(second, second.error().describe());
  return {std::move(*first), std::move(*second), std::move(*out), std::move(report)};
}

/// The hand-made skinned, morphed model of u3d_support with a two-track clip.
bytes wave_animation() {
  gen ani;
  ani.id("UANI").cstr("Wave").f32(1).u32(2);
  ani.cstr("root").u8(3).u32(2);
  ani.f32(0).f32(1).f32(2).f32(3).f32(0.5f).f32(0.5f).f32(0.5f).f32(0.5f);
  ani.f32(1).f32(1).f32(2.5f).f32(3).f32(1).f32(0).f32(0).f32(0);
  ani.cstr("child").u8(7).u32(1).f32(0.5f).f32(0).f32(1).f32(0).f32(1).f32(0).f32(0).f32(0).f32(1).f32(2).f32(1);
  return ani.b;
}

}  // namespace

TEST_CASE("to_urho3d: every Urho3D fixture survives .mdl -> scene -> .mdl -> scene") {
  for (const auto& path : model_fixtures()) {
    INFO(path.string());
    const urho_trip t = urho_round_trip(load(path), {});
    check_same(t.first, t.second);
    CHECK(t.files.animations.empty());
    // One material-list line per geometry, in geometry order.
    auto m = u3::open_model(t.files.model, {.deep_checks = true});
    REQUIRE(m);
    CHECK(static_cast<std::size_t>(std::count(t.files.material_list.begin(), t.files.material_list.end(), '\n')) ==
          m->geometries.size());
    CHECK(t.files.material_list.rfind("Materials/slot 0.xml\n", 0) == 0);
    // Deterministic: the same scene writes the same bytes.
    cv::conversion_report again;
    auto twice = cv::to_urho3d(t.first, {}, again);
    REQUIRE(twice);
    CHECK(twice->model == t.files.model);
  }
}

TEST_CASE("to_urho3d: a skinned, morphed model and its clip survive the Urho3D round trip") {
  const tiny model = make_tiny({.bone1_parent = 1, .bone0_parent = 1});
  const urho_trip t = urho_round_trip(model.file, {wave_animation()});
  REQUIRE(t.first.skeletons.size() == 1);
  REQUIRE(t.first.animations.size() == 1);
  CHECK(t.first.animations[0].channels.size() == 5);  // root: T R; child: T R S
  check_same(t.first, t.second);
  REQUIRE(t.files.animations.size() == 1);
  CHECK(t.files.animations[0].first == "Wave.ani");
  // The written clip reads back with deep checks, its tracks by bone name.
  auto ani = u3::open_animation(t.files.animations[0].second, {.deep_checks = true});
  REQUIRE_MESSAGE(ani, ani.error().describe());
  CHECK(ani->name == "Wave");
  REQUIRE(ani->tracks.size() == 2);
  CHECK(ani->tracks[0].name == "child");  // bone order: the root joint first
  CHECK(ani->tracks[0].mask == 7);
  CHECK(ani->tracks[1].name == "root");
  CHECK(ani->tracks[1].keyframe_count == 2);
  CHECK(ani->tracks[1].key(1).position == u3::float3{1, 2.5f, 3});  // Z mirrored twice
  CHECK(ani->tracks[1].key(1).rotation == u3::quat_wxyz{1, 0, 0, 0});
  // Every written file passes the strict readers with deep checks (the writer checked too).
  auto mdl = u3::open_model(t.files.model, {.deep_checks = true});
  REQUIRE_MESSAGE(mdl, mdl.error().describe());
  CHECK(mdl->bones.size() == 2);
  CHECK(mdl->morphs.size() == 1);
  CHECK(mdl->kind == u3::model_kind::umd2);
  CHECK(find(t.report, "coordinate system"));
}

TEST_CASE("to_urho3d: the fuzz seeds with skins, morphs and rbfx morph weights round-trip") {
  const auto seeds = data_dir() / "../../../fuzz/corpus";
  const urho_trip skinned = urho_round_trip(load(seeds / "fuzz_urho3d_model/seed-skinned-morph.umd2"), {});
  check_same(skinned.first, skinned.second);
  const urho_trip weighted = urho_round_trip(load(seeds / "fuzz_urho3d_model/seed-umd3-v2.mdl"), {});
  check_same(weighted.first, weighted.second);
  bool any_weight = false;
  for (const auto& m : weighted.first.meshes)
    for (const auto& t : m.morphs) any_weight = any_weight || t.default_weight != 0;
  if (any_weight) {
    auto m = u3::open_model(weighted.files.model);
    REQUIRE(m);
    CHECK(m->has_morph_weights());  // UMD3 version 2, where the weights need it
  }
}

TEST_CASE("to_urho3d: a skinned, animated .untold model reaches Urho3D and comes back") {
  // The source: a scene written to .untold, opened with deep checks, imported.
  cv::scene src;
  src.nodes.push_back({.name = "root", .local = {.translation = {0, 0, 1}}});
  src.nodes.push_back({.name = "body", .parent = 0, .meshes = {0}});
  src.nodes.push_back({.name = "crate", .parent = 0, .local = {.translation = {3, 0, 0}}, .meshes = {1}});
  src.nodes.push_back({.name = "lamp", .parent = 0});
  src.materials.push_back({.name = "skin"});
  src.materials.push_back({.name = "wood"});
  cv::mesh body = scene_test::skinned_strip("body", 0.5f);
  cv::morph_target bulge{.name = "bulge"};
  bulge.position_deltas.assign(18, 0);
  bulge.position_deltas[3 * 3 + 2] = 0.25f;
  body.morphs.push_back(bulge);
  src.meshes.push_back(body);
  cv::mesh crate;
  crate.name = "crate";
  crate.material = 1;
  crate.positions = {0, 0, 0, 1, 0, 0, 1, 1, 0};
  crate.indices = {0, 1, 2};
  src.meshes.push_back(crate);
  cv::skeleton sk{.name = "rig", .node = 0};
  sk.joints.push_back({.name = "hip", .rest = {.translation = {0, 1, 0}}});
  sk.joints.push_back({.name = "spine", .parent = 0, .rest = {.translation = {0, 1, 0}, .rotation = {0.6f, 0, 0, 0.8f}}});
  sk.joints[0].inverse_bind = cv::transform{.translation = {0, -1, 0}}.matrix();
  sk.joints[1].inverse_bind = cv::transform{.translation = {0, -2, 0}}.matrix();
  src.skeletons.push_back(sk);
  src.skins.push_back({.skeleton = 0, .joints = {0, 1}});
  cv::animation walk{.name = "walk", .duration = 2};
  walk.channels.push_back({.skeleton = 0, .joint = 1, .path = cv::anim_path::translation, .times = {0, 1, 2},
                           .values = {0, 1, 0, 0, 1.5f, 0.25f, 0, 1, 0}});
  // The same key times as the translations: one Urho3D track holds both without resampling.
  walk.channels.push_back({.skeleton = 0, .joint = 1, .path = cv::anim_path::rotation, .times = {0, 1, 2},
                           .values = {0, 0, 0, 1, 0.6f, 0, 0, 0.8f, 0, 0.6f, 0, 0.8f}});
  src.animations.push_back(walk);
  src.lights.push_back({.name = "sun", .node = 3});
  cv::conversion_report cooked;
  auto file = cv::to_untold(src, {}, cooked);
  REQUIRE_MESSAGE(file, file.error().describe());
  auto a = untold::open(file->file, {.deep_checks = true});
  REQUIRE_MESSAGE(a, a.error().describe());
  auto scene = cv::from_untold(*a);
  REQUIRE_MESSAGE(scene, scene.error().describe());

  cv::conversion_report report;
  auto out = cv::to_urho3d(*scene, {}, report);
  REQUIRE_MESSAGE(out, out.error().describe());
  REQUIRE(out->animations.size() == 1);
  CHECK(out->animations[0].first == "walk.ani");
  CHECK(out->material_list == "Materials/skin.xml\nMaterials/wood.xml\n");
  std::vector<untold::byte_span> anis{out->animations[0].second};
  auto back = u3::import_files(out->model, anis);
  REQUIRE_MESSAGE(back, back.error().describe());

  // Skeleton: names, parents, rest poses and inverse binds, exactly.
  REQUIRE(back->skeletons.size() == 1);
  const auto &before = scene->skeletons[0].joints, &after = back->skeletons[0].joints;
  REQUIRE(before.size() == after.size());
  for (std::size_t j = 0; j < before.size(); ++j) {
    CHECK(before[j].name == after[j].name);
    CHECK(before[j].parent == after[j].parent);
    CHECK(before[j].rest.translation == after[j].rest.translation);
    CHECK(before[j].rest.rotation == after[j].rest.rotation);
    CHECK(before[j].inverse_bind == after[j].inverse_bind);
  }
  // The clip: the same keys per (joint, path).
  REQUIRE(back->animations.size() == 1);
  CHECK(channels_of(*scene, scene->animations[0]) == channels_of(*back, back->animations[0]));
  // The skinned mesh: the same triangles (bind space, not moved by its node).
  REQUIRE(back->meshes.size() == 2);
  CHECK(canonical(scene->meshes[0], scene->meshes[0].indices, *scene) ==
        canonical(back->meshes[0], back->meshes[0].indices, *back));
  // The static crate: its node's world transform (0, 0, 1) + (3, 0, 0) baked in.
  const auto& crate_back = back->meshes[1];
  REQUIRE(crate_back.vertex_count() == 3);
  CHECK(crate_back.positions[0] == 3);
  CHECK(crate_back.positions[2] == 1);
  REQUIRE(find(report, "node transforms"));
  CHECK(find(report, "node transforms")->count == 1);
  REQUIRE(find(report, "lights"));
  CHECK(find(report, "lights")->severity == cv::report_entry::kind::dropped);
  CHECK(find(report, "material parameters"));
  CHECK(report.lost_anything());
}

TEST_CASE("to_urho3d: channels with different key times are sampled at their union, reported") {
  cv::scene s;
  s.nodes.push_back({.name = "root"});
  cv::skeleton sk{.name = "rig", .node = 0};
  sk.joints.push_back({.name = "bone"});
  s.skeletons.push_back(sk);
  cv::animation a{.name = "clip/1", .duration = 1};
  a.channels.push_back({.skeleton = 0, .joint = 0, .path = cv::anim_path::translation, .times = {0, 1},
                        .values = {0, 0, 0, 2, 0, 0}});
  a.channels.push_back({.skeleton = 0, .joint = 0, .path = cv::anim_path::scale, .times = {0.5f},
                        .values = {2, 2, 2}});
  a.channels.push_back({.node = 0, .path = cv::anim_path::translation, .times = {0}, .values = {0, 0, 0}});
  s.animations.push_back(a);
  s.animations.push_back({.name = "clip_1"});  // the first clip's file name, taken: "_1" follows
  cv::conversion_report report;
  auto out = cv::to_urho3d(s, {}, report);
  REQUIRE_MESSAGE(out, out.error().describe());
  REQUIRE(out->animations.size() == 2);
  CHECK(out->animations[0].first == "clip_1.ani");
  CHECK(out->animations[1].first == "clip_1_1.ani");
  auto ani = u3::open_animation(out->animations[0].second, {.deep_checks = true});
  REQUIRE(ani);
  REQUIRE(ani->tracks.size() == 1);
  REQUIRE(ani->tracks[0].keyframe_count == 3);  // 0, 0.5, 1
  CHECK(ani->tracks[0].key(1).position == u3::float3{1, 0, -0.0f});  // sampled halfway
  CHECK(ani->tracks[0].key(0).scale == u3::float3{2, 2, 2});         // held before its only key
  REQUIRE(find(report, "resampled channels"));
  CHECK(find(report, "resampled channels")->count == 2);
  REQUIRE(find(report, "node channels"));
  CHECK(find(report, "node channels")->count == 1);
}

TEST_CASE("to_urho3d: the output is charged to the budget (R-LIMITS)") {
  const tiny model = make_tiny();
  auto s = u3::import_files(model.file, {});
  REQUIRE(s);
  untold::limits tight;
  tight.output_per_input_byte = 0;
  tight.output_floor = 16;
  cv::conversion_report report;
  auto out = cv::to_urho3d(*s, {.limits = tight}, report);
  REQUIRE(!out);
  CHECK(out.error().code == untold::errc::limit_exceeded);
}
