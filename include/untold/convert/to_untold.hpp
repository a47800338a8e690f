// untold/convert/to_untold.hpp - the .untold writer of the neutral scene
// model: every importer (assimp, Urho3D, UDM/PMDL) reaches .untold through
// this one function, so the mapping and its losses are decided once.
//
//   convert::conversion_report report;
//   auto out = convert::to_untold(scene, {}, report);   // result<untold_output>
//   if (!out) ...                                        // out.error(): the first bad reference
//   write_file("x.untold", out->file);                   // + out->lod_files[k] for LOD k+1
//   for (auto& e : report.entries) ...                   // what was dropped or changed, with counts
//
// Mapping (docs/convert.md has the full table):
//   node -> entity (local TRS -> localTransform); a mesh drawn by several
//   nodes is stored once per node (the format's mesh records belong to one
//   entity; reported as `info`); a mesh drawn by no node gets its own entity.
//   mesh -> PBR_STATIC_V1 vertices (positions, normals, tangents, uv0, uv1,
//   colour) + indices; strips and fans become lists (`changed`); lines and
//   points are `dropped`; extra UV sets and morph targets are `dropped` (no
//   place in the format); LOD levels go to separate fileType-lod files.
//   material -> material record: base colour/metallic-roughness/normal/
//   occlusion/emissive textures (metallic from B and roughness from G of a
//   glTF metallic-roughness texture); emissive strength is multiplied into
//   the factor (`changed`); alpha mode, double-sided, non-zero UV sets and
//   texture transforms have no field and are `dropped`.
//   skeleton -> skeleton + joints: jointPath = names from the root joined by
//   '/', bindTransform = the joint's bind pose in skeleton space (the inverse
//   of the inverse bind matrix), restTransform = local rest pose.
//   skin -> skin table (palette, 4 joints + weights per vertex).
//   animation -> clip; translation/rotation channels of skeleton joints are
//   kept (cubic splines keep their key values, `changed`; step becomes
//   linear, `changed`); scale, morph-weight and node channels are `dropped`.
//   light / camera -> light / camera tables (cones and fov in degrees, the
//   reference engine's unit; position and direction from the node's world
//   transform).
//
// Not for untrusted scenes in the sense of file input: the scene is built by
// an importer that already checked its source. validate_model() runs first
// and its error is returned, so a bad reference never reaches the builder.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../error.hpp"
#include "../format.hpp"
#include "../matrix.hpp"
#include "../vertex.hpp"
#include "../writer.hpp"
#include "model.hpp"

