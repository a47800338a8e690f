// untold/udm/ascii.hpp - the text form of UDM (".udm"), as Pragma writes
// and reads it, to and from the owning tree (udm::property).
//
//   "assetData"                       an Element: quoted key, then a block
//   {
//   	$float mass 1                    a value: $type key value
//   	$vec3 eyeOffset [0,0,0]          vectors in brackets
//   	$quat q [1,0,0,0]                quaternions printed w, x, y, z
//   	$stransform pose [[0,0,0][1,0,0,0][1,1,1]]
//   	$string name "white"             strings quoted, \\ and \" escaped
//   	$array list [float;3][1,2,3]     [valueType;count][values]
//   	$arrayLz4 v [struct<vec3:pos,vec2:uv>;36;1728][base64 of the LZ4 block]
//   	$lz4 blob [1000][base64]         BlobLz4: [uncompressed size][base64]
//   	$blob b [base64]   $utf8 u [base64][base64 data]
//   	$struct<float:f,vec3:v> s [1,[0,0,0]]
//   	$array els [element;2][ { ... }, { ... } ]
//   }
//   $string assetType "PMDL"
//   $uint32 assetVersion 1
// Comments (// and /* */) are skipped. Floats are printed shortest-round-trip
// (std::to_chars), so binary -> ASCII -> binary gives back the same bytes
// (NaN payloads excepted: a NaN reads back as the canonical quiet NaN).
// Where this differs from Pragma (docs/udm.md): keys are written in tree
// order (Pragma sorts them; ascii_write_options::sort_keys does too),
// ArrayLz4 is always written compressed, Nil array values are written "nil",
// escapes in strings are undone on read (Pragma keeps the backslashes), the
// 3-angle rotation form of transforms is not accepted.
//
// open_ascii rejects: UDM-ASCII-SYNTAX (unexpected token, unterminated
// string/block, empty text, a NUL byte anywhere), UDM-ASCII-VALUE (number
// out of range for its type, a finite number a Half cannot hold, wrong
// component count, an array whose values differ from its declared count,
// bad base64), UDM-DEPTH (blocks nested deeper than limits.max_depth:
// recursion is bounded by it), UDM-LIMITS (array counts over
// limits.max_records; the budget), UDM-STRUCT, UDM-ARRAY-TYPE, UDM-ROOT.
// Safe on untrusted input: every read is bounds-checked against the text;
// the tree's nodes and bytes are charged to a budget (budget.hpp) before
// they are allocated; work is linear in the text size (plus LZ4 compression
// of ArrayLz4 values given uncompressed). write_ascii refuses (UDM-WRITE) a
// string, key or member name holding a NUL byte, which the text cannot carry,
// and charges the budget it is given for an upper bound of its text before
// writing.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "../budget.hpp"
#include "../detail/checks.hpp"
#include "../error.hpp"
#include "../limits.hpp"
#include "../detail/base64.hpp"
#include "../packing.hpp"
#include "types.hpp"
#include "writer.hpp"

namespace untold::udm {

struct ascii_write_options {
  /// Sort each element's keys by name, as Pragma's ASCII writer does (the
  /// binary written back then differs in key order from the source).
  bool sort_keys = false;
  /// Write assetType/assetVersion beside assetData (Pragma's IncludeHeader);
  /// off: only the children of assetData, which open_ascii wraps back as
  /// assetType "nil", version 1.
  bool include_header = true;
  /// When given: charged for the items written (work) and an upper bound of
  /// the text (memory and output), before anything is written.
  untold::budget* budget = nullptr;
};

/// Options of open_ascii. No `deep_checks`: the text parser applies every
/// rule above on every open; it has no optional pass.
struct ascii_open_options {
  untold::limits limits{};
  /// The budget the tree is charged to (nodes, strings, values). nullptr:
  /// one of its own from `limits` and the text's size.
  untold::budget* budget = nullptr;
};

namespace detail {

// Blobs are base64 in the text (detail/base64.hpp).
using untold::detail::base64_decode;
using untold::detail::base64_encode;

/// Characters that end an unquoted token.
[[nodiscard]] constexpr bool is_control_char(char c) noexcept {
  switch (c) {
    case '{': case '}': case '[': case ']': case '<': case '>': case '$': case ',': case ':': case ';': case '"':
      return true;
    default: return false;
  }
}
[[nodiscard]] constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

[[nodiscard]] inline bool key_needs_quotes(std::string_view k) noexcept {
  if (k.empty()) return true;
  for (char c : k) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F || is_control_char(c) || c == '\\' || c == '/') return true;
  }
  return false;
}

inline void put_quoted(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
}

template <class T>
inline void put_number(std::string& out, T v) {
  char buf[64];
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) {
      out.append(std::signbit(v) ? "-nan" : "nan");
      return;
    }
  }
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

