// scene.hpp: the scene walk (world transforms, parents first, cycle-safe on
// unvalidated tables) and the joined views over meshes, skins and clips.
#include "../ext_support.hpp"

#include <cmath>

using test::bytes;

namespace {

untold::mat4 scale(float s) {
  untold::mat4 m = untold::identity_matrix;
  m[0] = m[5] = m[10] = s;
  return m;
}
untold::mat4 rotation_z_90() {
  untold::mat4 m = untold::identity_matrix;
  m[0] = 0;
  m[1] = 1;  // column 0 = (0, 1, 0)
  m[4] = -1;
  m[5] = 0;  // column 1 = (-1, 0, 0)
  return m;
}

/// An entity table encoded with the codec, straight from records: no writer,
/// no validation.
struct raw_entities {
  bytes storage;
  untold::record_view<untold::entity_record> view;
  explicit raw_entities(const std::vector<untold::entity_record>& records) : storage(records.size() * 136) {
    for (std::size_t i = 0; i < records.size(); ++i)
      untold::codec<untold::entity_record>::encode(records[i], untold::mutable_byte_span(storage).subspan(i * 136));
    view = *untold::record_view<untold::entity_record>::make(storage);
  }
};
untold::entity_record entity(std::uint32_t id, std::uint32_t parent, untold::mat4 local = untold::identity_matrix) {
  untold::entity_record e;
  e.entity_id = id;
  e.parent_entity_id = parent;
  e.local_transform = local;
  return e;
}

/// Every row appears once in `order`, after its parent.
void check_order(const untold::scene_walk& walk, std::size_t count) {
  REQUIRE(walk.order.size() == count);
  std::vector<std::size_t> position(count, count);
  for (std::size_t i = 0; i < count; ++i) {
    REQUIRE(walk.order[i] < count);
    CHECK(position[walk.order[i]] == count);  // once
    position[walk.order[i]] = i;
  }
  for (std::size_t row = 0; row < count; ++row)
    if (walk.parent_row[row] != untold::none) CHECK(position[walk.parent_row[row]] < position[row]);
}

void check_close(const untold::mat4& a, const untold::mat4& b) {
  for (std::size_t i = 0; i < 16; ++i) CHECK(a[i] == doctest::Approx(b[i]).epsilon(1e-6));
}

}  // namespace

TEST_CASE("scene: multiply is column-major") {
  const untold::mat4 t = test::translation(1, 2, 3);
  check_close(untold::multiply(untold::identity_matrix, t), t);
  check_close(untold::multiply(t, untold::identity_matrix), t);
  const untold::mat4 ts = untold::multiply(t, scale(2));  // scale, then translate
  CHECK(ts[0] == 2);
  CHECK(ts[12] == 1);
  const untold::mat4 st = untold::multiply(scale(2), t);  // translate, then scale
  CHECK(st[12] == 2);
  CHECK(st[14] == 6);
}

TEST_CASE("scene: world transforms of a hierarchy, children stored before parents") {
  // Rows: C (child of B), B (child of A), A (root), D (root).
  const raw_entities table({entity(2, 1, test::translation(0, 2, 0)), entity(1, 0, rotation_z_90()),
                            entity(0, untold::none, test::translation(1, 0, 0)), entity(7, untold::none)});
  const untold::scene_walk walk = untold::walk_scene(table.view, scale(2));
  check_order(walk, 4);
  CHECK(walk.parent_row == std::vector<std::uint32_t>{1, 2, untold::none, untold::none});
  // root x A: scale 2 after translate (1, 0, 0).
  check_close(walk.world[2], untold::multiply(scale(2), test::translation(1, 0, 0)));
  CHECK(walk.world[2][12] == 2);
  // B: x axis -> (0, 2, 0) in the world, origin at (2, 0, 0).
  CHECK(walk.world[1][0] == doctest::Approx(0));
  CHECK(walk.world[1][1] == doctest::Approx(2));
  CHECK(walk.world[1][12] == doctest::Approx(2));
  // C: its origin (0, 2, 0) in B is (-2, 0, 0) in B's parent, (-1, 0, 0) in A's, (-2, 0, 0) in the world.
  CHECK(walk.world[0][12] == doctest::Approx(-2));
  CHECK(walk.world[0][13] == doctest::Approx(0));
  CHECK(walk.world[0][14] == doctest::Approx(0));
  check_close(walk.world[3], scale(2));
}

