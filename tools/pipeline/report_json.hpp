// tools/pipeline/report_json.hpp - the JSON shapes of a converter's report
// and of a cooked tile, shared by the CLI's --json output and the Python
// bindings (so both print the same fields).
#pragma once

#include <untold/convert/model.hpp>

#include "cook.hpp"
#include "cook_tiles.hpp"
#include "inspect.hpp"

namespace untold::tools {

/// [{"severity", "what", "where", "reason", "count"}, ...] in report order.
[[nodiscard]] json report_json(const convert::conversion_report& r);

/// A cook's (or convert's) result: bytes, entities, meshes, vertices,
/// triangles, materials, textures, written, warnings, dropped, changed, report.
[[nodiscard]] json cook_report_json(const cook_report& r);

/// {"tile_id", "path", "bytes", "draws", "triangles", "lod_triangles",
/// "lod_bytes", "hlod_triangles", "hlod_bytes"}.
[[nodiscard]] json tile_summary_json(const tile_summary& t);

}  // namespace untold::tools