/// One component of a trivial value at p.
inline void put_component(std::string& out, component c, const std::byte* p) {
  switch (c) {
    case component::i8: put_number(out, static_cast<int>(static_cast<std::int8_t>(*p))); return;
    case component::u8:
    case component::boolean: put_number(out, static_cast<unsigned>(static_cast<std::uint8_t>(*p))); return;
    case component::i16: put_number(out, load_le_unchecked<std::int16_t>(p)); return;
    case component::u16: put_number(out, load_le_unchecked<std::uint16_t>(p)); return;
    case component::i32: put_number(out, load_le_unchecked<std::int32_t>(p)); return;
    case component::u32: put_number(out, load_le_unchecked<std::uint32_t>(p)); return;
    case component::i64: put_number(out, static_cast<std::int64_t>(load_le_unchecked<std::uint64_t>(p))); return;
    case component::u64: put_number(out, load_le_unchecked<std::uint64_t>(p)); return;
    case component::f32: put_number(out, load_le_unchecked<float>(p)); return;
    case component::f64: put_number(out, std::bit_cast<double>(load_le_unchecked<std::uint64_t>(p))); return;
    case component::f16: put_number(out, half_to_float(load_le_unchecked<std::uint16_t>(p))); return;
    case component::none: return;
  }
}

/// A trivial value as Pragma prints it: scalars bare, vectors in brackets,
/// quaternions w first, transforms as nested lists.
inline void put_trivial(std::string& out, type t, const std::byte* p) {
  const component c = component_of(t);
  const std::uint32_t n = component_count(t);
  const std::uint32_t cs = component_size(c);
  auto list = [&](std::initializer_list<std::uint32_t> order) {
    out.push_back('[');
    bool first = true;
    for (std::uint32_t i : order) {
      if (!first) out.push_back(',');
      first = false;
      put_component(out, c, p + i * cs);
    }
    out.push_back(']');
  };
  switch (t) {
    case type::nil: return;
    case type::quaternion: list({3, 0, 1, 2}); return;
    case type::transform:
      out.push_back('[');
      list({0, 1, 2});
      list({6, 3, 4, 5});
      out.push_back(']');
      return;
    case type::scaled_transform:
      out.push_back('[');
      list({0, 1, 2});
      list({6, 3, 4, 5});
      list({7, 8, 9});
      out.push_back(']');
      return;
    case type::mat4:
    case type::mat3x4:
      out.push_back('[');
      for (std::uint32_t row = 0; row < n / 4; ++row) list({row * 4, row * 4 + 1, row * 4 + 2, row * 4 + 3});
      out.push_back(']');
      return;
    default: break;
  }
  if (n == 1) {
    put_component(out, c, p);
    return;
  }
  out.push_back('[');
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i != 0) out.push_back(',');
    put_component(out, c, p + i * cs);
  }
  out.push_back(']');
}

inline void put_layout(std::string& out, const struct_layout& l) {
  out.push_back('<');
  for (std::size_t i = 0; i < l.types.size(); ++i) {
    if (i != 0) out.push_back(',');
    out.append(ascii_name(l.types[i]));
    out.push_back(':');
    if (key_needs_quotes(l.names[i])) put_quoted(out, l.names[i]);
    else out.append(l.names[i]);
  }
  out.push_back('>');
}

inline void put_struct_value(std::string& out, const struct_layout& l, const std::byte* p) {
  out.push_back('[');
  std::uint32_t offset = 0;
  for (std::size_t i = 0; i < l.types.size(); ++i) {
    if (i != 0) out.push_back(',');
    put_trivial(out, l.types[i], p + offset);
    offset += size_of(l.types[i]);
  }
  out.push_back(']');
}

inline void put_children(std::string& out, const property& el, const std::string& prefix, const ascii_write_options& o);

/// The value text of a non-Element property.
inline void put_value(std::string& out, const property& p, const std::string& prefix, const ascii_write_options& o) {
  const type t = p.kind;
  if (is_trivial(t)) {
    put_trivial(out, t, p.bytes.data());
    return;
  }
  switch (t) {
    case type::string:
    case type::reference:
      put_quoted(out, std::string_view(reinterpret_cast<const char*>(p.bytes.data()), p.bytes.size()));
      return;
    case type::utf8_string:
      out.append("[base64][");
      base64_encode(out, p.bytes);
      out.push_back(']');
      return;
    case type::blob:
      out.push_back('[');
      base64_encode(out, p.bytes);
      out.push_back(']');
      return;
    case type::blob_lz4:
      out.push_back('[');
      put_number(out, p.uncompressed_size);
      out.append("][");
      base64_encode(out, p.bytes);
      out.push_back(']');
      return;
    case type::struct_: put_struct_value(out, p.layout, p.bytes.data()); return;
    case type::element:
      out.append("{\n");
      put_children(out, p, prefix + '\t', o);
      out.append("\n").append(prefix).append("}");
      return;
    case type::array:
    case type::array_lz4: {
      const type vt = p.value_type;
      out.push_back('[');
      out.append(ascii_name(vt));
      if (vt == type::struct_) put_layout(out, p.layout);
      out.push_back(';');
      put_number(out, p.count);
      if (t == type::array_lz4) {
        out.push_back(';');
        put_number(out, p.uncompressed_size);
        out.append("][");
        base64_encode(out, p.bytes);
        out.push_back(']');
        return;
      }
      out.append("][");
      if (vt == type::element) {
        for (std::size_t i = 0; i < p.items.size(); ++i) {
          if (i != 0) out.push_back(',');
          out.append("\n").append(prefix).append("\t{\n");
          put_children(out, p.items[i], prefix + '\t', o);
          out.append("\n").append(prefix).append("\t}");
        }
        if (!p.items.empty()) out.append("\n").append(prefix);
      } else if (vt == type::struct_) {
        const std::uint32_t size = p.layout.size();
        for (std::uint32_t i = 0; i < p.count; ++i) {
          out.append(i == 0 ? "\n" : ",\n").append(prefix).push_back('\t');
          put_struct_value(out, p.layout, p.bytes.data() + std::size_t{i} * size);
        }
        if (p.count != 0) out.append("\n").append(prefix);
      } else if (vt == type::nil) {
        for (std::uint32_t i = 0; i < p.count; ++i) out.append(i == 0 ? "nil" : ",nil");
      } else if (is_trivial(vt)) {
        const std::uint32_t size = size_of(vt);
        for (std::uint32_t i = 0; i < p.count; ++i) {
          if (i != 0) out.push_back(',');
          put_trivial(out, vt, p.bytes.data() + std::size_t{i} * size);
        }
      } else {
        for (std::size_t i = 0; i < p.items.size(); ++i) {
          if (i != 0) out.push_back(',');
          put_value(out, p.items[i], prefix, o);
        }
      }
      out.push_back(']');
      return;
    }
    default: return;
  }
}