TEST_CASE("scene: the walk of an opened asset uses its rootTransform") {
  untold::builder b;
  const auto root = b.add_entity({.name = "root", .local_transform = test::translation(1, 0, 0)});
  const auto child = b.add_entity({.name = "child", .parent = root, .local_transform = rotation_z_90()});
  b.add_entity({.name = "leaf", .parent = child, .local_transform = test::translation(0, 2, 0)});
  auto f = b.finish({.root_transform = scale(2)});
  REQUIRE(f.has_value());
  auto a = untold::open(*f);
  REQUIRE(a.has_value());
  const untold::scene_walk walk = untold::walk_scene(*a);
  check_order(walk, 3);
  CHECK(walk.order == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(walk.world[2][12] == doctest::Approx(-2));
  CHECK(walk.world[2][13] == doctest::Approx(0));
}

TEST_CASE("scene: the walk is cycle-safe on an unvalidated table") {
  // 0 -> 2 -> 1 -> 0 is a cycle (by id: 10 -> 12 -> 11 -> 10); 3 is its own
  // parent; 4's parent is missing; 5 hangs off 4; 6 hangs off the cycle; 7
  // repeats id 10 (lookups take the first row).
  const raw_entities table({entity(10, 12), entity(11, 10), entity(12, 11), entity(13, 13),
                            entity(14, 99, test::translation(1, 0, 0)), entity(15, 14, test::translation(1, 0, 0)),
                            entity(16, 12), entity(10, untold::none)});
  const untold::scene_walk walk = untold::walk_scene(table.view);
  check_order(walk, 8);
  int broken_in_cycle = 0;
  for (const std::uint32_t row : {0u, 1u, 2u}) broken_in_cycle += walk.parent_row[row] == untold::none ? 1 : 0;
  CHECK(broken_in_cycle == 1);
  CHECK(walk.parent_row[3] == untold::none);
  CHECK(walk.parent_row[4] == untold::none);
  CHECK(walk.parent_row[5] == 4);
  CHECK(walk.parent_row[6] == 2);
  CHECK(walk.world[5][12] == 2);
  for (const untold::mat4& m : walk.world)
    for (const float v : m) CHECK(std::isfinite(v));
}

TEST_CASE("scene: a deep chain is walked iteratively in linear time") {
  constexpr std::uint32_t n = 100000;
  std::vector<untold::entity_record> records;
  for (std::uint32_t i = 0; i < n; ++i)  // row i's parent is row i + 1: the root is last
    records.push_back(entity(i, i + 1 < n ? i + 1 : untold::none, test::translation(1, 0, 0)));
  const raw_entities table(records);
  const untold::scene_walk walk = untold::walk_scene(table.view);
  check_order(walk, n);
  CHECK(walk.order.front() == n - 1);
  CHECK(walk.world[0][12] == static_cast<float>(n));
  CHECK(walk.world[n - 1][12] == 1);
}

TEST_CASE("scene: resolve_mesh joins material, textures, data and skin") {
  const test::ext_inputs in;
  const bytes f = test::write_ext_scene();
  auto a = untold::open(f);
  REQUIRE(a.has_value());

  const auto body = untold::resolve_mesh(*a, 1);
  REQUIRE(body.has_value());
  CHECK(body->name == "body");
  CHECK(body->entity_row == 1u);
  REQUIRE(body->material.has_value());
  CHECK(body->material->name == "skin");
  CHECK(body->material->record.base_color_factor == untold::float4{1, 0.8f, 0.7f, 1});
  REQUIRE(body->material->base_color.has_value());
  CHECK(body->material->base_color->uri == "Luts/grade.png");
  CHECK_FALSE(body->material->normal.has_value());
  CHECK(body->vertices.size() == 9 * 32);
  CHECK(std::vector<std::uint32_t>(body->indices.begin(), body->indices.end()) == in.body.indices);
  CHECK(body->edge_indices.empty());
  CHECK(body->skin == 0u);

  const auto floor = untold::resolve_mesh(*a, 0);
  REQUIRE(floor.has_value());
  CHECK_FALSE(floor->material.has_value());
  CHECK_FALSE(floor->skin.has_value());
  CHECK(floor->edge_indices.size() == 4);
  CHECK(floor->edge_indices.index_bytes() == 2);

  CHECK_FALSE(untold::resolve_mesh(*a, 2).has_value());
  CHECK_FALSE(untold::resolve_texture(*a, untold::none).has_value());
  CHECK_FALSE(untold::resolve_material(*a, 1).has_value());
}

TEST_CASE("scene: resolve_skin follows the mapping into the skeleton") {
  const test::ext_inputs in;
  const bytes f = test::write_ext_scene();
  auto a = untold::open(f);
  REQUIRE(a.has_value());
  const auto skin = untold::resolve_skin(*a, 0);
  REQUIRE(skin.has_value());
  REQUIRE(skin->skeleton.has_value());
  CHECK(skin->skeleton->name == "rig");
  CHECK(skin->skeleton->joints.size() == 3);
  CHECK(skin->skeleton_joints == in.palette);
  REQUIRE(skin->joints.size() == 3);
  const char* paths[] = {"root/hips", "root/hips/spine", "root/hips/spine/head"};  // palette {2, 0, 1}
  for (std::size_t j = 0; j < 3; ++j) CHECK(a->string(skin->joints[j].joint_path_offset) == paths[j]);
  CHECK(skin->joint_indices.size() == 9);
  CHECK(skin->joint_weights[4].weights == in.joint_weights[4]);
  CHECK_FALSE(untold::resolve_skin(*a, 1).has_value());

  const auto prop = untold::resolve_skeleton(*a, 1);
  REQUIRE(prop.has_value());
  CHECK(prop->name == "prop");
  REQUIRE(prop->joints.size() == 2);
  CHECK(prop->joints[1].parent_joint_index == 0);  // index within the prop skeleton
  CHECK(a->string(prop->joints[1].joint_path_offset) == "prop/lid");
  CHECK(untold::find_skeleton(*a, 77) == 1u);
  CHECK_FALSE(untold::find_skeleton(*a, 78).has_value());
}

TEST_CASE("scene: resolve_clip gathers channels and keys") {
  const test::ext_inputs in;
  const bytes f = test::write_ext_scene();
  auto a = untold::open(f);
  REQUIRE(a.has_value());
  const auto walk = untold::resolve_clip(*a, 0);
  REQUIRE(walk.has_value());
  CHECK(walk->name == "walk");
  CHECK(walk->record.duration == 1.0f);
  REQUIRE(walk->channels.size() == 2);
  CHECK(walk->channels[0].joint_path == "root/hips");
  CHECK(std::vector(walk->channels[0].translations.begin(), walk->channels[0].translations.end()) == in.hips_t);
  CHECK(walk->channels[1].index == 1);
  CHECK(std::vector(walk->channels[1].rotations.begin(), walk->channels[1].rotations.end()) == in.spine_r);
  const auto idle = untold::resolve_clip(*a, 1);
  REQUIRE(idle.has_value());
  CHECK(idle->channels.empty());
  CHECK_FALSE(untold::resolve_clip(*a, 2).has_value());
}
