// tools/pipeline/inspect.hpp - what `untold info`, `validate` and `dump` report, as
// JSON documents (nlohmann::ordered_json, keys in a fixed order) and as text
// rendered from those same documents. docs/cli.md describes the shapes.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <untold/asset.hpp>
#include <untold/bytes.hpp>
#include <untold/error.hpp>

namespace untold::tools {

using json = nlohmann::ordered_json;

/// One member of json_object: a key and its value.
struct json_member {
  std::string_view key;
  mutable json value;  // mutable: moved out of the list, whose elements are const
};

/// The object {members...} in their order: what json{{key, value}, ...}
/// gives, without nlohmann's initializer-list path, which builds each member
/// as a two-element array first (about 4 times the time per object; a dump
/// of a million list items makes a million of them). Values are moved in.
[[nodiscard]] inline json json_object(std::initializer_list<json_member> members) {
  json object = json::object();
  auto& slots = object.get_ref<json::object_t&>();
  slots.reserve(members.size());
  for (const json_member& m : members) slots.emplace_back(m.key, std::move(m.value));
  return object;
}

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

/// The text layout of `untold info|dump` without --json, for a JSON
/// document: one "key: value" line per member, indented by depth (capped at
/// 32 levels so the text stays linear in the input); short arrays of scalars
/// and small flat objects stay on one line. Keys and strings are escaped.
[[nodiscard]] std::string json_as_text(const json& root);

/// Emits one document piece by piece, as JSON (the 2-space layout of
/// to_text) or as text (the layout of json_as_text), so that a huge table
/// is never held as one json value (dump, check): memory stays bounded by
/// the largest value() while the output grows with the input.
/// open/close a key's object ('{') or array ('['), value() one json value,
/// text() one already rendered (JSON only) at current_indent(); value()
/// before any open() writes a whole document. Keys are
/// ignored inside arrays (text shows "[index]"). The same calls give
/// exactly what to_text / json_as_text give for the whole document.
class document_stream {
 public:
  enum class syntax { json, text };
  /// Keeps its own copy of `out` (a function converted to a text_sink at the
  /// call is a temporary).
  explicit document_stream(text_sink out, syntax form = syntax::json) : out_(std::move(out)), form_(form) {}
  void open(const char* key, char bracket);
  void close(char bracket);
  void value(const char* key, const json& v);
  /// Every member of `object`, as value() each.
  void members(const json& object);
  /// The array `key` of make(item) for each of `items`, one value() at a
  /// time. A list of up to 16 items is written as one value, so that it
  /// keeps the layout of the whole document (text shows short lists of
  /// scalars on one line).
  template <class Range, class Make>
  void list(const char* key, const Range& items, Make make) {
    json first = json::array();
    auto it = items.begin();
    const auto end = items.end();
    for (; it != end && first.size() < 16; ++it) first.push_back(make(*it));
    if (it == end) {
      value(key, first);
      return;
    }
    open(key, '[');
    for (const json& v : first) value(nullptr, v);
    for (; it != end; ++it) value(nullptr, make(*it));
    close(']');
  }
  /// A value already rendered as JSON text at current_indent().
  void text(const char* key, std::string_view rendered);
  [[nodiscard]] std::size_t current_indent() const noexcept { return 2 * frames_.size(); }

 private:
  struct frame {
    bool array = false;
    bool empty = true;
    std::size_t index = 0;
    std::string key;  // text: the display key, printed before the first member
  };
  void item(const char* key);
  [[nodiscard]] std::string text_key(const char* key);
  void flush_text_headers();
  void indent() { out_(std::string(2 * frames_.size(), ' ')); }

  text_sink out_;
  syntax form_;
  std::vector<frame> frames_;
};

/// Every table of a validated asset; `vertices` > 0 adds the first that many
/// decoded vertices of each mesh. The write_ forms stream record by record
/// (memory bounded by one record; output linear in the file, whatever the
/// entity depth); dump_json builds the whole document (small files, tests).
[[nodiscard]] json dump_json(const std::string& name, const asset& a, std::uint32_t vertices);
void write_dump_json(const std::string& name, const asset& a, std::uint32_t vertices, const text_sink& out);
void write_dump_text(const std::string& name, const asset& a, std::uint32_t vertices, const text_sink& out);

/// The JSON text the tool prints (2-space indent; invalid UTF-8 replaced).
/// A float as the shortest decimal that reads back as the same float (0.7f
/// prints as 0.7, not 0.699999988079071), so printed values are stable
/// through a JSON round trip; NaN and infinity become null.
[[nodiscard]] json float_json(float f);
[[nodiscard]] std::string to_text(const json& j);

}  // namespace untold::tools
