// untold/assetc/import.hpp - assetc runtime files (.hmesh, and optionally its
// .hmat, .hanim and the .hman manifest) as the neutral scene of
// convert/model.hpp: the reverse of convert/to_assetc.hpp, for `untold
// convert x.hmesh ...` and `untold cook`.
//
//   assetc::import_input files{.hmesh = mesh_bytes, .hmat = mat_bytes, .hanim = anim_bytes, .hman = manifest};
//   auto s = assetc::import_files(files, "chair", {});   // result<convert::scene>
//
// The caller reads the files (the tool takes the .hmesh's siblings of the
// same stem, `untold build`'s naming, and the nearest manifest); an empty
// span is an absent file.
//
// Produces: one node (the name given) drawing every mesh, identity
// transform (`untold build` bakes node transforms into the vertices); one
// mesh per submesh holding the vertices its indices and LOD rows use, in
// first-use order (GpuVertex decoded: position, unit normal, tangent when
// DESC says so, uv0), its LOD0 indices and its LODT rows as lod_levels (a
// stalled row, index count 0, becomes a copy of the level before:
// `changed`), material = its slot; one material per MTRL slot, named
// material_<slot> (MTRL stores only name hashes: `changed`), with the .hmat
// row's factors, alpha mode and sidedness (no .hmat: defaults, `dropped`);
// one texture per distinct non-zero texture ref, its uri the .hman path
// (relative to the manifest's directory; colour space from the entry), or
// with no uri when the manifest lacks it (`dropped`); the skeleton (joints
// named joint_<index>: SKEL stores no names, `info`) with one skin whose
// palette is the skeleton; clips as animations of that skeleton's joints.
// Meshlets and bounds are recomputable from the triangles (`info`); unknown
// chunks and the meshlet build parameters are `dropped` / `info`.
//
// Rejects: whatever open_hmesh / open_hmat / open_hanim / open_hman reject
// (all run with deep checks); HM-CHECK-MATERIALS when the .hmat's row count
// differs from DESC.materialCount; HM-CHECK-JOINT when a clip animates a
// joint the SKEL does not have; HM-LIMITS past the input's budget
// (options.budget, else one made from the files' sizes): everything the
// scene holds is charged before it is built. Clip names that are not valid
// UTF-8 get '?' per invalid byte (`changed`). Safe on untrusted input; no
// recursion; work linear in the files' sizes plus what the budget allows
// (submeshes may share index ranges: each copy is charged).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../budget.hpp"
#include "../convert/model.hpp"
#include "../detail/first_use.hpp"
#include "../error.hpp"
#include "hanim.hpp"
#include "hman.hpp"
#include "hmat.hpp"
#include "hmesh.hpp"

