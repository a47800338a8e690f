// untold/convert/model.hpp - the neutral scene model every conversion passes
// through, and the report of what a conversion could not carry.
//
// Importers (assimp in the tool, Urho3D, UDM/PMDL) fill a `convert::scene`;
// writers (.untold via convert/to_untold.hpp, the .hmesh family) read it. N
// sources and M targets cost N + M pieces, and the "nothing is lost
// silently" report is kept in one place: `scene::report`, which importers and
// writers both append to.
//
// Conventions (glTF's; importers convert into them and say so in the report
// as a `changed` entry when they had to):
//   - right-handed, +Y up, metres, counter-clockwise front faces;
//   - quaternions are (x, y, z, w); matrices are column-major 4x4 (untold::mat4);
//   - angles are radians (camera yfov, light cones);
//   - vertex streams are flat float arrays, tightly packed per vertex
//     (positions xyz, normals xyz, tangents xyzw with w = handedness +-1,
//     uvs uv, colors rgba); an empty stream means "absent".
//
// Plain aggregates, no invariants enforced by the types: `validate_model`
// checks the cross references a writer relies on.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../budget.hpp"
#include "../detail/scan.hpp"
#include "../error.hpp"
#include "../format.hpp"
#include "../matrix.hpp"
#include "../records.hpp"
#include "../validate.hpp"

namespace untold::convert {

inline constexpr std::uint32_t no_ref = 0xFFFFFFFFu;

// ---- the conversion report ----------------------------------------------------------

/// One line of a conversion report. `dropped`: the source had it and the
/// target has no place for it (a loss). `changed`: it was carried, but not as
/// is (axis conversion, precision, re-indexing). `info`: worth knowing, no loss.
struct report_entry {
  enum class kind : std::uint8_t { dropped, changed, info };
  kind severity = kind::dropped;
  std::string what{};    // e.g. "morph targets", "scale keyframes", "vertex colours"
  std::string where{};   // e.g. "mesh 'Body'", "clip 'Walk'", "" for the whole scene
  std::string reason{};  // why, in one phrase
  std::uint64_t count = 1;
};

struct conversion_report {
  std::vector<report_entry> entries{};

  void dropped(std::string what, std::string where, std::string reason, std::uint64_t count = 1) {
    add(report_entry::kind::dropped, std::move(what), std::move(where), std::move(reason), count);
  }
  void changed(std::string what, std::string where, std::string reason, std::uint64_t count = 1) {
    add(report_entry::kind::changed, std::move(what), std::move(where), std::move(reason), count);
  }
  void info(std::string what, std::string where, std::string reason, std::uint64_t count = 1) {
    add(report_entry::kind::info, std::move(what), std::move(where), std::move(reason), count);
  }
  /// How many entries have severity `k`.
  [[nodiscard]] std::size_t count(report_entry::kind k) const noexcept {
    std::size_t n = 0;
    for (const report_entry& e : entries) n += e.severity == k ? 1 : 0;
    return n;
  }
  /// True when anything was dropped: what `--strict` turns into an error.
  [[nodiscard]] bool lost_anything() const noexcept { return count(report_entry::kind::dropped) != 0; }
  void append(const conversion_report& other) {
    entries.insert(entries.end(), other.entries.begin(), other.entries.end());
  }

