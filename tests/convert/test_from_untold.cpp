// convert::from_untold: a validated .untold asset as the neutral scene, and
// the round trip .untold -> scene -> .untold (to_untold): vertex and index
// data, skeletons, skins, clips, morph targets, materials, lights, cameras and
// names equal after canonical ordering; the report lists the rest.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <untold/convert/from_untold.hpp>
#include <untold/convert/to_untold.hpp>
#include <untold/reader.hpp>
#include <untold/scene.hpp>
#include <untold/writer.hpp>

#include "convert/scene_support.hpp"
#include "support.hpp"

namespace cv = untold::convert;

namespace {

/// The dropped entries of a report, one per line (for failure messages).
std::string losses(const cv::conversion_report& r) {
  std::string out;
  for (const auto& e : r.entries)
    if (e.severity == cv::report_entry::kind::dropped)
      out.append(e.what).append(" (").append(e.where).append("): ").append(std::to_string(e.count)).append("\n");
  return out;
}

using scene_test::find;

bool near(const untold::mat4& x, const untold::mat4& y, float tolerance = 1e-5f) {
  for (std::size_t i = 0; i < 16; ++i)
    if (!(std::fabs(x[i] - y[i]) <= tolerance * std::max(1.0f, std::fabs(x[i])))) return false;
  return true;
}

/// An entity's name path from its root ("root/arm").
std::string entity_path(const untold::asset& a, const untold::scene_walk& walk, std::uint32_t row) {
  std::string path(a.string(a.entities()[row].name_offset));
  for (std::uint32_t p = walk.parent_row[row]; p != untold::none; p = walk.parent_row[p])
    path = std::string(a.string(a.entities()[p].name_offset)) + "/" + path;
  return path;
}

/// Everything the round trip must keep of one mesh record, in comparable form.
struct mesh_facts {
  std::string entity, name, material;
  std::vector<std::byte> vertices;
  std::vector<std::uint32_t> indices;
  std::vector<std::string> palette;  // joint paths of the skin's mapping
  std::vector<untold::skin_joint_indices> joints;
  std::vector<untold::skin_joint_weights> weights;
  std::vector<std::pair<std::string, std::vector<untold::morph_target_entry>>> morphs;
  auto key() const { return std::tie(entity, name, material); }
};

std::vector<mesh_facts> meshes_of(const untold::asset& a) {
  const auto walk = untold::walk_scene(a);
  std::vector<mesh_facts> out;
  for (std::uint32_t i = 0; i < a.meshes().size(); ++i) {
    const auto m = untold::resolve_mesh(a, i);
    REQUIRE(m);
    mesh_facts f;
    f.entity = m->entity_row ? entity_path(a, walk, *m->entity_row) : "";
    f.name = m->name;
    f.material = m->material ? std::string(m->material->name) : "";
    f.vertices.assign(m->vertices.begin(), m->vertices.end());
    for (std::uint32_t x : m->indices) f.indices.push_back(x);
    if (m->skin) {
      const auto skin = untold::resolve_skin(a, *m->skin);
      REQUIRE(skin);
      for (const auto& j : skin->joints) f.palette.emplace_back(a.string(j.joint_path_offset));
      f.joints.assign(skin->joint_indices.begin(), skin->joint_indices.end());
      f.weights.assign(skin->joint_weights.begin(), skin->joint_weights.end());
    }
    for (std::uint32_t row : m->morph_targets) {
      const auto t = a.table<untold::morph_target_record>()[row];
      const auto entries = untold::view_morph_entries(a, t);
      f.morphs.emplace_back(std::string(a.string(t.name_offset)),
                            std::vector<untold::morph_target_entry>(entries.begin(), entries.end()));
    }
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(), [](const mesh_facts& x, const mesh_facts& y) { return x.key() < y.key(); });
  return out;
}

/// Checks that `y` (written from the scene imported from `x`) holds what `x`
/// holds, after canonical ordering (by names). Vertex bytes are compared
/// exactly; `normal_codes` allows that many snorm10 codes of difference in
/// normal and tangent xyz (re-encoding renormalises the dequantised vectors).
void check_same(const untold::asset& x, const untold::asset& y, int normal_codes = 1) {
  // Entities: the same name paths, the same local transforms.
  const auto wx = untold::walk_scene(x), wy = untold::walk_scene(y);
  std::map<std::string, untold::mat4> ex, ey;
  for (std::uint32_t r = 0; r < x.entities().size(); ++r)
    ex.emplace(entity_path(x, wx, r), untold::multiply(x.header().root_transform, wx.world[r]));
  for (std::uint32_t r = 0; r < y.entities().size(); ++r)
    ey.emplace(entity_path(y, wy, r), untold::multiply(y.header().root_transform, wy.world[r]));
  REQUIRE(ex.size() == ey.size());
  for (const auto& entry : ex) {
    INFO("entity " << entry.first);
    REQUIRE(ey.count(entry.first) == 1);
    CHECK(near(entry.second, ey.at(entry.first), 1e-4f));
  }

  // Meshes: vertices, indices, skins, morph targets.
  const auto mx = meshes_of(x), my = meshes_of(y);
  REQUIRE(mx.size() == my.size());
  for (std::size_t i = 0; i < mx.size(); ++i) {
    INFO("mesh " << mx[i].entity << " " << mx[i].name);
    CHECK(mx[i].key() == my[i].key());
    CHECK(mx[i].indices == my[i].indices);
    REQUIRE(mx[i].vertices.size() == my[i].vertices.size());
    const auto vx = *untold::pbr_vertex_view::from_bytes(mx[i].vertices);
    const auto vy = *untold::pbr_vertex_view::from_bytes(my[i].vertices);
    for (std::size_t v = 0; v < vx.size(); ++v) {
      const auto px = vx.packed(v), py = vy.packed(v);
      CHECK(px.position == py.position);
      CHECK(px.uv0 == py.uv0);
      CHECK(px.uv1 == py.uv1);
      CHECK(px.color0 == py.color0);
      for (const auto& [a, b] : {std::pair{px.normal, py.normal}, std::pair{px.tangent, py.tangent}}) {
        for (int c = 0; c < 3; ++c) {
          const auto code = [c](std::uint32_t w) {
            const std::int32_t raw = static_cast<std::int32_t>((w >> (10 * c)) & 0x3FFu);
            return raw >= 512 ? raw - 1024 : raw;
          };
          CHECK(std::abs(code(a) - code(b)) <= normal_codes);
        }
        CHECK((a >> 30) == (b >> 30));
      }
    }
    CHECK(mx[i].palette == my[i].palette);
    CHECK(mx[i].joints == my[i].joints);
    CHECK(mx[i].weights == my[i].weights);
    CHECK(mx[i].morphs == my[i].morphs);
  }

  // Materials and textures: every field but the string offsets.
  std::map<std::string, untold::material_record> matx, maty;
  for (const auto& m : x.materials()) matx.emplace(x.string(m.name_offset), m);
  for (const auto& m : y.materials()) maty.emplace(y.string(m.name_offset), m);
  REQUIRE(matx.size() == maty.size());
  for (const auto& entry : matx) {
    INFO("material " << entry.first);
    REQUIRE(maty.count(entry.first) == 1);
    auto m = entry.second;
    auto n = maty.at(entry.first);
    const auto texture_uri = [](const untold::asset& a, std::uint32_t t) {
      return t == untold::none ? std::string("-") : std::string(a.string(a.textures()[t].uri_offset));
    };
    CHECK(texture_uri(x, m.base_color_texture) == texture_uri(y, n.base_color_texture));
    CHECK(texture_uri(x, m.normal_texture) == texture_uri(y, n.normal_texture));
    CHECK(texture_uri(x, m.metallic_texture) == texture_uri(y, n.metallic_texture));
    CHECK(texture_uri(x, m.occlusion_texture) == texture_uri(y, n.occlusion_texture));
    CHECK(texture_uri(x, m.emissive_texture) == texture_uri(y, n.emissive_texture));
    // The height texture and its parameters are reported losses (from_untold
    // keeps the texture as an extra slot, to_untold drops extra slots).
    const untold::material_record defaults{};
    m.name_offset = n.name_offset = 0;
    for (auto* r : {&m, &n}) {
      r->base_color_texture = r->normal_texture = r->metallic_texture = r->roughness_texture = r->emissive_texture =
          r->occlusion_texture = r->height_texture = 0;
      r->height_scale = defaults.height_scale;
      r->height_midlevel = defaults.height_midlevel;
      r->height_remap_min = defaults.height_remap_min;
      r->height_remap_max = defaults.height_remap_max;
    }
    CHECK(m == n);
  }

  // Skeletons: joint paths, parents (by path), bind and rest transforms.
  std::map<std::string, std::tuple<std::string, untold::mat4, untold::mat4>> jx, jy;
  for (const auto& pair : {std::pair{&x, &jx}, std::pair{&y, &jy}}) {
    const untold::asset& a = *pair.first;
    for (std::uint32_t k = 0; k < a.table<untold::skeleton_record>().size(); ++k) {
      const auto sk = untold::resolve_skeleton(a, k);
      REQUIRE(sk);
      for (const auto& j : sk->joints) {
        const std::string parent =
            j.parent_joint_index == untold::none ? "" : std::string(a.string(sk->joints[j.parent_joint_index].joint_path_offset));
        pair.second->emplace(std::string(sk->name) + ":" + std::string(a.string(j.joint_path_offset)),
                              std::tuple{parent, j.bind_transform, j.rest_transform});
      }
    }
  }
  REQUIRE(jx.size() == jy.size());
  for (const auto& entry : jx) {
    const std::string& path = entry.first;
    const auto& facts = entry.second;
    INFO("joint " << path);
    REQUIRE(jy.count(path) == 1);
    CHECK(std::get<0>(facts) == std::get<0>(jy.at(path)));
    CHECK(near(std::get<1>(facts), std::get<1>(jy.at(path)), 1e-4f));
    CHECK(near(std::get<2>(facts), std::get<2>(jy.at(path)), 1e-5f));
  }

  // Clips: names, durations, every channel's keys (exactly).
  using keys = std::pair<std::vector<untold::translation_keyframe_record>, std::vector<untold::rotation_keyframe_record>>;
  std::map<std::string, std::pair<float, std::map<std::string, keys>>> cx, cy;
  for (const auto& pair : {std::pair{&x, &cx}, std::pair{&y, &cy}}) {
    const untold::asset& a = *pair.first;
    for (std::uint32_t c = 0; c < a.table<untold::animation_clip_record>().size(); ++c) {
      const auto clip = untold::resolve_clip(a, c);
      REQUIRE(clip);
      auto& entry = (*pair.second)[std::string(clip->name)];
      entry.first = clip->record.duration;
      for (const auto& ch : clip->channels)
        entry.second[std::string(ch.joint_path)] = {{ch.translations.begin(), ch.translations.end()},
                                                    {ch.rotations.begin(), ch.rotations.end()}};
    }
  }
  CHECK(cx == cy);

  // Lights and cameras: every field but the name offset and entity id; names.
  const auto lx = x.table<untold::light_record>(), ly = y.table<untold::light_record>();
  REQUIRE(lx.size() == ly.size());
  for (std::size_t i = 0; i < lx.size(); ++i) {
    auto l = lx[i], m = ly[i];
    CHECK(x.string(l.name_offset) == y.string(m.name_offset));
    CHECK(l.light_type == m.light_type);
    CHECK(l.color == m.color);
    CHECK(l.intensity == m.intensity);
    CHECK(l.radius == m.radius);
    CHECK(l.inner_cone == doctest::Approx(m.inner_cone));
    CHECK(l.outer_cone == doctest::Approx(m.outer_cone));
    CHECK(near(l.local_transform, m.local_transform, 1e-4f));
  }
  const auto kx = x.table<untold::camera_record>(), ky = y.table<untold::camera_record>();
  REQUIRE(kx.size() == ky.size());
  for (std::size_t i = 0; i < kx.size(); ++i) {
    CHECK(x.string(kx[i].name_offset) == y.string(ky[i].name_offset));
    CHECK(kx[i].fov_y_degrees == doctest::Approx(ky[i].fov_y_degrees));
    CHECK(kx[i].near_clip == ky[i].near_clip);
    CHECK(kx[i].far_clip == ky[i].far_clip);
    CHECK(kx[i].aspect == ky[i].aspect);
    CHECK(near(kx[i].local_transform, ky[i].local_transform, 1e-4f));
  }
}

/// A skinned, animated, morphed scene with a light, a camera, an instanced
/// mesh and a LOD level (every table from_untold reads).
cv::scene character() {
  cv::scene s;
  s.nodes.push_back({.name = "root", .local = {.translation = {0, 0, 1}}});
  s.nodes.push_back({.name = "body", .parent = 0, .local = {.rotation = {0, 0.7071068f, 0, 0.7071068f}}, .meshes = {0}});
  s.nodes.push_back({.name = "prop", .parent = 0, .local = {.translation = {2, 0, 0}, .scale = {2, 2, 2}}, .meshes = {1}});
  s.nodes.push_back({.name = "prop copy", .parent = 0, .local = {.translation = {-2, 0, 0}}, .meshes = {1}});
  s.nodes.push_back({.name = "lamp", .parent = 0, .local = {.translation = {0, 5, 0}}});
  s.textures.push_back({.name = "albedo", .uri = "Textures/albedo.png", .format = untold::texture_format::rgba8,
                        .srgb = true});
  s.textures.push_back({.name = "mr", .uri = "Textures/mr.png", .format = untold::texture_format::rgba8});
  cv::material skin_mat{.name = "skin", .base_color = {1, 0.5f, 0.25f, 1}, .metallic = 0.2f, .roughness = 0.7f};
  skin_mat.base_color_texture.texture = 0;
  skin_mat.metallic_roughness_texture.texture = 1;
  skin_mat.alpha = cv::alpha_mode::mask;
  skin_mat.alpha_cutoff = 0.3f;
  skin_mat.double_sided = true;
  s.materials.push_back(skin_mat);
  s.materials.push_back({.name = "wood"});

  cv::mesh body = scene_test::skinned_strip("body", 0);
  for (int i = 0; i < 6; ++i) {
    const float sign = i % 2 == 0 ? 1.0f : -1.0f;
    body.normals[3 * i] = 0.6f, body.normals[3 * i + 2] = 0.8f;
    body.tangents.insert(body.tangents.end(), {0.8f, 0, -0.6f, sign});
    body.colors.insert(body.colors.end(), {1, 0.5f, 0, 1});
  }
  cv::morph_target smile{.name = "smile"};
  smile.position_deltas.assign(18, 0);
  smile.position_deltas[3 * 5 + 1] = 0.25f;
  smile.normal_deltas.assign(18, 0);
  smile.normal_deltas[3 * 5] = 0.125f;
  body.morphs.push_back(smile);
  body.lods.push_back({.indices = {0, 1, 5, 0, 5, 4}});
  s.meshes.push_back(body);

  cv::mesh box;
  box.name = "box";
  box.material = 1;
  box.positions = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
  box.normals = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
  box.uv0 = {0, 0, 1, 0, 1, 1, 0, 1};
  box.uv1 = {0, 0, 0.5f, 0, 0.5f, 0.5f, 0, 0.5f};
  box.indices = {0, 1, 2, 0, 2, 3};
  box.lods.push_back({.indices = {0, 1, 2}});
  s.meshes.push_back(box);

  cv::skeleton sk{.name = "rig", .node = 0};
  sk.joints.push_back({.name = "hip", .rest = {.translation = {0, 1, 0}}});
  sk.joints.push_back({.name = "spine", .parent = 0, .rest = {.translation = {0, 1, 0}, .rotation = {0.2f, 0, 0, 0.9797959f}}});
  sk.joints.push_back({.name = "head", .parent = 1, .rest = {.translation = {0, 0.5f, 0}}});
  sk.joints[0].inverse_bind = cv::transform{.translation = {0, -1, 0}}.matrix();
  sk.joints[1].inverse_bind = cv::transform{.translation = {0, -2, 0}}.matrix();
  sk.joints[2].inverse_bind = cv::transform{.translation = {0, -2.5f, 0}}.matrix();
  s.skeletons.push_back(sk);
  s.skins.push_back({.skeleton = 0, .joints = {0, 1, 2}});

  cv::animation walk{.name = "walk", .duration = 2};
  walk.channels.push_back({.skeleton = 0, .joint = 1, .path = cv::anim_path::translation,
                           .times = {0, 1, 2}, .values = {0, 1, 0, 0, 1.5f, 0, 0, 1, 0}});
  walk.channels.push_back({.skeleton = 0, .joint = 2, .path = cv::anim_path::rotation,
                           .times = {0, 2}, .values = {0, 0, 0, 1, 0, 0.3826834f, 0, 0.9238795f}});
  s.animations.push_back(walk);
  cv::animation idle{.name = "idle", .duration = 1};
  idle.channels.push_back({.skeleton = 0, .joint = 0, .path = cv::anim_path::rotation,
                           .times = {0, 1}, .values = {0, 0, 0, 1, 0, 0, 0, 1}});
  s.animations.push_back(idle);

  s.lights.push_back({.name = "sun", .node = 4, .kind = cv::light_kind::spot, .color = {1, 0.9f, 0.8f},
                      .intensity = 3, .range = 20, .inner_cone = 0.25f, .outer_cone = 0.5f});
  s.cameras.push_back({.name = "eye", .node = 4, .yfov = 0.9f, .aspect = 1.5f, .znear = 0.25f, .zfar = 80});
  return s;
}

struct trip {
  cv::scene scene;
  std::vector<std::byte> file;
  std::vector<std::vector<std::byte>> lod_files;
  cv::conversion_report written;  // to_untold's report
};

/// .untold bytes (+ LOD files) -> scene -> .untold again.
trip round_trip(std::span<const std::byte> file, std::span<const std::vector<std::byte>> lods = {}) {
  auto a = untold::open(file, {.deep_checks = true});
  REQUIRE_MESSAGE(a, a.error().describe());
  std::vector<untold::asset> lod_assets;
  for (const auto& l : lods) {
    auto la = untold::open(l, {.deep_checks = true});
    REQUIRE_MESSAGE(la, la.error().describe());
    lod_assets.push_back(std::move(*la));
  }
  std::vector<const untold::asset*> lod_ptrs;
  for (const auto& la : lod_assets) lod_ptrs.push_back(&la);
  auto s = cv::from_untold(*a, lod_ptrs);
  REQUIRE_MESSAGE(s, s.error().describe());
  cv::conversion_report report;
  auto out = cv::to_untold(*s, {.embed_images = true}, report);
  REQUIRE_MESSAGE(out, out.error().describe());
  return {std::move(*s), std::move(out->file), std::move(out->lod_files), std::move(report)};
}

}  // namespace

