// untold/assetc/assetc.hpp - the assetc runtime files in one include.
//
// assetc (qbart/assetc) compiles source assets into GPU-ready runtime files;
// untold reads, validates and writes them (docs/assetc.md):
//   fnv.hpp    hash_ref (FNV-1a 64, ASCII-lowercased), source/material/texture ref naming
//   hmesh.hpp  .hmesh v2: open_hmesh -> hmesh (zero-copy chunk views), write_hmesh
//   hmat.hpp   .hmat v1: open_hmat -> hmat (row view), write_hmat
//   hman.hpp   .hman v1: open_hman -> hman (find by hash), write_hman
//   hpack.hpp  .hpack v2: open_hpack -> hpack (find by path, entry spans, layout), write_hpack
//   hanim.hpp  .hanim v1: open_hanim -> hanim (clips, channels, keys), write_hanim
//   check.hpp  check_files: cross-file integrity over an abstract file lookup
//   common.hpp open_options {limits, deep_checks, budget}, le_array<T>, fourcc,
//              is_safe_runtime_path
//
// Every reader is safe on untrusted input and reports errors as values with
// HM-* rule ids (rules/assetc.hpp); no exceptions, no RTTI.
//
//   auto mesh = untold::assetc::open_hmesh(bytes, {.deep_checks = true});
//   if (!mesh) puts(mesh.error().describe().c_str());
//   for (const auto& s : mesh->submeshes()) draw(mesh->vertices().bytes(), mesh->indices().bytes(), s);
#pragma once

#include "check.hpp"
#include "common.hpp"
#include "fnv.hpp"
#include "hanim.hpp"
#include "hmat.hpp"
#include "hman.hpp"
#include "hmesh.hpp"
#include "hpack.hpp"
