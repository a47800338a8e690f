// untold/rules/urho3d.hpp - the rule table of the Urho3D .mdl/.ani/.pak/shader caches (docs/urho3d.md).
//
// X(family, errc name, rule id, message), joined into untold::errc by error.hpp: one
// error type for every format. Names start with "u3d_", rule ids with
// "U3D-"; docs/urho3d.md maps every id to the function that enforces it.
// Only macros here, so error.hpp stays cheap to include.
#pragma once

// clang-format off
#define UNTOLD_URHO3D_RULES(X)                                                                  \
  X(urho3d, u3d_bad_magic, "U3D-MAGIC", "the file does not start with a recognised identifier")          \
  X(urho3d, u3d_no_identifier, "U3D-MAGIC-NONE",                                                          \
    "the model has no identifier (missing magic \"UMDL\"/\"UMD2\"): an early-2011 Urho3D model, re-export it") \
  X(urho3d, u3d_truncated, "U3D-TRUNC", "the file ends inside a field")                                   \
  X(urho3d, u3d_count_too_large, "U3D-COUNT", "a count cannot fit in the remaining bytes")               \
  X(urho3d, u3d_trailing_bytes, "U3D-TRAILING", "bytes follow the end of the structure")                 \
  X(urho3d, u3d_missing_nul, "U3D-STRING", "a name has no terminating NUL before the end of the file")  \
  X(urho3d, u3d_bad_version, "U3D-VERSION", "the UMD3/UAN2 version is not one this reader knows (1..3)") \
  X(urho3d, u3d_element_type, "U3D-ELEMENT-TYPE", "a vertex element type is not 0..6 (INT..UBYTE4_NORM)") \
  X(urho3d, u3d_element_semantic, "U3D-ELEMENT-SEMANTIC",                                                \
    "a vertex element semantic is not 0..8 (POSITION..OBJECTINDEX)")                             \
  X(urho3d, u3d_element_mask, "U3D-ELEMENT-MASK", "a legacy vertex element mask has bits above 0x2000")   \
  X(urho3d, u3d_vertex_size, "U3D-VERTEX-SIZE",                                                          \
    "a vertex buffer has vertices but no elements, or vertexCount x vertexSize exceeds 32 bits")  \
  X(urho3d, u3d_morph_range, "U3D-MORPH-RANGE", "a vertex buffer's morph range exceeds its vertex count") \
  X(urho3d, u3d_index_size, "U3D-INDEX-SIZE", "an index buffer's index size is not 2 or 4")              \
  X(urho3d, u3d_lod_count, "U3D-LOD-COUNT", "a geometry has no LOD levels")                             \
  X(urho3d, u3d_primitive_type, "U3D-PRIMITIVE", "a LOD's primitive type is not 0..5")                   \
  X(urho3d, u3d_buffer_ref, "U3D-BUFFER-REF", "a LOD references a vertex or index buffer that does not exist") \
  X(urho3d, u3d_draw_range, "U3D-DRAW-RANGE", "a LOD's draw range exceeds its index buffer")              \
  X(urho3d, u3d_index_value, "U3D-INDEX-VALUE", "an index in a LOD's draw range is >= its vertex count") \
  X(urho3d, u3d_bone_mapping, "U3D-BONE-MAPPING", "a geometry's bone mapping entry is not a bone")      \
  X(urho3d, u3d_blend_index, "U3D-BLEND-INDEX",                                                          \
    "a weighted blend index is outside the geometry's bone mapping (or the skeleton)")            \
  X(urho3d, u3d_bone_parent, "U3D-BONE-PARENT", "a bone's parent index is out of range or the parent chain has a cycle") \
  X(urho3d, u3d_collision_mask, "U3D-COLLISION", "a bone's collision mask has bits other than 1 (sphere) and 2 (box)") \
  X(urho3d, u3d_morph_buffer, "U3D-MORPH-BUFFER", "a morph names a vertex buffer that does not exist or names one twice") \
  X(urho3d, u3d_morph_mask, "U3D-MORPH-MASK", "a morph element mask is empty or has bits other than position, normal, tangent") \
  X(urho3d, u3d_morph_vertex, "U3D-MORPH-VERTEX", "a morph vertex index is >= its vertex buffer's vertex count") \
  X(urho3d, u3d_not_finite, "U3D-FINITE",                                                                \
    "a position, texture coordinate, LOD distance, transform, bound, time or key value is not finite")  \
  X(urho3d, u3d_track_mask, "U3D-TRACK-MASK", "an animation track mask has bits other than 1, 2, 4")     \
  X(urho3d, u3d_key_order, "U3D-KEY-ORDER", "animation keyframe times decrease within a track")         \
  X(urho3d, u3d_variant_type, "U3D-VARIANT-TYPE", "a UAN2 variant track has a value type this reader cannot size") \
  X(urho3d, u3d_interpolation, "U3D-INTERPOLATION", "a UAN2 variant track interpolation is not 0..3")     \
  X(urho3d, u3d_shader_type, "U3D-SHADER-TYPE", "a shader cache's shader type is not 0 (vertex) or 1 (pixel)") \
  X(urho3d, u3d_shader_model, "U3D-SHADER-MODEL", "a shader cache's shader model is not 3 or 4")          \
  X(urho3d, u3d_pak_name, "U3D-PAK-NAME",                                                                \
    "a package entry name is empty, absolute, contains '..' or '\\', or repeats another entry's name") \
  X(urho3d, u3d_pak_range, "U3D-PAK-RANGE", "a package entry's data lies outside the package's data area") \
  X(urho3d, u3d_pak_overlap, "U3D-PAK-OVERLAP", "two package entries' data overlap")                      \
  X(urho3d, u3d_pak_path, "U3D-PAK-PATH",                                                                \
    "an entry's name is a directory another entry lies in (\"a\" and \"a/b\"): no directory tree holds both") \
  X(urho3d, u3d_pak_block, "U3D-PAK-BLOCK",                                                              \
    "a ULZ4 block is empty, its lengths disagree with the entry size, it declares more than LZ4 can decode "  \
    "from its bytes (256 per byte), or it does not decode to exactly its length")                        \
  X(urho3d, u3d_pak_checksum, "U3D-PAK-CHECKSUM", "an entry's or the package's SDBM checksum does not match its data") \
  X(urho3d, u3d_pak_size, "U3D-PAK-SIZE", "the package's trailing u32 is not the package size")
// clang-format on
