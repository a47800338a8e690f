// tools/pipeline/format_assetc.hpp - what the assetc commands
// (tools/cli/check.cpp, pack.cpp) share with the family's format handlers
// (format_assetc.cpp).
#pragma once

#include <filesystem>
#include <utility>
#include <vector>

#include <untold/assetc/assetc.hpp>
#include <untold/budget.hpp>
#include <untold/convert/model.hpp>

namespace untold::tools {

/// The read options the tools open assetc files with: the library's limits,
/// but room for an offline tool's tables (a pack of a whole game may hold
/// far more than the default 1024 entries, limits::max_chunks); `deep` adds
/// the value-level checks.
[[nodiscard]] assetc::open_options assetc_open_options(bool deep = false);

/// The files `untold convert --to assetc` writes for `s` at `output`
/// (OUT.hmesh): OUT.hmesh, OUT.hmat, OUT.hanim when a clip animates the
/// skeleton, OUT/tex_<i>.ktx2 per used texture whose image can be read
/// (relative to `input`'s directory; decoded and written as raw RGBA8 +
/// zstd KTX2, a KTX2 image kept as is) and OUT.hman mapping their refs when
/// there are any. convert::to_assetc with the compiler's meshlets, but the
/// scene's own vertex order and LODs (none are generated). Nothing is
/// written here; every file was read back by its strict reader.
[[nodiscard]] result<std::vector<std::pair<std::filesystem::path, std::vector<std::byte>>>> assetc_convert_outputs(
    const convert::scene& s, const std::filesystem::path& input, const std::filesystem::path& output,
    const untold::limits& limits, untold::budget& budget, convert::conversion_report& report);

}  // namespace untold::tools
