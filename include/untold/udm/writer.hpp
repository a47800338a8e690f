// untold/udm/writer.hpp - an owning UDM tree (udm::property) and the binary
// writer: tree -> "UDMB" bytes, deterministically.
//
// Key order: children are written in the order the tree holds them, which is
// insertion order for built trees and file order for trees copied from a
// document (tree_from_view), so binary -> tree -> binary is byte-exact.
// Pragma itself writes an unordered map's order (not sorted); its ASCII
// writer sorts.
// Lengths are written canonically (u8 length below 255, the 255 escape +
// u32 from 255 on); a file that used the escape for a short string is read
// fine and normalised on write.
// BlobLz4/ArrayLz4 keep their compressed bytes: a copied tree re-emits them
// untouched; the make_*_lz4 builders compress with LZ4_compress_default
// (deterministic for one liblz4 version).
//
// Rejects (returns, never writes a corrupt file): UDM-WRITE (key over 255
// bytes, duplicate key, a value whose byte size disagrees with its type or
// count, struct blocks over 65535 bytes), UDM-STRUCT (no or non-trivial
// members), UDM-ARRAY-TYPE (an ArrayLz4 of Blob/Array/...), UDM-ROOT (root
// not an Element). The writer copies LZ4 data without decoding it, so by
// default it reads what it wrote back through the strict reader
// (write_options::verify) and returns the reader's error for a tree whose
// LZ4 data or declared sizes no reader accepts. Input is the caller's tree
// (trusted); recursion depth is the tree's depth, which for trees read from
// files is <= limits.max_depth. A tree copied from a file can be large:
// tree_from_view(view, budget) and write_options::budget charge the input's
// budget (budget.hpp) before they copy or write.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../budget.hpp"
#include "../compression.hpp"
#include "../error.hpp"
#include "../sink.hpp"
#include "reader.hpp"
#include "types.hpp"

namespace untold::udm {

/// Member types and names of a Struct (or of an array of them).
struct struct_layout {
  std::vector<type> types;
  std::vector<std::string> names;
  [[nodiscard]] std::uint32_t size() const noexcept {
    std::uint32_t s = 0;
    for (type t : types) s += size_of(t);
    return s;
  }
  friend bool operator==(const struct_layout&, const struct_layout&) = default;
};

struct property;

/// An element child: key and value.
struct child;

/// An owning UDM property. Which members mean something depends on kind:
///   trivial types      bytes = the value (size_of(kind) bytes, little-endian)
///   String/Reference/Utf8String  bytes = the characters
///   Blob               bytes = the data
///   BlobLz4            bytes = compressed data, uncompressed_size
///   Element            children (write order)
///   Array              value_type, count; trivial/Struct values: bytes
///                      (count x size) and layout; other values: items
///   ArrayLz4           value_type, count, layout (Struct), bytes = compressed
///                      data, uncompressed_size (what Element/String arrays store)
///   Struct             layout, bytes = packed member data
struct property {
  type kind = type::nil;
  std::vector<std::byte> bytes;
  std::vector<child> children;
  std::vector<property> items;
  type value_type = type::nil;
  std::uint32_t count = 0;
  std::uint64_t uncompressed_size = 0;
  struct_layout layout;

  /// The child with this key (linear: built trees are edited, not searched;
  /// use document for lookups on large files), or nullptr.
  [[nodiscard]] property* find(std::string_view key) noexcept;
  [[nodiscard]] const property* find(std::string_view key) const noexcept;
  /// Appends a child (Element only). Returns the new child's value.
  property& add(std::string key, property value);

