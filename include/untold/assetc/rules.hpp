// untold/assetc/rules.hpp - the rule table of the assetc .hmesh/.hmat/.hman/.hpack/.hanim (docs/assetc.md).
//
// X(errc name, rule id, message), joined into untold::errc by error.hpp: one
// error type for every format. Names start with "hm_", rule ids with
// "HM-"; docs/assetc.md maps every id to the function that enforces it.
// Only macros here, so error.hpp stays cheap to include.
#pragma once

// clang-format off
#define UNTOLD_ASSETC_ERROR_TABLE(X)                                                                  \
  X(hm_bad_magic, "HM-MAGIC", "the file does not start with a recognised identifier")          \
  X(hm_truncated, "HM-TRUNC", "the file ends inside a field")                                   \
  X(hm_count_too_large, "HM-COUNT", "a count cannot fit in the remaining bytes")               \
  X(hm_trailing_bytes, "HM-TRAILING", "bytes follow the end of the structure")
// clang-format on