inline void put_property(std::string& out, std::string_view key, const property& p, const std::string& prefix,
                         const ascii_write_options& o) {
  if (p.kind == type::element) {
    out.append(prefix);
    put_quoted(out, key);
    out.append("\n").append(prefix).append("{\n");
    put_children(out, p, prefix, o);
    out.append("\n").append(prefix).append("}");
    return;
  }
  out.append(prefix).push_back('$');
  out.append(ascii_name(p.kind));
  if (p.kind == type::struct_) put_layout(out, p.layout);
  out.push_back(' ');
  if (key_needs_quotes(key)) put_quoted(out, key);
  else out.append(key);
  out.push_back(' ');
  put_value(out, p, prefix, o);
}

/// The children of an element, one per line, indented one tab deeper than
/// `prefix` (the root's children: not indented).
inline void put_children(std::string& out, const property& el, const std::string& prefix, const ascii_write_options& o) {
  std::vector<const child*> order;
  order.reserve(el.children.size());
  for (const child& c : el.children) order.push_back(&c);
  if (o.sort_keys)
    std::stable_sort(order.begin(), order.end(), [](const child* a, const child* b) { return a->key < b->key; });
  const std::string child_prefix = prefix + '\t';
  bool first = true;
  for (const child* c : order) {
    if (!first) out.push_back('\n');
    first = false;
    put_property(out, c->key, c->value, child_prefix, o);
  }
}

// ---- what the text will cost -----------------------------------------------------------

/// The most characters put_component prints for one component (a float's
/// shortest round trip: sign, 9 digits, point, "e-38").
[[nodiscard]] constexpr std::uint64_t max_component_chars(component c) noexcept {
  switch (c) {
    case component::i8: return 4;
    case component::u8:
    case component::boolean: return 3;
    case component::i16: return 6;
    case component::u16: return 5;
    case component::i32: return 11;
    case component::u32: return 10;
    case component::i64:
    case component::u64: return 20;
    case component::f32:
    case component::f16: return 15;
    case component::f64: return 24;
    case component::none: return 0;
  }
  return 0;
}
/// The most characters put_trivial prints for a value of t (commas and up
/// to 5 pairs of brackets included).
[[nodiscard]] constexpr std::uint64_t max_trivial_chars(type t) noexcept {
  return std::uint64_t{component_count(t)} * (max_component_chars(component_of(t)) + 1) + 10;
}
[[nodiscard]] constexpr std::uint64_t base64_chars(std::uint64_t n) noexcept { return (n + 2) / 3 * 4; }

[[nodiscard]] inline bool holds_nul(std::string_view s) noexcept { return s.find('\0') != std::string_view::npos; }
[[nodiscard]] inline bool holds_nul(const std::vector<std::byte>& b) noexcept {
  return std::find(b.begin(), b.end(), std::byte{0}) != b.end();
}

/// The work (nodes and array items) and an upper bound of the characters
/// write_ascii prints for a tree.
struct ascii_cost {
  std::uint64_t work = 0;
  std::uint64_t chars = 0;
  void add(std::uint64_t items, std::uint64_t text) noexcept {
    work = budget::sum(work, items);
    chars = budget::sum(chars, text);
  }
};

inline status measure_layout(const struct_layout& l, ascii_cost& cost, std::uint64_t& value_chars) {
  std::uint64_t text = 2;
  value_chars = 2;
  for (std::size_t i = 0; i < l.types.size(); ++i) {
    if (holds_nul(l.names[i])) return bad_tree(errc::udm_bad_tree, "memberName", i, l.names[i]);
    text += 13 + 2 * l.names[i].size();  // type name (<= 10 characters), ':', the name quoted, ','
    value_chars += max_trivial_chars(l.types[i]) + 1;
  }
  cost.add(0, text);
  return {};
}

