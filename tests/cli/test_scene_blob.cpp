// tools/pipeline/scene_blob.hpp: every field of every model struct is
// listed (checked against the struct's member count, so a field added to
// model.hpp fails here until it is listed), a scene round-trips bit for bit,
// and cut or damaged bytes are refused without reading past the end.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <utility>

#include "scene_blob.hpp"
#include "../support.hpp"

using namespace untold;
namespace tl = untold::tools;

namespace {

// ---- members of an aggregate, counted at compile time -------------------------------
struct any_member {
  template <class T>
  operator T() const;  // never defined: only used unevaluated
};
template <class T, std::size_t... I>
constexpr bool brace_initialisable(std::index_sequence<I...>) {
  return requires { T{(static_cast<void>(I), any_member{})...}; };
}
template <class T, std::size_t N = 0>
constexpr std::size_t member_count() {
  if constexpr (N < 64 && brace_initialisable<T>(std::make_index_sequence<N + 1>{})) return member_count<T, N + 1>();
  else return N;
}

/// How many fields `fields` lists for a T (each struct's list is one call).
struct field_counter {
  std::size_t count = 0;
  template <class... F>
  void operator()(const F&...) { count += sizeof...(F); }
};
template <class T>
std::size_t listed_fields() {
  field_counter c;
  const T value{};
  tl::fields(c, value);
  return c.count;
}

template <class T>
void check_every_member_listed(const char* name) {
  CAPTURE(name);
  CHECK(listed_fields<T>() == member_count<T>());
}

std::vector<std::byte> blob_of(const convert::scene& s) {
  std::vector<std::byte> out;
  tl::write_blob_header(out, "test", 3);
  tl::blob_writer{out}(s);
  return out;
}

/// A scene with every field away from its default.
convert::scene everything() {
  convert::scene s;
  s.name = "città";
  s.report.changed("strips", "mesh 'a'", "unrolled", 7);
  s.nodes.push_back({.name = "root", .local = {.translation = {1, 2, 3}, .rotation = {0, 0.5f, 0, 0.8660254f}, .scale = {2, 2, 2}},
                     .meshes = {0}, .extras = R"({"k":1})"});
  s.nodes.push_back({.name = "child", .parent = 0, .meshes = {0, 1}});
  convert::mesh m;
  m.name = "a";
  m.primitive = convert::topology::triangle_strip;
  m.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0, -0.0f, std::numeric_limits<float>::denorm_min(), 1e30f};
  m.normals = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
  m.tangents = {1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 1, 0, 0, 1};
  m.uv0 = {0, 0, 1, 0, 0, 1, 1, 1};
  m.uv1 = {0.5f, 0.5f, 0.25f, 0.25f, 0, 0, 1, 1};
  m.extra_uvs = {{1, 2, 3, 4, 5, 6, 7, 8}, {}};
  m.colors = std::vector<float>(16, 0.5f);
  m.joints = {{0, 1, 2, 3}, {1, 0, 0, 0}, {0, 0, 0, 0}, {65535, 1, 2, 3}};
  m.weights = {{0.25f, 0.25f, 0.25f, 0.25f}, {1, 0, 0, 0}, {1, 0, 0, 0}, {0.5f, 0.5f, 0, 0}};
  m.indices = {0, 1, 2, 3};
  m.material = 0;
  m.skin = 0;
  m.morphs.push_back({.name = "smile", .default_weight = 0.5f, .position_deltas = std::vector<float>(12, 0.1f),
                      .normal_deltas = std::vector<float>(12, 0.2f), .tangent_deltas = std::vector<float>(12, 0.3f)});
  m.lods.push_back({.switch_distance = 12.5f, .indices = {0, 1, 2}});
  m.extras = "[]";
  s.meshes.push_back(m);
  m.name = "b";
  m.skin = convert::no_ref;
  m.lods.clear();
  s.meshes.push_back(m);
  s.textures.push_back({.name = "wall", .uri = "t/wall.png", .format = texture_format::rgba8, .width = 4, .height = 2,
                        .mip_count = 3, .srgb = true, .embedded = {std::byte{0x89}, std::byte{0}, std::byte{0xff}}});
  convert::material mat;
  mat.name = "brick";
  mat.base_color = {0.1f, 0.2f, 0.3f, 0.4f};
  mat.emissive = {1, 0.5f, 0};
  mat.emissive_strength = 3;
  mat.metallic = 0.25f;
  mat.roughness = 0.75f;
  mat.normal_scale = 0.5f;
  mat.occlusion_strength = 0.1f;
  mat.alpha = convert::alpha_mode::mask;
  mat.alpha_cutoff = 0.3f;
  mat.double_sided = true;
  mat.transmission = 0.9f;
  mat.base_color_texture = {.texture = 0, .uv_set = 1, .wrap = {convert::wrap_mode::clamp, convert::wrap_mode::mirror},
                            .mag_filter = convert::texture_filter::nearest,
                            .min_filter = convert::texture_filter::linear_mipmap_linear, .has_transform = true,
                            .offset = {0.5f, 0.25f}, .scale = {2, 3}, .rotation = 1.5f};
  mat.normal_texture.texture = 0;
  mat.occlusion_texture.texture = 0;
  mat.emissive_texture.texture = 0;
  mat.metallic_roughness_texture.texture = 0;
  mat.other_textures = {{"sheen", 0}, {"clearcoat", 0}};
  mat.extras = R"({"x":[1,2]})";
  s.materials.push_back(mat);
  convert::skeleton sk{.name = "rig", .node = 0};
  sk.joints.push_back({.name = "hip", .rest = {.translation = {0, 1, 0}}, .inverse_bind = {2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 1, 2, 3, 1}});
  sk.joints.push_back({.name = "knee", .parent = 0});
  s.skeletons.push_back(sk);
  s.skins.push_back({.skeleton = 0, .joints = {1, 0}});
  s.animations.push_back({.name = "walk", .duration = 2,
                          .channels = {{.skeleton = 0, .joint = 1, .node = convert::no_ref, .path = convert::anim_path::rotation,
                                        .interp = convert::interpolation::cubic_spline, .times = {0, 1, 2},
                                        .values = std::vector<float>(36, 0.5f)}}});
  s.lights.push_back({.name = "sun", .node = 1, .kind = convert::light_kind::spot, .color = {1, 0.9f, 0.8f}, .intensity = 5,
                      .range = 10, .inner_cone = 0.1f, .outer_cone = 0.5f, .area_size = {1, 2}});
  s.cameras.push_back({.name = "eye", .node = 0, .orthographic = true, .yfov = 1.1f, .aspect = 1.5f, .znear = 0.5f, .zfar = 50});
  return s;
}

}  // namespace

