// convert::to_untold: the neutral scene model written as .untold, read back
// with deep checks, and the report of what the format could not hold.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include <untold/convert/to_untold.hpp>
#include <untold/images.hpp>
#include <untold/reader.hpp>
#include <untold/scene.hpp>
#include "convert/scene_support.hpp"

namespace cv = untold::convert;

namespace {

/// A unit quad (two triangles) with normals, tangents and uvs.
cv::mesh quad(std::string name, float z) {
  cv::mesh m;
  m.name = std::move(name);
  m.positions = {0, 0, z, 1, 0, z, 1, 1, z, 0, 1, z};
  m.normals = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
  m.tangents = {1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, -1};
  m.uv0 = {0, 0, 1, 0, 1, 1, 0, 1};
  m.indices = {0, 1, 2, 0, 2, 3};
  return m;
}

using scene_test::find;

/// root -> arm (skinned quad, drawn twice: by arm and by copy), a light and a camera node.
cv::scene skinned_scene() {
  cv::scene s;
  s.nodes.push_back({.name = "root"});
  s.nodes.push_back({.name = "arm", .parent = 0, .local = {.translation = {1, 2, 3}}, .meshes = {0}});
  s.nodes.push_back({.name = "copy", .parent = 0, .meshes = {0}});
  s.nodes.push_back({.name = "lamp", .parent = 0, .local = {.translation = {0, 5, 0}}});
  s.textures.push_back({.name = "albedo", .uri = "Textures/albedo.png", .format = untold::texture_format::rgba8,
                        .srgb = true});
  cv::material mat{.name = "skin"};
  mat.base_color_texture.texture = 0;
  mat.metallic_roughness_texture.texture = 0;
  mat.alpha = cv::alpha_mode::blend;
  mat.emissive = {1, 0.5f, 0};
  mat.emissive_strength = 2;
  mat.transmission = 0.25f;
  mat.double_sided = true;
  s.materials.push_back(mat);

  cv::mesh m = quad("body", 0);
  m.material = 0;
  m.skin = 0;
  m.joints = {{0, 1, 0, 0}, {0, 1, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}};
  m.weights = {{0.5f, 0.5f, 0, 0}, {0.5f, 0.5f, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}};
  m.morphs.push_back({.name = "smile", .position_deltas = std::vector<float>(12, 0.1f)});
  m.lods.push_back({.switch_distance = 10, .indices = {0, 1, 2}});
  s.meshes.push_back(m);

  cv::skeleton sk{.name = "rig", .node = 0};
  sk.joints.push_back({.name = "hip"});
  sk.joints.push_back({.name = "knee", .parent = 0, .rest = {.translation = {0, -1, 0}}});
  sk.joints[1].inverse_bind = cv::transform{.translation = {0, 1, 0}}.matrix();
  s.skeletons.push_back(sk);
  s.skins.push_back({.skeleton = 0, .joints = {0, 1}});

  cv::animation walk{.name = "walk", .duration = 1};
  walk.channels.push_back({.skeleton = 0, .joint = 1, .path = cv::anim_path::translation,
                           .times = {0, 1}, .values = {0, -1, 0, 0, -2, 0}});
  walk.channels.push_back({.skeleton = 0, .joint = 0, .path = cv::anim_path::rotation,
                           .interp = cv::interpolation::step, .times = {0.5f}, .values = {0, 0, 0, 1}});
  walk.channels.push_back({.skeleton = 0, .joint = 0, .path = cv::anim_path::scale,
                           .times = {0, 1}, .values = {1, 1, 1, 2, 2, 2}});
  walk.channels.push_back({.node = 3, .path = cv::anim_path::translation, .times = {0}, .values = {0, 0, 0}});
  s.animations.push_back(walk);
  s.lights.push_back({.name = "sun", .node = 3, .kind = cv::light_kind::spot, .intensity = 3,
                      .inner_cone = 0.5f, .outer_cone = 1.0f});
  s.cameras.push_back({.name = "eye", .node = 3, .yfov = 1.0f, .znear = 0.5f, .zfar = 50});
  return s;
}

}  // namespace

