// tools/pipeline/format_assetc.hpp - what the assetc commands
// (tools/cli/check.cpp, pack.cpp) share with the family's format handlers
// (format_assetc.cpp).
#pragma once

#include <untold/assetc/assetc.hpp>

namespace untold::tools {

/// The read options the tools open assetc files with: the library's limits,
/// but room for an offline tool's tables (a pack of a whole game may hold
/// far more than the default 1024 entries, limits::max_chunks); `deep` adds
/// the value-level checks.
[[nodiscard]] assetc::open_options assetc_open_options(bool deep = false);

}  // namespace untold::tools