  friend bool operator==(const property&, const property&) = default;
};

struct child {
  std::string key;
  property value;
  friend bool operator==(const child&, const child&) = default;
};

inline property* property::find(std::string_view key) noexcept {
  for (child& c : children)
    if (c.key == key) return &c.value;
  return nullptr;
}
inline const property* property::find(std::string_view key) const noexcept {
  for (const child& c : children)
    if (c.key == key) return &c.value;
  return nullptr;
}
inline property& property::add(std::string key, property value) {
  children.push_back({std::move(key), std::move(value)});
  return children.back().value;
}

// ---- builders ---------------------------------------------------------------------------------

[[nodiscard]] inline property make_element() {
  property p;
  p.kind = type::element;
  return p;
}
[[nodiscard]] inline property make_nil() { return property{}; }

/// A trivial value (int, float, vec3, quat, ... see types.hpp).
template <class T>
[[nodiscard]] inline property make_value(const T& v) {
  property p;
  p.kind = type_of_v<T>;
  p.bytes.resize(size_of(p.kind));
  store_value(p.bytes.data(), v);
  return p;
}

/// String (u8/u32 length), Reference (same encoding) or Utf8String (u32 length).
[[nodiscard]] inline property make_string(std::string_view s, type kind = type::string) {
  property p;
  p.kind = kind;
  const auto* b = reinterpret_cast<const std::byte*>(s.data());
  p.bytes.assign(b, b + s.size());
  return p;
}

[[nodiscard]] inline property make_blob(byte_span data) {
  property p;
  p.kind = type::blob;
  p.bytes.assign(data.begin(), data.end());
  return p;
}

/// A BlobLz4 holding `data` compressed (LZ4_compress_default).
[[nodiscard]] inline result<property> make_blob_lz4(byte_span data) {
  property p;
  p.kind = type::blob_lz4;
  p.uncompressed_size = data.size();
  auto c = compress(compression::lz4, 0, data);
  if (!c) return c.error();
  p.bytes = std::move(*c);
  return p;
}

/// An Array of trivial values.
template <class T>
[[nodiscard]] inline property make_array(std::span<const T> values) {
  property p;
  p.kind = type::array;
  p.value_type = type_of_v<T>;
  p.count = static_cast<std::uint32_t>(values.size());
  p.bytes.resize(values.size() * size_of(p.value_type));
  for (std::size_t i = 0; i < values.size(); ++i) store_value(p.bytes.data() + i * size_of(p.value_type), values[i]);
  return p;
}

/// An Array of non-trivial values (strings, elements, blobs, arrays ...), all
/// of `value_type`.
[[nodiscard]] inline property make_array_of(type value_type, std::vector<property> items) {
  property p;
  p.kind = type::array;
  p.value_type = value_type;
  p.count = static_cast<std::uint32_t>(items.size());
  p.items = std::move(items);
  return p;
}

/// A Struct value, or an Array of count structs (data = count x layout.size()).
[[nodiscard]] inline property make_struct(struct_layout layout, std::vector<std::byte> data) {
  property p;
  p.kind = type::struct_;
  p.layout = std::move(layout);
  p.bytes = std::move(data);
  return p;
}
[[nodiscard]] inline property make_struct_array(struct_layout layout, std::uint32_t count, std::vector<std::byte> data) {
  property p;
  p.kind = type::array;
  p.value_type = type::struct_;
  p.count = count;
  p.layout = std::move(layout);
  p.bytes = std::move(data);
  return p;
}

namespace detail {
void write_payload(byte_sink& out, const property& p);
status check_tree(const property& p);
}  // namespace detail

/// Turns an uncompressed Array (trivial, Struct, Element or String values)
/// into the equivalent ArrayLz4, as Pragma stores it (Element/String values
/// as u32 count + payloads). Errors: UDM-ARRAY-TYPE, UDM-WRITE, E-ENCODE.
[[nodiscard]] inline result<property> compress_array(const property& array) {
  if (array.kind != type::array) return make_error(errc::udm_array_type, {.field = "kind"});
  const type vt = array.value_type;
  if (!is_trivial(vt) && vt != type::struct_ && vt != type::element && vt != type::string)
    return make_error(errc::udm_array_type, {.field = "valueType", .value = static_cast<std::uint8_t>(vt), .has_value = true});
  UNTOLD_TRY(detail::check_tree(array));
  property p;
  p.kind = type::array_lz4;
  p.value_type = vt;
  p.count = array.count;
  p.layout = array.layout;
  std::vector<std::byte> raw;
  if (vt == type::element || vt == type::string) {
    byte_sink s(raw);
    s.put<std::uint32_t>(array.count);
    for (const property& item : array.items) detail::write_payload(s, item);
  } else {
    raw = array.bytes;
  }
  if (array.count == 0) return p;  // Pragma stores empty arrays without LZ4 data, uncompressed size 0
  p.uncompressed_size = raw.size();
  auto c = compress(compression::lz4, 0, raw);
  if (!c) return c.error();
  p.bytes = std::move(*c);
  return p;
}

/// The root Pragma expects: assetType, assetVersion, and assetData (the
/// returned reference's target; valid until the root is modified).
[[nodiscard]] inline property make_asset(std::string_view asset_type, std::uint32_t asset_version, property asset_data) {
  property root = make_element();
  root.add("assetData", std::move(asset_data));
  root.add("assetType", make_string(asset_type));
  root.add("assetVersion", make_value<std::uint32_t>(asset_version));
  return root;
}

// ---- document -> tree -----------------------------------------------------------------------

namespace detail {
inline struct_layout copy_layout(const struct_layout_view& l) {
  struct_layout out;
  for (std::size_t i = 0; i < l.member_count(); ++i) {
    out.types.push_back(l.member(i).kind);
    out.names.emplace_back(l.member(i).name);
  }
  return out;
}
}  // namespace detail

namespace detail {
/// The bytes a struct layout holds in a tree (types, names).
inline std::uint64_t layout_bytes(const struct_layout_view& l) noexcept {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < l.member_count(); ++i) n += sizeof(type) + sizeof(std::string) + l.member(i).name.size();
  return n;
}

/// Copies v into p. With a budget, each node is charged (work, and memory:
/// its slot in the parent, key, bytes and layout) before it is copied.
inline status copy_tree(const property_view& v, property& p, budget* charged) {
  p.kind = v.kind();
  const bool lz4 = p.kind == type::blob_lz4 || p.kind == type::array_lz4;
  if (charged != nullptr) {
    const std::uint64_t held = sizeof(child) + v.key().size() + (lz4 ? v.stored() : v.raw()).size() + layout_bytes(v.layout());
    UNTOLD_TRY(charged->charge_items(1, held, "tree nodes", errc::udm_limit));
  }
  switch (p.kind) {
    case type::element:
      p.children.reserve(v.size());
      for (property_view c : v) {
        p.children.push_back({std::string(c.key()), {}});
        UNTOLD_TRY(copy_tree(c, p.children.back().value, charged));
      }
      return {};
    case type::blob_lz4:
      p.bytes.assign(v.stored().begin(), v.stored().end());
      p.uncompressed_size = v.uncompressed_size();
      return {};
    case type::array:
    case type::array_lz4:
      p.value_type = v.value_type();
      p.count = static_cast<std::uint32_t>(v.size());
      if (p.value_type == type::struct_) p.layout = copy_layout(v.layout());
      if (p.kind == type::array_lz4) {
        p.bytes.assign(v.stored().begin(), v.stored().end());
        p.uncompressed_size = v.uncompressed_size();
      } else if (is_trivial(p.value_type) || p.value_type == type::struct_) {
        p.bytes.assign(v.raw().begin(), v.raw().end());
      } else {
        p.items.reserve(v.size());
        for (property_view c : v) {
          p.items.emplace_back();
          UNTOLD_TRY(copy_tree(c, p.items.back(), charged));
        }
      }
      return {};
    case type::struct_:
      p.layout = copy_layout(v.layout());
      p.bytes.assign(v.raw().begin(), v.raw().end());
      return {};
    default:
      p.bytes.assign(v.raw().begin(), v.raw().end());
      return {};
  }
}
}  // namespace detail