TEST_CASE("from_untold: the files in tests/data survive .untold -> scene -> .untold") {
  for (const char* name : {"minimal_v1.untold", "minimal_v4.untold", "../../fuzz/corpus/fuzz_open/seed-extensions.untold",
                           "../../fuzz/corpus/fuzz_open/seed-v4-lod.untold"}) {
    INFO(name);
    const auto bytes = test::read_binary(std::string(UNTOLD_TEST_DATA_DIR "/") + name);
    REQUIRE(!bytes.empty());
    const trip t = round_trip(bytes);
    auto x = untold::open(bytes, {.deep_checks = true});
    auto y = untold::open(t.file, {.deep_checks = true});
    REQUIRE_MESSAGE(y, y.error().describe());
    check_same(*x, *y);
    // What check_same leaves out is reported: the height texture and its parameters.
    const auto mats = x->materials();
    if (std::any_of(mats.begin(), mats.end(), [](const auto& m) { return m.height_texture != untold::none; }))
      CHECK(find(t.written, "other texture slots"));
    // Twice round is a fixed point: the second file is byte for byte the first.
    const trip again = round_trip(t.file);
    CHECK(again.file == t.file);
  }
}

TEST_CASE("from_untold: a skinned, animated, morphed file with lights, cameras and LODs round-trips") {
  cv::conversion_report first;
  auto built = cv::to_untold(character(), {}, first);
  REQUIRE_MESSAGE(built, built.error().describe());
  REQUIRE(built->lod_files.size() == 1);
  const trip t = round_trip(built->file, built->lod_files);

  // The scene: what the importer rebuilt.
  const cv::scene& s = t.scene;
  REQUIRE(s.skeletons.size() == 1);
  CHECK(s.skeletons[0].joints.size() == 3);
  CHECK(s.skeletons[0].joints[2].name == "head");
  CHECK(s.skeletons[0].joints[2].parent == 1);
  REQUIRE(s.animations.size() == 2);
  CHECK(s.animations[0].name == "walk");
  CHECK(s.animations[0].channels.size() == 2);
  REQUIRE(s.meshes.size() == 2);  // the instanced box is one mesh drawn by two nodes
  CHECK(s.meshes[0].morphs.size() == 1);
  CHECK(s.meshes[0].morphs[0].normal_deltas.size() == 18);
  CHECK(s.meshes[0].lods.size() == 1);
  CHECK(s.meshes[1].lods.size() == 1);
  CHECK(s.meshes[1].tangents.empty());  // all the format's default: left out
  CHECK(s.meshes[1].colors.empty());
  CHECK(!s.meshes[1].uv1.empty());
  CHECK(s.lights.size() == 1);
  CHECK(s.lights[0].outer_cone == doctest::Approx(0.5f));
  CHECK(s.cameras[0].yfov == doctest::Approx(0.9f));
  REQUIRE(find(s.report, "instanced mesh records"));
  CHECK(find(s.report, "instanced mesh records")->count == 1);
  CHECK_MESSAGE(!s.report.lost_anything(), losses(s.report));

  auto x = untold::open(built->file, {.deep_checks = true});
  auto y = untold::open(t.file, {.deep_checks = true});
  REQUIRE_MESSAGE(y, y.error().describe());
  check_same(*x, *y);
  REQUIRE(t.lod_files.size() == 1);
  auto lx = untold::open(built->lod_files[0], {.deep_checks = true});
  auto ly = untold::open(t.lod_files[0], {.deep_checks = true});
  REQUIRE_MESSAGE(ly, ly.error().describe());
  const auto lod_x = meshes_of(*lx), lod_y = meshes_of(*ly);
  REQUIRE(lod_x.size() == lod_y.size());
  for (std::size_t i = 0; i < lod_x.size(); ++i) CHECK(lod_x[i].indices == lod_y[i].indices);
}