TEST_CASE("to_untold: a skinned, animated scene reads back deep-valid with every table") {
  const cv::scene s = skinned_scene();
  cv::conversion_report report;
  auto out = cv::to_untold(s, {}, report);
  REQUIRE_MESSAGE(out, out.error().describe());
  auto a = untold::open(out->file, {.deep_checks = true});
  REQUIRE_MESSAGE(a, a.error().describe());

  CHECK(a->entities().size() == 4);
  REQUIRE(a->meshes().size() == 2);  // one record per drawing node
  CHECK(a->meshes()[0].vertex_count == 4);
  CHECK(a->meshes()[0].index_count == 6);
  CHECK(a->meshes()[1].vertex_count == 4);
  REQUIRE(a->materials().size() == 1);
  const auto mat = a->materials()[0];
  CHECK(mat.emissive_factor[0] == doctest::Approx(2.0f));  // strength multiplied in
  CHECK(mat.emissive_factor[1] == doctest::Approx(1.0f));
  CHECK(mat.metallic_texture == 0);
  CHECK(mat.metallic_channel() == untold::texture_channel::b);
  CHECK(mat.roughness_texture == 0);
  CHECK(mat.roughness_channel() == untold::texture_channel::g);
  REQUIRE(a->textures().size() == 1);
  CHECK(a->string(a->textures()[0].uri_offset) == "Textures/albedo.png");

  // Skeleton: paths from the root; bind pose = inverse of the inverse bind matrix.
  REQUIRE(a->table<untold::skeleton_record>().size() == 1);
  const auto joints = a->table<untold::skeleton_joint_record>();
  REQUIRE(joints.size() == 2);
  CHECK(a->string(joints[1].joint_path_offset) == "hip/knee");
  CHECK(joints[1].parent_joint_index == 0);
  CHECK(joints[1].bind_transform[13] == doctest::Approx(-1.0f));
  CHECK(joints[1].rest_transform[13] == doctest::Approx(-1.0f));
  CHECK(a->table<untold::skin_record>().size() == 2);  // the skin follows both mesh records
  auto skin = untold::resolve_skin(*a, 0);
  REQUIRE(skin);
  CHECK(skin->skeleton_joints == std::vector<std::uint32_t>{0, 1});

  auto clip = untold::resolve_clip(*a, 0);
  REQUIRE(clip);
  CHECK(clip->name == "walk");
  REQUIRE(clip->channels.size() == 2);  // translation + rotation; scale and node channels dropped
  CHECK(clip->channels[0].joint_path == "hip/knee");
  CHECK(clip->channels[0].translations.size() == 2);
  CHECK(clip->channels[1].rotations.size() == 1);

  const auto lights = a->table<untold::light_record>();
  REQUIRE(lights.size() == 1);
  CHECK(lights[0].light_type == 3);
  CHECK(lights[0].outer_cone == doctest::Approx(57.29578f));
  CHECK(lights[0].position[1] == doctest::Approx(5.0f));
  const auto cameras = a->table<untold::camera_record>();
  REQUIRE(cameras.size() == 1);
  CHECK(cameras[0].fov_y_degrees == doctest::Approx(57.29578f));
  CHECK(cameras[0].far_clip == 50);

  // One LOD file with the coarser indices.
  REQUIRE(out->lod_files.size() == 1);
  auto lod = untold::open(out->lod_files[0], {.deep_checks = true});
  REQUIRE_MESSAGE(lod, lod.error().describe());
  CHECK(lod->header().file_type == static_cast<std::uint32_t>(untold::file_type::lod));
  CHECK(lod->meshes()[0].index_count == 3);

  // The report names every loss, with counts.
  CHECK(report.lost_anything());
  // Morph target 'smile' follows both mesh records; alpha mode is in the material's flags.
  CHECK(a->table<untold::morph_target_record>().size() == 2);
  CHECK(!find(report, "morph targets"));
  CHECK((mat.flags & untold::material_flags::alpha_mode_mask) == static_cast<std::uint32_t>(untold::alpha_mode::blend));
  CHECK(!find(report, "alpha mode"));
  // Double-sided: flags bit 2 (untold's convention), next to the alpha bits.
  CHECK(mat.double_sided());
  CHECK(mat.flags == (untold::material_flags::double_sided | static_cast<std::uint32_t>(untold::alpha_mode::blend)));
  CHECK(mat.alpha_mode() == untold::alpha_mode::blend);
  CHECK(!find(report, "double-sided flag"));
  CHECK(mat.transmission_factor == 0.25f);
  CHECK(a->header().format_version == 4);
  REQUIRE(find(report, "scale channels"));
  CHECK(find(report, "scale channels")->count == 1);
  CHECK(find(report, "scale channels")->reason.find("(2 keyframes)") != std::string::npos);
  REQUIRE(find(report, "node channels"));
  REQUIRE(find(report, "step channels"));
  CHECK(find(report, "step channels")->severity == cv::report_entry::kind::changed);
  // Instancing: the quad drawn by two nodes is stored once.
  REQUIRE(find(report, "instanced meshes"));
  CHECK(find(report, "instanced meshes")->count == 1);
  CHECK(a->meshes()[0].vertex_data_offset == a->meshes()[1].vertex_data_offset);
  CHECK(a->meshes()[0].index_data_offset == a->meshes()[1].index_data_offset);
  CHECK(a->payload(untold::chunk_type::vertex_data).size() == 4 * 32);
  CHECK(find(report, "emissive strength"));
}