/// A deep copy of a parsed property (recursion bounded by the document's
/// depth, <= the limits.max_depth it was parsed with).
[[nodiscard]] inline property tree_from_view(const property_view& v) {
  property p;
  (void)detail::copy_tree(v, p, nullptr);  // cannot fail without a budget
  return p;
}

/// As tree_from_view, charging `charged` (the input's budget, budget.hpp) for
/// every node before it is copied: about sizeof(child) + its bytes each.
/// Errors: UDM-LIMITS when the budget is exhausted. Safe on documents parsed
/// from untrusted input.
[[nodiscard]] inline result<property> tree_from_view(const property_view& v, budget& charged) {
  property p;
  UNTOLD_TRY(detail::copy_tree(v, p, &charged));
  return p;
}

/// The uncompressed values of an ArrayLz4 as an Array (Element/String
/// values parsed back into items). Errors as open_document (UDM-LZ4 ...).
[[nodiscard]] inline result<property> decompress_array(const property& lz4, const open_options& options = {});

// ---- tree -> bytes ---------------------------------------------------------------------------

namespace detail {

inline error bad_tree(errc code, const char* field, std::uint64_t value = 0, std::string_view key = {}) {
  error e = make_error(code, {.field = field, .value = value, .has_value = true});
  e.with_subject(key);
  return e;
}

inline status check_layout(const struct_layout& l) {
  if (l.types.empty() || l.types.size() > 255 || l.names.size() != l.types.size())
    return bad_tree(errc::udm_struct_member, "memberCount", l.types.size());
  for (type t : l.types)
    if (!is_trivial(t)) return bad_tree(errc::udm_struct_member, "memberType", static_cast<std::uint8_t>(t));
  return {};
}

/// Checks what write_payload relies on, for one property and its subtree.
inline status check_tree(const property& p) {
  const type t = p.kind;
  if (!is_known_type(static_cast<std::uint8_t>(t))) return bad_tree(errc::udm_unknown_type, "type", static_cast<std::uint8_t>(t));
  if (is_trivial(t)) {
    if (p.bytes.size() != size_of(t)) return bad_tree(errc::udm_bad_tree, "value", p.bytes.size());
    return {};
  }
  switch (t) {
    case type::string:
    case type::reference:
    case type::utf8_string:
      if (p.bytes.size() > 0xFFFFFFFFu) return bad_tree(errc::udm_bad_tree, "string", p.bytes.size());
      return {};
    case type::blob:
    case type::blob_lz4: return {};
    case type::struct_:
      UNTOLD_TRY(check_layout(p.layout));
      if (p.bytes.size() != p.layout.size()) return bad_tree(errc::udm_struct_member, "structData", p.bytes.size());
      return {};
    case type::element: {
      std::vector<std::string_view> keys;
      keys.reserve(p.children.size());
      for (const child& c : p.children) {
        if (c.key.size() > 255) return bad_tree(errc::udm_bad_tree, "key", c.key.size(), c.key);
        keys.push_back(c.key);
        if (auto s = check_tree(c.value); !s) {
          error e = s.error();
          if (e.subject().empty()) e.with_subject(c.key);
          return e;
        }
      }
      std::sort(keys.begin(), keys.end());
      for (std::size_t i = 1; i < keys.size(); ++i)
        if (keys[i] == keys[i - 1]) return bad_tree(errc::udm_duplicate_key, "key", i, keys[i]);
      return {};
    }
    case type::array: {
      const type vt = p.value_type;
      if (!is_known_type(static_cast<std::uint8_t>(vt))) return bad_tree(errc::udm_unknown_type, "valueType", static_cast<std::uint8_t>(vt));
      if (is_trivial(vt)) {
        if (p.bytes.size() != std::uint64_t{p.count} * size_of(vt)) return bad_tree(errc::udm_bad_tree, "values", p.bytes.size());
        return {};
      }
      if (vt == type::struct_) {
        UNTOLD_TRY(check_layout(p.layout));
        if (p.bytes.size() != std::uint64_t{p.count} * p.layout.size()) return bad_tree(errc::udm_bad_tree, "values", p.bytes.size());
        return {};
      }
      if (p.items.size() != p.count) return bad_tree(errc::udm_bad_tree, "count", p.items.size());
      for (const property& item : p.items) {
        if (item.kind != vt) return bad_tree(errc::udm_bad_tree, "item", static_cast<std::uint8_t>(item.kind));
        UNTOLD_TRY(check_tree(item));
      }
      return {};
    }
    case type::array_lz4: {
      const type vt = p.value_type;
      if (!is_trivial(vt) && vt != type::struct_ && vt != type::element && vt != type::string)
        return bad_tree(errc::udm_array_type, "valueType", static_cast<std::uint8_t>(vt));
      if (vt == type::struct_) UNTOLD_TRY(check_layout(p.layout));
      return {};
    }
    default: break;
  }
  return bad_tree(errc::udm_unknown_type, "type", static_cast<std::uint8_t>(t));
}

inline void write_short_string(byte_sink& out, byte_span s) {
  if (s.size() < long_string_marker) {
    out.put<std::uint8_t>(static_cast<std::uint8_t>(s.size()));
  } else {
    out.put<std::uint8_t>(long_string_marker);
    out.put<std::uint32_t>(static_cast<std::uint32_t>(s.size()));
  }
  out.bytes(s);
}
inline void write_short_string(byte_sink& out, std::string_view s) {
  write_short_string(out, std::as_bytes(std::span(s.data(), s.size())));
}

inline void write_struct_header(byte_sink& out, const struct_layout& l) {
  out.put<std::uint8_t>(static_cast<std::uint8_t>(l.types.size()));
  for (type t : l.types) out.put<std::uint8_t>(static_cast<std::uint8_t>(t));
  for (const std::string& n : l.names) write_short_string(out, n);
}

/// Writes a u16/u64 size placeholder; returns where, for patch_size.
template <class T>
inline std::size_t begin_block(byte_sink& out) {
  const std::size_t at = out.size();
  out.put<T>(0);
  return at;
}
template <class T>
inline void end_block(byte_sink& out, std::size_t at) {
  out.patch<T>(at, static_cast<T>(out.size() - at - sizeof(T)));
}

/// The payload of p (no type byte). Precondition: check_tree(p) succeeded.
inline void write_payload(byte_sink& out, const property& p) {
  const type t = p.kind;
  if (is_trivial(t)) {
    out.bytes(p.bytes);
    return;
  }
  switch (t) {
    case type::string:
    case type::reference: write_short_string(out, byte_span(p.bytes)); return;
    case type::utf8_string:
      out.put<std::uint32_t>(static_cast<std::uint32_t>(p.bytes.size()));
      out.bytes(p.bytes);
      return;
    case type::blob:
      out.put<std::uint64_t>(p.bytes.size());
      out.bytes(p.bytes);
      return;
    case type::blob_lz4:
      out.put<std::uint64_t>(p.bytes.size());
      out.put<std::uint64_t>(p.uncompressed_size);
      out.bytes(p.bytes);
      return;
    case type::struct_: {
      const std::size_t at = begin_block<std::uint16_t>(out);
      write_struct_header(out, p.layout);
      out.bytes(p.bytes);
      end_block<std::uint16_t>(out, at);
      return;
    }
    case type::element: {
      const std::size_t at = begin_block<std::uint64_t>(out);
      out.put<std::uint32_t>(static_cast<std::uint32_t>(p.children.size()));
      for (const child& c : p.children) {
        out.put<std::uint8_t>(static_cast<std::uint8_t>(c.key.size()));  // keys: u8 length, no escape
        out.string(c.key);
      }
      for (const child& c : p.children) {
        out.put<std::uint8_t>(static_cast<std::uint8_t>(c.value.kind));
        write_payload(out, c.value);
      }
      end_block<std::uint64_t>(out, at);
      return;
    }
    case type::array: {
      out.put<std::uint8_t>(static_cast<std::uint8_t>(p.value_type));
      out.put<std::uint32_t>(p.count);
      if (is_trivial(p.value_type)) {
        out.bytes(p.bytes);
        return;
      }
      const std::size_t at = begin_block<std::uint64_t>(out);
      if (p.value_type == type::struct_) {
        const std::size_t h = begin_block<std::uint16_t>(out);
        write_struct_header(out, p.layout);
        end_block<std::uint16_t>(out, h);
        out.bytes(p.bytes);
      } else {
        for (const property& item : p.items) write_payload(out, item);
      }
      end_block<std::uint64_t>(out, at);
      return;
    }
    case type::array_lz4: {
      out.put<std::uint64_t>(p.bytes.size());
      out.put<std::uint8_t>(static_cast<std::uint8_t>(p.value_type));
      if (p.value_type == type::struct_) {
        const std::size_t h = begin_block<std::uint16_t>(out);
        write_struct_header(out, p.layout);
        end_block<std::uint16_t>(out, h);
      } else if (p.value_type == type::element || p.value_type == type::string) {
        out.put<std::uint64_t>(p.uncompressed_size);
      }
      out.put<std::uint32_t>(p.count);
      out.bytes(p.bytes);
      return;
    }
    default: return;
  }
}

/// Struct blocks have a u16 size: check them after layout (cheap, exact).
inline status check_struct_sizes(const property& p) {
  if (p.kind == type::struct_) {
    std::uint64_t header = 1 + p.layout.types.size();
    for (const std::string& n : p.layout.names) header += (n.size() < 255 ? 1 : 5) + n.size();
    if (header + p.bytes.size() > 0xFFFF) return bad_tree(errc::udm_bad_tree, "structSize", header + p.bytes.size());
  }
  if ((p.kind == type::array || p.kind == type::array_lz4) && p.value_type == type::struct_) {
    std::uint64_t header = 1 + p.layout.types.size();
    for (const std::string& n : p.layout.names) header += (n.size() < 255 ? 1 : 5) + n.size();
    if (header > 0xFFFF) return bad_tree(errc::udm_bad_tree, "structHeaderSize", header);
  }
  for (const child& c : p.children) UNTOLD_TRY(check_struct_sizes(c.value));
  for (const property& i : p.items) UNTOLD_TRY(check_struct_sizes(i));
  return {};
}

}  // namespace detail