TEST_CASE("from_untold: what the scene cannot hold is reported, never silent") {
  untold::builder b{untold::file_type::tile};
  const std::uint32_t root = b.add_entity({.name = "root", .flags = 4});
  untold::mat4 shear = untold::identity_matrix;
  shear[4] = 0.5f;  // x += 0.5 y
  const std::uint32_t leaning = b.add_entity({.name = "leaning", .parent = root, .local_transform = shear});
  const std::array<float, 9> positions{0, 0, 0, 1, 0, 0, 0, 1, 0};
  auto vertices = untold::encode_pbr_vertices(untold::pbr_vertex_input{.positions = positions});
  REQUIRE(vertices);
  const std::array<std::uint32_t, 3> indices{0, 1, 2}, edges{0, 1};
  const std::uint32_t tex = b.add_texture({.name = "m", .uri = "m.png", .flags = untold::texture_flags::normal_map});
  const std::uint32_t mat = b.add_material({.name = "split", .metallic_texture = tex, .roughness_texture = tex});
  const std::uint32_t mesh = b.add_mesh({.entity = leaning, .name = "tri", .material = mat, .vertices = *vertices,
                                         .indices = indices, .edge_indices = std::span(edges).first(2)});
  const std::array<untold::skeleton_joint_desc, 2> joints{{{.path = "a"}, {.path = "a/b", .parent = 0, .flags = 1}}};
  const std::uint32_t skel = b.add_skeleton({.name = "rig", .entity = root, .joints = joints});
  const std::array<untold::float3, 3> deltas{{{0, 0, 0}, {0, 0.5f, 0}, {0, 0, 0}}};
  const std::array<untold::morph_target_desc, 1> targets{
      {{.name = "lift", .positions = deltas, .driver = untold::morph_driver_desc{.joint_path = "a/b"}}}};
  b.add_morph_targets(mesh, targets);
  b.add_muscle({.skeleton = skel, .name = "biceps", .origin_joint = "a", .insertion_joint = "a/b"});
  b.set_color_management({.view_transform = "AgX", .look = "Punchy"});
  b.add_color_grade_lut({.uri = "grade.cube", .lut_size = 33});
  const std::array<untold::translation_keyframe_record, 1> keys{{{.time = 0, .x = 1}}};
  const std::array<untold::animation_channel_desc, 2> channels{
      {{.joint_path = "a/b", .translations = keys}, {.joint_path = "nobody", .translations = keys}}};
  b.add_animation_clip({.name = "wave", .channels = channels});
  b.add_light({.name = "fill", .light = {.light_type = 2, .falloff = 2, .local_transform = shear}});
  auto file = b.finish();
  REQUIRE_MESSAGE(file, file.error().describe());
  auto a = untold::open(*file, {.deep_checks = true});
  REQUIRE_MESSAGE(a, a.error().describe());

  auto s = cv::from_untold(*a);
  REQUIRE_MESSAGE(s, s.error().describe());
  const cv::conversion_report& r = s->report;
  const auto count = [&](std::string_view what, cv::report_entry::kind kind) -> std::uint64_t {
    const cv::report_entry* e = find(r, what);
    if (e == nullptr) return 0;
    CHECK(e->severity == kind);
    return e->count;
  };
  using k = cv::report_entry::kind;
  CHECK(count("entity transforms", k::changed) == 1);
  CHECK(count("entity flags", k::dropped) == 1);
  CHECK(count("edge indices", k::dropped) == 2);
  CHECK(count("metallic/roughness textures", k::dropped) == 2);  // not read from B and G
  CHECK(count("texture usage flags", k::dropped) == 1);
  CHECK(count("joint flags", k::dropped) == 1);
  CHECK(count("morph drivers", k::dropped) == 1);
  CHECK(count("muscles", k::dropped) == 1);
  CHECK(count("colour management", k::dropped) == 1);
  CHECK(count("colour-grade LUTs", k::dropped) == 1);
  CHECK(count("channels without a joint", k::dropped) == 1);
  CHECK(count("light falloff, source power, exposure and flags", k::dropped) == 1);
  CHECK(count("light and camera placement", k::changed) == 1);  // 'fill' names no entity
  REQUIRE(s->lights.size() == 1);
  REQUIRE(s->lights[0].node != cv::no_ref);
  CHECK(s->nodes[s->lights[0].node].name == "fill");
  // The one matched channel drives joint a/b.
  REQUIRE(s->animations.size() == 1);
  REQUIRE(s->animations[0].channels.size() == 1);
  CHECK(s->animations[0].channels[0].joint == 1);
  REQUIRE(s->meshes.size() == 1);
  REQUIRE(s->meshes[0].morphs.size() == 1);
  CHECK(s->meshes[0].morphs[0].position_deltas[4] == 0.5f);
}

