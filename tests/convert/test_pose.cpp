// convert::pose (untold/convert/pose.hpp): world-space instances, clips on
// nodes, joints and morph weights, skinning, LOD choice, mirrored winding,
// and the refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <untold/convert/from_untold.hpp>
#include <untold/convert/pose.hpp>
#include <untold/reader.hpp>

#include "../support.hpp"
#include "scene_support.hpp"

namespace cv = untold::convert;

namespace {

/// One triangle in the z = 0 plane: (0,0,0), (1,0,0), (0,1,0), normals +z.
cv::mesh triangle() {
  cv::mesh m;
  m.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  m.normals = {0, 0, 1, 0, 0, 1, 0, 0, 1};
  m.indices = {0, 1, 2};
  return m;
}

cv::scene one_node(cv::mesh m, cv::transform local = {}) {
  cv::scene s;
  s.meshes.push_back(std::move(m));
  s.nodes.push_back({.name = "n", .parent = cv::no_ref, .local = local, .meshes = {0}, .extras = {}});
  return s;
}

void check_near(std::span<const float> got, std::initializer_list<float> expected) {
  REQUIRE(got.size() == expected.size());
  std::size_t i = 0;
  for (float e : expected) {
    CAPTURE(i);
    CHECK(got[i++] == doctest::Approx(e).epsilon(1e-5));
  }
}

}  // namespace

