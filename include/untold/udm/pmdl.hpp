// untold/udm/pmdl.hpp - Pragma models (".pmdl_b": a UDM document with
// assetType "PMDL"): zero-copy extraction of mesh groups, meshes, sub-meshes,
// skeleton, materials and animations, and the importer into the neutral
// scene model (untold::convert::scene) that `untold cook` writes as .untold.
//
// Reads (paths under assetData, see docs/udm.md):
//   meshGroups/<group>/meshes[]/subMeshes[] - nested "PMESH" assets whose
//     assetData holds vertices (Array/ArrayLz4 of Struct with Vector3 pos,
//     Vector2 uv, Vector3 n, Vector4 t), indices (UInt16 or UInt32),
//     optional vertexWeights (Struct {Vector4i id, Vector4 w}),
//     extendedVertexWeights, uvSets (<name>: Vector2 values), pose
//     (ScaledTransform), geometryType, skinMaterialIndex;
//   skeleton - a nested "PSKEL" asset, bones by name under assetData/bones,
//     each {index, pose (ScaledTransform, relative to the parent), children};
//   materials[] (names), skins[]/materials[] (skin material -> material);
//   animations/<name> - nested "PANI" assets (duration, fps; channels as
//     panima::Channel::Save writes them: targetPath, times, values).
// Rejects: UDM-PMDL (assetType not PMDL, vertices without a Vector3 "pos",
// an index >= the vertex count, a triangle list not a multiple of 3, bone
// indices that are not 0..n-1, weights for a different vertex count),
// UDM-PMDL-JOINT (a weight naming a bone the skeleton lacks), UDM-GET-TYPE
// where a property has a type no Pragma model uses; the importer also
// UDM-PMDL-FINITE (check_pmdl_values: NaN or infinite positions, weights,
// poses, animation keys) and UDM-LIMITS (the budget).
// Safe on untrusted input: works on a validated document; every count is
// bounded by the document's (already limited) arrays; bone trees are walked
// with an explicit stack; the importer charges the input's budget
// (budget.hpp) for the scene before it allocates it.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../budget.hpp"
#include "../convert/model.hpp"
#include "../detail/checks.hpp"
#include "../detail/scan.hpp"
#include "../error.hpp"
#include "../matrix.hpp"
#include "reader.hpp"
#include "types.hpp"

namespace untold::udm {

// ---- extraction (views) ----------------------------------------------------------------------

/// One sub-mesh of a PMDL, as views into the document.
struct pmdl_sub_mesh {
  std::string_view group;        // mesh group name
  std::uint32_t group_index = 0; // in pmdl_model::group_names
  std::uint32_t mesh = 0;        // index in the group's meshes[]
  std::uint32_t sub_mesh = 0;    // index in that mesh's subMeshes[]
  property_view data;            // the PMESH assetData
  struct_array_view vertices;    // one struct per vertex
  struct_member position{}, uv{}, normal{}, tangent{};
  bool has_uv = false, has_normal = false, has_tangent = false;
  type index_type = type::uint16;  // uint16 or uint32
  byte_span index_bytes;           // index_count x 2 or 4 bytes (any alignment)
  std::uint32_t index_count = 0;
  std::optional<struct_array_view> weights;  // vertexWeights: Vector4i id, Vector4 w
  struct_member weight_ids{}, weight_values{};
  std::string_view geometry = "Triangles";
  std::uint32_t skin_material = 0;
  scaled_transform pose{};

