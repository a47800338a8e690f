// untold/convert/pose.hpp - a scene as it is drawn at one moment: every mesh
// instance in world space, posed by a clip at a time (node and joint
// channels, skinning, morph weights), at one level of detail.
//
// This is what a viewer or a thumbnail renderer draws (`untold render`, the
// web viewer). Its input is the neutral scene (model.hpp), so every format
// the library imports is drawn by the same code.
//
//   auto scene = untold::convert::from_untold(asset);         // or any importer
//   auto posed = untold::convert::pose(*scene, {.animation = 0, .time = 1.5f});
//   for (const auto& m : posed->meshes) draw(m.positions, m.normals, m.indices,
//                                            untold::convert::display_color(m.material));
//
// Conventions are the scene's (right-handed, +Y up, counter-clockwise front
// faces). Instances under a mirroring transform have their triangles turned
// around, so front faces stay counter-clockwise in world space.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "model.hpp"

namespace untold::convert {

struct pose_options {
  /// Index into scene::animations, or no_ref for the rest pose.
  std::uint32_t animation = no_ref;
  /// Seconds into the clip. Keys clamp at both ends; a non-finite time is 0.
  float time = 0;
  /// 0: full detail; k: the mesh's level k (mesh::lods[k - 1]), or its
  /// coarsest level when it has fewer.
  std::uint32_t lod = 0;
  untold::limits limits{};
  /// Shared with the stages before (import, conversion); null: pose makes
  /// its own from `limits` and the scene's payload size.
  untold::budget* budget = nullptr;
};

/// One mesh drawn by one node (instancing gives one entry per node).
struct posed_mesh {
  std::uint32_t mesh = no_ref;
  std::uint32_t node = no_ref;  // no_ref: a mesh no node draws, drawn once at the origin
  std::uint32_t material = no_ref;
  std::vector<float> positions{};       // world-space xyz, morphed and skinned
  std::vector<float> normals{};         // world-space unit xyz (smooth normals made from the
                                        // triangles when the mesh has none)
  std::vector<std::uint32_t> indices{};  // triangle list, counter-clockwise in world space
};

struct posed_scene {
  std::vector<posed_mesh> meshes{};
  /// Bounds of every finite posed position; min > max when there is none.
  std::array<float, 3> min{INFINITY, INFINITY, INFINITY};
  std::array<float, 3> max{-INFINITY, -INFINITY, -INFINITY};
  std::uint64_t triangles = 0;
  /// Instances of line and point meshes, which have no triangles to draw.
  std::uint64_t skipped_primitives = 0;
  [[nodiscard]] bool empty() const noexcept { return !(min[0] <= max[0]); }
};

/// A colour per material index, far apart for neighbouring indices (golden
/// ratio hues): what a viewer paints "per material". no_ref: light grey.
[[nodiscard]] inline std::array<float, 3> display_color(std::uint32_t material) noexcept {
  if (material == no_ref) return {0.72f, 0.72f, 0.72f};
  const float hue = std::fmod(0.08f + 0.6180339887f * static_cast<float>(material % 4096u), 1.0f) * 6.0f;
  const float saturation = 0.55f, value = 0.88f;
  const int sector = static_cast<int>(hue) % 6;
  const float f = hue - std::floor(hue);
  const float p = value * (1 - saturation), q = value * (1 - saturation * f), t = value * (1 - saturation * (1 - f));
  switch (sector) {
    case 0: return {value, t, p};
    case 1: return {q, value, p};
    case 2: return {p, value, t};
    case 3: return {p, q, value};
    case 4: return {t, p, value};
    default: return {value, p, q};
  }
}

namespace detail {

/// The value of `c` at time `t` into `out` (`components` floats). Keys are
/// found by binary search over `times` (non-decreasing for a glTF clip; on
/// other input some key is still chosen); times before the first key or
/// after the last hold the end values. Rotations are normalised
/// quaternions, interpolated linearly then normalised (nlerp), the shortest way.
inline void sample_channel(const animation_channel& c, std::size_t components, float t, float* out) noexcept {
  const std::size_t keys = c.times.size();
  const bool cubic = c.interp == interpolation::cubic_spline;
  const std::size_t key_stride = components * (cubic ? 3 : 1);
  const auto value = [&](std::size_t k) { return c.values.data() + k * key_stride + (cubic ? components : 0); };
  const std::size_t next =
      static_cast<std::size_t>(std::upper_bound(c.times.begin(), c.times.end(), t) - c.times.begin());
  if (next == 0 || next == keys || c.interp == interpolation::step) {
    const float* v = value(next == 0 ? 0 : next - 1);
    std::copy(v, v + components, out);
    return;
  }
  const float t0 = c.times[next - 1], t1 = c.times[next];
  const float span_seconds = t1 - t0;
  const float u = span_seconds > 0 ? std::clamp((t - t0) / span_seconds, 0.0f, 1.0f) : 0.0f;
  const float* a = value(next - 1);
  const float* b = value(next);
  if (cubic) {
    // glTF's cubic Hermite: key = (in-tangent, value, out-tangent), tangents
    // scaled by the interval.
    const float* out_tangent = a + components;
    const float* in_tangent = b - components;
    const float u2 = u * u, u3 = u2 * u;
    const float h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2, h11 = u3 - u2;
    for (std::size_t i = 0; i < components; ++i)
      out[i] = h00 * a[i] + h10 * span_seconds * out_tangent[i] + h01 * b[i] + h11 * span_seconds * in_tangent[i];
  } else {
    float sign = 1;
    if (c.path == anim_path::rotation && a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] < 0) sign = -1;
    for (std::size_t i = 0; i < components; ++i) out[i] = a[i] + (sign * b[i] - a[i]) * u;
  }
  if (c.path == anim_path::rotation) {
    const float length = std::sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3]);
    if (length > 0 && untold::detail::is_finite(length))
      for (std::size_t i = 0; i < 4; ++i) out[i] /= length;
  }
}

