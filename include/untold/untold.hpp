// untold/untold.hpp - the .untold container, in one include: reader,
// validators, writer, scene joins, range streaming, vertex packing.
//
// untold reads, validates and writes .untold runtime 3D asset containers
// (spec: docs/format.md), and the runtime formats of Urho3D, Pragma UDM and
// assetc (their own entry headers, listed below). Header-only C++20; no
// exceptions, no RTTI needed.
//
// API guide
// ---------
// Open (validates every rule; errors are values with the spec rule id):
//   auto a = untold::open(bytes);                 // std::span<const std::byte>
//   auto f = untold::mapped_file::open("x.untold"); auto a = untold::open(f->bytes());
//   if (!a) fprintf(stderr, "%s\n", a.error().describe().c_str());
//   untold::open(bytes, {.deep_checks = true});   // + R-INDEX-VALUE/R-FINITE/R-BOUNDS
//
// Read (zero-copy; accessors of an opened asset cannot fail):
//   a->header(), a->chunks(), a->payload(row), a->raw_chunks()
//   a->entities(), a->meshes(), a->materials(), a->textures()   // record_view<R>
//   a->string(offset)                                            // std::string_view
//   a->vertices(mesh), a->indices(mesh), a->edge_indices(mesh)   // byte spans
//   a->table<untold::skin_record>(), a->records<R>(first, count) // extension tables
//   untold::plugin_chunks(*a), untold::view_joint_weights(*a, skin)
//
// Engine conveniences (scene.hpp; safe on any asset):
//   untold::walk_scene(*a).world[row]             // root x parents x local
//   untold::resolve_mesh(*a, i), resolve_skin(*a, i), resolve_clip(*a, i)
//
// Write (deterministic; bad input is a returned error):
//   untold::builder b{untold::file_type::tile};
//   auto e = b.add_entity({.name = "root"});
//   b.add_mesh({.entity = e, .vertices = v, .indices = i});
//   b.add_skeleton(...), add_skin(...), add_animation_clip(...), add_light(...),
//   add_camera(...), set_color_management(...), add_plugin_chunk(id, kind, version, bytes)
//   auto bytes = b.finish();                      // result<std::vector<std::byte>>
//
// Not included here (include what you use):
//   vertex_decode.hpp  bulk (SIMD) decode into float arrays: <immintrin.h>
//                      and the decoders are a third of this header's compile
//                      time, for the one translation unit that decodes
//                      (docs/compile-time.md)
//
// Other formats and conversions (not included here either):
//   urho3d/urho3d.hpp  Urho3D/rbfx .mdl .ani .pak shader caches (docs/urho3d.md)
//   udm/udm.hpp        Pragma UDM binary + ASCII, PMDL models (docs/udm.md)
//   assetc/assetc.hpp  assetc .hmesh .hmat .hman .hpack .hanim (docs/assetc.md)
//   convert/model.hpp  the neutral scene model and its conversion report (docs/convert.md)
//   convert/to_untold.hpp, to_urho3d.hpp, to_pmdl.hpp, to_assetc.hpp  its writers;
//   convert/from_untold.hpp, urho3d/import.hpp, udm/pmdl.hpp, assetc/import.hpp  its importers; convert/pose.hpp what viewers draw
//   remote/remote.hpp  HTTPS downloader, disk cache, range streaming (untold::remote)
//
// Headers, one concept each:
//   bytes.hpp        little-endian loads/stores, checked range arithmetic
//   cursor.hpp, sink.hpp  bounds-checked sequential reader / appending writer
//   limits.hpp       the one limits struct of every reader
//   budget.hpp       one memory, work and output budget per input (all formats)
//   rules/           the rule tables, one per format family (data only)
//   detail/checks.hpp finite-by-bits, safe relative path: checks every format shares
//   error.hpp        errc (name/rule_id/message), error, result<T>
//   format.hpp       enums and constants of the format
//   records.hpp      record structs and their field-by-field codecs
//   view.hpp         record_view<R>, index_view, string_table
//   asset.hpp        the opened, validated file
//   reader.hpp       open(): header/table rules and staging
//   validate.hpp     record rules and deep checks
//   extensions.hpp   extension tables 8-22: extension_records.hpp (records,
//                    views, plugin envelope), extension_rules.hpp (R-EXT-RANGES,
//                    R-MORPH-*, deep checks)
//   scene.hpp        world transforms, joined mesh/skin/clip views
//   compression.hpp  per-chunk lz4/zstd with exact-size checks
//   hash.hpp         SHA-256 (OpenSSL EVP, portable fallback)
//   content_hash.hpp the header's contentHash (R-HASH)
//   source.hpp       mapped files, range sources
//   ranges.hpp       streamed_asset: open and load by byte ranges
//   streaming.hpp    planner: which tiles/LODs/HLODs to fetch, show, drop (docs/streaming.md)
//   io.hpp           open_file(path), write_file(path, bytes)
//   packing.hpp      10:10:10:2, half floats, unorm8, octahedral
//   vertex.hpp       PBR_STATIC_V1 and GpuVertex views, encoders
//   vertex_decode.hpp bulk (SIMD) decode into float arrays (not included here)
//   gpu_formats.hpp  vertex-input formats per graphics API (docs/gpu.md)
//   integrity.hpp    the untold.integrity chunk (block digests) and its checks;
//                    integrity_writer.hpp its writing side (writers only)
//   writer.hpp       builder; file_layout.hpp (its layout, hashing) and
//                    write_options.hpp (version, compression, threads)
#pragma once

#include "bytes.hpp"
#include "error.hpp"
#include "format.hpp"
#include "records.hpp"
#include "view.hpp"
#include "asset.hpp"
#include "compression.hpp"
#include "hash.hpp"
#include "content_hash.hpp"
#include "validate.hpp"
#include "extensions.hpp"
#include "reader.hpp"
#include "writer.hpp"
#include "scene.hpp"
#include "source.hpp"
#include "ranges.hpp"
#include "streaming.hpp"
#include "io.hpp"
#include "packing.hpp"
#include "vertex.hpp"
#include "gpu_formats.hpp"