TEST_CASE("pose: a node's transform places its mesh, bounds and counts follow") {
  cv::transform t;
  t.translation = {10, 20, 30};
  t.scale = {2, 2, 2};
  auto posed = cv::pose(one_node(triangle(), t));
  REQUIRE(posed.has_value());
  REQUIRE(posed->meshes.size() == 1);
  check_near(posed->meshes[0].positions, {10, 20, 30, 12, 20, 30, 10, 22, 30});
  check_near(posed->meshes[0].normals, {0, 0, 1, 0, 0, 1, 0, 0, 1});
  CHECK(posed->meshes[0].indices == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(posed->min == std::array<float, 3>{10, 20, 30});
  CHECK(posed->max == std::array<float, 3>{12, 22, 30});
  CHECK(posed->triangles == 1);
  CHECK_FALSE(posed->empty());
}

TEST_CASE("pose: a mirroring node turns triangles around and keeps normals outward") {
  cv::transform t;
  t.scale = {-1, 1, 1};
  auto posed = cv::pose(one_node(triangle(), t));
  REQUIRE(posed.has_value());
  CHECK(posed->meshes[0].indices == std::vector<std::uint32_t>{0, 2, 1});
  // The mirrored triangle (0,0,0), (-1,0,0), (0,1,0) wound 0,2,1 faces +z.
  check_near(posed->meshes[0].normals, {0, 0, 1, 0, 0, 1, 0, 0, 1});
}

TEST_CASE("pose: a rotation clip is sampled at the time (linear, step, cubic spline)") {
  cv::scene s = one_node(triangle());
  const float half = std::sqrt(0.5f);
  cv::animation a;
  a.name = "turn";
  a.duration = 1;
  cv::animation_channel c;
  c.node = 0;
  c.path = cv::anim_path::rotation;
  c.times = {0, 1};
  c.values = {0, 0, 0, 1, 0, half, 0, half};  // identity -> 90 degrees about +y
  a.channels.push_back(c);
  s.animations.push_back(a);

  auto at = [&](float time) { return cv::pose(s, {.animation = 0, .time = time}); };
  auto mid = at(0.5f);
  REQUIRE(mid.has_value());
  // 45 degrees about +y: (1,0,0) -> (cos 45, 0, -sin 45).
  check_near(std::span(mid->meshes[0].positions).subspan(3, 3), {half, 0, -half});
  auto after = at(7);  // past the last key: the last value
  REQUIRE(after.has_value());
  check_near(std::span(after->meshes[0].positions).subspan(3, 3), {0, 0, -1});
  auto rest = cv::pose(s);  // no clip: the rest pose
  REQUIRE(rest.has_value());
  check_near(std::span(rest->meshes[0].positions).subspan(3, 3), {1, 0, 0});

  s.animations[0].channels[0].interp = cv::interpolation::step;
  auto stepped = at(0.9f);
  REQUIRE(stepped.has_value());
  check_near(std::span(stepped->meshes[0].positions).subspan(3, 3), {1, 0, 0});

  // Cubic spline with zero tangents: the Hermite basis gives the midpoint at u = 0.5.
  cv::animation_channel move;
  move.node = 0;
  move.path = cv::anim_path::translation;
  move.interp = cv::interpolation::cubic_spline;
  move.times = {0, 2};
  move.values = {0, 0, 0, 0, 0, 0, 0, 0, 0, /* key 1 */ 0, 0, 0, 4, 0, 0, 0, 0, 0};
  s.animations[0].channels = {move};
  auto cubic = at(1);
  REQUIRE(cubic.has_value());
  check_near(std::span(cubic->meshes[0].positions).subspan(0, 3), {2, 0, 0});
}

TEST_CASE("pose: skinning blends the joints' matrices by weight, the rest pose is the bind pose") {
  cv::scene s;
  s.meshes.push_back(scene_test::skinned_strip("strip", 0));
  s.materials.push_back({});
  cv::skeleton sk;
  sk.joints.push_back({.name = "root", .parent = cv::no_ref, .rest = {}, .inverse_bind = untold::identity_matrix});
  sk.joints.push_back({.name = "tip", .parent = 0, .rest = {}, .inverse_bind = untold::identity_matrix});
  s.skeletons.push_back(sk);
  s.skins.push_back({.skeleton = 0, .joints = {0, 1}});
  s.nodes.push_back({.name = "n", .parent = cv::no_ref, .local = {}, .meshes = {0}, .extras = {}});

  auto rest = cv::pose(s);
  REQUIRE(rest.has_value());
  CHECK(rest->meshes[0].positions == s.meshes[0].positions);

  cv::animation a;
  a.duration = 1;
  cv::animation_channel c;
  c.skeleton = 0;
  c.joint = 1;
  c.path = cv::anim_path::translation;
  c.times = {0};
  c.values = {0, 0, 2};  // the tip joint 2 up in z
  a.channels.push_back(c);
  s.animations.push_back(a);
  auto moved = cv::pose(s, {.animation = 0});
  REQUIRE(moved.has_value());
  // Rows y = 0, 1, 2 are weighted 0, 0.5, 1 towards the tip: z = 0, 1, 2.
  const auto& p = moved->meshes[0].positions;
  for (std::size_t v = 0; v < 6; ++v) {
    CAPTURE(v);
    CHECK(p[v * 3 + 2] == doctest::Approx(static_cast<float>(v / 2)));
  }
}

TEST_CASE("pose: morph targets move by their default weights, or by the clip's weights") {
  cv::mesh m = triangle();
  cv::morph_target target;
  target.default_weight = 0.5f;
  target.position_deltas = {0, 0, 2, 0, 0, 2, 0, 0, 2};
  m.morphs.push_back(target);
  cv::scene s = one_node(m);
  auto by_default = cv::pose(s);
  REQUIRE(by_default.has_value());
  CHECK(by_default->meshes[0].positions[2] == doctest::Approx(1));

  cv::animation a;
  cv::animation_channel c;
  c.node = 0;
  c.path = cv::anim_path::weights;
  c.times = {0};
  c.values = {1};
  a.channels.push_back(c);
  s.animations.push_back(a);
  auto animated = cv::pose(s, {.animation = 0});
  REQUIRE(animated.has_value());
  CHECK(animated->meshes[0].positions[2] == doctest::Approx(2));

  // Three values for two keys: not a whole number per key.
  s.animations[0].channels[0].times = {0, 1};
  s.animations[0].channels[0].values = {1, 0, 1};
  auto refused = cv::pose(s, {.animation = 0});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == untold::errc::invalid_argument);
  CHECK(std::string_view(refused.error().context.field) == "animation.channel.values");
}

