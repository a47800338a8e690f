// fuzz/fuzz_udm_common.hpp - what both UDM fuzz targets (binary, ASCII) check
// of a document the reader accepted: `untold cook` runs on it. The PMDL
// importer (sharing the parse's budget, as the CLI does) either refuses it
// with a UDM- rule id, or gives a scene the .untold converter writes and
// untold::open accepts with deep checks: cook never falls through to a
// generic E-INVALID-ARGUMENT, and never writes a file the reader refuses.
#pragma once

#include <string>

#include <untold/budget.hpp>
#include <untold/convert/to_untold.hpp>
#include <untold/udm/udm.hpp>

#include "traverse.hpp"

namespace udm_fuzz {

inline void check_cook(const untold::udm::document& doc, const untold::limits& limits, untold::budget& charged) {
  untold::udm::pmdl_import_options o;
  o.limits = limits;
  o.budget = &charged;
  auto scene = untold::udm::import_pmdl(doc, o);
  if (!scene) {
    if (!scene.error().rule_id().starts_with("UDM-"))
      untold_fuzz::die("import error without a UDM rule id: " + scene.error().describe());
    return;
  }
  untold::convert::conversion_report report;
  auto out = untold::convert::to_untold(*scene, {}, report);
  if (!out) untold_fuzz::die("an imported model does not convert: " + out.error().describe());
  untold::open_options deep{.deep_checks = true};
  if (auto cooked = untold::open(out->file, deep); !cooked)
    untold_fuzz::die("a cooked model does not open: " + cooked.error().describe());
}

}  // namespace udm_fuzz