struct write_options {
  std::uint32_t version = current_version;  // 1 or 2 (same encoding; the header field only)
  /// Read the bytes back through the strict reader (open_document under
  /// `limits`, asset header not required) before returning them: LZ4 data
  /// that does not decode, a declared size the limits refuse, anything the
  /// reader rejects is then this call's error instead of a file no reader
  /// accepts. Costs one parse (every LZ4 block is decoded once).
  bool verify = true;
  untold::limits limits{};
  /// When given: charged for the nodes written (work) and an upper bound of
  /// the bytes (memory and output), before anything is written.
  untold::budget* budget = nullptr;
};

namespace detail {
/// The nodes of a tree and an upper bound of its binary size (each node at
/// most 24 bytes of framing beside its key, bytes and struct header).
/// Saturating; linear in the nodes.
inline void binary_cost(const property& p, std::size_t key_size, std::uint64_t& nodes, std::uint64_t& bytes) noexcept {
  ++nodes;
  std::uint64_t own = 24 + key_size + p.bytes.size();
  if (!p.layout.types.empty()) {
    own += 3 + p.layout.types.size();
    for (const std::string& n : p.layout.names) own += 5 + n.size();
  }
  bytes = budget::sum(bytes, own);
  for (const child& c : p.children) binary_cost(c.value, c.key.size(), nodes, bytes);
  for (const property& i : p.items) binary_cost(i, 0, nodes, bytes);
}
}  // namespace detail