TEST_CASE("to_untold: identical meshes are stored once, share_geometry off stores copies") {
  cv::scene s;
  s.meshes = {quad("a", 0), quad("b", 0), quad("c", 1)};
  s.nodes.push_back({.name = "n0", .meshes = {0}});
  s.nodes.push_back({.name = "n1", .meshes = {1}});
  s.nodes.push_back({.name = "n2", .meshes = {2}});
  cv::conversion_report report;
  auto out = cv::to_untold(s, {}, report);
  REQUIRE_MESSAGE(out, out.error().describe());
  auto a = untold::open(out->file, {.deep_checks = true});
  REQUIRE_MESSAGE(a, a.error().describe());
  REQUIRE(a->meshes().size() == 3);
  CHECK(a->meshes()[0].vertex_data_offset == a->meshes()[1].vertex_data_offset);  // a and b: same bytes
  CHECK(a->meshes()[2].vertex_data_offset != a->meshes()[0].vertex_data_offset);  // c: other positions
  CHECK(a->payload(untold::chunk_type::vertex_data).size() == 2 * 4 * 32);
  REQUIRE(find(report, "identical meshes"));
  CHECK(find(report, "identical meshes")->count == 1);

  cv::to_untold_options copies;
  copies.share_geometry = false;
  cv::conversion_report r2;
  auto plain = cv::to_untold(s, copies, r2);
  REQUIRE(plain);
  auto b = untold::open(plain->file, {.deep_checks = true});
  REQUIRE(b);
  CHECK(b->payload(untold::chunk_type::vertex_data).size() == 3 * 4 * 32);
}

TEST_CASE("to_untold: texture transforms and uv sets baked when uniform, reported when not") {
  cv::scene s;
  s.textures.push_back({.name = "t", .uri = "t.png"});
  cv::material uniform{.name = "uniform"};
  uniform.base_color_texture = {.texture = 0, .has_transform = true, .offset = {0.5f, 0.25f}, .scale = {2, 2}};
  uniform.normal_texture = uniform.base_color_texture;
  cv::material mixed{.name = "mixed"};
  mixed.base_color_texture = uniform.base_color_texture;
  mixed.normal_texture = {.texture = 0};
  cv::material second_set{.name = "second"};
  second_set.base_color_texture = {.texture = 0, .uv_set = 1};
  s.materials = {uniform, mixed, second_set};
  for (std::uint32_t i = 0; i < 3; ++i) {
    cv::mesh m = quad("q" + std::to_string(i), static_cast<float>(i));
    m.uv1 = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    m.material = i;
    s.meshes.push_back(m);
    s.nodes.push_back({.name = "n" + std::to_string(i), .meshes = {i}});
  }
  cv::conversion_report report;
  auto out = cv::to_untold(s, {}, report);
  REQUIRE_MESSAGE(out, out.error().describe());
  auto a = untold::open(out->file, {.deep_checks = true});
  REQUIRE(a);
  const auto uv = [&](std::size_t mesh, std::size_t vertex) {
    const auto v = untold::pbr_vertex_view::from_bytes(a->vertices(a->meshes()[mesh]));
    REQUIRE(v);
    return (*v)[vertex].uv0;
  };
  // uniform: uv' = uv * 2 + (0.5, 0.25); vertex 2 has uv (1, 1).
  CHECK(uv(0, 2)[0] == doctest::Approx(2.5f));
  CHECK(uv(0, 2)[1] == doctest::Approx(2.25f));
  CHECK(uv(1, 2)[0] == doctest::Approx(1.0f));  // mixed: not baked
  CHECK(uv(2, 2)[0] == doctest::Approx(0.5f));  // second set moved into uv0
  bool baked = false, dropped = false, moved = false;
  for (const auto& e : report.entries) {
    baked |= e.what == "texture transform" && e.severity == cv::report_entry::kind::changed && e.where == "mesh 'q0'";
    dropped |= e.what == "texture transform" && e.severity == cv::report_entry::kind::dropped && e.where == "mesh 'q1'";
    moved |= e.what == "texture uv set" && e.severity == cv::report_entry::kind::changed && e.where == "mesh 'q2'";
  }
  CHECK(baked);
  CHECK(dropped);
  CHECK(moved);
}

