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
//   node -> entity (local TRS -> localTransform). A mesh drawn by several
//   nodes gets a mesh record per node, all referencing one stored vertex/
//   index range (instancing; meshes with identical encoded bytes share one
//   too; `info` entries count them); a mesh drawn by no node gets its own
//   entity.
//   mesh -> PBR_STATIC_V1 vertices (positions, normals, tangents, uv0, uv1,
//   colour) + indices; strips and fans become lists (`changed`); lines and
//   points are `dropped`; extra UV sets are `dropped`; the UV set a
//   material's textures all sample becomes uv0 and a texture transform they
//   share is baked into it (`changed`, else `dropped`); UVs beyond binary16
//   are clamped (`dropped`), or with uv_wrap shifted by whole units where
//   the samplers keep the same sampling (`changed`); rounding beyond
//   uv_precision_tolerance is reported; clamp/mirror samplers are `dropped`
//   (no sampler state in the texture record), and so are sampler filters;
//   node, mesh and material extras are `dropped`. Morph targets -> morph target
//   tables (position and normal deltas). LOD levels go to separate
//   fileType-lod files.
//   material -> material record: base colour/metallic-roughness/normal/
//   occlusion/emissive textures (metallic from B and roughness from G of a
//   glTF metallic-roughness texture); emissive strength is multiplied into
//   the factor (`changed`); alpha mode (flags bits 0-1), alpha cutoff and
//   transmission are written; double-sided sets flags bit 2 (untold's
//   documented convention, material_flags::double_sided).
//   texture -> texture record; with embed_images, image bytes the scene
//   carries go to the untold.images chunk (images.hpp) and the URI is
//   "#name".
//   skeleton -> skeleton + joints: jointPath = names from the root joined by
//   '/' (a chain deeper than limits.max_depth, or paths beyond the budget,
//   is R-LIMITS), bindTransform = the joint's bind pose in skeleton space (the inverse
//   of the inverse bind matrix), restTransform = local rest pose.
//   skin -> skin table (palette, 4 joints + weights per vertex).
//   animation -> clip with one channel per joint (translation and rotation
//   keys; cubic splines keep their key values, step becomes linear, both
//   `changed`); scale, morph-weight and node channels are `dropped`.
//   untold_content selects a fileType-animation file with the clips only,
//   or everything but the clips.
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
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../budget.hpp"
#include "../error.hpp"
#include "../format.hpp"
#include "../matrix.hpp"
#include "../packing.hpp"
#include "../vertex.hpp"
#include "../images.hpp"
#include "../writer.hpp"
#include "model.hpp"

