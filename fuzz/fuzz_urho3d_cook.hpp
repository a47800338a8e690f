// fuzz/fuzz_urho3d_cook.hpp - the converter half of the Urho3D model and
// animation targets: what `untold cook` does with what the readers accept.
#pragma once

#include <cstddef>
#include <span>

#include <untold/convert/to_untold.hpp>
#include <untold/reader.hpp>
#include <untold/urho3d/import.hpp>

#include "fuzz_urho3d_common.hpp"

namespace u3d_fuzz {

/// What `untold cook` does with a model the deep checks accepted: import
/// (with `animations`) and to_untold, one budget for an input of
/// `input_bytes`. A refusal must carry a U3D rule or R-LIMITS; the file
/// written must open with deep checks.
inline void cook(const untold::urho3d::model& m, std::span<const untold::urho3d::animation> animations,
                 std::size_t input_bytes) {
  const untold::limits limits = fuzz_limits();
  untold::budget budget(limits, input_bytes);
  auto scene = untold::urho3d::import_model(m, animations, "fuzz", {.limits = limits, .budget = &budget});
  if (!scene) {
    check_rejection(scene.error());
    return;
  }
  untold::convert::to_untold_options options;
  options.limits = limits;
  options.budget = &budget;
  untold::convert::conversion_report report;
  auto out = untold::convert::to_untold(*scene, options, report);
  if (!out) {
    check_rejection(out.error());
    return;
  }
  auto opened = untold::open(out->file, {.deep_checks = true});
  if (!opened) die("cook wrote a file the reader rejects: " + opened.error().describe());
}

}  // namespace u3d_fuzz