namespace untold::assetc {

struct import_input {
  byte_span hmesh{};
  byte_span hmat{};   // the .hmesh's material table; empty: absent
  byte_span hanim{};  // its clips; empty: absent
  byte_span hman{};   // the runtime tree's manifest; empty: absent
};

struct import_options {
  untold::limits limits{};
  /// The input's budget (budget.hpp), shared by the readers, the importer
  /// and the writer after it; none: one made from `limits` for the files' sizes.
  untold::budget* budget = nullptr;
};

namespace detail {

/// "0x" + 16 hex digits: the name of a texture the manifest does not list.
[[nodiscard]] inline std::string hex_ref(std::uint64_t v) {
  constexpr char digits[] = "0123456789abcdef";
  std::string out = "0x";
  for (int shift = 60; shift >= 0; shift -= 4) out.push_back(digits[(v >> shift) & 0xFu]);
  return out;
}

}  // namespace detail

/// Reads `files` into a scene named `name` (see the header comment).
[[nodiscard]] inline result<convert::scene> import_files(const import_input& files, std::string_view name,
                                                         const import_options& options) {
  using convert::no_ref;
  const auto sum = untold::budget::sum;
  const auto product = untold::budget::product;
  untold::budget own(options.limits,
                     sum(sum(files.hmesh.size(), files.hmat.size()), sum(files.hanim.size(), files.hman.size())));
  untold::budget& budget = untold::budget::own_or_shared(options.budget, own);
  const open_options deep{.limits = options.limits, .deep_checks = true, .budget = &budget};
  const auto hold = [&budget](std::uint64_t bytes, const char* what) {
    return budget.charge_memory(bytes, what, errc::hm_limit_exceeded);
  };

  auto mesh = open_hmesh(files.hmesh, deep);
  if (!mesh) return mesh.error();
  std::optional<hmat> materials;
  if (!files.hmat.empty()) {
    auto opened = open_hmat(files.hmat, deep);
    if (!opened) return opened.error();
    materials = *opened;
  }
  std::optional<hanim> clips;
  if (!files.hanim.empty()) {
    auto opened = open_hanim(files.hanim, deep);
    if (!opened) return opened.error();
    clips = std::move(*opened);
  }
  std::optional<hman> manifest;
  if (!files.hman.empty()) {
    auto opened = open_hman(files.hman, deep);
    if (!opened) return opened.error();
    manifest = std::move(*opened);
  }
  const mesh_desc& d = mesh->desc();
  if (materials && materials->size() != d.material_count)
    return make_error(errc::hm_check_materials).at_field("count").with_value(materials->size())
        .with_limit(d.material_count);
  const std::size_t joint_count = mesh->skeleton().size();
  if (clips)
    for (std::size_t i = 0; i < clips->all_channels().size(); ++i)
      if (clips->all_channels()[i].joint >= joint_count)
        return make_error(errc::hm_check_joint).at_field("joint").with_value(clips->all_channels()[i].joint)
            .with_limit(joint_count).at_record(i);

  convert::scene s;
  convert::conversion_report& rep = s.report;
  s.name = convert::sanitized_utf8(name);

  // ---- materials and textures -------------------------------------------------------
  UNTOLD_TRY(budget.charge_items(d.material_count, sizeof(convert::material), "materials", errc::hm_limit_exceeded));
  std::unordered_map<std::uint64_t, std::uint32_t> texture_of;
  std::uint64_t unlisted = 0;
  const auto texture = [&](std::uint64_t ref, bool srgb_use) -> std::uint32_t {
    if (ref == 0) return no_ref;
    const auto [it, fresh] = texture_of.emplace(ref, static_cast<std::uint32_t>(s.textures.size()));
    if (!fresh) return it->second;
    convert::texture t;
    const manifest_entry* e = manifest ? manifest->find(ref) : nullptr;
    if (e != nullptr) {
      t.name = std::string(e->path);
      t.uri = std::string(e->path);
      t.srgb = e->colorspace == static_cast<std::uint8_t>(colorspace::srgb);
    } else {
      t.name = detail::hex_ref(ref);
      t.srgb = srgb_use;
      ++unlisted;
    }
    s.textures.push_back(std::move(t));
    return it->second;
  };
  for (std::uint32_t slot = 0; slot < d.material_count; ++slot) {
    convert::material m;
    m.name = "material_" + std::to_string(slot);
    if (materials) {
      const material row = materials->rows()[slot];
      UNTOLD_TRY(budget.charge_items(5, sizeof(convert::texture) + 64, "textures", errc::hm_limit_exceeded));
      m.base_color = row.base_color;
      m.emissive = row.emissive;
      m.metallic = row.metallic;
      m.roughness = row.roughness;
      m.normal_scale = row.normal_scale;
      m.occlusion_strength = row.occlusion_strength;
      m.alpha_cutoff = row.alpha_cutoff;
      m.double_sided = row.double_sided();
      m.alpha = row.alpha() == alpha_mode::mask    ? convert::alpha_mode::mask
                : row.alpha() == alpha_mode::blend ? convert::alpha_mode::blend
                                                   : convert::alpha_mode::opaque;
      m.base_color_texture.texture = texture(row.base_color_tex, true);
      m.metallic_roughness_texture.texture = texture(row.metallic_roughness_tex, false);
      m.normal_texture.texture = texture(row.normal_tex, false);
      m.occlusion_texture.texture = texture(row.occlusion_tex, false);
      m.emissive_texture.texture = texture(row.emissive_tex, true);
    }
    s.materials.push_back(std::move(m));
  }
  rep.changed("material names", "", "MTRL stores hashes of the names; named material_<slot>", d.material_count);
  rep.dropped("material parameters", "", "no .hmat given: glTF's defaults", materials ? 0 : d.material_count);
  rep.dropped("texture files", "", manifest ? "the .hman lists no path for the ref: named by its hash"
                                            : "no .hman given: each texture is named by its ref hash", unlisted);

  // ---- skeleton and skin ------------------------------------------------------------
  const bool skinned = mesh->has(chunk_id::skin);
  if (joint_count != 0) {
    UNTOLD_TRY(budget.charge_items(joint_count, sizeof(convert::joint) + 16 + (skinned ? 4 : 0), "joints",
                                   errc::hm_limit_exceeded));
    convert::skeleton k;
    k.name = "skeleton";
    for (std::size_t j = 0; j < joint_count; ++j) {
      const joint in = mesh->skeleton()[j];
      convert::joint out;
      out.name = "joint_" + std::to_string(j);
      out.parent = in.parent < 0 ? no_ref : static_cast<std::uint32_t>(in.parent);  // an earlier joint (HM-SKEL-PARENT)
      out.rest.translation = in.bind_translation;
      out.rest.rotation = in.bind_rotation;
      out.rest.scale = in.bind_scale;
      out.inverse_bind = in.inverse_bind;
      k.joints.push_back(std::move(out));
    }
    s.skeletons.push_back(std::move(k));
    if (skinned) {
      convert::skin palette;
      for (std::size_t j = 0; j < joint_count; ++j) palette.joints.push_back(static_cast<std::uint32_t>(j));
      s.skins.push_back(std::move(palette));
    }
    rep.info("joint names", "skeleton", "SKEL stores none; named joint_<index>", joint_count);
  }

  // ---- one mesh per submesh ----------------------------------------------------------
  const gpu_vertex_view vertices = mesh->vertices();
  const le_array<skin_vertex> skin_rows = mesh->skin();
  const bool tangents = (d.flags & desc_flag_tangents) != 0;
  // File vertex -> this submesh's vertex; cleared after each submesh, so linear overall.
  UNTOLD_TRY(hold(product(d.vertex_count, 4), "vertex remap"));
  untold::detail::first_use_numbering local(d.vertex_count);
  std::uint64_t stalled = 0, partial = 0;
  convert::node root;
  root.name = s.name;
  for (std::uint32_t si = 0; si < d.submesh_count; ++si) {
    const submesh sub = mesh->submeshes()[si];
    const le_array<mesh_lod> rows = mesh->lods(si);
    std::uint64_t used = sub.index_count;
    for (const mesh_lod row : rows) used = sum(used, row.index_count);
    // Each index copied (4 B) and at most one new vertex per index (a scene vertex: 72 B).
    UNTOLD_TRY(budget.charge_items(used, 4 + 72, "submesh indices", errc::hm_limit_exceeded));
    convert::mesh out;
    out.name = s.name + "_" + std::to_string(si);
    out.material = sub.material_slot == no_material ? no_ref : sub.material_slot;
    out.skin = skinned ? 0 : no_ref;
    const index_view lod0 = mesh->submesh_indices(si);
    const std::size_t whole = lod0.size() / 3 * 3;
    partial += lod0.size() - whole;
    for (std::size_t i = 0; i < whole; ++i) out.indices.push_back(local(lod0[i]));
    for (const mesh_lod row : rows) {
      convert::lod_level level;
      if (row.index_count == 0) {
        level.indices = out.lods.empty() ? out.indices : out.lods.back().indices;
        ++stalled;
      } else {
        const le_array<std::uint32_t> range = mesh->lod_index_range(row);
        const std::size_t n = range.size() / 3 * 3;
        partial += range.size() - n;
        for (std::size_t i = 0; i < n; ++i) level.indices.push_back(local(range[i]));
      }
      out.lods.push_back(std::move(level));
    }
    for (const std::uint32_t v : local.order()) {
      const gpu_vertex g = vertices[v];
      out.positions.insert(out.positions.end(), g.position.begin(), g.position.end());
      out.normals.insert(out.normals.end(), g.normal.begin(), g.normal.end());
      if (tangents) out.tangents.insert(out.tangents.end(), g.tangent.begin(), g.tangent.end());
      out.uv0.insert(out.uv0.end(), g.uv.begin(), g.uv.end());
      if (skinned) {
        const skin_vertex sv = skin_rows[v];
        out.joints.push_back(sv.joints);
        out.weights.push_back(sv.weights);
      }
    }
    local.clear();
    root.meshes.push_back(si);
    s.meshes.push_back(std::move(out));
  }
  if (d.submesh_count != 0) s.nodes.push_back(std::move(root));
  rep.changed("stalled LOD levels", "", "LODT index count 0 (reuse the level before): a copy of that level", stalled);
  rep.dropped("indices past the last whole triangle", "", "a submesh or LOD range is not a multiple of 3", partial);
  rep.info("meshlets", "", "recomputable from the triangles (`untold build` and convert make them again)",
           d.meshlet_count);
  rep.info("bounds", "", "recomputable from the positions", d.submesh_count);
  std::uint64_t unknown = 0;
  for (std::size_t i = 0; i < mesh->chunks().size(); ++i) unknown += mesh->is_unknown(i) ? 1 : 0;
  rep.dropped("unknown chunks", "", "chunks outside the v2 catalogue have no place in the scene", unknown);

  // ---- clips -------------------------------------------------------------------------
  if (clips) {
    UNTOLD_TRY(budget.charge_items(clips->all_channels().size(), sizeof(convert::animation_channel), "channels",
                                   errc::hm_limit_exceeded));
    std::uint64_t renamed = 0;
    for (std::size_t c = 0; c < clips->clips().size(); ++c) {
      const anim_clip& clip = clips->clips()[c];
      convert::animation a;
      a.name = convert::sanitized_utf8(clip.name);
      renamed += a.name != clip.name ? 1 : 0;
      a.duration = clip.duration;
      for (const anim_channel& ch : clips->channels(c)) {
        UNTOLD_TRY(hold(product(ch.key_count, 4u * (1u + ch.components)), "keys"));
        convert::animation_channel out;
        out.skeleton = 0;
        out.joint = ch.joint;
        out.path = ch.path == anim_path::translation ? convert::anim_path::translation
                   : ch.path == anim_path::rotation  ? convert::anim_path::rotation
                                                     : convert::anim_path::scale;
        out.interp = ch.interp == anim_interp::step ? convert::interpolation::step : convert::interpolation::linear;
        for (std::size_t k = 0; k < ch.key_count; ++k) {
          out.times.push_back(ch.time(k));
          for (std::size_t v = 0; v < ch.components; ++v) out.values.push_back(ch.value(k, v));
        }
        a.channels.push_back(std::move(out));
      }
      s.animations.push_back(std::move(a));
    }
    rep.changed("clip names", "", "not valid UTF-8: '?' per invalid byte", renamed);
  }
  UNTOLD_TRY(convert::validate_model(s));
  return s;
}

}  // namespace untold::assetc