  [[nodiscard]] std::size_t vertex_count() const noexcept { return vertices.size(); }
  /// Index i. Precondition: i < index_count.
  [[nodiscard]] std::uint32_t index(std::size_t i) const noexcept {
    return index_type == type::uint16 ? load_le_unchecked<std::uint16_t>(index_bytes.data() + 2 * i)
                                      : load_le_unchecked<std::uint32_t>(index_bytes.data() + 4 * i);
  }
};

/// A bone of the skeleton, in depth-first order (parents first).
struct pmdl_bone {
  std::string_view name;
  std::uint32_t index = 0;            // the file's bone index (what vertex weights name)
  std::uint32_t parent = convert::no_ref;  // position of the parent in pmdl_model::bones
  scaled_transform pose{};            // relative to the parent
};

struct pmdl_animation {
  std::string_view name;
  property_view data;  // the PANI assetData
  float duration = 0;
  std::uint32_t channel_count = 0;
};

struct pmdl_model {
  std::vector<pmdl_sub_mesh> sub_meshes;
  std::vector<pmdl_bone> bones;
  std::vector<std::string_view> materials;       // names, assetData/materials
  std::vector<std::uint32_t> skin_materials;     // skins[0]/materials: skin material -> material
  std::vector<pmdl_animation> animations;
  std::vector<std::string_view> group_names;
};

namespace detail {
inline error pmdl_error(const char* field, std::string_view subject = {}, std::uint64_t value = 0, bool has_value = false) {
  error e = make_error(errc::udm_pmdl, {.field = field, .value = value, .has_value = has_value});
  e.with_subject(subject);
  return e;
}

inline result<pmdl_sub_mesh> read_sub_mesh(property_view sub, std::string_view group) {
  pmdl_sub_mesh s;
  s.group = group;
  s.data = sub["assetData"];
  if (!s.data.is_element()) return pmdl_error("subMesh.assetData", group);
  auto verts = s.data["vertices"].as_structs();
  if (!verts) return verts.error();
  s.vertices = *verts;
  const struct_layout_view& l = s.vertices.layout();
  const auto pos = l.find("pos");
  if (!pos || pos->kind != type::vector3) return pmdl_error("vertices.pos", group);
  s.position = *pos;
  if (auto m = l.find("uv"); m && m->kind == type::vector2) s.uv = *m, s.has_uv = true;
  if (auto m = l.find("n"); m && m->kind == type::vector3) s.normal = *m, s.has_normal = true;
  if (auto m = l.find("t"); m && m->kind == type::vector4) s.tangent = *m, s.has_tangent = true;
  const property_view idx = s.data["indices"];
  if (idx) {
    if (!idx.is_array() || (idx.value_type() != type::uint16 && idx.value_type() != type::uint32))
      return pmdl_error("indices", group, static_cast<std::uint8_t>(idx.value_type()), true);
    s.index_type = idx.value_type();
    s.index_bytes = idx.raw();
    s.index_count = static_cast<std::uint32_t>(idx.size());
    if (!untold::detail::indices_below(s.index_bytes, s.index_type == type::uint16 ? 2 : 4, s.vertex_count()))
      for (std::size_t i = 0; i < s.index_count; ++i)
        if (s.index(i) >= s.vertex_count()) return pmdl_error("indices", group, s.index(i), true);
  }
  if (const property_view w = s.data["vertexWeights"]; w) {
    auto ws = w.as_structs();
    if (!ws) return ws.error();
    const auto ids = ws->layout().find("id");
    const auto values = ws->layout().find("w");
    if (!ids || ids->kind != type::vector4i || !values || values->kind != type::vector4)
      return pmdl_error("vertexWeights", group);
    if (ws->size() != 0 && ws->size() != s.vertex_count()) return pmdl_error("vertexWeights", group, ws->size(), true);
    if (ws->size() != 0) {
      s.weights = *ws;
      s.weight_ids = *ids;
      s.weight_values = *values;
    }
  }
  if (auto g = s.data["geometryType"].as_string()) s.geometry = *g;
  if (auto m = s.data["skinMaterialIndex"].as<std::uint32_t>()) s.skin_material = *m;
  if (auto p = s.data["pose"].as<scaled_transform>()) s.pose = *p;
  if (s.geometry == "Triangles" && s.index_count % 3 != 0) return pmdl_error("indices", group, s.index_count, true);
  return s;
}

/// UDM-PMDL-JOINT: every influence names a bone (0..bones-1) or is -1,
/// Pragma's unused slot. Precondition: s.weights is set.
inline status check_weight_ids(const pmdl_sub_mesh& s, std::size_t bones) {
  for (std::size_t i = 0; i < s.vertex_count(); ++i) {
    const vec4i id = s.weights->get<vec4i>(i, s.weight_ids);
    for (const std::int32_t j : {id.x, id.y, id.z, id.w})
      if (j != -1 && (j < 0 || static_cast<std::size_t>(j) >= bones))
        return make_error(errc::udm_pmdl_joint)
            .at_field("vertexWeights.id")
            .with_value(static_cast<std::uint32_t>(j))
            .with_limit(bones)
            .at_record(i)
            .with_subject(s.group);
  }
  return {};
}

inline status read_bones(property_view bones, pmdl_model& m, budget* charged) {
  // Depth-first with an explicit stack: parents get lower positions than
  // their children (what convert::validate_model requires).
  struct pending {
    property_view bone;
    std::uint32_t parent;
  };
  std::vector<pending> stack;
  for (std::size_t i = bones.size(); i-- > 0;) stack.push_back({bones.child(i), convert::no_ref});
  while (!stack.empty()) {
    const pending p = stack.back();
    stack.pop_back();
    if (!p.bone.is_element()) return pmdl_error("bone", p.bone.key());
    pmdl_bone b;
    b.name = p.bone.key();
    b.parent = p.parent;
    auto index = p.bone["index"].as<std::uint32_t>();
    if (!index) return index.error();
    b.index = *index;
    if (auto pose = p.bone["pose"].as<scaled_transform>()) b.pose = *pose;
    const auto self = static_cast<std::uint32_t>(m.bones.size());
    if (charged != nullptr) UNTOLD_TRY(charged->charge_items(1, 2 * sizeof(pmdl_bone), "bones", errc::udm_limit));
    m.bones.push_back(b);
    const property_view children = p.bone["children"];
    for (std::size_t i = children.is_element() ? children.size() : 0; i-- > 0;) stack.push_back({children.child(i), self});
  }
  // Vertex weights name bones by index: it must be a permutation of 0..n-1.
  std::vector<bool> seen(m.bones.size(), false);
  for (const pmdl_bone& b : m.bones) {
    if (b.index >= m.bones.size() || seen[b.index]) return pmdl_error("bone.index", b.name, b.index, true);
    seen[b.index] = true;
  }
  return {};
}
}  // namespace detail

/// Extracts the model structure of a parsed PMDL document (views: valid while
/// `doc` lives). Errors: UDM-PMDL, UDM-PMDL-JOINT, UDM-GET-TYPE; UDM-LIMITS
/// when `charged` (the input's budget, if given) is exhausted.
/// Preconditions: none; safe on any document open_document returned.
[[nodiscard]] inline result<pmdl_model> pmdl_from_document(const document& doc, budget* charged = nullptr) {
  if (doc.asset_type() != "PMDL") return detail::pmdl_error("assetType", doc.asset_type());
  const property_view data = doc.asset_data();
  pmdl_model m;
  const auto charge = [charged](std::uint64_t count, std::uint64_t bytes_each, const char* what) -> status {
    return charged == nullptr ? status{} : charged->charge_items(count, bytes_each, what, errc::udm_limit);
  };
  UNTOLD_TRY(charge(data["materials"].size(), sizeof(std::string_view), "materials"));
  for (property_view name : data["materials"]) {
    auto s = name.as_string();
    if (!s) return s.error();
    m.materials.push_back(*s);
  }
  if (const property_view skins = data["skins"]; skins.size() != 0) {
    auto mats = skins[0]["materials"].as_array<std::uint32_t>();
    if (mats)
      for (std::size_t i = 0; i < mats->size(); ++i) m.skin_materials.push_back((*mats)[i]);
  }
  for (property_view group : data["meshGroups"]) {
    m.group_names.push_back(group.key());
    const property_view meshes = group["meshes"];
    for (std::size_t mi = 0; mi < meshes.size(); ++mi) {
      const property_view subs = meshes[mi]["subMeshes"];
      UNTOLD_TRY(charge(subs.size(), 2 * sizeof(pmdl_sub_mesh), "sub-meshes"));
      for (std::size_t si = 0; si < subs.size(); ++si) {
        auto s = detail::read_sub_mesh(subs[si], group.key());
        if (!s) return s.error();
        s->group_index = static_cast<std::uint32_t>(m.group_names.size() - 1);
        s->mesh = static_cast<std::uint32_t>(mi);
        s->sub_mesh = static_cast<std::uint32_t>(si);
        m.sub_meshes.push_back(*s);
      }
    }
  }
  if (auto bones = data.find("skeleton/assetData/bones"); bones && bones->is_element())
    UNTOLD_TRY(detail::read_bones(*bones, m, charged));
  // Weights are bound to bones by index; without a skeleton the importer
  // drops them (and reports it).
  if (!m.bones.empty())
    for (const pmdl_sub_mesh& s : m.sub_meshes)
      if (s.weights) {
        UNTOLD_TRY(charge(s.vertex_count(), 0, "vertex weights"));
        UNTOLD_TRY(detail::check_weight_ids(s, m.bones.size()));
      }
  UNTOLD_TRY(charge(data["animations"].size(), 2 * sizeof(pmdl_animation), "animations"));
  for (property_view anim : data["animations"]) {
    pmdl_animation a;
    a.name = anim.key();
    a.data = anim["assetData"];
    if (auto d = a.data["duration"].as<float>()) a.duration = *d;
    a.channel_count = static_cast<std::uint32_t>(a.data["channels"].size());
    m.animations.push_back(a);
  }
  return m;
}

/// Copies a sub-mesh's positions into `out` (3 floats per vertex), scaled by
/// `scale`: the vertex extraction a loader runs. Precondition:
/// out.size() >= 3 * s.vertex_count().
inline void extract_positions(const pmdl_sub_mesh& s, std::span<float> out, float scale = 1.0f) noexcept {
  const std::byte* p = s.vertices.bytes().data() + s.position.offset;
  const std::size_t stride = s.vertices.stride();
  for (std::size_t i = 0; i < s.vertex_count(); ++i, p += stride) {
    const vec3 v = load_value<vec3>(p);
    out[3 * i] = v.x * scale;
    out[3 * i + 1] = v.y * scale;
    out[3 * i + 2] = v.z * scale;
  }
}

namespace detail {
/// The first NaN or infinite value of `values`, if any.
[[nodiscard]] inline std::optional<float> non_finite(std::span<const float> values) noexcept {
  for (const float f : values)
    if (!untold::detail::is_finite(f)) return f;
  return std::nullopt;
}
[[nodiscard]] inline std::array<float, 10> components(const scaled_transform& t) noexcept {
  return {t.translation.x, t.translation.y, t.translation.z, t.rotation.x, t.rotation.y,
          t.rotation.z,    t.rotation.w,    t.scale.x,       t.scale.y,    t.scale.z};
}
inline error not_finite(const char* field, std::string_view subject, float value) {
  return make_error(errc::udm_pmdl_finite).at_field(field).with_float(value).with_subject(subject);
}
/// The float words (from `first`, `count` of them) of a struct member, or
/// false when the member does not sit on a 4-byte boundary of its struct.
inline bool add_float_words(std::vector<std::uint32_t>& words, std::uint32_t offset, std::uint32_t count) {
  if (offset % 4 != 0) return false;
  for (std::uint32_t k = 0; k < count; ++k) words.push_back(offset / 4 + k);
  return true;
}
/// True when every position, uv and weight of `s` is finite, found in one
/// pass per struct array (untold::detail::scan_records). False when one is
/// not, or when a struct's layout is not whole 32-bit words: the caller then
/// checks value by value.
inline bool vertex_floats_finite(const pmdl_sub_mesh& s) {
  std::vector<std::uint32_t> words;
  if (s.vertices.stride() % 4 != 0 || !add_float_words(words, s.position.offset, 3) ||
      (s.has_uv && !add_float_words(words, s.uv.offset, 2)))
    return false;
  if (!untold::detail::scan_records(s.vertices.bytes().data(), s.vertex_count(), s.vertices.stride(), words, {}).all_finite)
    return false;
  if (!s.weights) return true;
  words.clear();
  return s.weights->stride() % 4 == 0 && add_float_words(words, s.weight_values.offset, 4) &&
         untold::detail::scan_records(s.weights->bytes().data(), s.weights->size(), s.weights->stride(), words, {}).all_finite;
}
}  // namespace detail

/// The values a model needs finite (validate --deep and import_pmdl run it):
/// every vertex position, uv and vertex weight, every sub-mesh pose and bone
/// pose. Errors: UDM-PMDL-FINITE with the field, the vertex or bone
/// (record) and the value (its bits). Linear in the vertices; safe on any
/// model pmdl_from_document returned.
[[nodiscard]] inline status check_pmdl_values(const pmdl_model& m) {
  for (const pmdl_sub_mesh& s : m.sub_meshes) {
    // One pass over the vertex (and weight) structs first; the loop below,
    // which names the first bad value, runs only when it finds one.
    if (!detail::vertex_floats_finite(s))
      for (std::size_t i = 0; i < s.vertex_count(); ++i) {
        const vec3 p = s.vertices.get<vec3>(i, s.position);
        if (auto bad = detail::non_finite(std::array{p.x, p.y, p.z}))
          return detail::not_finite("vertices.pos", s.group, *bad).at_record(i);
        if (s.has_uv) {
          const vec2 uv = s.vertices.get<vec2>(i, s.uv);
          if (auto bad = detail::non_finite(std::array{uv.x, uv.y}))
            return detail::not_finite("vertices.uv", s.group, *bad).at_record(i);
        }
        if (!s.weights) continue;
        const vec4 w = s.weights->get<vec4>(i, s.weight_values);
        if (auto bad = detail::non_finite(std::array{w.x, w.y, w.z, w.w}))
          return detail::not_finite("vertexWeights.w", s.group, *bad).at_record(i);
      }
    if (auto bad = detail::non_finite(detail::components(s.pose))) return detail::not_finite("subMesh.pose", s.group, *bad);
  }
  for (std::size_t i = 0; i < m.bones.size(); ++i)
    if (auto bad = detail::non_finite(detail::components(m.bones[i].pose)))
      return detail::not_finite("bone.pose", m.bones[i].name, *bad).at_record(i);
  return {};
}

// ---- import into the neutral scene ---------------------------------------------------------

/// Options of import_pmdl. No `deep_checks`: the import always runs
/// check_pmdl_values.
struct pmdl_import_options {
  untold::limits limits{};
  /// The budget the scene is charged to (budget.hpp). nullptr: one of its
  /// own from `limits` and the document's size. Pass the parse's budget so
  /// that both stages share one.
  untold::budget* budget = nullptr;
  /// Metres per Pragma unit: pragma::units_to_metres is x 0.025 (a 72-unit
  /// player is 1.8 m). 1 keeps Pragma units.
  float metres_per_unit = 0.025f;
};

namespace detail {
inline convert::transform to_neutral(const scaled_transform& t, float scale) {
  convert::transform out;
  out.translation = {t.translation.x * scale, t.translation.y * scale, t.translation.z * scale};
  out.rotation = {t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w};
  out.scale = {t.scale.x, t.scale.y, t.scale.z};
  return out;
}


inline bool is_identity(const scaled_transform& t) noexcept {
  return t.translation.x == 0 && t.translation.y == 0 && t.translation.z == 0 && t.rotation.x == 0 &&
         t.rotation.y == 0 && t.rotation.z == 0 && t.rotation.w == 1 && t.scale.x == 1 && t.scale.y == 1 &&
         t.scale.z == 1;
}

inline std::array<float, 3> apply(const untold::mat4& m, float x, float y, float z, float w) noexcept {
  return {m[0] * x + m[4] * y + m[8] * z + m[12] * w, m[1] * x + m[5] * y + m[9] * z + m[13] * w,
          m[2] * x + m[6] * y + m[10] * z + m[14] * w};
}
}  // namespace detail

/// Fills a neutral scene from a parsed PMDL: one node per mesh group under a
/// root node, one convert::mesh per sub-mesh (positions scaled to metres,
/// normals, tangents with handedness, uv0, extra uv sets, 16/32-bit indices
/// widened to 32, up to 4 weights), the skeleton and one skin, placeholder
/// materials by name. Everything not carried is recorded in scene.report.
/// Errors: those of pmdl_from_document and check_pmdl_values,
/// UDM-PMDL-FINITE for a NaN or infinite animation key, UDM-LIMITS when the
/// budget is exhausted.
/// Preconditions: none.
[[nodiscard]] inline result<convert::scene> import_pmdl(const document& doc, const pmdl_import_options& options = {}) {
  budget own(options.limits, doc.parsed_bytes());
  budget& charged = budget::own_or_shared(options.budget, own);
  auto model = pmdl_from_document(doc, &charged);
  if (!model) return model.error();
  UNTOLD_TRY(check_pmdl_values(*model));
  const auto charge = [&charged](std::uint64_t count, std::uint64_t bytes_each, const char* what) {
    return charged.charge_items(count, bytes_each, what, errc::udm_limit);
  };
  // A report line: its entry and strings (what, where, a reason of a few dozen characters).
  const auto charge_entry = [&charge](std::size_t text) {
    return charge(1, sizeof(convert::report_entry) + 2 * text + 128, "report entries");
  };
  const float scale = options.metres_per_unit;
  convert::scene sc;
  convert::conversion_report& report = sc.report;
  const property_view data = doc.asset_data();
  // Names come from keys and strings, which are bytes; a .untold name is
  // valid UTF-8 without NULs.
  std::uint64_t renamed = 0;
  const auto scene_name = [&renamed](std::string_view raw) {
    std::string clean = convert::sanitized_utf8(raw);
    if (clean != raw) ++renamed;
    return clean;
  };
  UNTOLD_TRY(charge(model->materials.size(), sizeof(convert::material) + 256, "materials"));

  // Materials: names only; Pragma keeps material definitions in separate files.
  for (std::string_view name : model->materials) {
    convert::material mat;
    mat.name = scene_name(name);
    sc.materials.push_back(std::move(mat));
  }
  // The model file has no textures or shader parameters to lose: it only
  // names materials whose definitions are separate files.
  if (!sc.materials.empty())
    report.info("materials", "",
                "placeholder PBR materials carry the names; Pragma keeps textures and shader parameters in separate "
                ".pmat/.wmi files, which are not read",
                sc.materials.size());
  std::uint64_t search_paths = 0;
  for (property_view p : data["materialPaths"])
    if (auto str = p.as_string(); str && !str->empty()) ++search_paths;
  if (const std::size_t skins = data["skins"].size(); skins > 1)
    report.dropped("skins (material groups) after the first", "", "the neutral mesh has one material; skin 0 is used",
                   skins - 1);
  if (search_paths != 0)
    report.dropped("material search paths", "", "the neutral model has no place for material lookup paths", search_paths);

  // Skeleton and its skin: skin joint j is the bone whose file index is j.
  std::uint32_t skin = convert::no_ref;
  if (!model->bones.empty()) {
    // A joint, its name, its world matrix while the inverse binds are
    // computed, and its skin entry.
    UNTOLD_TRY(charge(model->bones.size(), sizeof(convert::joint) + sizeof(untold::mat4) + 2 * sizeof(std::uint32_t) + 256, "joints"));
    convert::skeleton sk;
    sk.name = "skeleton";
    std::vector<untold::mat4> world(model->bones.size());
    for (std::size_t i = 0; i < model->bones.size(); ++i) {
      const pmdl_bone& b = model->bones[i];
      convert::joint j;
      j.name = scene_name(b.name);
      j.parent = b.parent;
      j.rest = detail::to_neutral(b.pose, scale);
      world[i] = b.parent == convert::no_ref ? j.rest.matrix() : untold::multiply(world[b.parent], j.rest.matrix());
      j.inverse_bind = untold::inverse_affine(world[i]);
      // A finite pose can still give matrices that are not (a huge
      // unnormalised rotation overflows; a chain of large ones too): the
      // rest, world and inverse bind matrices, and the bind matrix the
      // writer derives from the last, must all be finite.
      const untold::mat4 rest = j.rest.matrix(), bind = untold::inverse_affine(j.inverse_bind);
      const std::array<const untold::mat4*, 4> matrices{&rest, &world[i], &j.inverse_bind, &bind};
      for (const untold::mat4* matrix : matrices)
        if (auto bad = detail::non_finite(*matrix)) return detail::not_finite("bone.pose", b.name, *bad).at_record(i);
      sk.joints.push_back(std::move(j));
    }
    sc.skeletons.push_back(std::move(sk));
    convert::skin s;
    s.skeleton = 0;
    s.joints.resize(model->bones.size());
    for (std::size_t i = 0; i < model->bones.size(); ++i) s.joints[model->bones[i].index] = static_cast<std::uint32_t>(i);
    sc.skins.push_back(std::move(s));
    skin = 0;
    report.info("inverse bind matrices", "skeleton", "computed from the bones' reference poses (Pragma stores none)",
                model->bones.size());
  }

  // Nodes: a root, one child per mesh group.
  UNTOLD_TRY(charge(model->group_names.size() + 1, sizeof(convert::node) + 256, "nodes"));
  sc.nodes.push_back({"model", convert::no_ref, {}, {}});
  std::vector<std::uint32_t> group_node;
  for (std::string_view g : model->group_names) {
    group_node.push_back(static_cast<std::uint32_t>(sc.nodes.size()));
    sc.nodes.push_back({scene_name(g), 0, {}, {}});
  }
  if (const property_view base = data["baseMeshGroups"]; base.size() != 0)
    report.info("base mesh groups", "", "every mesh group is imported as its own node; Pragma shows the base groups by default",
                base.size());

  std::uint64_t sub_mesh_poses = 0, unsupported_geometry = 0, extended_weights = 0;
  UNTOLD_TRY(charge(model->sub_meshes.size(), sizeof(convert::mesh) + 2 * sizeof(std::uint32_t), "meshes"));
  for (const pmdl_sub_mesh& s : model->sub_meshes) {
    UNTOLD_TRY(charge_entry(2 * s.group.size() + 32));  // its name and `where`
    const std::string where = "sub-mesh '" + std::string(s.group) + "/" + std::to_string(s.mesh) + "/" + std::to_string(s.sub_mesh) + "'";
    convert::mesh m;
    m.name = scene_name(s.group) + "/" + std::to_string(s.mesh) + "/" + std::to_string(s.sub_mesh);
    if (s.geometry == "Triangles") m.primitive = convert::topology::triangle_list;
    else if (s.geometry == "Lines") m.primitive = convert::topology::line_list;
    else if (s.geometry == "Points") m.primitive = convert::topology::point_list;
    else {
      ++unsupported_geometry;
      report.dropped("sub-mesh", where, "geometryType '" + std::string(s.geometry) + "' has no neutral topology");
      continue;
    }
    const std::size_t n = s.vertex_count();
    const bool skinned = s.weights && skin != convert::no_ref && model->bones.size() <= 65536;
    const std::uint64_t vertex_bytes = 3 * sizeof(float) + (s.has_normal ? 3 * sizeof(float) : 0) +
                                       (s.has_tangent ? 4 * sizeof(float) : 0) + (s.has_uv ? 2 * sizeof(float) : 0) +
                                       (skinned ? sizeof(m.joints[0]) + sizeof(m.weights[0]) : 0);
    UNTOLD_TRY(charge(n, vertex_bytes, "vertices"));
    UNTOLD_TRY(charge(s.index_count, sizeof(std::uint32_t), "indices"));
    // The sub-mesh pose is baked into the vertices (it is identity in every file seen).
    const bool posed = !detail::is_identity(s.pose);
    const untold::mat4 pose = detail::to_neutral(s.pose, 1.0f).matrix();
    if (posed) ++sub_mesh_poses;
    m.positions.resize(3 * n);
    if (s.has_normal) m.normals.resize(3 * n);
    if (s.has_tangent) m.tangents.resize(4 * n);
    if (s.has_uv) m.uv0.resize(2 * n);
    // One pass over the vertex structs (each vertex's member at
    // base + i x stride + offset, read in place), writing every stream.
    const std::byte* base = s.vertices.bytes().data();
    const std::size_t stride = s.vertices.stride();
    float* const positions = m.positions.data();
    float* const normals = m.normals.data();
    float* const tangents = m.tangents.data();
    float* const uvs = m.uv0.data();
    for (std::size_t i = 0; i < n; ++i) {
      const std::byte* vertex = base + i * stride;
      auto floats = [vertex](const struct_member& mb, std::size_t k) { return load_le_unchecked<float>(vertex + mb.offset + 4 * k); };
      std::array<float, 3> p{floats(s.position, 0), floats(s.position, 1), floats(s.position, 2)};
      if (posed) p = detail::apply(pose, p[0], p[1], p[2], 1);
      for (std::size_t k = 0; k < 3; ++k) positions[3 * i + k] = p[k] * scale;
      if (posed)  // finite positions and a finite pose can still overflow
        if (auto bad = detail::non_finite(std::span<const float>(positions + 3 * i, 3)))
          return detail::not_finite("subMesh.pose", s.group, *bad).at_record(i);
      if (s.has_normal) {
        std::array<float, 3> v{floats(s.normal, 0), floats(s.normal, 1), floats(s.normal, 2)};
        if (posed) v = detail::apply(pose, v[0], v[1], v[2], 0);
        for (std::size_t k = 0; k < 3; ++k) normals[3 * i + k] = v[k];
      }
      if (s.has_tangent) {
        std::array<float, 3> t{floats(s.tangent, 0), floats(s.tangent, 1), floats(s.tangent, 2)};
        if (posed) t = detail::apply(pose, t[0], t[1], t[2], 0);
        for (std::size_t k = 0; k < 3; ++k) tangents[4 * i + k] = t[k];
        tangents[4 * i + 3] = floats(s.tangent, 3) < 0 ? -1.0f : 1.0f;
      }
      if (s.has_uv) uvs[2 * i] = floats(s.uv, 0), uvs[2 * i + 1] = floats(s.uv, 1);
    }
    const std::size_t index_count = s.index_count;  // a local: the stores below cannot change it
    m.indices.resize(index_count);
    const std::byte* const index_bytes = s.index_bytes.data();
    std::uint32_t* const indices = m.indices.data();
    if (s.index_type == type::uint16)
      for (std::size_t i = 0; i < index_count; ++i) indices[i] = load_le_unchecked<std::uint16_t>(index_bytes + 2 * i);
    else
      for (std::size_t i = 0; i < index_count; ++i) indices[i] = load_le_unchecked<std::uint32_t>(index_bytes + 4 * i);
    // Extra uv sets: uvSets/<name> with one Vector2 per vertex.
    for (property_view set : s.data["uvSets"]) {
      UNTOLD_TRY(charge_entry(set.key().size() + where.size()));
      auto uvs = set.as_array<vec2>();
      if (!uvs || uvs->size() != n) {
        report.dropped("uv set '" + std::string(set.key()) + "'", where, "not one Vector2 per vertex");
        continue;
      }
      UNTOLD_TRY(charge(n, 2 * sizeof(float), "uv sets"));
      std::vector<float> flat(2 * n);
      for (std::size_t i = 0; i < n; ++i) flat[2 * i] = (*uvs)[i].x, flat[2 * i + 1] = (*uvs)[i].y;
      if (auto bad = detail::non_finite(flat)) return detail::not_finite("uvSets", set.key(), *bad);
      if (m.uv1.empty()) m.uv1 = std::move(flat);
      else m.extra_uvs.push_back(std::move(flat));
      report.changed("uv set name '" + std::string(set.key()) + "'", where, "uv sets are positional in the neutral model");
    }
    if (s.weights && skin != convert::no_ref && model->bones.size() > 65536) {
      report.dropped("vertex weights", where, "more than 65536 bones: the neutral model's joint indices are 16-bit", n);
    } else if (skinned) {
      m.skin = skin;
      m.joints.resize(n);
      m.weights.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        const vec4i id = s.weights->get<vec4i>(i, s.weight_ids);
        const vec4 w = s.weights->get<vec4>(i, s.weight_values);
        const std::int32_t ids[4] = {id.x, id.y, id.z, id.w};
        const float ws[4] = {w.x, w.y, w.z, w.w};
        for (int k = 0; k < 4; ++k) {
          // Pragma marks an unused slot with bone id -1; any other id names
          // a bone (pmdl_from_document checked it: UDM-PMDL-JOINT).
          const bool used = ids[k] != -1;
          m.joints[i][k] = used ? static_cast<std::uint16_t>(ids[k]) : 0;
          m.weights[i][k] = used ? ws[k] : 0.0f;
        }
      }
    } else if (s.weights) {
      report.dropped("vertex weights", where, "the model has no skeleton to bind them to", n);
    }
    if (s.data["extendedVertexWeights"].size() != 0) ++extended_weights;
    constexpr std::string_view mesh_handled[] = {"vertices", "indices", "vertexWeights", "extendedVertexWeights",
                                                 "uvSets", "pose", "geometryType", "skinMaterialIndex", "alphas",
                                                 "alphaCount", "referenceId"};
    for (property_view p : s.data)
      if (std::find(std::begin(mesh_handled), std::end(mesh_handled), p.key()) == std::end(mesh_handled)) {
        UNTOLD_TRY(charge_entry(p.key().size() + where.size()));
        report.dropped("sub-mesh property '" + std::string(p.key()) + "'", where, "no place for it in the neutral model");
      }
    for (std::size_t k = 0; k < s.vertices.layout().member_count(); ++k) {
      const std::string_view member = s.vertices.layout().member(k).name;
      if (member != "pos" && member != "uv" && member != "n" && member != "t") {
        UNTOLD_TRY(charge_entry(member.size() + where.size()));
        report.dropped("vertex member '" + std::string(member) + "'", where, "no neutral stream for it", n);
      }
    }
    if (const property_view alphas = s.data["alphas"]; alphas.size() != 0)
      report.dropped("vertex alphas", where, "Pragma's per-vertex alpha has no neutral stream", alphas.size());
    if (s.skin_material < model->skin_materials.size() && model->skin_materials[s.skin_material] < sc.materials.size())
      m.material = model->skin_materials[s.skin_material];
    else if (s.skin_material < sc.materials.size() && model->skin_materials.empty())
      m.material = s.skin_material;
    sc.nodes[group_node[s.group_index]].meshes.push_back(static_cast<std::uint32_t>(sc.meshes.size()));
    sc.meshes.push_back(std::move(m));
  }
  if (extended_weights != 0)
    report.dropped("extended vertex weights (influences 5-8)", "", "the neutral model keeps 4 influences per vertex",
                   extended_weights);
  if (sub_mesh_poses != 0)
    report.changed("sub-mesh pose", "", "baked into the vertices", sub_mesh_poses);
  if (scale != 1.0f && !sc.meshes.empty())
    report.changed("units", "", "Pragma units scaled to metres (x " + std::to_string(scale) + ")", 1);
  report.info("axes", "", "kept: Pragma is +Y up with counter-clockwise fronts ((b-a)x(c-a) agrees with the normals), as the neutral model", 1);