namespace {

/// One quad per sampler setup, its uvs far beyond binary16 (70000 = 65504 + 4496).
struct far_uv_result {
  untold::result<cv::untold_output> out;
  cv::conversion_report report;
};
far_uv_result cook_far_uvs(bool uv_wrap, cv::wrap_mode u, cv::wrap_mode v, bool textured = true) {
  cv::scene s;
  s.textures.push_back({.name = "t", .uri = "t.png"});
  cv::material mat{.name = "m"};
  mat.base_color_texture = {.texture = 0, .wrap = {u, v}};
  s.materials.push_back(mat);
  cv::mesh m = quad("far", 0);
  m.uv0 = {70000.5f, -70001, 70001.5f, -70001, 70001.5f, -70000, 70000.5f, -70000};
  if (textured) m.material = 0;
  s.meshes.push_back(m);
  s.nodes.push_back({.name = "n", .meshes = {0}});
  cv::to_untold_options o;
  o.uv_wrap = uv_wrap;
  far_uv_result r{cv::untold_output{}, {}};
  r.out = cv::to_untold(s, o, r.report);
  return r;
}

std::array<float, 2> first_uv(const cv::untold_output& out) {
  auto a = untold::open(out.file, {.deep_checks = true});
  REQUIRE(a);
  const auto v = untold::pbr_vertex_view::from_bytes(a->vertices(a->meshes()[0]));
  REQUIRE(v);
  return {(*v)[0].uv0[0], (*v)[0].uv0[1]};
}

}  // namespace

TEST_CASE("to_untold: uvs beyond the half-float range: clamped and reported, or shifted with uv_wrap where sampling allows") {
  using cv::wrap_mode;
  using kind = cv::report_entry::kind;
  SUBCASE("default: clamped, reported as dropped per axis") {
    auto r = cook_far_uvs(false, wrap_mode::repeat, wrap_mode::repeat);
    REQUIRE(r.out);
    const auto uv = first_uv(*r.out);
    CHECK(uv[0] == 65504.0f);
    CHECK(uv[1] == -65504.0f);
    REQUIRE(find(r.report, "uv0 range"));
    CHECK(find(r.report, "uv0 range")->severity == kind::dropped);
    CHECK(find(r.report, "uv0 range")->count == 4);  // the four u values of the first axis
  }
  SUBCASE("uv_wrap, repeat: shifted by whole units, the fraction kept") {
    auto r = cook_far_uvs(true, wrap_mode::repeat, wrap_mode::repeat);
    REQUIRE(r.out);
    const auto uv = first_uv(*r.out);
    CHECK(uv[0] == -0.5f);  // 70000.5 - floor((70000.5 + 70001.5) / 2) = 70000.5 - 70001
    CHECK(uv[0] - std::floor(uv[0]) == 0.5f);  // the same fraction: the same texel under repeat
    CHECK(uv[1] == 0.0f);   // -70001 - floor(-70000.5) = -70001 + 70001
    REQUIRE(find(r.report, "uv0 range"));
    CHECK(find(r.report, "uv0 range")->severity == kind::changed);
    CHECK(!r.report.lost_anything());
  }
  SUBCASE("uv_wrap, mirror on u: an even shift; clamp on v: v clamped") {
    auto r = cook_far_uvs(true, wrap_mode::mirror, wrap_mode::clamp);
    REQUIRE(r.out);
    const auto uv = first_uv(*r.out);
    CHECK(uv[0] == 0.5f);  // the even shift 70000 keeps mirrored sampling (70001 would flip it)
    CHECK(uv[1] == -65504.0f);
    bool shifted_u = false, clamped_v = false;
    for (const auto& e : r.report.entries) {
      shifted_u |= e.what == "uv0 range" && e.severity == kind::changed;
      clamped_v |= e.what == "uv0 range" && e.severity == kind::dropped && e.reason.find("clamping sampler") != std::string::npos;
    }
    CHECK(shifted_u);
    CHECK(clamped_v);
    REQUIRE(find(r.report, "clamp/mirror sampler wrap"));  // the format has no sampler state
    CHECK(find(r.report, "clamp/mirror sampler wrap")->severity == kind::dropped);
  }
  SUBCASE("uv_wrap without textures: nothing samples them, shifted") {
    auto r = cook_far_uvs(true, wrap_mode::clamp, wrap_mode::clamp, false);
    REQUIRE(r.out);
    CHECK(first_uv(*r.out)[0] == -0.5f);
  }
}