namespace untold::convert {

/// Which parts of the scene a file holds.
enum class untold_content : std::uint8_t {
  everything,          // geometry, materials, extensions and animation clips
  without_animations,  // everything but the clips (they go to animation files)
  animations_only,     // a fileType-animation file: clips, channels, keyframes
};

struct to_untold_options {
  untold::file_type type = untold::file_type::tile;  // animations_only always writes fileType animation
  write_options write{};
  /// Write one fileType-lod file per LOD level the meshes carry.
  bool lod_files = true;
  /// k >= 1: make LOD file k alone (the main file is not built: `file` stays
  /// empty and `lod_files` holds that one file, or nothing when no mesh has
  /// k levels). A mesh with fewer levels is written at its coarsest, as in
  /// the full set; a distributed cook writes each level in its own job.
  std::size_t only_lod_level = 0;
  untold_content content = untold_content::everything;
  /// Instancing: a mesh drawn by several nodes, and meshes whose encoded
  /// vertices and indices are identical, store their bytes once; every
  /// drawing entity gets a mesh record referencing them.
  bool share_geometry = true;
  /// Store the image bytes of textures that carry them (texture::embedded)
  /// in the file's untold.images chunk (images.hpp; an untold convention),
  /// the texture URI naming them "#name" (name = texture::uri, else
  /// "imageN"). Off: such a texture is referenced by its uri (the caller
  /// writes the image there), or dropped when it has none.
  bool embed_images = false;
  /// UVs beyond the half-float range: shift them by whole units (only where
  /// that keeps the sampling: every texture the mesh's material samples
  /// repeats on that axis, or mirrors and the shift is even). Off, or where
  /// sampling would change: clamp, reported as dropped.
  bool uv_wrap = false;
  /// limits.max_depth caps joint chains (a joint path repeats every
  /// ancestor's name): R-LIMITS beyond it.
  untold::limits limits{};
  /// The input's budget (budget.hpp), shared with the importer that built
  /// the scene: the joint paths are charged to it (memory and output)
  /// before they are built. None: one made from `limits` (its floors).
  untold::budget* budget = nullptr;
};

/// Largest UV rounding error (in UV units) the half-float encoding may add
/// before cook reports it: half a texel of a 1024-pixel texture. UVs in
/// (-2, 2) always stay within it.
inline constexpr double uv_precision_tolerance = 1.0 / 2048.0;

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

[[nodiscard]] inline bool same_transform(const texture_slot& a, const texture_slot& b) noexcept {
  return a.has_transform == b.has_transform &&
         (!a.has_transform || (a.offset == b.offset && a.scale == b.scale && a.rotation == b.rotation));
}

/// The UV streams a mesh is written with: the set its material's textures
/// sample moved into uv0, a KHR_texture_transform shared by all of them baked
/// in, and values outside the half-float range shifted by whole units (with
/// options.uv_wrap, where the samplers make that the same sampling) or
/// clamped. Every step is reported.
struct prepared_uvs {
  std::vector<float> uv0, uv1;
};

/// The shift by whole units that brings [lo, hi] into the binary16 range
/// without changing what the slots' samplers fetch on `axis`: any whole
/// number under repeat, an even one under mirror, none under clamp. No
/// slots: nothing samples the set, any shift. nullopt when none fits.
[[nodiscard]] inline std::optional<double> sampling_preserving_shift(std::span<const texture_slot* const> slots,
                                                                     std::size_t axis, double lo, double hi) {
  bool even = false;
  for (const texture_slot* t : slots) {
    if (t->wrap[axis] == wrap_mode::clamp) return std::nullopt;
    even = even || t->wrap[axis] == wrap_mode::mirror;
  }
  const double step = even ? 2.0 : 1.0;
  const double shift = std::floor((lo + hi) / 2 / step) * step;
  if (lo - shift < -half_max || hi - shift > half_max) return std::nullopt;
  return shift;
}

[[nodiscard]] inline prepared_uvs prepare_uvs(const scene& s, const mesh& m, const std::string& where,
                                              const to_untold_options& options, conversion_report& report) {
  prepared_uvs out{m.uv0, m.uv1};
  std::vector<const texture_slot*> slots;  // the textures the mesh's material samples
  if (m.material != no_ref) {
    const material& mat = s.materials[m.material];
    for (const texture_slot* t : {&mat.base_color_texture, &mat.metallic_roughness_texture, &mat.normal_texture,
                                  &mat.occlusion_texture, &mat.emissive_texture})
      if (t->used()) slots.push_back(t);
    if (!slots.empty()) {
      const std::uint32_t set = slots.front()->uv_set;
      const bool one_set = std::all_of(slots.begin(), slots.end(), [&](const texture_slot* t) { return t->uv_set == set; });
      const std::vector<float>* source = set == 0   ? &m.uv0
                                         : set == 1 ? &m.uv1
                                         : set - 2 < m.extra_uvs.size() ? &m.extra_uvs[set - 2]
                                                                        : nullptr;
      if (one_set && set != 0 && source != nullptr && !source->empty()) {
        out.uv1 = m.uv0;
        out.uv0 = *source;
        report.changed("texture uv set", where, "the material samples uv set " + std::to_string(set) +
                                                    " only: it is written as uv0 (the old uv0 as uv1)");
      } else if (!one_set) {
        std::uint64_t other = 0;
        for (const texture_slot* t : slots) other += t->uv_set != 0;
        report.dropped("texture uv set", where, "the material's textures sample different uv sets; textures sample uv0",
                       other);
      }
      const bool one_transform = std::all_of(slots.begin(), slots.end(),
                                             [&](const texture_slot* t) { return same_transform(*t, *slots.front()); });
      const texture_slot& t = *slots.front();
      if (one_transform && t.has_transform && one_set) {
        // KHR_texture_transform: uv' = T * R * S * uv.
        const float c = std::cos(t.rotation), sn = std::sin(t.rotation);
        for (std::size_t i = 0; i + 1 < out.uv0.size(); i += 2) {
          const float u = out.uv0[i] * t.scale[0], v = out.uv0[i + 1] * t.scale[1];
          out.uv0[i] = c * u + sn * v + t.offset[0];
          out.uv0[i + 1] = -sn * u + c * v + t.offset[1];
        }
        report.changed("texture transform", where, "the same for every texture of the material: baked into uv0");
      } else if (!one_transform || (t.has_transform && !one_set)) {
        std::uint64_t with = 0;
        for (const texture_slot* x : slots) with += x->has_transform;
        report.dropped("texture transform", where, "differs between the material's textures; no per-texture field", with);
      }
    }
  }
  // Half-float range and precision.
  for (std::vector<float>* uv : {&out.uv0, &out.uv1}) {
    if (uv->empty()) continue;
    const char* set = uv == &out.uv0 ? "uv0" : "uv1";
    for (std::size_t axis = 0; axis < 2; ++axis) {
      float lo = (*uv)[axis], hi = (*uv)[axis];
      for (std::size_t i = axis; i < uv->size(); i += 2) {
        if (!untold::detail::is_finite((*uv)[i])) continue;
        lo = std::min(lo, (*uv)[i]);
        hi = std::max(hi, (*uv)[i]);
      }
      if (!(lo < -half_max || hi > half_max)) continue;
      // Samplers of the slots that sample this set (uv0 after the moves above; uv1 none).
      const std::span<const texture_slot* const> sampling =
          uv == &out.uv0 ? std::span<const texture_slot* const>(slots) : std::span<const texture_slot* const>();
      const auto shift = options.uv_wrap ? sampling_preserving_shift(sampling, axis, lo, hi) : std::nullopt;
      if (shift) {
        for (std::size_t i = axis; i < uv->size(); i += 2) (*uv)[i] = static_cast<float>((*uv)[i] - *shift);
        report.changed(std::string(set) + " range", where,
                       "beyond the half-float range; shifted by " + std::to_string(static_cast<long long>(*shift)) +
                           " (--uv-wrap: the samplers " + (sampling.empty() ? "do not sample it" : "wrap, the same sampling") +
                           ")");
      } else {
        std::uint64_t clamped = 0;
        for (std::size_t i = axis; i < uv->size(); i += 2) {
          const float v = std::clamp((*uv)[i], static_cast<float>(-half_max), static_cast<float>(half_max));
          clamped += v != (*uv)[i];
          (*uv)[i] = v;
        }
        report.dropped(std::string(set) + " range", where,
                       !options.uv_wrap ? "beyond the half-float range: values clamped (--uv-wrap shifts by whole units "
                                          "where the samplers repeat)"
                                        : "beyond the half-float range: values clamped (no whole-unit shift keeps the "
                                          "sampling: a clamping sampler, or the values span more than the range)",
                       clamped);
      }
    }
    std::uint64_t imprecise = 0;
    double worst = 0;
    for (const float v : *uv) {
      if (!untold::detail::is_finite(v)) continue;
      const double err = std::fabs(static_cast<double>(half_to_float(float_to_half_raw(v))) - v);
      if (err > uv_precision_tolerance) {
        ++imprecise;
        worst = std::max(worst, err);
      }
    }
    if (imprecise > 0)
      report.changed(std::string(set) + " precision", where,
                     "half-float rounding exceeds 1/2048 (max error " + std::to_string(worst) + ")", imprecise);
  }
  return out;
}

/// The name each texture's image gets in the untold.images chunk ("" = not
/// embedded): its uri, else "imageN"; a name another image already took
/// gets "_N" before its extension. Textures with the same name and the same
/// bytes share one image.
[[nodiscard]] inline std::vector<std::string> embedded_names(const scene& s, const to_untold_options& options) {
  std::vector<std::string> names(s.textures.size());
  if (!options.embed_images) return names;
  std::unordered_map<std::string, std::size_t> owner;  // name -> the texture whose bytes it holds
  for (std::size_t i = 0; i < s.textures.size(); ++i) {
    const texture& t = s.textures[i];
    if (t.embedded.empty()) continue;
    const std::string base = t.uri.empty() || !is_valid_plugin_id(t.uri) ? "image" + std::to_string(i) : t.uri;
    std::string name = base;
    for (int n = 1;; ++n) {
      const auto it = owner.find(name);
      if (it == owner.end() || s.textures[it->second].embedded == t.embedded) break;
      const std::size_t dot = base.rfind('.');
      const std::size_t cut = dot == std::string::npos || dot == 0 || base.find('/', dot) != std::string::npos
                                  ? base.size() : dot;
      name = base.substr(0, cut) + "_" + std::to_string(n) + base.substr(cut);
    }
    owner.emplace(name, i);
    names[i] = std::move(name);
  }
  return names;
}

/// Geometry already given to the builder, found by content for instancing.
class geometry_pool {
 public:
  /// The mesh handle storing exactly these bytes, or none.
  [[nodiscard]] std::uint32_t find(const std::vector<std::byte>& vertices, const std::vector<std::uint32_t>& indices) const {
    const auto range = entries_.equal_range(key(vertices, indices));
    for (auto it = range.first; it != range.second; ++it)
      if (it->second.vertices == vertices && it->second.indices == indices) return it->second.handle;
    return none;
  }
  void add(std::vector<std::byte> vertices, std::vector<std::uint32_t> indices, std::uint32_t handle) {
    const std::size_t k = key(vertices, indices);
    entries_.emplace(k, entry{std::move(vertices), std::move(indices), handle});
  }

