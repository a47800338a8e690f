// untold/urho3d/rules.hpp - the rule table of the Urho3D .mdl/.ani/.pak/shader caches (docs/urho3d.md).
//
// X(errc name, rule id, message), joined into untold::errc by error.hpp: one
// error type for every format. Names start with "u3d_", rule ids with
// "U3D-"; docs/urho3d.md maps every id to the function that enforces it.
// Only macros here, so error.hpp stays cheap to include.
#pragma once

// clang-format off
#define UNTOLD_URHO3D_ERROR_TABLE(X)                                                                  \
  X(u3d_bad_magic, "U3D-MAGIC", "the file does not start with a recognised identifier")          \
  X(u3d_truncated, "U3D-TRUNC", "the file ends inside a field")                                   \
  X(u3d_count_too_large, "U3D-COUNT", "a count cannot fit in the remaining bytes")               \
  X(u3d_trailing_bytes, "U3D-TRAILING", "bytes follow the end of the structure")
// clang-format on