TEST_CASE("to_untold: uvs that lose precision in binary16 are reported") {
  cv::scene s;
  cv::mesh near = quad("near", 1);
  near.uv0 = {100.3f, 0, 101, 0, 101, 1, 100, 1};
  s.meshes.push_back(near);
  cv::conversion_report report;
  auto out = cv::to_untold(s, {}, report);
  REQUIRE_MESSAGE(out, out.error().describe());
  REQUIRE(find(report, "uv0 precision"));
  CHECK(find(report, "uv0 precision")->where == "mesh 'near'");
  CHECK(find(report, "uv0 precision")->count == 1);  // 100.3 rounds by 0.05; whole numbers are exact
  CHECK(!find(report, "uv0 range"));
}

TEST_CASE("to_untold: double_sided false leaves flags bit 2 clear, the record accessor round-trips every version") {
  cv::scene s;
  s.materials.push_back({.name = "one", .alpha = cv::alpha_mode::mask});
  s.materials.push_back({.name = "two", .double_sided = true});
  cv::mesh m = quad("q", 0);
  m.material = 0;
  s.meshes.push_back(m);
  cv::conversion_report report;
  auto out = cv::to_untold(s, {}, report);
  REQUIRE(out);
  auto a = untold::open(out->file);
  REQUIRE(a);
  REQUIRE(a->materials().size() == 2);
  CHECK(!a->materials()[0].double_sided());
  CHECK(a->materials()[0].flags == 1u);  // mask only
  CHECK(a->materials()[1].double_sided());
  CHECK(a->materials()[1].flags == 4u);
  for (std::uint32_t version = 1; version <= 4; ++version) {
    untold::material_record r;
    r.set_alpha_mode(untold::alpha_mode::blend);
    r.set_double_sided(true);
    std::vector<std::byte> bytes(untold::codec<untold::material_record>::size(version));
    untold::codec<untold::material_record>::encode(r, bytes, version);
    CHECK(std::to_integer<int>(bytes[4]) == 6);  // flags at offset 4: bit 2 + blend (2)
    const auto back = untold::codec<untold::material_record>::decode(bytes, version);
    CHECK(back.double_sided());
    CHECK(back.alpha_mode() == untold::alpha_mode::blend);
    r.set_double_sided(false);
    CHECK(r.flags == 2u);
  }
}