namespace untold::convert {

struct to_untold_options {
  untold::file_type type = untold::file_type::tile;
  write_options write{};
  /// Write one fileType-lod file per LOD level the meshes carry.
  bool lod_files = true;
};

struct untold_output {
  std::vector<std::byte> file;
  std::vector<std::vector<std::byte>> lod_files;  // [0] = LOD 1
};

namespace detail {

[[nodiscard]] inline std::string quoted(std::string_view kind, std::string_view name, std::size_t index) {
  // Built by appends: g++ 12 -O2/-O3 warns (-Wrestrict, a false positive) on
  // the operator+ chain.
  std::string s(kind);
  if (name.empty()) {
    s.append(" #").append(std::to_string(index));
  } else {
    s.append(" '").append(name).append("'");
  }
  return s;
}

/// Triangle-list indices of a mesh (strips and fans unrolled, restart-free);
/// empty input means 0..n-1.
[[nodiscard]] inline std::vector<std::uint32_t> triangle_list(const mesh& m, std::span<const std::uint32_t> source) {
  std::vector<std::uint32_t> idx;
  std::vector<std::uint32_t> implicit;
  if (source.empty()) {
    implicit.resize(m.vertex_count());
    for (std::size_t i = 0; i < implicit.size(); ++i) implicit[i] = static_cast<std::uint32_t>(i);
    source = implicit;
  }
  switch (m.primitive) {
    case topology::triangle_list:
      idx.assign(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(source.size() / 3 * 3));
      break;
    case topology::triangle_strip:
      for (std::size_t i = 2; i < source.size(); ++i) {
        if (i % 2 == 0) idx.insert(idx.end(), {source[i - 2], source[i - 1], source[i]});
        else idx.insert(idx.end(), {source[i - 1], source[i - 2], source[i]});
      }
      break;
    case topology::triangle_fan:
      for (std::size_t i = 2; i < source.size(); ++i) idx.insert(idx.end(), {source[0], source[i - 1], source[i]});
      break;
    default: break;
  }
  return idx;
}

}  // namespace detail

/// Writes `s` as a .untold file (and LOD files). Everything the format cannot
/// hold is appended to `report`. Errors: validate_model's, and the builder's
/// (errc::invalid_argument with the table, record and field).
[[nodiscard]] inline result<untold_output> to_untold(const scene& s, const to_untold_options& options,
                                                     conversion_report& report) {
  UNTOLD_TRY(validate_model(s));

  // ---- what a whole-scene pass can tell up front -----------------------------------
  std::size_t lod_levels = 0;
  for (std::size_t i = 0; i < s.meshes.size(); ++i) {
    const mesh& m = s.meshes[i];
    const std::string where = detail::quoted("mesh", m.name, i);
    if (m.primitive == topology::line_list || m.primitive == topology::line_strip ||
        m.primitive == topology::point_list)
      report.dropped(std::string(name(m.primitive)) + " primitives", where,
                     "PBR_STATIC_V1 meshes are triangle lists", m.indices.empty() ? m.vertex_count() : m.indices.size());
    else if (m.primitive != topology::triangle_list)
      report.changed(std::string(name(m.primitive)), where, "unrolled into a triangle list");
    else if (m.indices.size() % 3 != 0)
      report.dropped("indices", where, "a triangle list needs a multiple of 3 indices", m.indices.size() % 3);
    if (!m.extra_uvs.empty()) report.dropped("uv sets beyond the second", where, "PBR_STATIC_V1 has uv0 and uv1", m.extra_uvs.size());
    if (!m.morphs.empty()) report.dropped("morph targets", where, "this library writes no morph tables yet", m.morphs.size());
    if (!m.joints.empty() && m.skin == no_ref) report.dropped("joint weights", where, "no skin", m.vertex_count());
    if (!options.lod_files && !m.lods.empty()) report.dropped("LOD levels", where, "LOD files not requested", m.lods.size());
    lod_levels = std::max(lod_levels, m.lods.size());
  }
  for (std::size_t i = 0; i < s.materials.size(); ++i) {
    const material& m = s.materials[i];
    const std::string where = detail::quoted("material", m.name, i);
    if (m.alpha != alpha_mode::opaque) report.dropped("alpha mode", where, "the material record has no alpha mode field");
    if (m.double_sided) report.dropped("double-sided flag", where, "the material record has no double-sided field");
    if (m.emissive_strength != 1.0f)
      report.changed("emissive strength", where, "multiplied into emissiveFactor");
    for (const texture_slot* t : {&m.base_color_texture, &m.metallic_roughness_texture, &m.normal_texture,
                                  &m.occlusion_texture, &m.emissive_texture}) {
      if (!t->used()) continue;
      if (t->uv_set != 0) report.dropped("texture uv set", where, "textures sample uv0 only", 1);
      if (t->has_transform) report.dropped("texture transform", where, "no texture transform field", 1);
    }
    if (!m.other_textures.empty())
      report.dropped("other texture slots", where, "no matching PBR slot", m.other_textures.size());
  }
  for (std::size_t i = 0; i < s.textures.size(); ++i)
    if (s.textures[i].uri.empty())
      report.dropped("embedded image", detail::quoted("texture", s.textures[i].name, i),
                     "textures are referenced by URI; write the image next to the output first");

  // ---- world transforms of the nodes (parents come first) ---------------------------
  std::vector<mat4> world(s.nodes.size());
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const mat4 local = s.nodes[i].local.matrix();
    world[i] = s.nodes[i].parent == no_ref ? local : multiply(world[s.nodes[i].parent], local);
  }

  // ---- one builder per output file ----------------------------------------------------
  std::vector<std::vector<std::uint32_t>> drawn_by(s.meshes.size());
  for (std::uint32_t n = 0; n < s.nodes.size(); ++n)
    for (std::uint32_t m : s.nodes[n].meshes) drawn_by[m].push_back(n);
  std::size_t instanced = 0;
  for (const auto& nodes : drawn_by) instanced += nodes.size() > 1 ? nodes.size() - 1 : 0;
  if (instanced > 0) report.info("instanced mesh copies", "", "a mesh record belongs to one entity", instanced);

