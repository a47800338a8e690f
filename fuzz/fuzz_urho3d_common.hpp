// fuzz/fuzz_urho3d_common.hpp - what the Urho3D fuzz targets share: abort on
// a broken property, and the rule that every rejection carries a U3D- rule
// id (or R-LIMITS for the caller's limits).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include <untold/error.hpp>

#include "die.hpp"

namespace u3d_fuzz {

using untold_fuzz::die;

inline void check_rejection(const untold::error& e) {
  const std::string_view id = e.rule_id();
  if (!(id.starts_with("U3D-") || id == "R-LIMITS")) die("rejection without a U3D rule id: " + e.describe());
  (void)e.describe();
}

/// Small limits so the fuzzer explores the limit checks too.
inline untold::limits fuzz_limits() {
  untold::limits l;
  l.max_chunks = 4096;
  l.max_chunk_bytes = 1u << 24;
  l.max_total_bytes = 1u << 26;
  l.max_records = 1u << 20;
  return l;
}

}  // namespace u3d_fuzz