TEST_CASE("to_untold: embed_images stores the image bytes in the untold.images chunk, URIs '#name'") {
  cv::scene s;
  std::vector<std::byte> png(300);
  for (std::size_t i = 0; i < png.size(); ++i) png[i] = static_cast<std::byte>(i * 7 + 1);
  std::vector<std::byte> other = png;
  other[10] = std::byte{0};
  s.textures.push_back({.name = "a", .uri = "wood.png", .embedded = png});
  s.textures.push_back({.name = "b", .uri = "wood.png", .embedded = other});  // same name, other bytes
  s.textures.push_back({.name = "c", .uri = "wood.png", .embedded = png});    // same name, same bytes
  s.textures.push_back({.name = "d", .embedded = other});                     // no uri
  s.textures.push_back({.name = "e", .uri = "stone.png"});                    // a file reference
  cv::material mat{.name = "m"};
  mat.base_color_texture.texture = 0;
  s.materials.push_back(mat);
  cv::mesh m = quad("q", 0);
  m.material = 0;
  s.meshes.push_back(m);
  cv::to_untold_options o;
  o.embed_images = true;
  cv::conversion_report report;
  auto out = cv::to_untold(s, o, report);
  REQUIRE_MESSAGE(out, out.error().describe());
  CHECK(!report.lost_anything());
  auto a = untold::open(out->file, {.deep_checks = true});
  REQUIRE_MESSAGE(a, a.error().describe());
  REQUIRE(a->textures().size() == 5);
  const auto uri = [&](std::size_t i) { return a->string(a->textures()[i].uri_offset); };
  CHECK(uri(0) == "#wood.png");
  CHECK(uri(1) == "#wood_1.png");
  CHECK(uri(2) == "#wood.png");
  CHECK(uri(3) == "#image3");
  CHECK(uri(4) == "stone.png");
  auto images = untold::embedded_images(*a);
  REQUIRE_MESSAGE(images, images.error().describe());
  REQUIRE(images->size() == 3);
  for (std::size_t i = 0; i < 4; ++i) {
    const auto bytes = untold::find_embedded_image(*images, uri(i));
    REQUIRE(bytes);
    const auto& want = s.textures[i].embedded;
    CHECK(std::equal(bytes->begin(), bytes->end(), want.begin(), want.end()));  // exact bytes
  }
  CHECK(!untold::find_embedded_image(*images, uri(4)));
  CHECK(!untold::find_embedded_image(*images, "wood.png"));  // no mark: a file reference
  // Without embed_images, a texture with bytes but no uri is a reported loss.
  cv::conversion_report plain;
  auto without = cv::to_untold(s, {}, plain);
  REQUIRE(without);
  REQUIRE(find(plain, "embedded image"));
  auto b = untold::open(without->file);
  REQUIRE(b);
  auto none = untold::embedded_images(*b);
  REQUIRE(none);
  CHECK(none->empty());
}