 private:
  void add(report_entry::kind k, std::string what, std::string where, std::string reason, std::uint64_t count) {
    if (count == 0) return;
    entries.push_back({k, std::move(what), std::move(where), std::move(reason), count});
  }
};

[[nodiscard]] constexpr std::string_view name(report_entry::kind k) noexcept {
  switch (k) {
    case report_entry::kind::dropped: return "dropped";
    case report_entry::kind::changed: return "changed";
    case report_entry::kind::info: return "info";
  }
  return "unknown";
}

/// `s` as a scene name must be (a .untold string's rules): valid UTF-8
/// without NULs; invalid bytes become '?', NULs are dropped. Importers pass
/// every name taken from a file through it (and report the names it
/// changed), so the writer never refuses one. Safe on any bytes.
[[nodiscard]] inline std::string sanitized_utf8(std::string_view s) {
  const auto bytes = std::as_bytes(std::span(s.data(), s.size()));
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t len = untold::detail::utf8_sequence_length(bytes, i);
    if (len == 0 || s[i] == '\0') {
      if (s[i] != '\0') out.push_back('?');
      ++i;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

// ---- scene content ------------------------------------------------------------------

struct transform {
  std::array<float, 3> translation{0, 0, 0};
  std::array<float, 4> rotation{0, 0, 0, 1};  // x, y, z, w
  std::array<float, 3> scale{1, 1, 1};

  /// T * R * S as a column-major matrix.
  [[nodiscard]] mat4 matrix() const noexcept {
    const auto [x, y, z, w] = rotation;
    const float xx = x * x, yy = y * y, zz = z * z, xy = x * y, xz = x * z, yz = y * z, wx = w * x, wy = w * y,
                wz = w * z;
    mat4 m{};
    m[0] = (1 - 2 * (yy + zz)) * scale[0];
    m[1] = 2 * (xy + wz) * scale[0];
    m[2] = 2 * (xz - wy) * scale[0];
    m[4] = 2 * (xy - wz) * scale[1];
    m[5] = (1 - 2 * (xx + zz)) * scale[1];
    m[6] = 2 * (yz + wx) * scale[1];
    m[8] = 2 * (xz + wy) * scale[2];
    m[9] = 2 * (yz - wx) * scale[2];
    m[10] = (1 - 2 * (xx + yy)) * scale[2];
    m[12] = translation[0];
    m[13] = translation[1];
    m[14] = translation[2];
    m[15] = 1;
    return m;
  }
};

enum class topology : std::uint8_t { triangle_list, line_list, point_list, triangle_strip, line_strip, triangle_fan };

[[nodiscard]] constexpr std::string_view name(topology t) noexcept {
  switch (t) {
    case topology::triangle_list: return "triangle_list";
    case topology::line_list: return "line_list";
    case topology::point_list: return "point_list";
    case topology::triangle_strip: return "triangle_strip";
    case topology::line_strip: return "line_strip";
    case topology::triangle_fan: return "triangle_fan";
  }
  return "unknown";
}

/// A morph target: per-vertex deltas, dense (one entry per mesh vertex) or
/// empty when the target does not move that attribute.
struct morph_target {
  std::string name{};
  float default_weight = 0;
  std::vector<float> position_deltas{};  // xyz
  std::vector<float> normal_deltas{};    // xyz
  std::vector<float> tangent_deltas{};   // xyz
};

/// A coarser level of detail of a mesh: its own index list over the same
/// vertices, used from `switch_distance` on (or below `screen_coverage`).
struct lod_level {
  float switch_distance = 0;
  std::vector<std::uint32_t> indices{};
};

struct mesh {
  std::string name{};
  topology primitive = topology::triangle_list;
  std::vector<float> positions{};  // xyz (required)
  std::vector<float> normals{};    // xyz
  std::vector<float> tangents{};   // xyzw, w = handedness
  std::vector<float> uv0{};        // uv
  std::vector<float> uv1{};        // uv
  std::vector<std::vector<float>> extra_uvs{};  // uv sets beyond the second
  std::vector<float> colors{};     // rgba (first colour set)
  /// Skinning, one entry per vertex: indices into skins[skin].joints.
  std::vector<std::array<std::uint16_t, 4>> joints{};
  std::vector<std::array<float, 4>> weights{};
  std::vector<std::uint32_t> indices{};  // empty: non-indexed (0, 1, 2, ...)
  std::uint32_t material = no_ref;
  std::uint32_t skin = no_ref;
  std::vector<morph_target> morphs{};
  std::vector<lod_level> lods{};  // levels after LOD0 (this mesh's own indices)
  std::string extras{};  // JSON text (glTF mesh `extras`, on each of its primitives), empty when none

  [[nodiscard]] std::size_t vertex_count() const noexcept { return positions.size() / 3; }
};

struct texture {
  std::string name{};
  std::string uri{};  // relative to the output, '/' separators
  texture_format format = texture_format::unknown;
  std::uint32_t width = 0, height = 0, mip_count = 0;
  bool srgb = false;
  std::vector<std::byte> embedded{};  // image bytes when the source embeds them
};

/// A sampler's wrap mode on one axis (glTF's REPEAT, CLAMP_TO_EDGE,
/// MIRRORED_REPEAT).
enum class wrap_mode : std::uint8_t { repeat, clamp, mirror };

/// A sampler's filter (glTF's magFilter / minFilter; `unset`: the source
/// leaves it to the renderer). Magnification uses nearest or linear only.
enum class texture_filter : std::uint8_t {
  unset,
  nearest,
  linear,
  nearest_mipmap_nearest,
  linear_mipmap_nearest,
  nearest_mipmap_linear,
  linear_mipmap_linear
};

/// A material's use of a texture.
struct texture_slot {
  std::uint32_t texture = no_ref;
  std::uint32_t uv_set = 0;
  std::array<wrap_mode, 2> wrap{wrap_mode::repeat, wrap_mode::repeat};  // u, v (glTF's default: repeat)
  texture_filter mag_filter = texture_filter::unset, min_filter = texture_filter::unset;
  bool has_transform = false;  // KHR_texture_transform
  std::array<float, 2> offset{0, 0}, scale{1, 1};
  float rotation = 0;
  [[nodiscard]] bool used() const noexcept { return texture != no_ref; }
};

enum class alpha_mode : std::uint8_t { opaque, mask, blend };

struct material {
  std::string name{};
  std::array<float, 4> base_color{1, 1, 1, 1};
  std::array<float, 3> emissive{0, 0, 0};
  float emissive_strength = 1;
  float metallic = 1, roughness = 1, normal_scale = 1, occlusion_strength = 1;
  alpha_mode alpha = alpha_mode::opaque;
  float alpha_cutoff = 0.5f;
  bool double_sided = false;
  float transmission = 0;  // KHR_materials_transmission factor
  texture_slot base_color_texture{}, metallic_roughness_texture{}, normal_texture{}, occlusion_texture{}, emissive_texture{};
  /// Source-specific slots with no PBR meaning (Urho3D technique units, UDM
  /// material properties): name -> texture. Writers report them as dropped.
  std::vector<std::pair<std::string, std::uint32_t>> other_textures{};
  std::string extras{};  // JSON text (glTF material `extras`), empty when none
};

struct node {
  std::string name{};
  std::uint32_t parent = no_ref;  // an earlier node, or no_ref for a root
  transform local{};
  std::vector<std::uint32_t> meshes{};  // mesh indices drawn at this node (instancing: several nodes, one mesh)
  std::string extras{};  // JSON text (glTF node `extras`), empty when none
};

struct joint {
  std::string name{};
  std::uint32_t parent = no_ref;  // a joint of the same skeleton, or no_ref
  transform rest{};               // local rest pose relative to the parent joint
  mat4 inverse_bind = identity_matrix;  // skeleton space -> joint space at bind time
};

struct skeleton {
  std::string name{};
  std::uint32_t node = no_ref;  // the node the skeleton hangs under, when known
  std::vector<joint> joints{};
};

struct skin {
  std::uint32_t skeleton = 0;
  /// Skin joint j -> joint index within the skeleton (mesh.joints index this).
  std::vector<std::uint32_t> joints{};
};

enum class anim_path : std::uint8_t { translation, rotation, scale, weights };
enum class interpolation : std::uint8_t { step, linear, cubic_spline };

struct animation_channel {
  std::uint32_t skeleton = no_ref;  // target: a joint of this skeleton ...
  std::uint32_t joint = no_ref;
  std::uint32_t node = no_ref;      // ... or a node
  anim_path path = anim_path::translation;
  interpolation interp = interpolation::linear;
  std::vector<float> times{};   // seconds, non-decreasing
  std::vector<float> values{};  // times.size() x components (3 / 4 xyzw / 3 / morph count)
};

struct animation {
  std::string name{};
  float duration = 0;  // seconds
  std::vector<animation_channel> channels{};
};

enum class light_kind : std::uint8_t { directional, point, spot, area };

struct light {
  std::string name{};
  std::uint32_t node = no_ref;
  light_kind kind = light_kind::point;
  std::array<float, 3> color{1, 1, 1};
  float intensity = 1;  // glTF units: lux (directional), candela (point/spot)
  float range = 0;      // 0 = unbounded
  float inner_cone = 0, outer_cone = 0.7853982f;  // radians
  std::array<float, 2> area_size{0, 0};
};

struct camera {
  std::string name{};
  std::uint32_t node = no_ref;
  bool orthographic = false;
  float yfov = 0.8f;  // radians
  float aspect = 0;   // 0 = from the viewport
  float znear = 0.1f, zfar = 1000;
};

struct scene {
  std::string name{};
  std::vector<node> nodes{};
  std::vector<mesh> meshes{};
  std::vector<material> materials{};
  std::vector<texture> textures{};
  std::vector<skeleton> skeletons{};
  std::vector<skin> skins{};
  std::vector<animation> animations{};
  std::vector<light> lights{};
  std::vector<camera> cameras{};
  conversion_report report{};
};

// ---- shared by the writers ----------------------------------------------------------

namespace detail {

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

/// The skeleton a one-skeleton format writes: the first skinned mesh's,
/// else the first, else no_ref. Precondition: validate_model(s) succeeded.
[[nodiscard]] inline std::uint32_t primary_skeleton(const scene& s) noexcept {
  for (const mesh& m : s.meshes)
    if (m.skin != no_ref) return s.skins[m.skin].skeleton;
  return s.skeletons.empty() ? no_ref : 0;
}

/// Every node's world transform (parents come first: validate_model proved
/// it). Precondition: validate_model(s) succeeded.
[[nodiscard]] inline std::vector<mat4> world_transforms(const scene& s) {
  std::vector<mat4> world(s.nodes.size());
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const mat4 local = s.nodes[i].local.matrix();
    world[i] = s.nodes[i].parent == no_ref ? local : multiply(world[s.nodes[i].parent], local);
  }
  return world;
}

/// The determinant of m's linear part: negative for a mirroring transform,
/// which turns triangle fronts around.
[[nodiscard]] inline float linear_determinant(const mat4& m) noexcept {
  return m[0] * (m[5] * m[10] - m[9] * m[6]) - m[4] * (m[1] * m[10] - m[9] * m[2]) + m[8] * (m[1] * m[6] - m[5] * m[2]);
}

/// Reports the `extras` (application data as JSON text) of the scene's
/// nodes, meshes and materials as dropped: for a writer with no place for
/// them. `reason` says why, e.g. "the .untold format has no place for them".
inline void report_dropped_extras(const scene& s, conversion_report& report, std::string reason) {
  std::uint64_t count = 0;
  for (const node& n : s.nodes) count += !n.extras.empty();
  for (const mesh& m : s.meshes) count += !m.extras.empty();
  for (const material& m : s.materials) count += !m.extras.empty();
  report.dropped("extras", "", std::move(reason), count);
}

}  // namespace detail

/// The bytes a scene's streams hold (vertex streams, indices, skin data,
/// morph deltas, LOD indices, keys), saturating: what a writer given no
/// budget makes its own for (budget.hpp), so that its allocations stay a
/// bounded multiple of the scene it was given. Linear in the scene's lists.
[[nodiscard]] inline std::uint64_t payload_bytes(const scene& s) noexcept {
  const auto product = untold::budget::product;
  const auto sum = untold::budget::sum;
  std::uint64_t bytes = 0;
  for (const mesh& m : s.meshes) {
    bytes = sum(bytes, product(sum(sum(m.positions.size(), m.normals.size()), sum(m.tangents.size(), m.colors.size())),
                               sizeof(float)));
    bytes = sum(bytes, product(sum(m.uv0.size(), m.uv1.size()), sizeof(float)));
    for (const auto& uvs : m.extra_uvs) bytes = sum(bytes, product(uvs.size(), sizeof(float)));
    bytes = sum(bytes, product(sum(m.indices.size(), product(m.joints.size(), 6)), 4));
    for (const morph_target& t : m.morphs)
      bytes = sum(bytes, product(sum(sum(t.position_deltas.size(), t.normal_deltas.size()), t.tangent_deltas.size()),
                                 sizeof(float)));
    for (const lod_level& l : m.lods) bytes = sum(bytes, product(l.indices.size(), 4));
  }
  for (const animation& a : s.animations)
    for (const animation_channel& c : a.channels)
      bytes = sum(bytes, product(sum(c.values.size(), c.times.size()), sizeof(float)));
  return bytes;
}

// ---- checks -------------------------------------------------------------------------

/// Checks the references and stream sizes a writer relies on: node parents
/// earlier in the list, mesh/material/texture/skin/skeleton/joint indices in
/// range, streams whose sizes match the vertex count, indices < vertex count.
/// Errors are errc::invalid_argument with context.field naming the piece,
/// record_index the item, value the offending value. Linear in the scene size.
[[nodiscard]] inline status validate_model(const scene& s) noexcept {
  auto bad = [](const char* field, std::size_t item, std::uint64_t value) {
    return make_error(errc::invalid_argument, {.record_index = static_cast<std::uint32_t>(item), .field = field,
                                               .value = value, .has_value = true});
  };
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const node& n = s.nodes[i];
    if (n.parent != no_ref && n.parent >= i) return bad("node.parent", i, n.parent);
    for (std::uint32_t m : n.meshes)
      if (m >= s.meshes.size()) return bad("node.meshes", i, m);
  }
  for (std::size_t i = 0; i < s.meshes.size(); ++i) {
    const mesh& m = s.meshes[i];
    const std::size_t v = m.vertex_count();
    if (m.positions.size() % 3 != 0) return bad("mesh.positions", i, m.positions.size());
    auto sized = [&](const std::vector<float>& stream, std::size_t components) {
      return stream.empty() || stream.size() == v * components;
    };
    if (!sized(m.normals, 3)) return bad("mesh.normals", i, m.normals.size());
    if (!sized(m.tangents, 4)) return bad("mesh.tangents", i, m.tangents.size());
    if (!sized(m.uv0, 2)) return bad("mesh.uv0", i, m.uv0.size());
    if (!sized(m.uv1, 2)) return bad("mesh.uv1", i, m.uv1.size());
    if (!sized(m.colors, 4)) return bad("mesh.colors", i, m.colors.size());
    for (const auto& uvs : m.extra_uvs)
      if (!sized(uvs, 2)) return bad("mesh.extra_uvs", i, uvs.size());
    if (m.joints.size() != m.weights.size() || (!m.joints.empty() && m.joints.size() != v))
      return bad("mesh.joints", i, m.joints.size());
    if (!m.joints.empty() && m.skin == no_ref) return bad("mesh.skin", i, m.skin);
    if (m.skin != no_ref) {
      if (m.skin >= s.skins.size()) return bad("mesh.skin", i, m.skin);
      const std::size_t palette = s.skins[m.skin].joints.size();
      for (const auto& j : m.joints)
        for (std::uint16_t k : j)
          if (k >= palette) return bad("mesh.joints", i, k);
    }
    if (m.material != no_ref && m.material >= s.materials.size()) return bad("mesh.material", i, m.material);
    if (!untold::detail::values_below(m.indices, v))  // the loop names the first bad index
      for (std::uint32_t idx : m.indices)
        if (idx >= v) return bad("mesh.indices", i, idx);
    for (const lod_level& l : m.lods)
      for (std::uint32_t idx : l.indices)
        if (idx >= v) return bad("mesh.lods.indices", i, idx);
    for (const morph_target& t : m.morphs)
      if (!sized(t.position_deltas, 3) || !sized(t.normal_deltas, 3) || !sized(t.tangent_deltas, 3))
        return bad("mesh.morphs", i, t.position_deltas.size());
  }
  for (std::size_t i = 0; i < s.materials.size(); ++i) {
    const material& m = s.materials[i];
    for (const texture_slot* t : {&m.base_color_texture, &m.metallic_roughness_texture, &m.normal_texture,
                                  &m.occlusion_texture, &m.emissive_texture})
      if (t->used() && t->texture >= s.textures.size()) return bad("material.texture", i, t->texture);
    for (const auto& [slot, t] : m.other_textures)
      if (t >= s.textures.size()) return bad("material.other_textures", i, t);
  }
  for (std::size_t i = 0; i < s.skeletons.size(); ++i) {
    const skeleton& k = s.skeletons[i];
    if (k.node != no_ref && k.node >= s.nodes.size()) return bad("skeleton.node", i, k.node);
    // Parents must come earlier: a single forward pass then proves there is no cycle.
    for (std::size_t j = 0; j < k.joints.size(); ++j)
      if (k.joints[j].parent != no_ref && k.joints[j].parent >= j) return bad("skeleton.joints.parent", i, j);
  }
  for (std::size_t i = 0; i < s.skins.size(); ++i) {
    const skin& k = s.skins[i];
    if (k.skeleton >= s.skeletons.size()) return bad("skin.skeleton", i, k.skeleton);
    for (std::uint32_t j : k.joints)
      if (j >= s.skeletons[k.skeleton].joints.size()) return bad("skin.joints", i, j);
  }
  for (std::size_t i = 0; i < s.animations.size(); ++i) {
    for (const animation_channel& c : s.animations[i].channels) {
      if (c.skeleton != no_ref) {
        if (c.skeleton >= s.skeletons.size() || c.joint >= s.skeletons[c.skeleton].joints.size())
          return bad("animation.channel.joint", i, c.joint);
      } else if (c.node >= s.nodes.size()) {
        return bad("animation.channel.node", i, c.node);
      }
      const std::size_t components = c.path == anim_path::rotation ? 4 : 3;
      if (c.path != anim_path::weights && c.values.size() != c.times.size() * components *
                                                               (c.interp == interpolation::cubic_spline ? 3 : 1))
        return bad("animation.channel.values", i, c.values.size());
    }
  }
  for (std::size_t i = 0; i < s.lights.size(); ++i)
    if (s.lights[i].node != no_ref && s.lights[i].node >= s.nodes.size()) return bad("light.node", i, s.lights[i].node);
  for (std::size_t i = 0; i < s.cameras.size(); ++i)
    if (s.cameras[i].node != no_ref && s.cameras[i].node >= s.nodes.size())
      return bad("camera.node", i, s.cameras[i].node);
  return {};
}

}  // namespace untold::convert
