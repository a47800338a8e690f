// A skinned, animated scene with every engine extension table, for
// tests/unit/test_extensions.cpp and test_scene.cpp.
#pragma once

#include "support.hpp"

#include <untold/extensions.hpp>
#include <untold/scene.hpp>

namespace test {

constexpr std::uint32_t kSkeleton = 8, kJoint = 9, kSkin = 10, kMapping = 11, kClip = 12, kChannel = 13,
                        kTranslation = 14, kRotation = 15, kJointIndex = 16, kJointWeight = 17, kEdgeData = 18,
                        kLight = 19, kCamera = 20, kColor = 21, kLut = 22, kPhysics = 0x8000, kOther = 0x8123;
constexpr std::size_t kSkeletonSize = 24, kJointSize = 144, kSkinSize = 48, kClipSize = 28, kChannelSize = 28,
                      kKeySize = 20, kLightSize = 176, kCameraSize = 144, kColorSize = 32, kLutSize = 32;

inline untold::mat4 translation(float x, float y, float z) {
  untold::mat4 m = untold::identity_matrix;
  m[12] = x;
  m[13] = y;
  m[14] = z;
  return m;
}

/// Everything the extension scene was built from, to compare a read against.
struct ext_inputs {
  grid body = make_grid(3);           // 9 skinned vertices
  grid floor = make_grid(2, -1.0f);   // 4 static vertices, with edges
  std::vector<untold::skeleton_joint_desc> rig_joints;
  std::vector<untold::skeleton_joint_desc> prop_joints;
  std::vector<std::uint32_t> palette = {2, 0, 1};  // skin joint -> rig joint
  std::vector<std::array<std::uint16_t, 4>> joint_indices;
  std::vector<untold::float4> joint_weights;
  std::vector<untold::translation_keyframe_record> hips_t = {{0, 0, 0, 0, 0}, {0.5f, 0, 1, 0, 0}, {1, 0, 2, 0, 0}};
  std::vector<untold::rotation_keyframe_record> hips_r = {{0, 0, 0, 0, 1}, {1, 0, 0.7071f, 0, 0.7071f}};
  std::vector<untold::translation_keyframe_record> spine_t = {{0, 1, 1, 1, 0}};
  std::vector<untold::rotation_keyframe_record> spine_r = {{0.25f, 0, 0, 0, 1}, {0.75f, 0, 0, 1, 0}};
  std::vector<untold::animation_channel_desc> channels;
  bytes physics = {std::byte{0xCA}, std::byte{0xFE}, std::byte{0xBA}, std::byte{0xBE}};
  bytes other_payload = bytes(37, std::byte{0x42});

  ext_inputs() {
    // Joints out of topological order: spine's parent (hips) comes after it.
    rig_joints = {{.path = "root/hips/spine", .parent = 2, .bind_transform = translation(0, 1, 0)},
                  {.path = "root/hips/spine/head", .parent = 0, .rest_transform = translation(0, 2, 0)},
                  {.path = "root/hips"}};
    prop_joints = {{.path = "prop/base"}, {.path = "prop/lid", .parent = 0, .flags = 7}};
    for (std::uint16_t v = 0; v < 9; ++v) {
      joint_indices.push_back({static_cast<std::uint16_t>(v % 3), static_cast<std::uint16_t>((v + 1) % 3), 0, 0});
      joint_weights.push_back({0.75f, 0.25f, 0, 0});
    }
    channels = {{.joint_path = "root/hips", .translations = hips_t, .rotations = hips_r},
                {.joint_path = "root/hips/spine", .translations = spine_t, .rotations = spine_r, .flags = 1}};
  }
};

/// Fills `b` with the scene. Entities: root, body (child of root, +5 x), rig
/// (child of root). The skinned body mesh is added before the floor mesh but
/// stored after it (meshes are grouped by entity), so the skin's mesh handle 0
/// becomes row 1.
inline void fill_ext_scene(untold::builder& b, const ext_inputs& in) {
  const auto lut_texture = b.add_texture({.name = "grade", .uri = "Luts/grade.png",
                                          .format = untold::texture_format::rgba8,
                                          .flags = untold::texture_flags::lut, .width = 1024, .height = 32});
  const auto skin_material = b.add_material({.name = "skin", .base_color_factor = {1, 0.8f, 0.7f, 1},
                                             .base_color_texture = lut_texture});
  const auto root = b.add_entity({.name = "root"});
  const auto body = b.add_entity({.name = "body", .parent = root, .local_transform = translation(5, 0, 0)});
  const auto rig = b.add_entity({.name = "rig", .parent = root});
  const auto body_mesh = b.add_mesh({.entity = body, .name = "body", .material = skin_material,
                                     .vertices = in.body.vertices, .indices = in.body.indices});
  b.add_mesh({.entity = root, .name = "floor", .vertices = in.floor.vertices, .indices = in.floor.indices,
              .edge_indices = std::span(in.floor.indices).first(4)});
  const auto skeleton = b.add_skeleton({.name = "rig", .entity = rig, .joints = in.rig_joints});
  b.add_skeleton({.name = "prop", .entity_id = 77, .joints = in.prop_joints});
  b.add_skin({.mesh = body_mesh, .skeleton = skeleton, .joints = in.palette, .joint_indices = in.joint_indices,
              .joint_weights = in.joint_weights});
  b.add_animation_clip({.name = "walk", .channels = in.channels, .flags = 3});
  b.add_animation_clip({.name = "idle", .duration = 2.0f});
  b.add_light({.name = "sun", .entity_id = 100,
               .light = {.light_type = 1, .flags = untold::light_flags::casts_shadow | (1u << 9),
                         .color = {1, 0.9f, 0.8f}, .intensity = 3, .direction = {0, -1, 0}}});
  b.add_light({.name = "lamp", .entity = rig,
               .light = {.light_type = 3, .radius = 4, .inner_cone = 0.3f, .outer_cone = 0.6f,
                         .local_transform = translation(0, 3, 0)}});
  b.add_camera({.name = "main", .entity_id = 101,
                .camera = {.position = {0, 2, 10}, .fov_y_degrees = 45, .near_clip = 0.5f, .aspect = 1.5f}});
  b.set_color_management({.view_transform = "AgX", .look = "Punchy", .lut_texture = lut_texture,
                          .settings = {.exposure = 0.25f, .gamma = 2.2f, .shaper_min_stops = -10,
                                       .shaper_max_stops = 6.5f, .lut_size = 32}});
  b.add_color_grade_lut({.uri = "Luts/grade.cube", .lut_size = 33, .domain_max = {2, 2, 2}});
  b.add_plugin_chunk("com.example.physics", 42, 3, in.physics);
  b.add_plugin_chunk("org.example.unknown", 0xDEAD, 9, in.other_payload, kOther);
}

/// The extension scene's bytes; `content_hash` off lets tests patch freely.
inline bytes write_ext_scene(bool content_hash = false, untold::write_options options = {}) {
  static const ext_inputs in;
  untold::builder b;
  fill_ext_scene(b, in);
  options.content_hash = content_hash;
  auto file = b.finish(options);
  REQUIRE_MESSAGE(file.has_value(), file.error().describe());
  return std::move(*file);
}

}  // namespace test