TEST_CASE("images chunk: encode/parse round trip and one crafted body per rejection") {
  const std::vector<std::byte> png = {std::byte{0x89}, std::byte{'P'}, std::byte{'N'}, std::byte{'G'}};
  const std::vector<untold::embedded_image> images = {{"a.png", png}, {"b.jpg", {}}};
  auto body = untold::encode_images_chunk(images);
  REQUIRE(body);
  // 8 header + 2 x 24 directory + names "a.png" "b.jpg" + 4 data bytes.
  CHECK(body->size() == 8 + 48 + 10 + 4);
  auto back = untold::parse_images_chunk(*body);
  REQUIRE(back);
  REQUIRE(back->size() == 2);
  CHECK((*back)[0].name == "a.png");
  CHECK(std::equal((*back)[0].bytes.begin(), (*back)[0].bytes.end(), png.begin(), png.end()));
  CHECK((*back)[1].bytes.empty());

  const auto put32 = [](std::vector<std::byte>& b, std::size_t at, std::uint32_t v) {
    untold::store_le_unchecked<std::uint32_t>(b.data() + at, v);
  };
  const auto put64 = [](std::vector<std::byte>& b, std::size_t at, std::uint64_t v) {
    untold::store_le_unchecked<std::uint64_t>(b.data() + at, v);
  };
  const auto rejected = [](const std::vector<std::byte>& b, const char* field, untold::limits caps = {}) {
    auto r = untold::parse_images_chunk(b, caps);
    REQUIRE(!r);
    CHECK(r.error().code == untold::errc::extension_range);
    CHECK(std::string_view(r.error().context.field) == field);
  };
  {
    auto b = *body;
    put32(b, 0, 3);  // a third directory row does not fit
    rejected(b, "imageCount");
  }
  {
    auto b = *body;
    put32(b, 0, 0xFFFFFFFFu);  // a count that would overflow count x 24 on 32 bits
    rejected(b, "imageCount");
  }
  rejected(*body, "imageCount", untold::limits{.max_records = 1});
  rejected(std::vector<std::byte>(body->begin(), body->begin() + 6), "reserved");
  {
    auto b = *body;
    put32(b, 4, 1);
    rejected(b, "reserved");
  }
  {
    auto b = *body;
    put32(b, 8, static_cast<std::uint32_t>(b.size() - 2));  // name runs past the body
    rejected(b, "nameOffset");
  }
  {
    auto b = *body;
    put32(b, 8, 0xFFFFFFFFu);
    put32(b, 12, 0xFFFFFFFFu);  // offset + length overflows 32 bits, not 64
    rejected(b, "nameOffset");
  }
  {
    auto b = *body;
    put32(b, 12, 0);  // empty name
    rejected(b, "name");
  }
  {
    auto b = *body;
    b[56] = std::byte{0};  // a NUL in "a.png"
    rejected(b, "name");
  }
  {
    auto b = *body;
    put32(b, 8 + 24, 56);  // the second entry names "a.png" too
    rejected(b, "name");
  }
  {
    auto b = *body;
    put64(b, 16, ~std::uint64_t{0});  // dataOffset + dataSize overflows
    rejected(b, "dataOffset");
  }
  {
    auto b = *body;
    put64(b, 24, 5);  // 4 bytes of data left
    rejected(b, "dataOffset");
  }
  // The writer refuses what the reader would reject.
  const std::vector<untold::embedded_image> twice = {{"x", png}, {"x", png}};
  CHECK(!untold::encode_images_chunk(twice));
  const std::vector<untold::embedded_image> blank = {{" ", png}};
  CHECK(!untold::encode_images_chunk(blank));
}

TEST_CASE("images chunk in a file: a second chunk, another kind and a broken body are rejected by embedded_images") {
  const std::vector<std::byte> png = {std::byte{1}, std::byte{2}};
  const std::vector<untold::embedded_image> images = {{"a.png", png}};
  auto body = untold::encode_images_chunk(images);
  REQUIRE(body);
  const auto file = [&](auto&& add) {
    untold::builder b{untold::file_type::tile};
    add(b);
    auto bytes = b.finish();
    REQUIRE(bytes);
    return *bytes;
  };
  const auto field_of = [](const std::vector<std::byte>& bytes) -> std::string {
    auto a = untold::open(bytes);
    REQUIRE(a);
    auto r = untold::embedded_images(*a);
    if (r) return "ok";
    CHECK(r.error().code == untold::errc::extension_range);
    CHECK(r.error().context.chunk_type == untold::images_chunk_type);
    return r.error().context.field;
  };
  const auto add = [&](untold::builder& b, std::uint32_t kind, std::span<const std::byte> payload) {
    b.add_plugin_chunk(untold::images_plugin_id, kind, untold::images_chunk_version, payload, untold::images_chunk_type);
  };
  CHECK(field_of(file([&](untold::builder& b) { add(b, untold::images_chunk_kind, *body); })) == "ok");
  CHECK(field_of(file([&](untold::builder& b) {
          add(b, untold::images_chunk_kind, *body);
          add(b, untold::images_chunk_kind, *body);
        })) == "chunkType");
  CHECK(field_of(file([&](untold::builder& b) { add(b, 2, *body); })) == "chunkKind");
  CHECK(field_of(file([&](untold::builder& b) {
          b.add_plugin_chunk("com.example.other", 1, 1, *body, untold::images_chunk_type);
        })) == "pluginId");
  std::vector<std::byte> broken = *body;
  broken.resize(broken.size() - 1);  // the image's last byte missing
  CHECK(field_of(file([&](untold::builder& b) { add(b, untold::images_chunk_kind, broken); })) == "dataOffset");
}