TEST_CASE("scene blob: every member of every model struct is listed") {
  check_every_member_listed<convert::report_entry>("report_entry");
  check_every_member_listed<convert::conversion_report>("conversion_report");
  check_every_member_listed<convert::transform>("transform");
  check_every_member_listed<convert::morph_target>("morph_target");
  check_every_member_listed<convert::lod_level>("lod_level");
  check_every_member_listed<convert::mesh>("mesh");
  check_every_member_listed<convert::texture>("texture");
  check_every_member_listed<convert::texture_slot>("texture_slot");
  check_every_member_listed<convert::material>("material");
  check_every_member_listed<convert::node>("node");
  check_every_member_listed<convert::joint>("joint");
  check_every_member_listed<convert::skeleton>("skeleton");
  check_every_member_listed<convert::skin>("skin");
  check_every_member_listed<convert::animation_channel>("animation_channel");
  check_every_member_listed<convert::animation>("animation");
  check_every_member_listed<convert::light>("light");
  check_every_member_listed<convert::camera>("camera");
  check_every_member_listed<convert::scene>("scene");
}

TEST_CASE("scene blob: a scene comes back bit for bit") {
  const convert::scene s = everything();
  const std::vector<std::byte> bytes = blob_of(s);
  tl::blob_reader r{bytes};
  REQUIRE(tl::read_blob_header(r, "test", 3));
  convert::scene back;
  r(back);
  REQUIRE(r.ok());
  CHECK(r.remaining() == 0);
  CHECK(blob_of(back) == bytes);
  // Spot checks on what a missed field would lose (the member count test covers the rest).
  CHECK(back.name == "città");
  CHECK(back.report.entries.at(0).count == 7);
  CHECK(back.nodes.at(1).parent == 0);
  CHECK(back.meshes.at(0).primitive == convert::topology::triangle_strip);
  CHECK(std::signbit(back.meshes.at(0).positions.at(9)));
  CHECK(back.meshes.at(0).positions.at(10) == std::numeric_limits<float>::denorm_min());
  CHECK(back.meshes.at(0).joints.at(3)[0] == 65535);
  CHECK(back.meshes.at(0).extra_uvs.size() == 2);
  CHECK(back.meshes.at(0).lods.at(0).switch_distance == 12.5f);
  CHECK(back.materials.at(0).base_color_texture.wrap[1] == convert::wrap_mode::mirror);
  CHECK(back.materials.at(0).other_textures.at(1).first == "clearcoat");
  CHECK(back.textures.at(0).embedded.at(2) == std::byte{0xff});
  CHECK(back.skeletons.at(0).joints.at(0).inverse_bind[13] == 2);
  CHECK(back.animations.at(0).channels.at(0).interp == convert::interpolation::cubic_spline);
  CHECK(back.cameras.at(0).orthographic);

  // Another producer or version is refused by the header.
  tl::blob_reader other{bytes};
  CHECK_FALSE(tl::read_blob_header(other, "test", 4));
}

TEST_CASE("scene blob: cut, damaged and hostile bytes are refused, never read past") {
  const std::vector<std::byte> bytes = blob_of(everything());
  // Every cut: the reader fails (a heap copy of exactly the cut, so ASan sees any overread).
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<std::byte> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    tl::blob_reader r{cut};
    convert::scene s;
    const bool header = tl::read_blob_header(r, "test", 3);
    if (header) r(s);
    CHECK_FALSE((header && r.ok() && r.remaining() == 0));
  }
  // A count far beyond the bytes left is refused before anything is allocated.
  std::vector<std::byte> huge;
  tl::blob_writer{huge}(std::string("x"), std::uint64_t{1} << 60);
  tl::blob_reader r{huge};
  std::string name;
  std::vector<float> floats;
  r(name, floats);
  CHECK_FALSE(r.ok());
  CHECK(floats.empty());
  // A bool that is not 0 or 1.
  const std::vector<std::byte> two{std::byte{2}};
  tl::blob_reader b{two};
  bool flag = false;
  b(flag);
  CHECK_FALSE(b.ok());
  // Random bytes: refused or read, never out of bounds.
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    auto noise = bytes;
    const auto flips = test::random_bytes(8, seed);
    for (std::size_t i = 0; i < flips.size(); i += 2)
      noise[(static_cast<std::size_t>(flips[i]) * 131 + static_cast<std::size_t>(flips[i + 1]) * 7 + seed * 977) % noise.size()] ^= flips[i + 1];
    tl::blob_reader n{noise};
    convert::scene s;
    if (tl::read_blob_header(n, "test", 3)) n(s);
  }
}