/// Adds p's cost (printed under `key` at `depth` tabs) to `cost`. UDM-WRITE
/// for a NUL byte in a string, reference, key or member name: open_ascii
/// refuses NUL bytes, so the text could not be read back.
inline status measure_ascii(const property& p, std::string_view key, std::uint64_t depth, ascii_cost& cost) {
  if (holds_nul(key)) return bad_tree(errc::udm_bad_tree, "key", 0, key);
  // Indentation (a line or two at this depth), the key quoted, "$type ".
  cost.add(1, 4 * (depth + 2) + 2 * key.size() + 24);
  std::uint64_t struct_chars = 0;
  if (!p.layout.types.empty()) UNTOLD_TRY(measure_layout(p.layout, cost, struct_chars));
  const type t = p.kind;
  if (is_trivial(t)) {
    cost.add(0, max_trivial_chars(t));
    return {};
  }
  switch (t) {
    case type::string:
    case type::reference:
      if (holds_nul(p.bytes)) return bad_tree(errc::udm_bad_tree, "string", 0, key);
      cost.add(0, 2 * p.bytes.size() + 2);
      return {};
    case type::utf8_string:
    case type::blob:
    case type::blob_lz4: cost.add(0, base64_chars(p.bytes.size()) + 32); return {};
    case type::struct_: cost.add(0, struct_chars); return {};
    case type::element:
      for (const child& c : p.children) UNTOLD_TRY(measure_ascii(c.value, c.key, depth + 1, cost));
      return {};
    case type::array:
    case type::array_lz4: {
      const type vt = p.value_type;
      cost.add(0, 64);  // [type;count;size]
      if (t == type::array_lz4) {
        cost.add(0, base64_chars(p.bytes.size()));
      } else if (vt == type::struct_) {
        const std::uint64_t members = std::max<std::size_t>(p.layout.types.size(), 1);
        cost.add(budget::product(p.count, members), budget::product(p.count, struct_chars + depth + 3));
      } else if (vt == type::nil || is_trivial(vt)) {
        cost.add(p.count, budget::product(p.count, max_trivial_chars(vt) + 4));
      } else {
        for (const property& item : p.items) {
          cost.add(0, 2 * (depth + 2) + 8);  // an element item's own lines
          UNTOLD_TRY(measure_ascii(item, {}, depth + 1, cost));
        }
      }
      return {};
    }
    default: return {};
  }
}

}  // namespace detail

/// `root` (an Element) as UDM ASCII text. Deterministic. Errors: those of
/// write_binary's checks (UDM-ROOT, UDM-WRITE, UDM-STRUCT ...), UDM-WRITE
/// for a NUL byte in a string, key or member name, UDM-LIMITS from
/// o.budget; so whatever this writes, open_ascii and write_binary accept.
[[nodiscard]] inline result<std::string> write_ascii(const property& root, const ascii_write_options& o = {}) {
  if (root.kind != type::element) return make_error(errc::udm_bad_root, {.field = "type"});
  UNTOLD_TRY(detail::check_tree(root));
  UNTOLD_TRY(detail::check_struct_sizes(root));
  detail::ascii_cost cost;
  UNTOLD_TRY(detail::measure_ascii(root, {}, 0, cost));
  if (o.budget != nullptr) {
    UNTOLD_TRY(o.budget->charge_work(cost.work, "ascii items", errc::udm_limit));
    UNTOLD_TRY(o.budget->charge_memory(cost.chars, "ascii text", errc::udm_limit));
    UNTOLD_TRY(o.budget->charge_output(cost.chars, "ascii text", errc::udm_limit));
  }
  std::string out;
  const property* top = &root;
  if (!o.include_header) {
    top = root.find("assetData");
    if (top == nullptr || top->kind != type::element) return make_error(errc::udm_bad_root, {.field = "assetData"});
  }
  // The root's children sit at column 0: put_children indents by one tab
  // relative to a prefix, so the root's own prefix is "one tab less".
  std::vector<const child*> order;
  for (const child& c : top->children) order.push_back(&c);
  if (o.sort_keys)
    std::stable_sort(order.begin(), order.end(), [](const child* a, const child* b) { return a->key < b->key; });
  bool first = true;
  for (const child* c : order) {
    if (!first) out.push_back('\n');
    first = false;
    detail::put_property(out, c->key, c->value, std::string(), o);
  }
  out.push_back('\n');
  return out;
}

// ---- reader -------------------------------------------------------------------------------------

namespace detail {

class ascii_parser {
 public:
  ascii_parser(std::string_view text, const ascii_open_options& o, budget& charged) noexcept
      : s_(text), o_(o), budget_(charged) {}

  result<property> run() {
    // A NUL would end the text for a C reader (Pragma's): whatever follows
    // it must not be read by one tool and ignored by another.
    if (const std::size_t nul = s_.find('\0'); nul != std::string_view::npos) {
      pos_ = nul;
      return fail(errc::udm_ascii_syntax, "NUL byte");
    }
    property root = make_element();
    UNTOLD_TRY(block(root, 1, true));
    if (root.children.empty()) return fail(errc::udm_ascii_syntax, "empty text");
    if (root.find("assetData") == nullptr) {
      // Pragma's reader treats a file without the header as assetData alone.
      property wrapped = make_asset("nil", 1, std::move(root));
      return wrapped;
    }
    return root;
  }

 private:
  [[nodiscard]] error fail(errc code, const char* field) const noexcept {
    error e = make_error(code);
    e.context.field = field;
    e.context.offset = pos_;
    return e;
  }
  /// A budget refusal, placed at the current position.
  [[nodiscard]] status charged(status s) const noexcept {
    if (!s) return error(s.error()).at_offset(pos_);
    return s;
  }