TEST_CASE("to_untold: animations_only writes a fileType-animation file with the clips only") {
  const cv::scene s = skinned_scene();
  cv::to_untold_options o;
  o.content = cv::untold_content::animations_only;
  cv::conversion_report report;
  auto out = cv::to_untold(s, o, report);
  REQUIRE_MESSAGE(out, out.error().describe());
  auto a = untold::open(out->file, {.deep_checks = true});
  REQUIRE_MESSAGE(a, a.error().describe());
  CHECK(a->header().file_type == static_cast<std::uint32_t>(untold::file_type::animation));
  CHECK(a->meshes().size() == 0);
  CHECK(a->table<untold::animation_clip_record>().size() == 1);
  CHECK(out->lod_files.empty());
  o.content = cv::untold_content::without_animations;
  auto rest = cv::to_untold(s, o, report);
  REQUIRE(rest);
  auto b = untold::open(rest->file, {.deep_checks = true});
  REQUIRE(b);
  CHECK(b->table<untold::animation_clip_record>().size() == 0);
  CHECK(b->meshes().size() == 2);
}

TEST_CASE("to_untold: deterministic output") {
  const cv::scene s = skinned_scene();
  cv::conversion_report r1, r2;
  auto a = cv::to_untold(s, {}, r1);
  auto b = cv::to_untold(s, {}, r2);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->file == b->file);
  CHECK(r1.entries.size() == r2.entries.size());
}

TEST_CASE("to_untold: strips and fans become lists, lines are dropped, a mesh without a node gets an entity") {
  cv::scene s;
  cv::mesh strip = quad("strip", 0);
  strip.primitive = cv::topology::triangle_strip;
  strip.indices = {0, 1, 3, 2};
  cv::mesh fan = quad("fan", 1);
  fan.primitive = cv::topology::triangle_fan;
  fan.indices = {0, 1, 2, 3};
  cv::mesh lines = quad("lines", 2);
  lines.primitive = cv::topology::line_list;
  s.meshes = {strip, fan, lines};
  cv::conversion_report report;
  auto out = cv::to_untold(s, {}, report);
  REQUIRE_MESSAGE(out, out.error().describe());
  auto a = untold::open(out->file, {.deep_checks = true});
  REQUIRE_MESSAGE(a, a.error().describe());
  REQUIRE(a->meshes().size() == 2);
  CHECK(a->meshes()[0].index_count == 6);  // 4-index strip -> 2 triangles
  CHECK(a->meshes()[1].index_count == 6);  // 4-index fan -> 2 triangles
  CHECK(a->entities().size() == 2);
  REQUIRE(find(report, "line_list primitives"));
  CHECK(find(report, "line_list primitives")->count == 6);
  CHECK(find(report, "triangle_strip"));
}

TEST_CASE("to_untold: a bad reference is an error, never a file") {
  cv::scene s;
  s.meshes.push_back(quad("q", 0));
  s.meshes[0].material = 3;
  cv::conversion_report report;
  auto out = cv::to_untold(s, {}, report);
  REQUIRE_FALSE(out);
  CHECK(out.error().code == untold::errc::invalid_argument);
  CHECK(std::string(out.error().context.field) == "mesh.material");
  CHECK(out.error().context.value == 3);

  s.meshes[0].material = cv::no_ref;
  s.meshes[0].indices.push_back(9);
  auto bad_index = cv::to_untold(s, {}, report);
  REQUIRE_FALSE(bad_index);
  CHECK(std::string(bad_index.error().context.field) == "mesh.indices");

  cv::scene cyclic;
  cyclic.nodes.push_back({.name = "a", .parent = 1});
  cyclic.nodes.push_back({.name = "b", .parent = 0});
  auto cycle = cv::to_untold(cyclic, {}, report);
  REQUIRE_FALSE(cycle);
  CHECK(std::string(cycle.error().context.field) == "node.parent");
}

TEST_CASE("convert::transform::matrix and untold::inverse_affine agree") {
  const cv::transform t{.translation = {1, 2, 3}, .rotation = {0, 0.7071068f, 0, 0.7071068f}, .scale = {2, 2, 2}};
  const untold::mat4 m = t.matrix();
  const untold::mat4 id = untold::multiply(m, untold::inverse_affine(m));
  for (int i = 0; i < 16; ++i) CHECK(id[i] == doctest::Approx(untold::identity_matrix[i]).epsilon(1e-5));
  // 90 degrees about +Y maps +X to -Z.
  CHECK(m[2] == doctest::Approx(-2.0f));
  CHECK(m[12] == 1);
}
