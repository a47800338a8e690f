// untold/scene.hpp - engine conveniences over an asset: the scene walk
// (every entity's world transform) and joined views that follow a record's
// references (mesh -> material -> textures, skin -> skeleton -> joints,
// clip -> channels -> keys).
//
//   const untold::scene_walk scene = untold::walk_scene(*a);
//   for (const std::uint32_t row : scene.order)          // parents first
//     place(row, scene.world[row]);
//   if (auto m = untold::resolve_mesh(*a, 0))
//     draw(m->vertices, m->indices, m->material ? m->material->base_color : std::nullopt);
//
// Everything here is safe on any asset, validated or not: references that do
// not resolve come back as nullopt / none / empty views, and the walk breaks
// parent cycles instead of looping. On a validated asset every reference the
// rules cover resolves.
//
// `template <class = void>`: compiled only where called (reader.hpp says why).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "asset.hpp"
#include "extensions.hpp"
#include "format.hpp"
#include "matrix.hpp"
#include "records.hpp"
#include "view.hpp"

namespace untold {


// ---- the scene walk ---------------------------------------------------------------

/// Every entity's place in the hierarchy and world transform, by entity row.
struct scene_walk {
  /// Entity rows, each after its parent (a valid traversal order).
  std::vector<std::uint32_t> order;
  /// Per row: the parent's row, or none for a root. On an unvalidated table a
  /// missing parent, and the link that would close a parent cycle, also give
  /// none (the entity is treated as a root).
  std::vector<std::uint32_t> parent_row;
  /// Per row: rootTransform x (parents' local transforms, outermost first) x
  /// the entity's localTransform.
  std::vector<mat4> world;
};

/// Walks an entity table, which need not be validated (e.g. a record_view
/// built with record_view::make over bytes straight from a file): parents are
/// looked up by entityId (the first row carrying it), the walk is iterative,
/// memoized and O(n log n) (sorting the ids), and parent cycles are broken.
/// Safe on untrusted input.
template <class = void>
[[nodiscard]] scene_walk walk_scene(const record_view<entity_record>& entities,
                                    const mat4& root_transform = identity_matrix) {
  const auto count = static_cast<std::uint32_t>(entities.size());
  std::vector<entity_record> records(entities.begin(), entities.end());
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_id(count);  // (entityId, row)
  for (std::uint32_t row = 0; row < count; ++row) by_id[row] = {records[row].entity_id, row};
  std::sort(by_id.begin(), by_id.end());
  std::vector<std::uint32_t> parent_of(count, none);
  for (std::uint32_t row = 0; row < count; ++row) {
    const std::uint32_t parent = records[row].parent_entity_id;
    if (parent == none) continue;
    const auto it = std::lower_bound(by_id.begin(), by_id.end(), std::pair{parent, 0u});
    if (it != by_id.end() && it->first == parent) parent_of[row] = it->second;
  }

  scene_walk walk;
  walk.order.reserve(count);
  walk.parent_row.assign(count, none);
  walk.world.assign(count, identity_matrix);
  detail::visit_parents_first(
      count, [&](std::uint32_t row) { return parent_of[row]; },
      [&](std::uint32_t row, std::uint32_t parent) {
        walk.order.push_back(row);
        walk.parent_row[row] = parent;
        walk.world[row] = multiply(parent == none ? root_transform : walk.world[parent], records[row].local_transform);
      });
  return walk;
}

/// The scene walk of an asset's entity table under its header rootTransform.
template <class = void>
[[nodiscard]] scene_walk walk_scene(const asset& a) {
  return walk_scene(a.entities(), a.header().root_transform);
}

// ---- joined views: meshes, materials, textures -----------------------------------------

struct resolved_texture {
  std::uint32_t index = none;  // texture row
  texture_record record{};
  std::string_view name{};
  std::string_view uri{};  // relative to the .untold file's directory
};

struct resolved_material {
  std::uint32_t index = none;  // material row
  material_record record{};
  std::string_view name{};
  std::optional<resolved_texture> base_color, normal, metallic, roughness, emissive, occlusion, height;
};

struct resolved_mesh {
  std::uint32_t index = none;  // mesh row
  mesh_record record{};
  std::string_view name{};
  std::optional<std::uint32_t> entity_row;  // the owning entity (validated assets)
  std::optional<resolved_material> material;
  byte_span vertices{};  // as stored: vertexCount x the layout's stride (vertex.hpp, vertex_quant.hpp)
  index_view indices{};
  index_view edge_indices{};
  std::optional<std::uint32_t> skin;  // the first skin row that binds this mesh
  /// Rows of the morph targets of this mesh (chunk 23), in table order; their
  /// entries: view_morph_entries(a, a.table<morph_target_record>()[row]).
  std::vector<std::uint32_t> morph_targets;
};

/// Texture row `index` with its strings; nullopt when out of range. Safe on any asset.
template <class = void>
[[nodiscard]] std::optional<resolved_texture> resolve_texture(const asset& a, std::uint32_t index) {
  const auto t = a.textures().at(index);
  if (!t) return std::nullopt;
  return resolved_texture{index, *t, a.string(t->name_offset), a.string(t->uri_offset)};
}

/// Material row `index` with its textures (nullopt members for NONE or
/// unresolvable indices); nullopt when out of range. Safe on any asset.
template <class = void>
[[nodiscard]] std::optional<resolved_material> resolve_material(const asset& a, std::uint32_t index) {
  const auto m = a.materials().at(index);
  if (!m) return std::nullopt;
  resolved_material out{index, *m, a.string(m->name_offset), {}, {}, {}, {}, {}, {}, {}};
  out.base_color = resolve_texture(a, m->base_color_texture);
  out.normal = resolve_texture(a, m->normal_texture);
  out.metallic = resolve_texture(a, m->metallic_texture);
  out.roughness = resolve_texture(a, m->roughness_texture);
  out.emissive = resolve_texture(a, m->emissive_texture);
  out.occlusion = resolve_texture(a, m->occlusion_texture);
  out.height = resolve_texture(a, m->height_texture);
  return out;
}

/// Mesh row `mesh_index` joined with its material, textures, entity, data
/// and skin; nullopt when out of range. O(skins) for the skin lookup. Safe on
/// any asset.
template <class = void>
[[nodiscard]] std::optional<resolved_mesh> resolve_mesh(const asset& a, std::uint32_t mesh_index) {
  const auto m = a.meshes().at(mesh_index);
  if (!m) return std::nullopt;
  resolved_mesh out;
  out.index = mesh_index;
  out.record = *m;
  out.name = a.string(m->mesh_name_offset);
  out.entity_row = a.entity_row(m->entity_id);
  out.material = resolve_material(a, m->material_index);
  out.vertices = a.vertices(*m);
  out.indices = view_indices(a, *m);
  out.edge_indices = view_edge_indices(a, *m);
  const auto skins = a.table<skin_record>();
  for (std::uint32_t row = 0; row < skins.size() && !out.skin; ++row)
    if (skins[row].mesh_record_index == mesh_index) out.skin = row;
  const auto targets = a.table<morph_target_record>();
  for (std::uint32_t row = 0; row < targets.size(); ++row)
    if (targets[row].mesh_record_index == mesh_index) out.morph_targets.push_back(row);
  return out;
}

// ---- joined views: skeletons and skins ---------------------------------------------------

struct resolved_skeleton {
  std::uint32_t index = none;  // skeleton row
  skeleton_record record{};
  std::string_view name{};
  /// The skeleton's joints; a joint's parentJointIndex indexes this view.
  record_view<skeleton_joint_record> joints{};
};

struct resolved_skin {
  std::uint32_t index = none;  // skin row
  skin_record record{};
  /// The skeleton whose entityId is skeletonEntityId (the first such row).
  std::optional<resolved_skeleton> skeleton;
  /// Per skin joint j (what a vertex's joint index names): the joint's index
  /// within the skeleton, or none when it does not resolve. One per mapping
  /// in range: jointCount of them, fewer only in a relaxed open
  /// (open_options::relaxed_extension_ranges).
  std::vector<std::uint32_t> skeleton_joints;
  /// Per skin joint j: that skeleton joint record (a default record where
  /// skeleton_joints[j] is none).
  std::vector<skeleton_joint_record> joints;
  record_view<skin_joint_indices> joint_indices{};  // per vertex
  record_view<skin_joint_weights> joint_weights{};  // per vertex
};

/// Skeleton row `index` with its name and joints; nullopt when out of range.
/// Safe on any asset.
template <class = void>
[[nodiscard]] std::optional<resolved_skeleton> resolve_skeleton(const asset& a, std::uint32_t index) {
  const auto s = a.table<skeleton_record>().at(index);
  if (!s) return std::nullopt;
  return resolved_skeleton{index, *s, a.string(s->name_offset),
                           a.records<skeleton_joint_record>(s->first_joint_record_index, s->joint_record_count)};
}

/// The first skeleton row whose entityId is `entity_id`, or nullopt. O(skeletons).
template <class = void>
[[nodiscard]] std::optional<std::uint32_t> find_skeleton(const asset& a, std::uint32_t entity_id) {
  const auto skeletons = a.table<skeleton_record>();
  for (std::uint32_t row = 0; row < skeletons.size(); ++row)
    if (skeletons[row].entity_id == entity_id) return row;
  return std::nullopt;
}

/// Skin row `skin_index` joined with its skeleton, its joints through the
/// mapping, and its per-vertex data; nullopt when out of range.
/// O(skeletons + jointCount). Safe on any asset.
template <class = void>
[[nodiscard]] std::optional<resolved_skin> resolve_skin(const asset& a, std::uint32_t skin_index) {
  const auto s = a.table<skin_record>().at(skin_index);
  if (!s) return std::nullopt;
  resolved_skin out;
  out.index = skin_index;
  out.record = *s;
  if (const auto row = find_skeleton(a, s->skeleton_entity_id)) out.skeleton = resolve_skeleton(a, *row);
  for (const skin_joint_mapping_record& m : view_skin_mappings(a, *s)) {
    const auto joint = out.skeleton ? out.skeleton->joints.at(m.skeleton_joint_index) : std::nullopt;
    out.skeleton_joints.push_back(joint ? m.skeleton_joint_index : none);
    out.joints.push_back(joint.value_or(skeleton_joint_record{}));
  }
  out.joint_indices = view_joint_indices(a, *s);
  out.joint_weights = view_joint_weights(a, *s);
  return out;
}

// ---- joined views: animation --------------------------------------------------------------

struct resolved_channel {
  std::uint32_t index = none;  // channel row
  animation_channel_record record{};
  std::string_view joint_path{};
  record_view<translation_keyframe_record> translations{};
  record_view<rotation_keyframe_record> rotations{};
};

struct resolved_clip {
  std::uint32_t index = none;  // clip row
  animation_clip_record record{};
  std::string_view name{};
  std::vector<resolved_channel> channels;
};

/// Clip row `clip_index` with its channels and their keys; nullopt when out
/// of range (channels whose ranges do not resolve are left out, and keys
/// whose ranges do not resolve come back empty). Safe on any asset.
template <class = void>
[[nodiscard]] std::optional<resolved_clip> resolve_clip(const asset& a, std::uint32_t clip_index) {
  const auto c = a.table<animation_clip_record>().at(clip_index);
  if (!c) return std::nullopt;
  resolved_clip out{clip_index, *c, a.string(c->name_offset), {}};
  const auto channels = a.records<animation_channel_record>(c->first_channel_record_index, c->channel_record_count);
  for (std::uint32_t i = 0; i < channels.size(); ++i) {
    const animation_channel_record ch = channels[i];
    out.channels.push_back({c->first_channel_record_index + i, ch, a.string(ch.joint_path_offset),
                            a.records<translation_keyframe_record>(ch.first_translation_index, ch.translation_count),
                            a.records<rotation_keyframe_record>(ch.first_rotation_index, ch.rotation_count)});
  }
  return out;
}

}  // namespace untold
