// tools/pipeline/formats.hpp - the foreign formats the tools recognise
// beside .untold (Urho3D, Pragma UDM, assetc), each found by its magic
// bytes, never by the file extension.
//
// `info`, `validate` and `dump` ask `recognise(bytes)` for a handler; a
// format with an importer also feeds `cook` through the neutral scene model
// (untold/convert/model.hpp). Each family registers its handlers in its own
// file (format_urho3d.cpp, format_udm.cpp, format_assetc.cpp); a family's
// own subcommands (`untold pak`, `untold udm`, `untold check` ...) are
// commands of the command line (tools/cli/).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <untold/budget.hpp>
#include <untold/bytes.hpp>
#include <untold/convert/model.hpp>
#include <untold/error.hpp>
#include <untold/limits.hpp>

#include "inspect.hpp"

namespace untold::tools {

/// What an importer gets from `untold cook`.
struct import_request {
  std::filesystem::path input;
  byte_span bytes;                               // the input file's bytes
  std::vector<std::filesystem::path> animations; // --animations (formats with separate clip files)
  untold::limits limits{};
  /// The input's budget (untold/budget.hpp), made by `cook` for all its
  /// inputs and shared with the writer; the importer charges what it reads
  /// and builds to it. Null: the importer makes its own.
  untold::budget* budget = nullptr;
};

/// How many items of each list `info` prints: a longer list is summarised
/// as its first items and its count. `untold info --full` lifts it, so the
/// output of a small file with huge counts stays small unless asked for.
struct info_listing {
  std::size_t max_items = 16;
};
/// The run's listing (set by `info` before it calls the handlers).
[[nodiscard]] info_listing& listing() noexcept;

struct format_handler {
  std::string_view name;         // e.g. "urho3d-model"; printed as "format" in JSON
  std::string_view description;  // e.g. "Urho3D model (.mdl)"
  /// True when `head` (the first bytes of the file, possibly all of it)
  /// starts with this format's magic.
  bool (*recognise)(byte_span head) = nullptr;
  /// The counts a user checks first. Must contain "file", "format", "valid"
  /// and, when not valid, "error" (error_json).
  json (*info)(const std::string& path, byte_span file) = nullptr;
  /// {"file", "format", "valid", "error"?} after the format's strict checks
  /// (deep: also the value-level checks).
  json (*validate)(const std::string& path, byte_span file, bool deep) = nullptr;
  /// The whole structure (names, not numbers, for enums), written to `out`
  /// as one object while it is produced: memory stays bounded by the parsed
  /// file and one list item, whatever the counts (the output grows with
  /// them). On a file the format's checks refuse it writes nothing and
  /// returns {"file", "format", "valid": false, "error"}.
  std::optional<json> (*dump)(const std::string& path, byte_span file, document_stream& out) = nullptr;
  /// For `cook`: fill a neutral scene (nullptr when the format is not a model).
  result<convert::scene> (*import)(const import_request& request) = nullptr;
};

/// {"file": path, "format": format}: how every handler's JSON starts.
[[nodiscard]] json format_json(const std::string& path, std::string_view format);
/// `j` with "valid": false and "error": error_json(e).
[[nodiscard]] json invalid_json(json j, const error& e);

/// For a dump small enough to make as one json value (bounded by the
/// format's limits, e.g. a shader's tables): writes `document` to `out`
/// when it is valid, else returns it (the format_handler::dump contract).
[[nodiscard]] std::optional<json> write_whole(const json& document, document_stream& out);

/// The error of an input that is neither .untold nor a registered foreign
/// format: E-FORMAT-UNKNOWN, with the first bytes and the formats tried in
/// the message ("describe" starts with the rule id, as every error's does).
[[nodiscard]] json unrecognised_error_json(byte_span bytes);

/// Every registered foreign format.
[[nodiscard]] std::span<const format_handler> foreign_formats();

/// The handler whose magic `head` starts with, or nullptr (.untold itself
/// and unknown files).
[[nodiscard]] const format_handler* recognise(byte_span head);

/// The handler named `name` (format_handler::name, e.g. "urho3d-package"),
/// or nullptr.
[[nodiscard]] const format_handler* find_format(std::string_view name);

/// Each family's registration (format_<family>.cpp).
void add_urho3d_formats(std::vector<format_handler>& out);
void add_udm_formats(std::vector<format_handler>& out);
void add_assetc_formats(std::vector<format_handler>& out);

}  // namespace untold::tools
