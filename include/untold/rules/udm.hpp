// untold/rules/udm.hpp - the rule table of the Pragma UDM binary/ASCII (docs/udm.md).
//
// X(family, errc name, rule id, message), joined into untold::errc by error.hpp: one
// error type for every format. Names start with "udm_", rule ids with
// "UDM-"; docs/udm.md maps every id to the function that enforces it.
// Only macros here, so error.hpp stays cheap to include.
#pragma once

// clang-format off
#define UNTOLD_UDM_RULES(X)                                                                  \
  X(udm, udm_bad_magic, "UDM-MAGIC", "the file does not start with a recognised identifier")          \
  X(udm, udm_truncated, "UDM-TRUNC", "the file ends inside a field")                                   \
  X(udm, udm_count_too_large, "UDM-COUNT", "a count cannot fit in the remaining bytes")               \
  X(udm, udm_trailing_bytes, "UDM-TRAILING", "bytes follow the end of the structure")                 \
  X(udm, udm_bad_version, "UDM-VERSION", "the UDMB version is not 1 or 2")                             \
  X(udm, udm_unknown_type, "UDM-TYPE", "a type byte is not one of the 36 UDM types")                  \
  X(udm, udm_block_size, "UDM-BLOCK-SIZE", "a block size disagrees with the bytes its content uses")  \
  X(udm, udm_block_range, "UDM-BLOCK-RANGE", "a block size exceeds its parent block or the file")     \
  X(udm, udm_depth, "UDM-DEPTH", "elements and arrays nest deeper than limits.max_depth")             \
  X(udm, udm_lz4, "UDM-LZ4", "LZ4 data does not decode to exactly its declared size")                 \
  X(udm, udm_limit, "UDM-LIMITS", "a count, a decompressed size or the input's budget (memory, work, output) exceeds the caller's limits")         \
  X(udm, udm_struct_member, "UDM-STRUCT", "a struct has no members, a non-trivial member type or a size that does not match") \
  X(udm, udm_array_type, "UDM-ARRAY-TYPE", "an array's value type cannot be stored in that kind of array") \
  X(udm, udm_bad_root, "UDM-ROOT", "the root is not an element with assetType (string), assetVersion (uint32) and assetData (element)") \
  X(udm, udm_duplicate_key, "UDM-DUP-KEY", "two children of one element share a key")                 \
  X(udm, udm_ascii_syntax, "UDM-ASCII-SYNTAX", "the text is not UDM ASCII syntax")                    \
  X(udm, udm_ascii_value, "UDM-ASCII-VALUE", "an ASCII value does not fit its type (range, count, base64)") \
  X(udm, udm_type_mismatch, "UDM-GET-TYPE", "the property does not have the type the getter asked for") \
  X(udm, udm_not_found, "UDM-GET-PATH", "no property at that key or index")                           \
  X(udm, udm_bad_tree, "UDM-WRITE", "the tree cannot be written as UDM (key over 255 bytes, sizes that disagree)") \
  X(udm, udm_pmdl, "UDM-PMDL", "the PMDL model does not have the structure a model needs")                                  \
  X(udm, udm_pmdl_joint, "UDM-PMDL-JOINT", "a vertex weight names a bone the skeleton does not have (-1 marks an unused slot)") \
  X(udm, udm_pmdl_finite, "UDM-PMDL-FINITE", "a PMDL position, uv, vertex weight, pose or animation key is NaN or infinite, or a finite pose overflows a bone matrix or a vertex")
// clang-format on