  const auto build = [&](untold::file_type type, std::size_t lod, bool with_extensions) -> result<std::vector<std::byte>> {
    builder b{type};
    std::vector<std::uint32_t> textures(s.textures.size(), none);
    for (std::size_t i = 0; i < s.textures.size(); ++i) {
      const texture& t = s.textures[i];
      if (t.uri.empty()) continue;
      textures[i] = b.add_texture({.name = t.name, .uri = t.uri, .format = t.format,
                                   .flags = t.srgb ? 1u : 0u, .width = t.width, .height = t.height,
                                   .mip_count = t.mip_count});
    }
    const auto tex = [&](const texture_slot& slot) { return slot.used() ? textures[slot.texture] : none; };
    std::vector<std::uint32_t> materials(s.materials.size());
    for (std::size_t i = 0; i < s.materials.size(); ++i) {
      const material& m = s.materials[i];
      material_desc d{.name = m.name};
      d.base_color_factor = m.base_color;
      for (int c = 0; c < 3; ++c) d.emissive_factor[c] = m.emissive[c] * m.emissive_strength;
      d.normal_scale = m.normal_scale;
      d.metallic_factor = m.metallic;
      d.roughness_factor = m.roughness;
      d.occlusion_strength = m.occlusion_strength;
      d.alpha_cutoff = m.alpha_cutoff;
      d.base_color_texture = tex(m.base_color_texture);
      d.normal_texture = tex(m.normal_texture);
      d.metallic_texture = tex(m.metallic_roughness_texture);
      d.roughness_texture = tex(m.metallic_roughness_texture);
      if (m.metallic_roughness_texture.used()) {
        d.metallic_channel = texture_channel::b;  // glTF: metallic in B, roughness in G
        d.roughness_channel = texture_channel::g;
      }
      d.occlusion_texture = tex(m.occlusion_texture);
      d.emissive_texture = tex(m.emissive_texture);
      materials[i] = b.add_material(d);
    }

    std::vector<std::uint32_t> entities(s.nodes.size());
    for (std::size_t i = 0; i < s.nodes.size(); ++i) {
      const node& n = s.nodes[i];
      entities[i] = b.add_entity({.name = n.name, .parent = n.parent == no_ref ? none : entities[n.parent],
                                  .local_transform = n.local.matrix()});
    }

    // Meshes, at the node(s) that draw them; encoded once per mesh.
    std::vector<std::vector<std::uint32_t>> mesh_handles(s.meshes.size());
    for (std::size_t i = 0; i < s.meshes.size(); ++i) {
      const mesh& m = s.meshes[i];
      if (m.primitive == topology::line_list || m.primitive == topology::line_strip ||
          m.primitive == topology::point_list)
        continue;
      const std::span<const std::uint32_t> source =
          lod == 0 || m.lods.empty() ? std::span<const std::uint32_t>(m.indices)
                                     : std::span<const std::uint32_t>(m.lods[std::min(lod, m.lods.size()) - 1].indices);
      const std::vector<std::uint32_t> indices = detail::triangle_list(m, source);
      auto vertices = encode_pbr_vertices(pbr_vertex_input{.positions = m.positions, .normals = m.normals,
                                                           .tangents = m.tangents, .uv0 = m.uv0, .uv1 = m.uv1,
                                                           .colors = m.colors});
      if (!vertices) {
        error e = vertices.error();
        e.context.chunk_type = static_cast<std::uint32_t>(chunk_type::mesh_table);
        e.context.record_index = static_cast<std::uint32_t>(i);
        return e;
      }
      std::vector<std::uint32_t> at = drawn_by[i];
      if (at.empty()) at.push_back(no_ref);  // an entity of its own
      for (std::uint32_t n : at) {
        const std::uint32_t entity = n == no_ref ? b.add_entity({.name = m.name}) : entities[n];
        mesh_handles[i].push_back(b.add_mesh({.entity = entity, .name = m.name,
                                              .material = m.material == no_ref ? none : materials[m.material],
                                              .vertices = *vertices, .indices = indices}));
      }
    }
    if (!with_extensions) return b.finish(options.write);

    // Skeletons: joint paths from the root, bind pose = inverse of the inverse bind matrix.
    std::vector<std::uint32_t> skeletons(s.skeletons.size());
    std::vector<std::vector<std::string>> joint_paths(s.skeletons.size());
    for (std::size_t k = 0; k < s.skeletons.size(); ++k) {
      const skeleton& sk = s.skeletons[k];
      auto& paths = joint_paths[k];
      paths.resize(sk.joints.size());
      std::vector<skeleton_joint_desc> joints(sk.joints.size());
      for (std::size_t j = 0; j < sk.joints.size(); ++j) {
        const joint& jt = sk.joints[j];
        const std::string own = jt.name.empty() ? "joint" + std::to_string(j) : jt.name;
        paths[j] = jt.parent == no_ref ? own : paths[jt.parent] + "/" + own;
        joints[j] = {.path = paths[j], .parent = jt.parent == no_ref ? none : jt.parent,
                     .bind_transform = inverse_affine(jt.inverse_bind), .rest_transform = jt.rest.matrix()};
      }
      const std::uint32_t entity = sk.node != no_ref ? entities[sk.node] : b.add_entity({.name = sk.name});
      skeletons[k] = b.add_skeleton({.name = sk.name, .entity = entity, .joints = joints});
    }
    for (std::size_t i = 0; i < s.meshes.size(); ++i) {
      const mesh& m = s.meshes[i];
      if (m.skin == no_ref) continue;
      const skin& sk = s.skins[m.skin];
      std::vector<float4> weights(m.weights.begin(), m.weights.end());
      for (std::uint32_t handle : mesh_handles[i])
        b.add_skin({.mesh = handle, .skeleton = skeletons[sk.skeleton], .joints = sk.joints,
                    .joint_indices = m.joints, .joint_weights = weights});
    }

    for (std::size_t a = 0; a < s.animations.size(); ++a) {
      const animation& anim = s.animations[a];
      const std::string where = detail::quoted("clip", anim.name, a);
      std::vector<std::vector<translation_keyframe_record>> translations;
      std::vector<std::vector<rotation_keyframe_record>> rotations;
      std::vector<animation_channel_desc> channels;
      translations.reserve(anim.channels.size());
      rotations.reserve(anim.channels.size());
      std::size_t dropped_scale = 0, dropped_weights = 0, dropped_node = 0, cubic = 0, step = 0;
      for (const animation_channel& c : anim.channels) {
        if (c.skeleton == no_ref) { ++dropped_node; continue; }
        if (c.path == anim_path::scale) { dropped_scale += c.times.size(); continue; }
        if (c.path == anim_path::weights) { dropped_weights += c.times.size(); continue; }
        cubic += c.interp == interpolation::cubic_spline;
        step += c.interp == interpolation::step;
        // Cubic splines store (in-tangent, value, out-tangent) per key: keep the value.
        const std::size_t width = c.path == anim_path::rotation ? 4 : 3;
        const std::size_t stride = width * (c.interp == interpolation::cubic_spline ? 3 : 1);
        const std::size_t skip = c.interp == interpolation::cubic_spline ? width : 0;
        translations.emplace_back();
        rotations.emplace_back();
        for (std::size_t k = 0; k < c.times.size(); ++k) {
          const float* v = c.values.data() + k * stride + skip;
          if (c.path == anim_path::translation) translations.back().push_back({c.times[k], v[0], v[1], v[2], 0});
          else rotations.back().push_back({c.times[k], v[0], v[1], v[2], v[3]});
        }
        channels.push_back({.joint_path = joint_paths[c.skeleton][c.joint], .translations = translations.back(),
                            .rotations = rotations.back()});
      }
      report.dropped("scale keyframes", where, "the format animates translation and rotation only", dropped_scale);
      report.dropped("morph weight keyframes", where, "no morph targets in the format", dropped_weights);
      report.dropped("node channels", where, "channels address skeleton joints by path", dropped_node);
      report.changed("cubic-spline channels", where, "key values kept, tangents dropped (linear)", cubic);
      report.changed("step channels", where, "played back as linear", step);
      b.add_animation_clip({.name = anim.name, .channels = channels, .duration = anim.duration});
    }

    for (std::size_t i = 0; i < s.lights.size(); ++i) {
      const light& l = s.lights[i];
      light_record r;
      r.light_type = static_cast<std::uint32_t>(l.kind) + 1;  // directional=1 point=2 spot=3 area=4
      r.color = l.color;
      r.intensity = l.intensity;
      r.radius = l.range;
      r.inner_cone = l.inner_cone * 57.29578f;
      r.outer_cone = l.outer_cone * 57.29578f;
      r.area_size = l.area_size;
      if (l.node != no_ref) {
        const mat4& w = world[l.node];
        r.local_transform = w;
        r.position = {w[12], w[13], w[14]};
        r.direction = {-w[8], -w[9], -w[10]};  // lights shine down -Z
        r.up = {w[4], w[5], w[6]};
        r.right = {w[0], w[1], w[2]};
      }
      b.add_light({.name = l.name, .entity = l.node == no_ref ? none : entities[l.node], .light = r});
    }
    for (std::size_t i = 0; i < s.cameras.size(); ++i) {
      const camera& c = s.cameras[i];
      if (c.orthographic) report.dropped("orthographic projection", detail::quoted("camera", c.name, i),
                                         "the camera record is perspective only");
      camera_record r;
      r.fov_y_degrees = c.yfov * 57.29578f;
      r.aspect = c.aspect;
      r.near_clip = c.znear;
      r.far_clip = c.zfar;
      if (c.node != no_ref) {
        const mat4& w = world[c.node];
        r.local_transform = w;
        r.position = {w[12], w[13], w[14]};
        r.forward = {-w[8], -w[9], -w[10]};
        r.up = {w[4], w[5], w[6]};
        r.right = {w[0], w[1], w[2]};
      }
      b.add_camera({.name = c.name, .entity = c.node == no_ref ? none : entities[c.node], .camera = r});
    }
    return b.finish(options.write);
  };

  untold_output out;
  auto main = build(options.type, 0, true);
  if (!main) return main.error();
  out.file = std::move(*main);
  if (options.lod_files) {
    for (std::size_t level = 1; level <= lod_levels; ++level) {
      auto lod = build(untold::file_type::lod, level, false);
      if (!lod) return lod.error();
      out.lod_files.push_back(std::move(*lod));
    }
  }
  return out;
}

}  // namespace untold::convert