/// Writes `root` (an Element) as a binary UDM file. Deterministic: same
/// tree, same bytes. Errors: UDM-ROOT, UDM-WRITE, UDM-STRUCT, UDM-ARRAY-TYPE,
/// UDM-TYPE, UDM-DUP-KEY, UDM-VERSION; UDM-LIMITS from options.budget; with
/// options.verify (default), whatever open_document says of the bytes.
[[nodiscard]] inline result<std::vector<std::byte>> write_binary(const property& root, const write_options& options = {}) {
  if (root.kind != type::element) return make_error(errc::udm_bad_root, {.field = "type"});
  if (options.version != 1 && options.version != 2)
    return make_error(errc::udm_bad_version, {.field = "version", .value = options.version, .has_value = true});
  UNTOLD_TRY(detail::check_tree(root));
  UNTOLD_TRY(detail::check_struct_sizes(root));
  if (options.budget != nullptr) {
    std::uint64_t nodes = 0, bound = header_size;
    detail::binary_cost(root, 0, nodes, bound);
    UNTOLD_TRY(options.budget->charge_work(nodes, "nodes written", errc::udm_limit));
    UNTOLD_TRY(options.budget->charge_memory(bound, "bytes written", errc::udm_limit));
    UNTOLD_TRY(options.budget->charge_output(bound, "bytes written", errc::udm_limit));
  }
  std::vector<std::byte> bytes;
  byte_sink out(bytes);
  out.bytes(std::as_bytes(std::span(binary_magic)));
  out.put<std::uint32_t>(options.version);
  out.put<std::uint8_t>(static_cast<std::uint8_t>(type::element));
  detail::write_payload(out, root);
  if (options.verify) {
    open_options back;
    back.limits = options.limits;
    back.require_asset_header = false;
    if (auto doc = open_document(bytes, back); !doc) return doc.error();
  }
  return bytes;
}

inline result<property> decompress_array(const property& lz4, const open_options& options) {
  if (lz4.kind != type::array_lz4) return make_error(errc::udm_type_mismatch, {.field = "ArrayLz4"});
  // Parse it back through the reader: one validated path for LZ4 data.
  property holder = make_element();
  holder.add("a", lz4);
  auto bytes = write_binary(holder, {.verify = false});  // parsed right below
  if (!bytes) return bytes.error();
  open_options o = options;
  o.require_asset_header = false;
  auto doc = open_document(*bytes, o);
  if (!doc) return doc.error();
  const property_view v = doc->root()["a"];
  property out;
  out.kind = type::array;
  out.value_type = v.value_type();
  out.count = static_cast<std::uint32_t>(v.size());
  out.layout = lz4.layout;
  if (is_trivial(out.value_type) || out.value_type == type::struct_) {
    out.bytes.assign(v.raw().begin(), v.raw().end());
  } else {
    for (property_view c : v) out.items.push_back(tree_from_view(c));
  }
  return out;
}

}  // namespace untold::udm
