// untold/urho3d/urho3d.hpp - every Urho3D format in one include
// (docs/urho3d.md):
//   model.hpp      .mdl  UMDL / UMD2 / UMD3: open_model, validate_model_deep, write_model
//   animation.hpp  .ani  UANI / UAN2: open_animation, validate_animation_deep, write_animation
//   package.hpp    .pak  UPAK / ULZ4: open_package, extract, extract_entry(_into), verify_package, write_package
//   shader.hpp     .vs3/.ps3/.vs4/.ps4 USHD and .asc ASBC: open_shader, write_shader, open_script,
//                  write_script
//   import.hpp     model + animations -> untold::convert::scene (cook)
// Every reader is safe on untrusted input and returns errors with U3D-* rule
// ids (rules/urho3d.hpp); results view the caller's buffer.
#pragma once

#include "animation.hpp"
#include "common.hpp"
#include "import.hpp"
#include "model.hpp"
#include "package.hpp"
#include "../rules/urho3d.hpp"
#include "shader.hpp"