TEST_CASE("from_untold: the budget is charged before the scene is built (R-LIMITS)") {
  cv::conversion_report first;
  auto built = cv::to_untold(character(), {}, first);
  REQUIRE(built);
  auto a = untold::open(built->file, {.deep_checks = true});
  REQUIRE(a);
  untold::limits tight;
  tight.memory_per_input_byte = 0;
  tight.memory_floor = 256;
  auto s = cv::from_untold(*a, {}, {.limits = tight});
  REQUIRE(!s);
  CHECK(s.error().code == untold::errc::limit_exceeded);
  // A shared budget: what the importer charged is visible to the caller.
  untold::budget shared(untold::limits{}, cv::payload_bytes(*a));
  auto ok = cv::from_untold(*a, {}, {.budget = &shared});
  REQUIRE(ok);
  CHECK(shared.memory().used > 0);
  CHECK(shared.work().used > 0);
}

TEST_CASE("decompose: T*R*S matrices come back, shear is flagged") {
  const cv::transform t{.translation = {1, -2, 3}, .rotation = {0.1825742f, 0.3651484f, 0.5477226f, 0.7302967f},
                        .scale = {2, 0.5f, 3}};
  const auto d = cv::decompose(t.matrix());
  CHECK(d.exact);
  for (int i = 0; i < 3; ++i) CHECK(d.trs.scale[i] == doctest::Approx(t.scale[i]));
  for (int i = 0; i < 4; ++i) CHECK(std::fabs(d.trs.rotation[i]) == doctest::Approx(std::fabs(t.rotation[i])));
  cv::transform mirrored{.scale = {-1, 1, 1}};
  const auto m = cv::decompose(mirrored.matrix());
  CHECK(m.exact);
  CHECK(m.trs.scale[0] == -1);
  untold::mat4 shear = untold::identity_matrix;
  shear[4] = 0.5f;
  CHECK(!cv::decompose(shear).exact);
}
