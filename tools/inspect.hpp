// tools/inspect.hpp - what `untold info`, `validate` and `dump` report, as
// JSON documents (nlohmann::ordered_json, keys in a fixed order) and as text
// rendered from those same documents. docs/cli.md describes the shapes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <untold/asset.hpp>
#include <untold/bytes.hpp>
#include <untold/error.hpp>

namespace untold::tools {

using json = nlohmann::ordered_json;

/// `text` for a line of text output: control characters, C1 controls and
/// malformed UTF-8 escaped (untold::detail::append_escaped, as
/// error::describe does with names). Every name from a file and every path
/// goes through this before it reaches text output; JSON output needs it
/// not (nlohmann escapes control characters and replaces malformed UTF-8).
[[nodiscard]] std::string escaped(std::string_view text);

/// The first up to 8 bytes as "7f 45 4c 46 ..." (for "unrecognised" messages).
[[nodiscard]] std::string first_bytes(byte_span bytes);

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

/// Emits one JSON document piece by piece with the same 2-space layout as
/// to_text, so a huge table is never held as one json value (dump, check).
/// open/close a key's object ('{') or array ('['), value() one json value,
/// text() one already rendered at current_indent().
class json_stream {
 public:
  explicit json_stream(const text_sink& out) : out_(out) {}
  void open(const char* key, char bracket) {
    item(key);
    out_(std::string_view(&bracket, 1));
    first_.push_back(true);
  }
  void close(char bracket) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) {
      out_("\n");
      indent();
    }
    out_(std::string_view(&bracket, 1));
    if (first_.empty()) out_("\n");
  }
  void value(const char* key, const json& v) {
    item(key);
    const std::string text = v.dump(2, ' ', false, json::error_handler_t::replace);
    // Appended, not "\n" + std::string(...): that trips GCC 12's -Wrestrict at -O3 (a false positive).
    std::string pad = "\n";
    pad.append(2 * first_.size(), ' ');
    std::string indented;
    indented.reserve(text.size());
    for (std::size_t at = 0;;) {
      const std::size_t nl = text.find('\n', at);
      indented.append(text, at, nl == std::string::npos ? std::string::npos : nl - at);
      if (nl == std::string::npos) break;
      indented += pad;
      at = nl + 1;
    }
    out_(indented);
  }
  /// A value already rendered as text at current_indent().
  void text(const char* key, std::string_view rendered) {
    item(key);
    out_(rendered);
  }
  [[nodiscard]] std::size_t current_indent() const noexcept { return 2 * first_.size(); }

 private:
  void item(const char* key) {
    if (first_.empty()) return;
    out_(first_.back() ? "\n" : ",\n");
    first_.back() = false;
    indent();
    if (key != nullptr) {
      out_(json(key).dump());
      out_(": ");
    }
  }
  void indent() { out_(std::string(2 * first_.size(), ' ')); }

  const text_sink& out_;
  std::vector<bool> first_;
};

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