  /// Skips whitespace and comments; returns the next character (0 at the end).
  char peek() noexcept {
    for (;;) {
      while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
      if (pos_ + 1 < s_.size() && s_[pos_] == '/' && s_[pos_ + 1] == '/') {
        const std::size_t nl = s_.find('\n', pos_);
        pos_ = nl == std::string_view::npos ? s_.size() : nl + 1;
        continue;
      }
      if (pos_ + 1 < s_.size() && s_[pos_] == '/' && s_[pos_ + 1] == '*') {
        const std::size_t end = s_.find("*/", pos_ + 2);
        pos_ = end == std::string_view::npos ? s_.size() : end + 2;
        continue;
      }
      return pos_ < s_.size() ? s_[pos_] : '\0';
    }
  }
  [[nodiscard]] bool at_end() noexcept {
    peek();
    return pos_ >= s_.size();
  }
  status expect(char c, const char* field) {
    if (at_end() || s_[pos_] != c) return fail(errc::udm_ascii_syntax, field);
    ++pos_;
    return {};
  }
  bool accept(char c) {
    if (!at_end() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  /// An unquoted token (up to whitespace or a control character) or a
  /// quoted string with \ escapes undone.
  result<std::string> token(const char* field) {
    if (at_end()) return fail(errc::udm_ascii_syntax, field);
    if (s_[pos_] == '"') {
      // Find the end first: the string is charged before it is built.
      std::size_t end = pos_ + 1;
      while (end < s_.size() && s_[end] != '"') end += s_[end] == '\\' && end + 1 < s_.size() ? 2 : 1;
      if (end >= s_.size()) {
        pos_ = end;
        return fail(errc::udm_ascii_syntax, field);
      }
      UNTOLD_TRY(charged(budget_.charge_memory(end - pos_, "strings", errc::udm_limit)));
      std::string out;
      for (++pos_; pos_ < end; ++pos_) {
        if (s_[pos_] == '\\' && pos_ + 1 < end) ++pos_;
        out.push_back(s_[pos_]);
      }
      ++pos_;
      return out;
    }
    const std::size_t start = pos_;
    while (pos_ < s_.size() && !is_space(s_[pos_]) && !is_control_char(s_[pos_])) ++pos_;
    if (pos_ == start) return fail(errc::udm_ascii_syntax, field);
    UNTOLD_TRY(charged(budget_.charge_memory(pos_ - start, "strings", errc::udm_limit)));
    return std::string(s_.substr(start, pos_ - start));
  }
  /// An unquoted token as a view (numbers, type names).
  result<std::string_view> bare(const char* field) {
    if (at_end()) return fail(errc::udm_ascii_syntax, field);
    const std::size_t start = pos_;
    while (pos_ < s_.size() && !is_space(s_[pos_]) && !is_control_char(s_[pos_])) ++pos_;
    if (pos_ == start) return fail(errc::udm_ascii_syntax, field);
    return s_.substr(start, pos_ - start);
  }

  template <class T>
  result<T> integer(const char* field) {
    auto t = bare(field);
    if (!t) return t.error();
    std::string_view v = *t;
    if (!v.empty() && v.front() == '+') v.remove_prefix(1);
    T out{};
    const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size()) return fail(errc::udm_ascii_value, field);
    return out;
  }
  template <class T>
  result<T> floating(const char* field) {
    auto t = bare(field);
    if (!t) return t.error();
    std::string_view v = *t;
    if (!v.empty() && v.front() == '+') v.remove_prefix(1);
    T out{};
    const auto r = std::from_chars(v.data(), v.data() + v.size(), out);
    // Out-of-range literals: from_chars reports them; overflow to inf is a value error.
    if (r.ec != std::errc() || r.ptr != v.data() + v.size()) return fail(errc::udm_ascii_value, field);
    return out;
  }

  /// One component of a trivial value into p.
  status component_value(component c, std::byte* p) {
    switch (c) {
      case component::i8: {
        auto v = integer<std::int8_t>("int8");
        if (!v) return v.error();
        *p = static_cast<std::byte>(*v);
        return {};
      }
      case component::u8: {
        auto v = integer<std::uint8_t>("uint8");
        if (!v) return v.error();
        *p = static_cast<std::byte>(*v);
        return {};
      }
      case component::boolean: {
        auto t = bare("bool");
        if (!t) return t.error();
        if (*t == "true") *p = std::byte{1};
        else if (*t == "false") *p = std::byte{0};
        else {
          std::uint8_t v = 0;
          const auto r = std::from_chars(t->data(), t->data() + t->size(), v);
          if (r.ec != std::errc() || r.ptr != t->data() + t->size()) return fail(errc::udm_ascii_value, "bool");
          *p = static_cast<std::byte>(v);
        }
        return {};
      }
      case component::i16: return store(integer<std::int16_t>("int16"), p);
      case component::u16: return store(integer<std::uint16_t>("uint16"), p);
      case component::i32: return store(integer<std::int32_t>("int32"), p);
      case component::u32: return store(integer<std::uint32_t>("uint32"), p);
      case component::i64: {
        auto v = integer<std::int64_t>("int64");
        if (!v) return v.error();
        store_le_unchecked<std::uint64_t>(p, static_cast<std::uint64_t>(*v));
        return {};
      }
      case component::u64: return store(integer<std::uint64_t>("uint64"), p);
      case component::f32: return store(floating<float>("float"), p);
      case component::f64: {
        auto v = floating<double>("double");
        if (!v) return v.error();
        store_le_unchecked<std::uint64_t>(p, std::bit_cast<std::uint64_t>(*v));
        return {};
      }
      case component::f16: {
        auto v = floating<float>("half");
        if (!v) return v.error();
        std::uint16_t h;
        if (untold::detail::is_nan(*v)) h = 0x7E00;
        else if (!untold::detail::is_finite(*v)) h = *v > 0 ? 0x7C00 : 0xFC00;
        else h = float_to_half_raw(*v);
        // A finite number past the Half range would become infinity: a value
        // error, as for a float literal past the Float range.
        if (untold::detail::is_finite(*v) && (h & 0x7FFFu) == 0x7C00u) {
          error e = fail(errc::udm_ascii_value, "half");
          return e.with_float(*v);
        }
        store_le_unchecked<std::uint16_t>(p, h);
        return {};
      }
      case component::none: return {};
    }
    return {};
  }
  template <class T>
  status store(result<T> v, std::byte* p) {
    if (!v) return v.error();
    store_le_unchecked<T>(p, *v);
    return {};
  }

  /// A trivial value: scalars bare, everything else a bracketed list whose
  /// nested brackets are flattened (Pragma's [[t][r][s]] transforms).
  status trivial(type t, std::byte* p) {
    const component c = component_of(t);
    const std::uint32_t n = component_count(t);
    if (t == type::nil) return {};
    if (n == 1 && peek() != '[') return component_value(c, p);
    const std::uint32_t cs = component_size(c);
    // Text order -> binary index (quaternions are w first in text).
    auto slot = [t](std::uint32_t i) -> std::uint32_t {
      if (t == type::quaternion) return i == 0 ? 3 : i - 1;
      if (t == type::transform || t == type::scaled_transform) {
        if (i == 3) return 6;
        if (i >= 4 && i <= 6) return i - 1;
      }
      return i;
    };
    UNTOLD_TRY(expect('[', "["));
    std::uint32_t depth = 1, i = 0;
    while (depth > 0) {
      const char ch = peek();
      if (ch == '[') {
        if (++depth > 3) return fail(errc::udm_ascii_syntax, "[");
        ++pos_;
      } else if (ch == ']') {
        --depth;
        ++pos_;
      } else if (ch == ',') {
        ++pos_;
      } else if (ch == '\0' || is_control_char(ch)) {
        return fail(errc::udm_ascii_syntax, "]");
      } else {
        if (i >= n) return fail(errc::udm_ascii_value, name(t).data());
        UNTOLD_TRY(component_value(c, p + slot(i) * cs));
        ++i;
      }
    }
    if (i != n) return fail(errc::udm_ascii_value, name(t).data());
    return {};
  }

  status base64_block(std::vector<std::byte>& out, const char* field) {
    UNTOLD_TRY(expect('[', field));
    const std::size_t end = s_.find(']', pos_);
    if (end == std::string_view::npos) return fail(errc::udm_ascii_syntax, field);
    std::string_view b64 = s_.substr(pos_, end - pos_);
    while (!b64.empty() && is_space(b64.back())) b64.remove_suffix(1);
    while (!b64.empty() && is_space(b64.front())) b64.remove_prefix(1);
    UNTOLD_TRY(charged(budget_.charge_memory(b64.size() / 4 * 3 + 3, field, errc::udm_limit)));
    if (!base64_decode(b64, out)) return fail(errc::udm_ascii_value, field);
    pos_ = end + 1;
    return {};
  }

  result<struct_layout> layout() {
    struct_layout l;
    UNTOLD_TRY(expect('<', "<"));
    while (!accept('>')) {
      if (!l.types.empty()) UNTOLD_TRY(expect(',', ","));
      auto tn = bare("memberType");
      if (!tn) return tn.error();
      const auto t = type_from_ascii_name(*tn);
      if (!t) return fail(errc::udm_ascii_syntax, "memberType");
      if (!is_trivial(*t)) return fail(errc::udm_struct_member, "memberType");
      l.types.push_back(*t);
      std::string member_name;
      if (accept(':')) {
        auto nm = token("memberName");
        if (!nm) return nm.error();
        member_name = std::move(*nm);
      }
      l.names.push_back(std::move(member_name));
      if (l.types.size() > 255) return fail(errc::udm_struct_member, "memberCount");
    }
    if (l.types.empty()) return fail(errc::udm_struct_member, "memberCount");
    return l;
  }

  status struct_value(const struct_layout& l, std::vector<std::byte>& out) {
    const std::size_t base = out.size();
    out.resize(base + l.size());
    UNTOLD_TRY(expect('[', "["));
    std::uint32_t offset = 0;
    for (std::size_t i = 0; i < l.types.size(); ++i) {
      if (i != 0) UNTOLD_TRY(expect(',', ","));
      UNTOLD_TRY(trivial(l.types[i], out.data() + base + offset));
      offset += size_of(l.types[i]);
    }
    return expect(']', "]");
  }

  status check_depth(std::uint32_t depth) const {
    if (depth > o_.limits.max_depth) {
      error e = fail(errc::udm_depth, "depth");
      e.context.limit = o_.limits.max_depth;
      e.context.has_limit = true;
      return e;
    }
    return {};
  }

  status array(property& p, std::uint32_t depth) {
    UNTOLD_TRY(check_depth(depth + 1));
    UNTOLD_TRY(expect('[', "["));
    auto tn = bare("valueType");
    if (!tn) return tn.error();
    const auto vt = type_from_ascii_name(*tn);
    if (!vt) return fail(errc::udm_ascii_syntax, "valueType");
    p.value_type = *vt;
    if (*vt == type::struct_) {
      auto l = layout();
      if (!l) return l.error();
      p.layout = std::move(*l);
    }
    std::optional<std::uint32_t> count;
    std::optional<std::uint64_t> uncompressed;
    if (accept(';')) {
      auto c = integer<std::uint32_t>("count");
      if (!c) return c.error();
      count = *c;
      if (accept(';')) {
        auto u = integer<std::uint64_t>("uncompressedSize");
        if (!u) return u.error();
        uncompressed = *u;
      }
    }
    UNTOLD_TRY(expect(']', "]"));
    if (count && *count > o_.limits.max_records) {
      error e = fail(errc::udm_limit, "count");
      e.context.value = *count;
      e.context.has_value = true;
      return e;
    }
    if (p.kind == type::array_lz4 && uncompressed) {
      if (!count) return fail(errc::udm_ascii_syntax, "count");
      const type v = *vt;
      if (!is_trivial(v) && v != type::struct_ && v != type::element && v != type::string)
        return fail(errc::udm_array_type, "valueType");
      p.count = *count;
      p.uncompressed_size = *uncompressed;
      return base64_block(p.bytes, "lz4");
    }
    // Values listed: an Array, or an ArrayLz4 given uncompressed.
    const type t = p.kind;
    p.kind = type::array;
    UNTOLD_TRY(expect('[', "["));
    std::uint64_t n = 0;
    const std::uint64_t members = std::max<std::size_t>(p.layout.types.size(), 1);
    while (!accept(']')) {
      if (n != 0) UNTOLD_TRY(expect(',', ","));
      if (++n > o_.limits.max_records || ++properties_ > o_.limits.max_records) return fail(errc::udm_limit, "count");
      // Every value costs work, Nil ones too; each takes its bytes, a
      // non-trivial one a whole tree node.
      const std::uint64_t held = *vt == type::struct_ ? p.layout.size() : is_trivial(*vt) ? size_of(*vt) : sizeof(property);
      UNTOLD_TRY(charged(budget_.charge_work(*vt == type::struct_ ? members : 1, "array items", errc::udm_limit)));
      UNTOLD_TRY(charged(budget_.charge_memory(held, "array items", errc::udm_limit)));
      if (*vt == type::nil) {
        if (!(peek() == ',' || peek() == ']')) {
          auto nil = bare("nil");
          if (!nil) return nil.error();
        }
        continue;
      }
      if (*vt == type::struct_) {
        UNTOLD_TRY(struct_value(p.layout, p.bytes));
      } else if (is_trivial(*vt)) {
        const std::size_t at = p.bytes.size();
        p.bytes.resize(at + size_of(*vt));
        UNTOLD_TRY(trivial(*vt, p.bytes.data() + at));
      } else {
        property item;
        item.kind = *vt;
        UNTOLD_TRY(value(item, depth + 1));
        p.items.push_back(std::move(item));
      }
    }
    if (count && *count != n) {
      error e = fail(errc::udm_ascii_value, "count");
      return e.with_value(n).with_limit(*count);
    }
    p.count = static_cast<std::uint32_t>(n);
    if (t == type::array_lz4) {
      // Compressing holds the raw values and the LZ4 block beside the tree.
      std::uint64_t nodes = 0, raw = 0;
      binary_cost(p, 0, nodes, raw);
      UNTOLD_TRY(charged(budget_.charge_memory(budget::product(raw, 2), "arrayLz4", errc::udm_limit)));
      auto z = compress_array(p);
      if (!z) return z.error();
      p = std::move(*z);
    }
    return {};
  }

  /// The value of p (kind and, for structs, layout set).
  status value(property& p, std::uint32_t depth) {
    const type t = p.kind;
    if (is_trivial(t)) {
      p.bytes.resize(size_of(t));
      return trivial(t, p.bytes.data());
    }
    switch (t) {
      case type::string:
      case type::reference: {
        auto s = token("string");
        if (!s) return s.error();
        const auto* b = reinterpret_cast<const std::byte*>(s->data());
        p.bytes.assign(b, b + s->size());
        return {};
      }
      case type::utf8_string: {
        UNTOLD_TRY(expect('[', "["));
        auto enc = bare("encoding");
        if (!enc) return enc.error();
        if (*enc != "base64") return fail(errc::udm_ascii_value, "encoding");
        UNTOLD_TRY(expect(']', "]"));
        return base64_block(p.bytes, "utf8");
      }
      case type::blob: return base64_block(p.bytes, "blob");
      case type::blob_lz4: {
        UNTOLD_TRY(expect('[', "["));
        auto u = integer<std::uint64_t>("uncompressedSize");
        if (!u) return u.error();
        p.uncompressed_size = *u;
        UNTOLD_TRY(expect(']', "]"));
        return base64_block(p.bytes, "lz4");
      }
      case type::struct_:
        if (p.layout.types.empty()) return fail(errc::udm_struct_member, "memberCount");
        return struct_value(p.layout, p.bytes);
      case type::element:
        UNTOLD_TRY(check_depth(depth + 1));
        UNTOLD_TRY(expect('{', "{"));
        return block(p, depth + 1, false);
      case type::array:
      case type::array_lz4: return array(p, depth);
      default: break;
    }
    return fail(errc::udm_ascii_syntax, "type");
  }

  /// Key/value lines until '}' (or the end of the text for the root).
  status block(property& el, std::uint32_t depth, bool top) {
    for (;;) {
      const char ch = peek();
      if (ch == '\0') {
        if (top) return {};
        return fail(errc::udm_ascii_syntax, "}");
      }
      if (ch == '}') {
        if (top) return fail(errc::udm_ascii_syntax, "}");
        ++pos_;
        return {};
      }
      // Every property costs a tree node: the text's total is capped as in the binary reader.
      if (++properties_ > o_.limits.max_records) return fail(errc::udm_limit, "properties");
      UNTOLD_TRY(charged(budget_.charge_items(1, sizeof(child), "properties", errc::udm_limit)));
      if (ch == '$') {
        ++pos_;
        auto tn = bare("type");
        if (!tn) return tn.error();
        const auto t = type_from_ascii_name(*tn);
        if (!t) return fail(errc::udm_ascii_syntax, "type");
        property p;
        p.kind = *t;
        if (*t == type::struct_) {
          auto l = layout();
          if (!l) return l.error();
          p.layout = std::move(*l);
        }
        auto key = token("key");
        if (!key) return key.error();
        if (key->size() > 255) return fail(errc::udm_bad_tree, "key");
        if (auto s = value(p, depth); !s) {
          error e = s.error();
          if (e.subject().empty()) e.with_subject(*key);
          return e;
        }
        el.add(std::move(*key), std::move(p));
        continue;
      }
      if (is_control_char(ch) && ch != '"') return fail(errc::udm_ascii_syntax, "key");
      auto key = token("key");
      if (!key) return key.error();
      if (key->size() > 255) return fail(errc::udm_bad_tree, "key");
      UNTOLD_TRY(check_depth(depth + 1));
      UNTOLD_TRY(expect('{', "{"));
      property child_el = make_element();
      if (auto s = block(child_el, depth + 1, false); !s) {
        error e = s.error();
        if (e.subject().empty()) e.with_subject(*key);
        return e;
      }
      el.add(std::move(*key), std::move(child_el));
    }
  }

  std::string_view s_;
  const ascii_open_options& o_;
  budget& budget_;
  std::size_t pos_ = 0;
  std::uint64_t properties_ = 0;
};

}  // namespace detail

/// Parses UDM ASCII text into a tree. Errors carry the byte offset in the
/// text (context.offset). The result is checked like write_binary's input
/// (duplicate keys are UDM-DUP-KEY). Preconditions: none (any text); safe on
/// untrusted input.
[[nodiscard]] inline result<property> open_ascii(std::string_view text, const ascii_open_options& options = {}) {
  budget own(options.limits, text.size());
  detail::ascii_parser p(text, options, budget::own_or_shared(options.budget, own));
  auto root = p.run();
  if (!root) return root.error();
  UNTOLD_TRY(detail::check_tree(*root));
  const property* type_p = root->find("assetType");
  const property* version_p = root->find("assetVersion");
  const property* data_p = root->find("assetData");
  if (type_p == nullptr || type_p->kind != type::string || version_p == nullptr || version_p->kind != type::uint32 ||
      data_p == nullptr || data_p->kind != type::element)
    return make_error(errc::udm_bad_root, {.field = "assetType"});
  return root;
}

/// True when `head` looks like UDM ASCII: after whitespace and comments, a
/// '$' property or a quoted/bare key followed by '{'. A cheap sniff for the
/// CLI; open_ascii decides.
[[nodiscard]] inline bool looks_like_ascii_udm(std::string_view head) noexcept {
  std::size_t i = 0;
  for (;;) {
    while (i < head.size() && detail::is_space(head[i])) ++i;
    if (i + 1 < head.size() && head[i] == '/' && head[i + 1] == '/') {
      const std::size_t nl = head.find('\n', i);
      if (nl == std::string_view::npos) return false;
      i = nl + 1;
      continue;
    }
    break;
  }
  if (i >= head.size()) return false;
  if (head[i] == '$') {
    const std::string_view rest = head.substr(i + 1);
    for (std::uint8_t t = 0; t < type_count; ++t) {
      const std::string_view n = ascii_name(static_cast<type>(t));
      if (rest.starts_with(n) && rest.size() > n.size() &&
          (detail::is_space(rest[n.size()]) || rest[n.size()] == '<'))
        return true;
    }
    return false;
  }
  if (head[i] == '"') {
    const std::size_t close = head.find('"', i + 1);
    if (close == std::string_view::npos || close - i > 257) return false;
    std::size_t j = close + 1;
    while (j < head.size() && detail::is_space(head[j])) ++j;
    return j < head.size() && head[j] == '{';
  }
  return false;
}

}  // namespace untold::udm
