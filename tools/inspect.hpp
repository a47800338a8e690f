// tools/inspect.hpp - what `untold info`, `validate` and `dump` report, as
// JSON documents (nlohmann::ordered_json, keys in a fixed order) and as text
// rendered from those same documents. docs/cli.md describes the shapes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <untold/asset.hpp>
#include <untold/bytes.hpp>
#include <untold/error.hpp>

namespace untold::tools {

using json = nlohmann::ordered_json;

/// {"rule", "name", "message", "context": {...}, "describe"}.
[[nodiscard]] json error_json(const error& e);

/// Header, chunk table, counts, bounds and validity of one file. Works as far
/// as the file allows: a file whose header parses but whose records break a
/// rule still lists its header and chunks, with "valid": false.
[[nodiscard]] json info_json(const std::string& name, byte_span file);
[[nodiscard]] std::string info_text(const json& info);

/// {"file", "valid", "error"} after untold::open (deep checks on request).
[[nodiscard]] json validate_json(const std::string& name, byte_span file, bool deep);
[[nodiscard]] std::string validate_text(const json& result);

/// Receives output text piece by piece (e.g. fwrite to stdout).
using text_sink = std::function<void(std::string_view)>;

/// Every table of a validated asset; `vertices` > 0 adds the first that many
/// decoded vertices of each mesh. The write_ forms stream record by record
/// (memory bounded by one record; output linear in the file, whatever the
/// entity depth); dump_json builds the whole document (small files, tests).
[[nodiscard]] json dump_json(const std::string& name, const asset& a, std::uint32_t vertices);
void write_dump_json(const std::string& name, const asset& a, std::uint32_t vertices, const text_sink& out);
void write_dump_text(const std::string& name, const asset& a, std::uint32_t vertices, const text_sink& out);

/// The JSON text the tool prints (2-space indent; invalid UTF-8 replaced).
[[nodiscard]] std::string to_text(const json& j);

}  // namespace untold::tools