/// Applies a sampled transform channel to `target`.
inline void apply_channel(const animation_channel& c, float t, transform& target) noexcept {
  switch (c.path) {
    case anim_path::translation: sample_channel(c, 3, t, target.translation.data()); break;
    case anim_path::rotation: sample_channel(c, 4, t, target.rotation.data()); break;
    case anim_path::scale: sample_channel(c, 3, t, target.scale.data()); break;
    case anim_path::weights: break;
  }
}

/// m x (x, y, z, 1).
[[nodiscard]] inline std::array<float, 3> transform_point(const mat4& m, const float* p) noexcept {
  return {m[0] * p[0] + m[4] * p[1] + m[8] * p[2] + m[12], m[1] * p[0] + m[5] * p[1] + m[9] * p[2] + m[13],
          m[2] * p[0] + m[6] * p[1] + m[10] * p[2] + m[14]};
}

/// The matrix that carries normals under m's linear part: its cofactor
/// matrix (det x inverse transpose), sign-corrected so a mirroring m does
/// not turn normals inside out. Column-major 3x3.
[[nodiscard]] inline std::array<float, 9> normal_matrix(const mat4& m) noexcept {
  const float a = m[0], b = m[4], c = m[8], d = m[1], e = m[5], f = m[9], g = m[2], h = m[6], i = m[10];
  std::array<float, 9> n{e * i - f * h, -(b * i - c * h), b * f - c * e,
                         -(d * i - f * g), a * i - c * g, -(a * f - c * d),
                         d * h - e * g, -(a * h - b * g), a * e - b * d};
  if (linear_determinant(m) < 0)
    for (float& x : n) x = -x;
  return n;
}

inline void store_normal(const std::array<float, 9>& n, const float* v, float* out) noexcept {
  const float x = n[0] * v[0] + n[3] * v[1] + n[6] * v[2];
  const float y = n[1] * v[0] + n[4] * v[1] + n[7] * v[2];
  const float z = n[2] * v[0] + n[5] * v[1] + n[8] * v[2];
  const float length = std::sqrt(x * x + y * y + z * z);
  const float s = length > 0 && untold::detail::is_finite(length) ? 1 / length : 0;
  out[0] = x * s;
  out[1] = y * s;
  out[2] = z * s;
}

/// Area-weighted vertex normals of a triangle list over `positions`.
inline void smooth_normals(std::span<const float> positions, std::span<const std::uint32_t> indices,
                           std::vector<float>& out) {
  out.assign(positions.size(), 0.0f);
  for (std::size_t t = 0; t + 2 < indices.size(); t += 3) {
    const float* p0 = &positions[std::size_t{indices[t]} * 3];
    const float* p1 = &positions[std::size_t{indices[t + 1]} * 3];
    const float* p2 = &positions[std::size_t{indices[t + 2]} * 3];
    const float ux = p1[0] - p0[0], uy = p1[1] - p0[1], uz = p1[2] - p0[2];
    const float vx = p2[0] - p0[0], vy = p2[1] - p0[1], vz = p2[2] - p0[2];
    const float n[3] = {uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx};
    for (std::size_t k = 0; k < 3; ++k)
      for (std::size_t c = 0; c < 3; ++c) out[std::size_t{indices[t + k]} * 3 + c] += n[c];
  }
  static constexpr std::array<float, 9> identity3{1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (std::size_t v = 0; v < out.size(); v += 3) store_normal(identity3, &out[v], &out[v]);
}

}  // namespace detail

