// untold/rules/core.hpp - the rule table of the .untold container (docs/format.md)
// and the library's own non-file errors (E-...).
//
// X(family, errc name, rule id, message). Only macros here: error.hpp joins
// every family's table into one untold::errc, and everything else (name(),
// rule_id(), message(), family()) is generated from these rows. To find the
// code that enforces a rule, grep for its errc name (R-MESH-MATERIAL ->
// mesh_material).
#pragma once

// clang-format off
#define UNTOLD_CORE_RULES(X)                                                                                   \
  X(untold, ok, "OK", "no error")                                                                                       \
  /* spec 6: header and table */                                                                                \
  X(untold, bad_magic, "R-MAGIC", "the first 8 bytes are not the .untold magic \"UNTOLD\\0\\0\"")                       \
  X(untold, truncated_header, "R-TRUNC-HEADER", "the file is shorter than the 204-byte header")                        \
  X(untold, unsupported_version, "R-VERSION", "formatVersion is not in 1..4")                                           \
  X(untold, bad_header_size, "R-HEADER-SIZE", "headerSize is not 204")                                                  \
  X(untold, unknown_file_type, "R-FILE-TYPE", "unknown fileType")                                                       \
  X(untold, unknown_vertex_layout, "R-VERTEX-LAYOUT", "unknown vertexLayout")                                           \
  X(untold, truncated_table, "R-TRUNC-TABLE", "the chunk table extends past the end of the file")                      \
  X(untold, unknown_compression, "R-COMPRESSION", "unknown compressionType")                                            \
  X(untold, misaligned_chunk, "R-ALIGN", "a chunk fileOffset is not a multiple of 16")                                 \
  X(untold, chunk_out_of_range, "R-CHUNK-RANGE",                                                                        \
    "a chunk extends past the end of the file or overlaps the header, the table or another chunk")             \
  X(untold, raw_size_mismatch, "R-RAW-SIZE", "an uncompressed chunk has compressedSize != uncompressedSize")          \
  X(untold, duplicate_chunk, "R-DUP-CHUNK", "a core chunk type appears more than once")                                \
  X(untold, missing_required_chunk, "R-REQUIRED", "a chunk required for this fileType is missing")                     \
  X(untold, table_size_mismatch, "R-TABLE-SIZE", "a record table's uncompressedSize != elementCount * record size")    \
  X(untold, header_count_mismatch, "R-HEADER-COUNTS", "a header count differs from its table's element count")         \
  X(untold, limit_exceeded, "R-LIMITS", "a count or size exceeds the caller's limits")                                 \
  /* spec 6: payloads */                                                                                        \
  X(untold, decompress_failed, "R-DECOMPRESS", "a compressed chunk failed to decode to exactly its declared size")     \
  X(untold, compression_unsupported, "R-DECOMPRESS",                                                                    \
    "this build of the library cannot decode the chunk's compression (unsupported here)")                      \
  X(untold, codec_chunk_type, "R-CODEC-CHUNK",                                                                         \
    "meshopt compression (3, 4) on a chunk other than VERTEX_DATA/INDEX_DATA, or a stream of the other kind")  \
  X(untold, hash_mismatch, "R-HASH", "contentHash does not match the chunk bytes")                                     \
  /* spec 6: records */                                                                                         \
  X(untold, bad_string, "R-STRING", "a string reference is outside the string table, unterminated or not UTF-8")      \
  X(untold, entity_mesh_range, "R-ENTITY-MESH-RANGE", "an entity's mesh record range exceeds the mesh table")          \
  X(untold, duplicate_entity_id, "R-ENTITY-ID", "two entities share an entityId")                                      \
  X(untold, bad_entity_parent, "R-ENTITY-PARENT", "an entity's parent does not exist or the parent chain has a cycle")  \
  X(untold, mesh_entity, "R-MESH-ENTITY", "a mesh's entityId names no entity")                                         \
  X(untold, mesh_material, "R-MESH-MATERIAL", "a mesh's materialIndex is neither NONE nor a material")                 \
  X(untold, bad_index_type, "R-INDEX-TYPE", "a mesh's indexType is not 1 (uint16) or 2 (uint32)")                     \
  X(untold, bad_stride, "R-STRIDE", "a mesh's vertexStrideBytes does not match the vertex layout (32)")               \
  X(untold, vertex_size, "R-VERTEX-SIZE", "a mesh's vertexDataSizeBytes != vertexCount * vertexStrideBytes")          \
  X(untold, index_size, "R-INDEX-SIZE", "a mesh's indexDataSizeBytes != indexCount * index size")                     \
  X(untold, index_count, "R-INDEX-COUNT", "a mesh's indexCount is not a multiple of 3 (meshes are triangle lists)")    \
  X(untold, vertex_range, "R-VERTEX-RANGE", "a mesh's vertex bytes exceed VERTEX_DATA")                                \
  X(untold, index_range, "R-INDEX-RANGE", "a mesh's index bytes exceed INDEX_DATA")                                    \
  X(untold, edge_range, "R-EDGE-RANGE", "a mesh's edge indices exceed EDGE_INDEX_DATA or it is missing")              \
  X(untold, texture_index, "R-TEXTURE-INDEX", "a material texture index is neither NONE nor a texture")               \
  X(untold, texture_format, "R-TEXTURE-FORMAT", "unknown textureFormat")                                               \
  X(untold, extension_range, "R-EXT-RANGES", "an extension-table reference or range is invalid")                      \
  X(untold, morph_mesh, "R-MORPH-MESH", "a morph target's meshRecordIndex names no mesh")                              \
  X(untold, morph_range, "R-MORPH-RANGE", "a morph target's entries exceed MORPH_TARGET_DATA, or that chunk is missing") \
  X(untold, morph_driver, "R-MORPH-DRIVER", "a morph driver's targetIndex names no morph target")                      \
  /* spec 6: deep checks */                                                                                     \
  X(untold, index_value, "R-INDEX-VALUE", "an index is >= the mesh's vertexCount")                                     \
  X(untold, not_finite, "R-FINITE", "a position, bound or transform is not finite")                                    \
  X(untold, out_of_bounds, "R-BOUNDS", "a vertex lies outside its mesh's localBounds")                                 \
  X(untold, morph_vertex, "R-MORPH-VERTEX", "a morph entry's vertexIndex is >= its mesh's vertexCount")                \
  /* not file rules: I/O and API misuse */                                                                      \
  X(untold, io_open_failed, "E-IO-OPEN", "the file could not be opened")                                               \
  X(untold, io_read_failed, "E-IO-READ", "reading the file failed")                                                    \
  X(untold, io_empty_file, "E-IO-EMPTY", "the file is empty")                                                          \
  X(untold, io_write_failed, "E-IO-WRITE", "writing the file failed")                                                  \
  X(untold, range_missing, "E-RANGE-MISSING", "the bytes this needs have not been supplied yet")                      \
  X(untold, invalid_argument, "E-INVALID-ARGUMENT", "invalid input to the writer or API")                              \
  X(untold, format_version_too_low, "E-FORMAT-VERSION",                                                                 \
    "the requested formatVersion cannot store the content (limit = the lowest version that can)")              \
  X(untold, encode_failed, "E-ENCODE", "compressing or hashing failed inside the codec library")                        \
  X(untold, format_unknown, "E-FORMAT-UNKNOWN",                                                                         \
    "the input is in no format this tool reads (its first bytes are no known magic, and no importer claims it)") \
  /* block digests (integrity.hpp): the untold.integrity plugin chunk */                                        \
  X(untold, integrity_layout, "R-INTEGRITY-LAYOUT", "the untold.integrity chunk is malformed or appears twice")          \
  X(untold, integrity_hash, "R-INTEGRITY-HASH", "the untold.integrity chunk's digest of its own digests does not match") \
  X(untold, directory_hash, "R-DIRECTORY-HASH", "the header or chunk table differs from the integrity chunk's digest")  \
  X(untold, block_hash, "R-BLOCK-HASH", "a block of a chunk's stored bytes does not match its SHA-256 block digest")
// clang-format on