  // Animations: channels as panima::Channel::Save writes them (interpolation,
  // targetPath ".../<bone>/position|rotation|scale", times Float, values
  // Vector3/Quaternion). No fixture has channels: see docs/udm.md.
  // Channels name their bone: one table (the last bone of a name wins, as a
  // scan would), so channels x bones is never a nested loop.
  std::unordered_map<std::string_view, std::uint32_t> bone_by_name;
  std::vector<std::uint32_t> joint_of_index;  // the file's bone index -> joint (read_bones made it a permutation)
  constexpr std::uint64_t no_bone = ~std::uint64_t{0};
  if (!model->animations.empty()) {
    UNTOLD_TRY(charge(model->bones.size(), 4 * sizeof(std::pair<std::string_view, std::uint32_t>) + sizeof(std::uint32_t),
                      "bone names"));
    joint_of_index.resize(model->bones.size());
    for (std::size_t j = 0; j < model->bones.size(); ++j) {
      bone_by_name.insert_or_assign(model->bones[j].name, static_cast<std::uint32_t>(j));
      joint_of_index[model->bones[j].index] = static_cast<std::uint32_t>(j);
    }
  }
  for (const pmdl_animation& a : model->animations) {
    const std::string clip = "animation '" + std::string(a.name) + "'";
    if (a.channel_count == 0) {
      report.info(clip, "", "no channels (reference pose only): not imported", 1);
      continue;
    }
    if (!untold::detail::is_finite(a.duration)) return detail::not_finite("animation.duration", a.name, a.duration);
    UNTOLD_TRY(charge_entry(2 * a.name.size()));
    convert::animation anim;
    anim.name = scene_name(a.name);
    anim.duration = a.duration;
    std::uint64_t unmapped = 0;
    UNTOLD_TRY(charge(a.channel_count, sizeof(convert::animation_channel), "animation channels"));
    // Pragma's model clips (pragma::animation::Animation::Save) name their
    // bones in nodes[] ({type "bone", set: UInt16 bone indices}, or one
    // `bone`); a channel gives its node and property. Node n is the n-th
    // bone of the sets, counted as Pragma's loader counts them.
    std::vector<std::uint32_t> node_joint;
    for (property_view node : a.data["nodes"]) {
      const property_view set = node["set"];
      const std::size_t count = set ? set.size() : 1;
      UNTOLD_TRY(charge(count, sizeof(std::uint32_t), "animation nodes"));
      const auto type = node["type"].as_string();
      const bool bones = type && *type == "bone";
      const auto ids = set.as_array<std::uint16_t>();
      const auto one = node["bone"].as<std::uint32_t>();
      for (std::size_t i = 0; i < count; ++i) {
        std::uint64_t index = no_bone;
        if (bones && set && ids) index = (*ids)[i];
        else if (bones && !set && one) index = *one;
        node_joint.push_back(index < joint_of_index.size() ? joint_of_index[index] : convert::no_ref);
      }
    }
    for (property_view ch : a.data["channels"]) {
      auto times = ch["times"].as_array<float>();
      const property_view values = ch["values"];
      if (!times || sc.skeletons.empty()) {
        ++unmapped;
        continue;
      }
      convert::animation_channel c;
      c.skeleton = 0;
      std::string_view what;
      if (auto target = ch["targetPath"].as_string()) {
        std::string_view path = *target;
        if (const std::size_t colon = path.find(':'); colon != std::string_view::npos) path = path.substr(colon + 1);
        const std::size_t last = path.rfind('/');
        if (last == std::string_view::npos) {
          ++unmapped;
          continue;
        }
        what = path.substr(last + 1);
        const std::string_view rest = path.substr(0, last);
        const std::string_view bone = rest.substr(rest.rfind('/') == std::string_view::npos ? 0 : rest.rfind('/') + 1);
        if (const auto it = bone_by_name.find(bone); it != bone_by_name.end()) c.joint = it->second;
      } else if (auto node = ch["node"].as<std::uint16_t>(); node && *node < node_joint.size()) {
        if (auto property = ch["property"].as_string()) what = *property;
        c.joint = node_joint[*node];
      }
      const bool vec = what == "position" || what == "scale";
      const bool rot = what == "rotation";
      bool ordered = true;  // key times never decrease
      for (std::size_t i = 1; i < times->size() && ordered; ++i) ordered = !((*times)[i] < (*times)[i - 1]);
      if (c.joint == convert::no_ref || !(vec || rot) || values.size() != times->size() || !ordered ||
          values.value_type() != (rot ? type::quaternion : type::vector3)) {
        ++unmapped;
        continue;
      }
      c.path = what == "position" ? convert::anim_path::translation : rot ? convert::anim_path::rotation : convert::anim_path::scale;
      std::uint64_t mode = 0;
      if (auto i8 = ch["interpolation"].as<std::uint8_t>()) mode = *i8;
      else if (auto i32 = ch["interpolation"].as<std::uint32_t>()) mode = *i32;
      // panima::ChannelInterpolation: Linear 0, Step 1, CubicSpline 2 (values would triple).
      if (mode == 2) {
        ++unmapped;
        continue;
      }
      c.interp = mode == 1 ? convert::interpolation::step : convert::interpolation::linear;
      UNTOLD_TRY(charge(times->size(), sizeof(float) + (rot ? 4 : 3) * sizeof(float), "animation keys"));
      for (std::size_t i = 0; i < times->size(); ++i) c.times.push_back((*times)[i]);
      if (rot) {
        const auto q = values.as_array<quat>().value();
        for (std::size_t i = 0; i < q.size(); ++i) c.values.insert(c.values.end(), {q[i].x, q[i].y, q[i].z, q[i].w});
      } else {
        const auto v = values.as_array<vec3>().value();
        const float k = what == "position" ? scale : 1.0f;
        for (std::size_t i = 0; i < v.size(); ++i) c.values.insert(c.values.end(), {v[i].x * k, v[i].y * k, v[i].z * k});
      }
      if (auto bad = detail::non_finite(c.times)) return detail::not_finite("animation.times", a.name, *bad);
      if (auto bad = detail::non_finite(c.values)) return detail::not_finite("animation.values", a.name, *bad);
      anim.channels.push_back(std::move(c));
    }
    if (unmapped != 0)
      report.dropped("animation channels", clip,
                     "no bone/position|rotation|scale target, cubic-spline, times that decrease, or values that do not "
                     "match their times",
                     unmapped);
    if (!anim.channels.empty()) sc.animations.push_back(std::move(anim));
  }
  // Model parts with no place in the neutral scene.
  auto drop_if = [&](std::string_view key, const char* what, const char* reason) {
    const property_view p = data[key];
    const std::size_t count = p.is_element() || p.is_array() ? p.size() : (p ? 1 : 0);
    if (count != 0) report.dropped(what, "", reason, count);
  };
  drop_if("collisionMeshes", "collision meshes", "no physics shapes in the neutral model");
  drop_if("hitboxes", "hitboxes", "no hitboxes in the neutral model");
  drop_if("attachments", "attachments", "no attachment points in the neutral model");
  drop_if("objectAttachments", "object attachments", "no attachment points in the neutral model");
  drop_if("flexes", "flexes", "no flex controllers in the neutral model");
  drop_if("eyeballs", "eyeballs", "no eyeballs in the neutral model");
  drop_if("includeModels", "included models", "references to other model files are not followed");
  // Everything else the model carries: named so nothing is dropped silently.
  constexpr std::string_view handled[] = {"materials", "materialPaths", "skins", "skeleton", "meshGroups",
                                          "baseMeshGroups", "animations", "render", "collisionMeshes", "hitboxes",
                                          "attachments", "objectAttachments", "flexes", "eyeballs", "includeModels"};
  for (property_view p : data) {
    if (std::find(std::begin(handled), std::end(handled), p.key()) != std::end(handled)) continue;
    UNTOLD_TRY(charge_entry(p.key().size()));
    report.dropped("model property '" + std::string(p.key()) + "'", "", "no place for it in the neutral model");
  }
  if (data["render"]) report.info("render bounds", "", "recomputed from the vertices by the writer", 1);
  if (renamed != 0)
    report.changed("names", "", "not valid UTF-8 (UDM keys and strings are bytes): each invalid byte became '?', NULs were dropped",
                   renamed);
  UNTOLD_TRY(convert::validate_model(sc));
  return sc;
}

/// Parses `file` (binary UDM) and imports it. Errors: open_document's and
/// import_pmdl's. Preconditions: none (any bytes).
[[nodiscard]] inline result<convert::scene> import_pmdl(byte_span file, const pmdl_import_options& options = {}) {
  budget own(options.limits, file.size());
  budget& charged = budget::own_or_shared(options.budget, own);
  open_options ro;
  ro.limits = options.limits;
  ro.budget = &charged;
  auto doc = open_document(file, ro);
  if (!doc) return doc.error();
  pmdl_import_options io = options;
  io.budget = &charged;
  return import_pmdl(*doc, io);
}

}  // namespace untold::udm