/// Poses `s` (see the top of this file). Safe on any scene: it is checked
/// with validate_model first, and a weights channel whose value count is not
/// a whole number per key is refused (errc::invalid_argument, field
/// "animation.channel.values"); an animation index out of range is
/// errc::invalid_argument (field "pose.animation"). The output is charged to
/// the budget before it is made (errc::limit_exceeded): instancing one mesh
/// at many nodes cannot grow it past the caller's limits. Linear in the
/// output plus the clip's channels (each sampled by binary search).
[[nodiscard]] inline result<posed_scene> pose(const scene& s, const pose_options& options = {}) {
  UNTOLD_TRY(validate_model(s));
  if (options.animation != no_ref && options.animation >= s.animations.size())
    return make_error(errc::invalid_argument).at_field("pose.animation").with_value(options.animation);
  untold::budget own_budget(options.limits, payload_bytes(s));
  untold::budget& budget = untold::budget::own_or_shared(options.budget, own_budget);
  const float t = untold::detail::is_finite(options.time) ? options.time : 0.0f;

  // The clip's values over the rest pose: node locals, joint locals, and
  // morph weights per node (glTF animates a node's mesh weights).
  std::vector<transform> node_local(s.nodes.size());
  for (std::size_t i = 0; i < s.nodes.size(); ++i) node_local[i] = s.nodes[i].local;
  std::vector<std::vector<transform>> joint_local(s.skeletons.size());
  for (std::size_t k = 0; k < s.skeletons.size(); ++k)
    for (const joint& j : s.skeletons[k].joints) joint_local[k].push_back(j.rest);
  std::vector<std::vector<float>> node_weights(s.nodes.size());
  if (options.animation != no_ref) {
    for (const animation_channel& c : s.animations[options.animation].channels) {
      if (c.path == anim_path::weights) {
        const std::size_t per_key = c.times.size() * (c.interp == interpolation::cubic_spline ? 3 : 1);
        if (c.node == no_ref || c.times.empty()) continue;
        if (c.values.size() % per_key != 0)
          return make_error(errc::invalid_argument).at_field("animation.channel.values").with_value(c.values.size());
        std::vector<float>& w = node_weights[c.node];
        w.resize(c.values.size() / per_key);
        detail::sample_channel(c, w.size(), t, w.data());
      } else if (c.times.empty()) {
        continue;
      } else if (c.skeleton != no_ref) {
        detail::apply_channel(c, t, joint_local[c.skeleton][c.joint]);
      } else {
        detail::apply_channel(c, t, node_local[c.node]);
      }
    }
  }
  std::vector<mat4> node_world(s.nodes.size());
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const mat4 local = node_local[i].matrix();
    node_world[i] = s.nodes[i].parent == no_ref ? local : multiply(node_world[s.nodes[i].parent], local);
  }
  // Joints in world space: the skeleton's node (when it has one), then the
  // chain of joint locals (validate_model proved parents come first).
  std::vector<std::vector<mat4>> joint_world(s.skeletons.size());
  for (std::size_t k = 0; k < s.skeletons.size(); ++k) {
    const skeleton& sk = s.skeletons[k];
    const mat4 base = sk.node == no_ref ? identity_matrix : node_world[sk.node];
    joint_world[k].resize(sk.joints.size());
    for (std::size_t j = 0; j < sk.joints.size(); ++j) {
      const mat4 parent = sk.joints[j].parent == no_ref ? base : joint_world[k][sk.joints[j].parent];
      joint_world[k][j] = multiply(parent, joint_local[k][j].matrix());
    }
  }

  // Instances: (mesh, node) for every node's meshes, then meshes no node draws.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> instances;
  std::vector<bool> drawn(s.meshes.size(), false);
  for (std::size_t n = 0; n < s.nodes.size(); ++n)
    for (std::uint32_t m : s.nodes[n].meshes) {
      instances.emplace_back(m, static_cast<std::uint32_t>(n));
      drawn[m] = true;
    }
  for (std::size_t m = 0; m < s.meshes.size(); ++m)
    if (!drawn[m]) instances.emplace_back(static_cast<std::uint32_t>(m), no_ref);
  UNTOLD_TRY(budget.charge_items(instances.size(), sizeof(posed_mesh), "posed meshes", errc::limit_exceeded));

  posed_scene out;
  out.meshes.reserve(instances.size());
  std::vector<mat4> palette;
  std::vector<float> morphed;
  for (const auto& [mesh_index, node_index] : instances) {
    const mesh& m = s.meshes[mesh_index];
    if (m.primitive != topology::triangle_list && m.primitive != topology::triangle_strip &&
        m.primitive != topology::triangle_fan) {
      ++out.skipped_primitives;
      continue;
    }
    const std::vector<std::uint32_t>& source =
        options.lod == 0 || m.lods.empty() ? m.indices : m.lods[std::min<std::size_t>(options.lod, m.lods.size()) - 1].indices;
    const std::size_t vertices = m.vertex_count();
    // Output: positions and normals (6 floats a vertex) and the unrolled
    // triangle list (at most 3 indices per source index).
    const std::uint64_t index_bound = source.empty() ? vertices * 3 : source.size() * 3;
    UNTOLD_TRY(budget.charge_items(vertices, 6 * sizeof(float), "posed vertices", errc::limit_exceeded));
    UNTOLD_TRY(budget.charge_memory(untold::budget::product(index_bound, sizeof(std::uint32_t)), "posed indices",
                                    errc::limit_exceeded));
    posed_mesh pm;
    pm.mesh = mesh_index;
    pm.node = node_index;
    pm.material = m.material;
    pm.indices = detail::triangle_list(m, source);

    // Morph weights: the clip's for this node, else the targets' defaults.
    std::span<const float> positions = m.positions;
    if (!m.morphs.empty()) {
      morphed.assign(m.positions.begin(), m.positions.end());
      const std::vector<float>* animated = node_index == no_ref ? nullptr : &node_weights[node_index];
      for (std::size_t k = 0; k < m.morphs.size(); ++k) {
        const morph_target& target = m.morphs[k];
        const float w = animated != nullptr && k < animated->size() ? (*animated)[k] : target.default_weight;
        if (w == 0 || target.position_deltas.empty()) continue;
        for (std::size_t i = 0; i < morphed.size(); ++i) morphed[i] += w * target.position_deltas[i];
      }
      positions = morphed;
    }

    const mat4 world = node_index == no_ref ? identity_matrix : node_world[node_index];
    const bool skinned = m.skin != no_ref && !m.joints.empty();
    if (skinned) {
      const skin& sk = s.skins[m.skin];
      palette.resize(sk.joints.size());
      for (std::size_t j = 0; j < sk.joints.size(); ++j)
        palette[j] = multiply(joint_world[sk.skeleton][sk.joints[j]], s.skeletons[sk.skeleton].joints[sk.joints[j]].inverse_bind);
    } else if (detail::linear_determinant(world) < 0) {
      for (std::size_t i = 0; i + 2 < pm.indices.size(); i += 3) std::swap(pm.indices[i + 1], pm.indices[i + 2]);
    }
    const std::array<float, 9> rigid_normals = detail::normal_matrix(world);
    pm.positions.resize(vertices * 3);
    if (!m.normals.empty()) pm.normals.resize(vertices * 3);
    for (std::size_t v = 0; v < vertices; ++v) {
      mat4 blended = world;
      if (skinned) {
        const auto& w = m.weights[v];
        const float total = w[0] + w[1] + w[2] + w[3];
        if (total > 0 && untold::detail::is_finite(total)) {
          blended.fill(0);
          for (std::size_t k = 0; k < 4; ++k) {
            if (w[k] == 0) continue;
            const mat4& joint_matrix = palette[m.joints[v][k]];
            for (std::size_t e = 0; e < 16; ++e) blended[e] += joint_matrix[e] * (w[k] / total);
          }
        }
      }
      const auto p = detail::transform_point(blended, &positions[v * 3]);
      std::copy(p.begin(), p.end(), pm.positions.begin() + static_cast<std::ptrdiff_t>(v * 3));
      if (!m.normals.empty())
        detail::store_normal(skinned ? detail::normal_matrix(blended) : rigid_normals, &m.normals[v * 3],
                             &pm.normals[v * 3]);
      for (std::size_t c = 0; c < 3; ++c)
        if (untold::detail::is_finite(p[c])) {
          out.min[c] = std::min(out.min[c], p[c]);
          out.max[c] = std::max(out.max[c], p[c]);
        }
    }
    if (m.normals.empty()) detail::smooth_normals(pm.positions, pm.indices, pm.normals);
    out.triangles += pm.indices.size() / 3;
    out.meshes.push_back(std::move(pm));
  }
  return out;
}

}  // namespace untold::convert