TEST_CASE("pose: the LOD level picks the mesh's index list, clamped to its coarsest") {
  cv::mesh m;
  m.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};
  m.indices = {0, 1, 3, 0, 3, 2};
  m.lods.push_back({.switch_distance = 10, .indices = {0, 1, 2}});
  cv::scene s = one_node(m);
  CHECK(cv::pose(s)->meshes[0].indices.size() == 6);
  CHECK(cv::pose(s, {.lod = 1})->meshes[0].indices == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(cv::pose(s, {.lod = 9})->meshes[0].indices == std::vector<std::uint32_t>{0, 1, 2});
  // No normals in the mesh: smooth ones from the triangles, +z here.
  check_near(cv::pose(s)->meshes[0].normals, {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1});
}

TEST_CASE("pose: instancing, undrawn meshes, strips and skipped line meshes") {
  cv::scene s;
  cv::mesh strip = triangle();
  strip.positions.insert(strip.positions.end(), {1, 1, 0});
  strip.normals.insert(strip.normals.end(), {0, 0, 1});
  strip.primitive = cv::topology::triangle_strip;
  strip.indices = {0, 1, 2, 3};
  s.meshes.push_back(strip);
  cv::mesh lines = triangle();
  lines.primitive = cv::topology::line_list;
  s.meshes.push_back(lines);
  s.meshes.push_back(triangle());  // drawn by no node
  cv::transform right;
  right.translation = {5, 0, 0};
  s.nodes.push_back({.name = "a", .parent = cv::no_ref, .local = {}, .meshes = {0, 1}, .extras = {}});
  s.nodes.push_back({.name = "b", .parent = 0, .local = right, .meshes = {0}, .extras = {}});
  auto posed = cv::pose(s);
  REQUIRE(posed.has_value());
  REQUIRE(posed->meshes.size() == 3);
  CHECK(posed->skipped_primitives == 1);
  CHECK(posed->meshes[0].indices == std::vector<std::uint32_t>{0, 1, 2, 2, 1, 3});  // the strip unrolled
  CHECK(posed->meshes[1].node == 1);
  CHECK(posed->meshes[1].positions[0] == 5);
  CHECK(posed->meshes[2].mesh == 2);
  CHECK(posed->meshes[2].node == cv::no_ref);
  CHECK(posed->triangles == 5);
  CHECK(posed->max[0] == 6);
}

TEST_CASE("pose: refusals - a bad scene, a clip out of range, the budget") {
  cv::scene bad = one_node(triangle());
  bad.meshes[0].indices = {0, 1, 7};
  CHECK(cv::pose(bad).error().code == untold::errc::invalid_argument);

  cv::scene s = one_node(triangle());
  auto no_clip = cv::pose(s, {.animation = 0});
  REQUIRE_FALSE(no_clip.has_value());
  CHECK(std::string_view(no_clip.error().context.field) == "pose.animation");

  // One mesh drawn by 100,000 nodes under a small memory budget.
  for (int i = 0; i < 100000; ++i) s.nodes.push_back({.name = {}, .parent = 0, .local = {}, .meshes = {0}, .extras = {}});
  untold::limits small;
  small.memory_per_input_byte = 4;
  small.memory_floor = 1 << 20;
  auto over = cv::pose(s, {.limits = small});
  REQUIRE_FALSE(over.has_value());
  CHECK(over.error().code == untold::errc::limit_exceeded);
}

TEST_CASE("pose: every file of tests/data in .untold poses within its own bounds") {
  for (const char* name : {"minimal_v1.untold", "minimal_v4.untold"}) {
    CAPTURE(name);
    const auto bytes = test::read_binary(std::string(UNTOLD_TEST_DATA_DIR "/") + name);
    auto file = untold::open(bytes);
    REQUIRE(file.has_value());
    auto scene = cv::from_untold(*file);
    REQUIRE(scene.has_value());
    auto posed = cv::pose(*scene);
    REQUIRE(posed.has_value());
    CHECK(posed->meshes.size() >= 1);
    CHECK(posed->triangles > 0);
    CHECK_FALSE(posed->empty());
  }
}
