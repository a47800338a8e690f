// untold/rules/assetc.hpp - the rule table of the assetc .hmesh/.hmat/.hman/.hpack/.hanim (docs/assetc.md).
//
// X(family, errc name, rule id, message), joined into untold::errc by error.hpp: one
// error type for every format. Names start with "hm_", rule ids with
// "HM-"; docs/assetc.md maps every id to the function that enforces it.
// Only macros here, so error.hpp stays cheap to include.
#pragma once

// clang-format off
#define UNTOLD_ASSETC_RULES(X)                                                                  \
  X(assetc, hm_bad_magic, "HM-MAGIC", "the file does not start with a recognised identifier")          \
  X(assetc, hm_truncated, "HM-TRUNC", "the file ends inside a field")                                   \
  X(assetc, hm_count_too_large, "HM-COUNT", "a count cannot fit in the remaining bytes")               \
  X(assetc, hm_trailing_bytes, "HM-TRAILING", "bytes follow the end of the structure")                  \
  X(assetc, hm_bad_version, "HM-VERSION", "the format version is not the one this reader knows")       \
  X(assetc, hm_limit_exceeded, "HM-LIMITS", "a count or size exceeds the caller's limits")             \
  /* .hmesh structure */                                                                        \
  X(assetc, hm_chunk_align, "HM-CHUNK-ALIGN", "a chunk offset is not a multiple of 16")                 \
  X(assetc, hm_chunk_range, "HM-CHUNK-RANGE",                                                           \
    "a chunk extends past the end of the file or overlaps the header, the table or another chunk") \
  X(assetc, hm_duplicate_chunk, "HM-DUP-CHUNK", "a catalogue chunk appears more than once")             \
  X(assetc, hm_missing_chunk, "HM-MISSING-CHUNK", "DESC is missing, or a chunk a DESC count or SKIN needs") \
  X(assetc, hm_bad_desc, "HM-DESC", "DESC vertexStride is not 28 or indexWidth is not 2 or 4")          \
  X(assetc, hm_chunk_size, "HM-CHUNK-SIZE", "a chunk's size disagrees with DESC or its element size")  \
  X(assetc, hm_submesh_range, "HM-SUBMESH-RANGE",                                                       \
    "a submesh's index or meshlet range exceeds IDXS/MLET, or baseVertex exceeds vertexCount")  \
  X(assetc, hm_material_slot, "HM-MATERIAL-SLOT", "a submesh materialSlot is neither 0xFFFFFFFF nor < materialCount") \
  X(assetc, hm_meshlet_range, "HM-MESHLET-RANGE",                                                       \
    "a meshlet's vertex or triangle range exceeds MLVR/MLTR, overlaps, or exceeds the DESC maxima") \
  X(assetc, hm_skeleton_parent, "HM-SKEL-PARENT", "a joint's parent is neither -1 nor an earlier joint") \
  X(assetc, hm_lod_range, "HM-LOD-RANGE", "LODT disagrees with DESC.submeshCount or a LOD range exceeds LODI") \
  /* .hmesh deep checks */                                                                      \
  X(assetc, hm_index_value, "HM-INDEX-VALUE", "an IDXS, MLVR or LODI value is >= vertexCount")         \
  X(assetc, hm_meshlet_index, "HM-MESHLET-INDEX", "a meshlet triangle's local index is >= the meshlet's vertexCount") \
  X(assetc, hm_skin_joint, "HM-SKIN-JOINT", "a SKIN joint index is >= the SKEL joint count")           \
  X(assetc, hm_meshlet_coverage, "HM-MESHLET-COVER",                                                   \
    "a submesh's meshlets do not hold exactly its triangles (check_meshlet_coverage)")          \
  X(assetc, hm_not_finite, "HM-FINITE", "a position, bound, weight, joint transform, factor or key value is not finite") \
  /* .hmat, .hman, .hpack, .hanim */                                                            \
  X(assetc, hm_material_size, "HM-HMAT-SIZE", "a .hmat is not exactly 16 + 96 x count bytes")          \
  X(assetc, hm_alpha_mode, "HM-HMAT-ALPHA", "a material's alpha mode (flags bits 1-2) is 3")           \
  X(assetc, hm_manifest_order, "HM-HMAN-ORDER", ".hman entries are not sorted by hash or repeat a hash") \
  X(assetc, hm_manifest_colorspace, "HM-HMAN-COLORSPACE", "a .hman colorspace is neither 0 (linear) nor 1 (sRGB)") \
  X(assetc, hm_bad_path, "HM-PATH",                                                                     \
    "a path is empty, absolute, has a backslash, NUL, empty, '.' or '..' component")             \
  X(assetc, hm_pack_toc, "HM-HPAK-TOC", "the .hpack TOC does not end exactly at 24 + tocBytes")         \
  X(assetc, hm_pack_order, "HM-HPAK-ORDER", ".hpack TOC paths are not strictly ascending")              \
  X(assetc, hm_pack_range, "HM-HPAK-RANGE",                                                             \
    "a .hpack entry is unaligned, extends past the file, or overlaps the TOC or another entry")  \
  X(assetc, hm_anim_channel, "HM-HANIM-CHANNEL", "a .hanim channel path is not 0..2 or interp not 0..1") \
  X(assetc, hm_anim_components, "HM-HANIM-COMPONENTS",                                                  \
    "a .hanim channel's components is not 3 (translation, scale) or 4 (rotation)")              \
  X(assetc, hm_anim_time, "HM-HANIM-TIME", "a key time is not finite or decreases, or a duration is negative or not finite") \
  /* assetc check: across files */                                                              \
  X(assetc, hm_check_materials, "HM-CHECK-MATERIALS", "a .hmat row count differs from its .hmesh materialCount") \
  X(assetc, hm_check_texture, "HM-CHECK-TEXTURE", "a .hmat texture ref is not in the .hman manifest")  \
  X(assetc, hm_check_file, "HM-CHECK-FILE", "a .hman entry names a file that does not exist")           \
  X(assetc, hm_check_hash, "HM-CHECK-HASH", "a .hman entry's hash is not the FNV-1a of its path without .ktx2") \
  X(assetc, hm_check_joint, "HM-CHECK-JOINT", "a .hanim channel's joint is outside the companion .hmesh SKEL") \
  X(assetc, hm_check_manifest, "HM-CHECK-MANIFEST", "no .hman manifest although a .hmat references textures")
// clang-format on
