// untold/udm/rules.hpp - the rule table of the Pragma UDM binary/ASCII (docs/udm.md).
//
// X(errc name, rule id, message), joined into untold::errc by error.hpp: one
// error type for every format. Names start with "udm_", rule ids with
// "UDM-"; docs/udm.md maps every id to the function that enforces it.
// Only macros here, so error.hpp stays cheap to include.
#pragma once

// clang-format off
#define UNTOLD_UDM_ERROR_TABLE(X)                                                                  \
  X(udm_bad_magic, "UDM-MAGIC", "the file does not start with a recognised identifier")          \
  X(udm_truncated, "UDM-TRUNC", "the file ends inside a field")                                   \
  X(udm_count_too_large, "UDM-COUNT", "a count cannot fit in the remaining bytes")               \
  X(udm_trailing_bytes, "UDM-TRAILING", "bytes follow the end of the structure")
// clang-format on