 private:
  struct entry {
    std::vector<std::byte> vertices;
    std::vector<std::uint32_t> indices;
    std::uint32_t handle = none;
  };
  static std::size_t key(const std::vector<std::byte>& v, const std::vector<std::uint32_t>& i) {
    const std::size_t a = std::hash<std::string_view>{}(
        std::string_view(reinterpret_cast<const char*>(v.data()), v.size()));
    const std::size_t b = std::hash<std::string_view>{}(
        std::string_view(reinterpret_cast<const char*>(i.data()), i.size() * sizeof(std::uint32_t)));
    return a ^ (b * 0x9E3779B97F4A7C15ull);
  }
  std::unordered_multimap<std::size_t, entry> entries_;
};

}  // namespace detail

/// Writes `s` as a .untold file (and LOD files). Everything the format cannot
/// hold is appended to `report`. Errors: validate_model's, and the builder's
/// (errc::invalid_argument with the table, record and field).
[[nodiscard]] inline result<untold_output> to_untold(const scene& s, const to_untold_options& options,
                                                     conversion_report& report) {
  UNTOLD_TRY(validate_model(s));
  const bool geometry = options.content != untold_content::animations_only;
  const bool clips = options.content != untold_content::without_animations;

  // ---- what a whole-scene pass can tell up front -----------------------------------
  std::size_t lod_levels = 0;
  for (std::size_t i = 0; i < s.meshes.size() && geometry; ++i) {
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
    if (m.extra_uvs.size() > 0) {
      // A material sampling only an extra set gets it as uv0 (prepare_uvs); the rest is a loss.
      report.dropped("uv sets beyond the second", where, "PBR_STATIC_V1 has uv0 and uv1", m.extra_uvs.size());
    }
    std::uint64_t tangent_deltas = 0, weights = 0;
    for (const morph_target& t : m.morphs) {
      tangent_deltas += !t.tangent_deltas.empty();
      weights += t.default_weight != 0.0f;
    }
    if (m.primitive == topology::line_list || m.primitive == topology::line_strip || m.primitive == topology::point_list)
      report.dropped("morph targets", where, "their mesh is not written", m.morphs.size());
    report.dropped("morph tangent deltas", where, "morph targets store position and normal deltas", tangent_deltas);
    report.dropped("morph default weights", where, "the morph target table has no weight field", weights);
    if (!m.joints.empty() && m.skin == no_ref) report.dropped("joint weights", where, "no skin", m.vertex_count());
    if (!options.lod_files && !m.lods.empty()) report.dropped("LOD levels", where, "LOD files not requested", m.lods.size());
    lod_levels = std::max(lod_levels, m.lods.size());
  }
  for (std::size_t i = 0; i < s.materials.size() && geometry; ++i) {
    const material& m = s.materials[i];
    const std::string where = detail::quoted("material", m.name, i);
    if (m.emissive_strength != 1.0f)
      report.changed("emissive strength", where, "multiplied into emissiveFactor");
    if (!m.other_textures.empty())
      report.dropped("other texture slots", where, "no matching PBR slot", m.other_textures.size());
    std::uint64_t not_repeat = 0;
    for (const texture_slot* t : {&m.base_color_texture, &m.metallic_roughness_texture, &m.normal_texture,
                                  &m.occlusion_texture, &m.emissive_texture})
      not_repeat += t->used() && (t->wrap[0] != wrap_mode::repeat || t->wrap[1] != wrap_mode::repeat);
    report.dropped("clamp/mirror sampler wrap", where, "the texture record has no sampler state", not_repeat);
    std::uint64_t filtered = 0;
    for (const texture_slot* t : {&m.base_color_texture, &m.metallic_roughness_texture, &m.normal_texture,
                                  &m.occlusion_texture, &m.emissive_texture})
      filtered += t->used() && (t->mag_filter != texture_filter::unset || t->min_filter != texture_filter::unset);
    report.dropped("sampler filters", where, "the texture record has no sampler state", filtered);
  }
  if (geometry) detail::report_dropped_extras(s, report, "the .untold records have no place for application data");
  for (std::size_t i = 0; i < s.textures.size() && geometry; ++i)
    if (s.textures[i].uri.empty() && (!options.embed_images || s.textures[i].embedded.empty()))
      report.dropped("embedded image", detail::quoted("texture", s.textures[i].name, i),
                     "textures are referenced by URI; write the image next to the output first or embed it");
  if (!geometry) {
    const std::size_t left_out = s.meshes.size() + s.lights.size() + s.cameras.size() + s.skeletons.size();
    report.info("scene content other than animation clips", "", "not written to an animation file", left_out);
  }
  if (!clips) report.info("animation clips", "", "written to separate animation files", s.animations.size());

  // ---- world transforms of the nodes (parents come first) ---------------------------
  std::vector<mat4> world(s.nodes.size());
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const mat4 local = s.nodes[i].local.matrix();
    world[i] = s.nodes[i].parent == no_ref ? local : multiply(world[s.nodes[i].parent], local);
  }

  // Joint paths: names from the root joined by '/' (how channels address
  // joints). A path repeats its ancestors' names, so a chain is capped at
  // limits.max_depth and the paths' total size is charged to the budget
  // before one is built: a deep chain of long names cannot make them
  // quadratic. validate_model proved parents come first.
  untold::budget own_budget(options.limits, 0);
  untold::budget& budget = untold::budget::own_or_shared(options.budget, own_budget);
  std::vector<std::vector<std::string>> joint_paths(s.skeletons.size());
  for (std::size_t k = 0; k < s.skeletons.size(); ++k) {
    const skeleton& sk = s.skeletons[k];
    const auto own_name = [&sk](std::size_t j) {
      return sk.joints[j].name.empty() ? "joint" + std::to_string(j) : sk.joints[j].name;
    };
    std::vector<std::uint64_t> length(sk.joints.size());
    std::vector<std::uint32_t> depth(sk.joints.size(), 0);
    std::uint64_t total = 0;
    for (std::size_t j = 0; j < sk.joints.size(); ++j) {
      const joint& jt = sk.joints[j];
      const std::uint64_t own = jt.name.empty() ? own_name(j).size() : jt.name.size();
      length[j] = jt.parent == no_ref ? own : length[jt.parent] + 1 + own;
      depth[j] = jt.parent == no_ref ? 0 : depth[jt.parent] + 1;
      if (depth[j] > options.limits.max_depth)
        return make_error(errc::limit_exceeded).at_field("joint depth").with_value(depth[j])
            .with_limit(options.limits.max_depth).at_record(j).with_subject(jt.name);
      total = untold::budget::sum(total, length[j]);
    }
    UNTOLD_TRY(budget.charge_memory(total, "joint paths", errc::limit_exceeded));
    UNTOLD_TRY(budget.charge_output(total, "joint paths", errc::limit_exceeded));
    auto& paths = joint_paths[k];
    paths.resize(sk.joints.size());
    for (std::size_t j = 0; j < sk.joints.size(); ++j) {
      const joint& jt = sk.joints[j];
      paths[j].reserve(length[j]);
      if (jt.parent != no_ref) paths[j].append(paths[jt.parent]).append("/");
      paths[j].append(own_name(j));
    }
  }

  // ---- one builder per output file ----------------------------------------------------
  std::vector<std::vector<std::uint32_t>> drawn_by(s.meshes.size());
  for (std::uint32_t n = 0; n < s.nodes.size(); ++n)
    for (std::uint32_t m : s.nodes[n].meshes) drawn_by[m].push_back(n);
  // UV streams per mesh, prepared (and reported) once for every file.
  std::vector<detail::prepared_uvs> uvs(geometry ? s.meshes.size() : 0);
  for (std::size_t i = 0; i < uvs.size(); ++i)
    uvs[i] = detail::prepare_uvs(s, s.meshes[i], detail::quoted("mesh", s.meshes[i].name, i), options, report);
  std::uint64_t shared_records = 0, identical_meshes = 0;

  const auto build = [&](untold::file_type type, std::size_t lod, bool with_extensions) -> result<std::vector<std::byte>> {
    builder b{type};
    std::vector<std::uint32_t> entities(s.nodes.size());
    std::vector<std::vector<std::uint32_t>> mesh_handles(s.meshes.size());
    if (geometry) {
      std::vector<std::uint32_t> textures(s.textures.size(), none);
      const std::vector<std::string> names = detail::embedded_names(s, options);
      std::vector<embedded_image> images;
      for (std::size_t i = 0; i < s.textures.size(); ++i) {
        const texture& t = s.textures[i];
        const bool embed = !names[i].empty();
        if (t.uri.empty() && !embed) continue;
        const std::string uri = embed ? embedded_image_uri(names[i]) : t.uri;
        textures[i] = b.add_texture({.name = t.name, .uri = uri, .format = t.format,
                                     .flags = t.srgb ? 1u : 0u, .width = t.width, .height = t.height,
                                     .mip_count = t.mip_count});
        const bool stored = std::any_of(images.begin(), images.end(),
                                        [&](const embedded_image& e) { return e.name == names[i]; });
        if (embed && !stored) images.push_back({names[i], t.embedded});
      }
      if (!images.empty()) {
        auto body = encode_images_chunk(images);
        if (!body) return body.error();
        b.add_plugin_chunk(images_plugin_id, images_chunk_kind, images_chunk_version, *body, images_chunk_type);
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
        d.alpha_mode = m.alpha == alpha_mode::mask    ? untold::alpha_mode::mask
                       : m.alpha == alpha_mode::blend ? untold::alpha_mode::blend
                                                      : untold::alpha_mode::opaque;
        d.transmission_factor = m.transmission;
        d.double_sided = m.double_sided;  // flags bit 2, untold's convention
        materials[i] = b.add_material(d);
      }

      for (std::size_t i = 0; i < s.nodes.size(); ++i) {
        const node& n = s.nodes[i];
        entities[i] = b.add_entity({.name = n.name, .parent = n.parent == no_ref ? none : entities[n.parent],
                                    .local_transform = n.local.matrix()});
      }

      // Meshes, at the node(s) that draw them; geometry stored once (instancing).
      detail::geometry_pool pool;
      for (std::size_t i = 0; i < s.meshes.size(); ++i) {
        const mesh& m = s.meshes[i];
        if (m.primitive == topology::line_list || m.primitive == topology::line_strip ||
            m.primitive == topology::point_list || m.vertex_count() == 0)
          continue;
        const std::span<const std::uint32_t> source =
            lod == 0 || m.lods.empty() ? std::span<const std::uint32_t>(m.indices)
                                       : std::span<const std::uint32_t>(m.lods[std::min(lod, m.lods.size()) - 1].indices);
        std::vector<std::uint32_t> indices = detail::triangle_list(m, source);
        auto vertices = encode_pbr_vertices(pbr_vertex_input{.positions = m.positions, .normals = m.normals,
                                                             .tangents = m.tangents, .uv0 = uvs[i].uv0,
                                                             .uv1 = uvs[i].uv1, .colors = m.colors});
        if (!vertices) {
          error e = vertices.error();
          e.context.chunk_type = static_cast<std::uint32_t>(chunk_type::mesh_table);
          e.context.record_index = static_cast<std::uint32_t>(i);
          return e;
        }
        std::vector<std::uint32_t> at = drawn_by[i];
        if (at.empty()) at.push_back(no_ref);  // an entity of its own
        std::uint32_t owner = options.share_geometry ? pool.find(*vertices, indices) : none;
        if (owner != none && lod == 0) ++identical_meshes;
        for (std::uint32_t n : at) {
          const std::uint32_t entity = n == no_ref ? b.add_entity({.name = m.name}) : entities[n];
          const std::uint32_t material = m.material == no_ref ? none : materials[m.material];
          if (owner != none) {
            mesh_handles[i].push_back(b.add_mesh({.entity = entity, .name = m.name, .material = material,
                                                  .geometry_of = owner}));
            shared_records += lod == 0;
            continue;
          }
          const std::uint32_t handle =
              b.add_mesh({.entity = entity, .name = m.name, .material = material, .vertices = *vertices, .indices = indices});
          mesh_handles[i].push_back(handle);
          if (options.share_geometry) {
            owner = handle;
            pool.add(std::move(*vertices), std::move(indices), handle);
          }
        }
      }
    }
    // Morph targets follow every mesh record of their mesh (position and normal deltas).
    for (std::size_t i = 0; i < s.meshes.size() && geometry; ++i) {
      const mesh& m = s.meshes[i];
      if (m.morphs.empty() || mesh_handles[i].empty()) continue;
      std::vector<std::vector<float3>> positions(m.morphs.size()), normals(m.morphs.size());
      std::vector<morph_target_desc> targets(m.morphs.size());
      for (std::size_t t = 0; t < m.morphs.size(); ++t) {
        const morph_target& mt = m.morphs[t];
        const auto as_float3 = [&](const std::vector<float>& flat, std::vector<float3>& out) {
          if (flat.empty() && &out == &positions[t]) out.assign(m.vertex_count(), float3{0, 0, 0});
          for (std::size_t v = 0; v + 2 < flat.size(); v += 3) out.push_back({flat[v], flat[v + 1], flat[v + 2]});
        };
        as_float3(mt.position_deltas, positions[t]);
        as_float3(mt.normal_deltas, normals[t]);
        targets[t] = {.name = mt.name, .positions = positions[t], .normals = normals[t]};
      }
      for (const std::uint32_t handle : mesh_handles[i]) b.add_morph_targets(handle, targets);
    }
    if (!with_extensions) return b.finish(options.write);

    std::vector<std::uint32_t> skeletons(s.skeletons.size());
    for (std::size_t k = 0; k < s.skeletons.size() && geometry; ++k) {
      const skeleton& sk = s.skeletons[k];
      std::vector<skeleton_joint_desc> joints(sk.joints.size());
      for (std::size_t j = 0; j < sk.joints.size(); ++j) {
        const joint& jt = sk.joints[j];
        // bindTransform: the bind pose in skeleton space, the inverse of the inverse bind matrix.
        joints[j] = {.path = joint_paths[k][j], .parent = jt.parent == no_ref ? none : jt.parent,
                     .bind_transform = inverse_affine(jt.inverse_bind), .rest_transform = jt.rest.matrix()};
      }
      const std::uint32_t entity = sk.node != no_ref ? entities[sk.node] : b.add_entity({.name = sk.name});
      skeletons[k] = b.add_skeleton({.name = sk.name, .entity = entity, .joints = joints});
    }
    for (std::size_t i = 0; i < s.meshes.size() && geometry; ++i) {
      const mesh& m = s.meshes[i];
      if (m.skin == no_ref) continue;
      const skin& sk = s.skins[m.skin];
      std::vector<float4> weights(m.weights.begin(), m.weights.end());
      for (std::uint32_t handle : mesh_handles[i])
        b.add_skin({.mesh = handle, .skeleton = skeletons[sk.skeleton], .joints = sk.joints,
                    .joint_indices = m.joints, .joint_weights = weights});
    }

    for (std::size_t a = 0; a < s.animations.size() && clips; ++a) {
      const animation& anim = s.animations[a];
      const std::string where = detail::quoted("clip", anim.name, a);
      // One channel per joint, with its translation and rotation keys.
      struct joint_keys {
        std::uint32_t skeleton, joint;
        std::vector<translation_keyframe_record> translations;
        std::vector<rotation_keyframe_record> rotations;
      };
      std::vector<joint_keys> per_joint;
      std::unordered_map<std::uint64_t, std::size_t> slot_of;  // (skeleton, joint) -> per_joint index
      std::uint64_t dropped_scale = 0, dropped_weights = 0, dropped_node = 0, cubic = 0, step = 0, merged = 0;
      std::uint64_t scale_keys = 0, weight_keys = 0;
      for (const animation_channel& c : anim.channels) {
        if (c.path == anim_path::weights) { ++dropped_weights; weight_keys += c.times.size(); continue; }
        if (c.skeleton == no_ref) { ++dropped_node; continue; }
        if (c.path == anim_path::scale) { ++dropped_scale; scale_keys += c.times.size(); continue; }
        cubic += c.interp == interpolation::cubic_spline;
        step += c.interp == interpolation::step;
        const auto [slot, added] =
            slot_of.try_emplace((std::uint64_t{c.skeleton} << 32) | c.joint, per_joint.size());
        if (added) per_joint.push_back(joint_keys{c.skeleton, c.joint, {}, {}});
        const auto it = per_joint.begin() + static_cast<std::ptrdiff_t>(slot->second);
        auto& list_t = it->translations;
        auto& list_r = it->rotations;
        if ((c.path == anim_path::translation && !list_t.empty()) || (c.path == anim_path::rotation && !list_r.empty())) {
          ++merged;  // a second channel of the same path on one joint: the first is kept
          continue;
        }
        // Cubic splines store (in-tangent, value, out-tangent) per key: keep the value.
        const std::size_t width = c.path == anim_path::rotation ? 4 : 3;
        const std::size_t stride = width * (c.interp == interpolation::cubic_spline ? 3 : 1);
        const std::size_t skip = c.interp == interpolation::cubic_spline ? width : 0;
        for (std::size_t k = 0; k < c.times.size(); ++k) {
          const float* v = c.values.data() + k * stride + skip;
          if (c.path == anim_path::translation) list_t.push_back({c.times[k], v[0], v[1], v[2], 0});
          else list_r.push_back({c.times[k], v[0], v[1], v[2], v[3]});
        }
      }
      std::vector<animation_channel_desc> channels;
      channels.reserve(per_joint.size());
      for (const joint_keys& k : per_joint)
        channels.push_back({.joint_path = joint_paths[k.skeleton][k.joint], .translations = k.translations,
                            .rotations = k.rotations});
      report.dropped("scale channels", where,
                     "the format animates translation and rotation only (" + std::to_string(scale_keys) + " keyframes)",
                     dropped_scale);
      report.dropped("morph weight channels", where,
                     "channels animate joints; morph targets have no weight keyframes (" + std::to_string(weight_keys) +
                         " keyframes)", dropped_weights);
      report.dropped("node channels", where, "channels address skeleton joints by path", dropped_node);
      report.dropped("duplicate channels", where, "a second channel of one path on one joint", merged);
      report.changed("cubic-spline channels", where, "key values kept, tangents dropped (linear)", cubic);
      report.changed("step channels", where, "played back as linear", step);
      b.add_animation_clip({.name = anim.name, .channels = channels, .duration = anim.duration});
    }

    for (std::size_t i = 0; i < s.lights.size() && geometry; ++i) {
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
    for (std::size_t i = 0; i < s.cameras.size() && geometry; ++i) {
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
  if (options.only_lod_level > 0) {
    if (geometry && options.only_lod_level <= lod_levels) {
      auto lod = build(untold::file_type::lod, options.only_lod_level, false);
      if (!lod) return lod.error();
      out.lod_files.push_back(std::move(*lod));
    }
    return out;
  }
  auto main = build(geometry ? options.type : untold::file_type::animation, 0, true);
  if (!main) return main.error();
  out.file = std::move(*main);
  report.info("instanced meshes", "", "geometry stored once, referenced by further mesh records", shared_records);
  report.info("identical meshes", "", "same vertices and indices as an earlier mesh: stored once", identical_meshes);
  if (options.lod_files && geometry) {
    for (std::size_t level = 1; level <= lod_levels; ++level) {
      auto lod = build(untold::file_type::lod, level, false);
      if (!lod) return lod.error();
      out.lod_files.push_back(std::move(*lod));
    }
  }
  return out;
}

}  // namespace untold::convert
