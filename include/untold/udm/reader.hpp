// untold/udm/reader.hpp - binary UDM ("UDMB", versions 1 and 2) into a
// validated tree of views.
//
// Reads: the 8-byte header (magic "UDMB", u32 version) and the root property,
// which must be an Element holding assetType (String), assetVersion (UInt32)
// and assetData (Element). Every one of the 36 types (docs/udm.md has the
// encodings). Values are views into the caller's buffer: trivial values are
// loaded in place at any alignment, strings and blobs are spans, arrays of
// trivial types and of structs are typed views without a copy. BlobLz4 and
// ArrayLz4 are decompressed once, at parse time, with the safe LZ4 API to
// exactly their declared size; the document owns those buffers.
//
// Rejects (rule ids, see rules/udm.hpp): UDM-MAGIC, UDM-VERSION, UDM-TRUNC,
// UDM-COUNT, UDM-TYPE, UDM-BLOCK-SIZE, UDM-BLOCK-RANGE, UDM-DEPTH, UDM-LZ4,
// UDM-LIMITS, UDM-STRUCT, UDM-ARRAY-TYPE, UDM-ROOT, UDM-DUP-KEY,
// UDM-TRAILING. The getters report UDM-GET-TYPE / UDM-GET-PATH.
//
// Safe on untrusted input: reads go through byte_cursor; every count is
// checked against the bytes that could hold it before anything is allocated;
// decompression is capped by limits.max_chunk_bytes (one blob/array) and
// limits.max_total_bytes (the file); array counts, and the document's total
// property count, by limits.max_records. One budget (budget.hpp) bounds the
// rest, charged before anything is allocated or decoded: the nodes (memory
// and work per property), every array item as work (Nil items and
// zero-size structs too: they take no bytes, but every printer visits them),
// and the declared size of every LZ4 block as memory. Blocks of trivial and
// Struct values are decoded only after the whole structure is read, so a
// document whose blocks add up to more than the budget is refused before
// any of them is decoded (Element and String blocks must be decoded to be
// read; they are charged first too). Parsing is iterative (an explicit stack
// capped by limits.max_depth), so a 100k-deep file is an error value, never
// a stack overflow. Work is linear in the input plus the decompressed
// bytes, and O(n log n) in an element's child count (children are sorted
// once so key lookups are binary searches).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "../budget.hpp"
#include "../bytes.hpp"
#include "../compression.hpp"
#include "../cursor.hpp"
#include "../error.hpp"
#include "../limits.hpp"
#include "types.hpp"

namespace untold::udm {

inline constexpr std::array<char, 4> binary_magic = {'U', 'D', 'M', 'B'};
inline constexpr std::uint32_t current_version = 2;
inline constexpr std::size_t header_size = 8;

/// Pragma's long-string escape: a u8 length of 255 means a u32 length follows.
inline constexpr std::uint8_t long_string_marker = 255;

/// Options of open_document (and decompress_array). No `deep_checks`: the
/// parse applies every rule above on every open; the value checks of a
/// PMDL model are check_pmdl_values (pmdl.hpp; import_pmdl runs them).
struct open_options {
  untold::limits limits{};
  /// The budget this parse charges (budget.hpp): nodes and decoded LZ4 data
  /// as memory, properties and array items as work. nullptr: one of its own
  /// from `limits` and the file's size. Pass one to share it with the stages
  /// that follow on the same input (tree_from_view, the writers, import_pmdl).
  untold::budget* budget = nullptr;
  /// UDM-ROOT: the root must carry assetType/assetVersion/assetData (Pragma
  /// refuses files without them). Off: any root Element is accepted.
  bool require_asset_header = true;
};

/// True when `head` starts with the binary magic "UDMB".
[[nodiscard]] inline bool is_binary_udm(byte_span head) noexcept {
  return head.size() >= 4 && std::memcmp(head.data(), binary_magic.data(), 4) == 0;
}

namespace detail {
inline constexpr cursor_rules file_rules{errc::udm_truncated, errc::udm_count_too_large};
inline constexpr cursor_rules block_rules{errc::udm_block_size, errc::udm_count_too_large};
inline constexpr std::uint32_t none = 0xFFFFFFFFu;

struct node {
  std::string_view key;
  byte_span data;    // the value's bytes (see property_view::raw)
  byte_span stored;  // BlobLz4/ArrayLz4: the compressed bytes as stored
  std::uint64_t offset = 0;  // where the payload starts (file offset; inside LZ4 data: offset in that buffer)
  std::uint64_t uncompressed_size = 0;
  std::uint32_t first_child = 0, child_count = 0;
  std::uint32_t count = 0;  // arrays: number of values
  std::uint32_t layout = none;  // Struct / arrays of Struct: index into document::layouts_
  type kind = type::nil;
  type value_type = type::nil;
  bool in_lz4 = false;  // lives inside decompressed ArrayLz4 data
};

struct member {
  std::string_view name;
  type kind = type::nil;
  std::uint32_t offset = 0;
};

struct layout {
  std::uint32_t first_member = 0, member_count = 0;
  std::uint32_t size = 0;  // packed bytes per value
  byte_span header;        // member count, types, names exactly as stored
};
}  // namespace detail

class document;
class property_view;

/// One member of a struct layout.
struct struct_member {
  std::string_view name;
  type kind = type::nil;
  std::uint32_t offset = 0;  // in the packed value
};

/// The layout of a Struct value or of the values of a struct array.
class struct_layout_view {
 public:
  struct_layout_view() = default;
  struct_layout_view(const document* doc, std::uint32_t index) noexcept : doc_(doc), index_(index) {}
  [[nodiscard]] std::size_t member_count() const noexcept;
  [[nodiscard]] struct_member member(std::size_t i) const noexcept;  // precondition: i < member_count()
  /// The member named `name`, or nullopt.
  [[nodiscard]] std::optional<struct_member> find(std::string_view name) const noexcept;
  [[nodiscard]] std::uint32_t size() const noexcept;  // bytes per value
  [[nodiscard]] byte_span header_bytes() const noexcept;  // as stored: u8 count, types, names

 private:
  const document* doc_ = nullptr;
  std::uint32_t index_ = 0;
};

/// A typed view of count trivial values at any alignment: zero-copy, each
/// access is a memcpy load.
template <class T>
class array_view {
 public:
  array_view() = default;
  array_view(byte_span bytes, std::size_t count) noexcept : bytes_(bytes), count_(count) {}
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  /// Precondition: i < size().
  [[nodiscard]] T operator[](std::size_t i) const noexcept {
    return load_value<T>(bytes_.data() + i * size_of(type_of_v<T>));
  }
  [[nodiscard]] byte_span bytes() const noexcept { return bytes_; }
  /// The values as a std::span when the bytes happen to be aligned for T
  /// and the host is little-endian (LZ4-decompressed arrays always are);
  /// empty optional otherwise: use operator[] then.
  [[nodiscard]] std::optional<std::span<const T>> span() const noexcept {
    if constexpr (std::endian::native != std::endian::little || std::is_same_v<T, bool>) {
      return std::nullopt;
    } else {
      if (count_ == 0) return std::span<const T>();
      if (reinterpret_cast<std::uintptr_t>(bytes_.data()) % alignof(T) != 0) return std::nullopt;
      return std::span<const T>(reinterpret_cast<const T*>(bytes_.data()), count_);
    }
  }

 private:
  byte_span bytes_;
  std::size_t count_ = 0;
};

/// Struct values (one Struct property, or an array of them): count values of
/// layout().size() bytes each.
class struct_array_view {
 public:
  struct_array_view() = default;
  struct_array_view(struct_layout_view layout, byte_span bytes, std::size_t count) noexcept
      : layout_(layout), bytes_(bytes), count_(count) {}
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] const struct_layout_view& layout() const noexcept { return layout_; }
  [[nodiscard]] byte_span bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::uint32_t stride() const noexcept { return layout_.size(); }
  /// The bytes of value i. Precondition: i < size().
  [[nodiscard]] byte_span value(std::size_t i) const noexcept {
    return bytes_.subspan(i * stride(), stride());
  }
  /// Member m of value i as T. Preconditions: i < size(), m.kind == type_of_v<T>.
  template <class T>
  [[nodiscard]] T get(std::size_t i, const struct_member& m) const noexcept {
    return load_value<T>(bytes_.data() + i * stride() + m.offset);
  }

 private:
  struct_layout_view layout_;
  byte_span bytes_;
  std::size_t count_ = 0;
};

/// A property of a parsed document: a small handle (document pointer and
/// node index), cheap to copy. A default-constructed or "missing" view is
/// invalid: kind() is nil, lookups on it yield invalid views, getters return
/// UDM-GET-PATH. Valid only while its document lives.
class property_view {
 public:
  property_view() = default;
  property_view(const document* doc, std::uint32_t index) noexcept : doc_(doc), index_(index) {}

  [[nodiscard]] bool valid() const noexcept { return doc_ != nullptr; }
  explicit operator bool() const noexcept { return valid(); }

  [[nodiscard]] type kind() const noexcept;
  /// The key under its parent element ("" for array items and the root).
  [[nodiscard]] std::string_view key() const noexcept;
  /// Payload offset in the file (inside LZ4 data: in the decompressed buffer).
  [[nodiscard]] std::uint64_t offset() const noexcept;
  /// The value bytes: trivial value, string/blob bytes (BlobLz4: decompressed),
  /// Struct packed data, array values (trivial/struct; ArrayLz4: decompressed).
  [[nodiscard]] byte_span raw() const noexcept;
  /// BlobLz4/ArrayLz4: the compressed bytes as stored in the file.
  [[nodiscard]] byte_span stored() const noexcept;
  [[nodiscard]] std::uint64_t uncompressed_size() const noexcept;

  [[nodiscard]] bool is_element() const noexcept { return kind() == type::element; }
  [[nodiscard]] bool is_array() const noexcept { return kind() == type::array || kind() == type::array_lz4; }
  /// Arrays: the type of the values.
  [[nodiscard]] type value_type() const noexcept;

  /// Element: number of children. Array/ArrayLz4: number of values. Else 0.
  [[nodiscard]] std::size_t size() const noexcept;
  /// Element child i (file order) or item i of an array of non-trivial
  /// values (strings, elements, blobs, arrays); invalid otherwise / out of range.
  [[nodiscard]] property_view child(std::size_t i) const noexcept;
  /// The child with this key (binary search: O(log n)); invalid if absent or
  /// not an element.
  [[nodiscard]] property_view operator[](std::string_view key) const noexcept;
  [[nodiscard]] property_view operator[](const char* key) const noexcept { return (*this)[std::string_view(key)]; }
  /// Item i of an array of non-trivial values; invalid when out of range.
  template <std::integral I>
  [[nodiscard]] property_view operator[](I i) const noexcept {
    return is_array() && i >= 0 ? child(static_cast<std::size_t>(i)) : property_view{};
  }
  /// A '/'-separated path of keys and array indices ("meshGroups/body/meshes/0");
  /// UDM-GET-PATH names the first component that is missing.
  [[nodiscard]] result<property_view> find(std::string_view path) const;

  /// A trivial value. UDM-GET-TYPE when kind() != type_of_v<T>.
  template <class T>
  [[nodiscard]] result<T> as() const noexcept;
  /// String, Reference or Utf8String bytes.
  [[nodiscard]] result<std::string_view> as_string() const noexcept;
  /// Blob bytes, or BlobLz4 decompressed bytes.
  [[nodiscard]] result<byte_span> as_blob() const noexcept;
  /// An Array/ArrayLz4 of T (trivial), zero-copy.
  template <class T>
  [[nodiscard]] result<array_view<T>> as_array() const noexcept;
  /// An Array/ArrayLz4 of Struct, or a single Struct (size 1).
  [[nodiscard]] result<struct_array_view> as_structs() const noexcept;
  /// Struct / arrays of Struct: the member layout.
  [[nodiscard]] struct_layout_view layout() const noexcept;

  /// Iteration over child(0..size()-1) (element children or non-trivial items).
  class iterator {
   public:
    using value_type = property_view;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(const document* doc, std::uint32_t parent, std::size_t i) noexcept : doc_(doc), parent_(parent), i_(i) {}
    property_view operator*() const noexcept { return property_view(doc_, parent_).child(i_); }
    iterator& operator++() noexcept { return ++i_, *this; }
    iterator operator++(int) noexcept { iterator t = *this; ++i_; return t; }
    bool operator==(const iterator& o) const noexcept { return i_ == o.i_; }
   private:
    const document* doc_ = nullptr;
    std::uint32_t parent_ = 0;
    std::size_t i_ = 0;
  };
  [[nodiscard]] iterator begin() const noexcept { return {doc_, index_, 0}; }
  [[nodiscard]] iterator end() const noexcept { return {doc_, index_, children_count()}; }

  [[nodiscard]] std::uint32_t index() const noexcept { return index_; }
  [[nodiscard]] const document* owner() const noexcept { return doc_; }

 private:
  [[nodiscard]] const detail::node* node() const noexcept;
  [[nodiscard]] std::size_t children_count() const noexcept;
  [[nodiscard]] error fail(errc code, const char* field) const noexcept;

  const document* doc_ = nullptr;
  std::uint32_t index_ = 0;
};

/// Counts a user checks first (untold info --json).
struct document_stats {
  std::uint64_t property_count = 0;  // every property, element child and non-trivial array item
  std::uint32_t max_depth = 0;       // the root element is depth 1
  std::uint32_t lz4_arrays = 0;
  std::uint32_t lz4_blobs = 0;
  std::uint64_t decompressed_bytes = 0;
};

/// A parsed, validated binary UDM file. Move-only; views into the input
/// buffer, which must outlive it, and into buffers it owns.
class document {
 public:
  document(document&&) noexcept = default;
  document& operator=(document&&) noexcept = default;
  document(const document&) = delete;
  document& operator=(const document&) = delete;
  ~document() = default;

  [[nodiscard]] std::uint32_t version() const noexcept { return version_; }
  [[nodiscard]] property_view root() const noexcept { return {this, 0}; }
  /// root()["assetType"], ["assetVersion"], ["assetData"] (empty/0/invalid when absent).
  [[nodiscard]] std::string_view asset_type() const noexcept;
  [[nodiscard]] std::uint32_t asset_version() const noexcept;
  [[nodiscard]] property_view asset_data() const noexcept { return root()["assetData"]; }
  [[nodiscard]] const document_stats& stats() const noexcept { return stats_; }
  /// The number of bytes parsed: always the whole input for a valid file.
  [[nodiscard]] std::size_t parsed_bytes() const noexcept { return parsed_; }

 private:
  friend class property_view;
  friend class struct_layout_view;
  friend class parser;
  friend result<document> open_document(byte_span, const open_options&);
  document() = default;

  std::vector<detail::node> nodes_;
  std::vector<std::uint32_t> sorted_;  // for element children: indices sorted by key, parallel to nodes_
  std::vector<detail::member> members_;
  std::vector<detail::layout> layouts_;
  std::vector<std::unique_ptr<std::byte[]>> owned_;  // decompressed LZ4 data
  document_stats stats_{};
  std::uint32_t version_ = 0;
  std::size_t parsed_ = 0;
};

// ---- the parser ---------------------------------------------------------------------------

class parser {
 public:
  parser(document& doc, const open_options& options, budget& charged) noexcept
      : doc_(doc), options_(options), budget_(charged) {}

  status run(byte_span file) {
    byte_cursor c(file, detail::file_rules);
    auto magic = c.bytes(4, "magic");
    if (!magic) return magic.error();
    if (std::memcmp(magic->data(), binary_magic.data(), 4) != 0)
      return make_error(errc::udm_bad_magic).at_field("magic")
          .with_value(load_le_unchecked<std::uint32_t>(magic->data())).at_offset(0);
    auto version = c.read<std::uint32_t>("version");
    if (!version) return version.error();
    if (*version != 1 && *version != 2) return make_error(errc::udm_bad_version).at_field("version")
        .with_value(*version).at_offset(4);
    doc_.version_ = *version;
    const std::uint64_t type_at = c.offset();
    auto root_type = c.read<std::uint8_t>("type");
    if (!root_type) return root_type.error();
    if (*root_type != static_cast<std::uint8_t>(type::element))
      return make_error(errc::udm_bad_root).at_field("type").with_value(*root_type).at_offset(type_at);
    UNTOLD_TRY(reserve_nodes(1, c));
    add_children(1, false);
    doc_.nodes_[0].kind = type::element;
    doc_.nodes_[0].offset = c.offset();
    UNTOLD_TRY(value(c, 0, 0));
    UNTOLD_TRY(drain());
    if (!c.at_end()) return c.fail(errc::udm_trailing_bytes, "root", c.remaining());
    UNTOLD_TRY(decode_pending());
    doc_.parsed_ = c.position();
    doc_.stats_.property_count = doc_.nodes_.size();
    if (options_.require_asset_header) UNTOLD_TRY(check_root());
    return {};
  }

 private:
  // A container whose values are still being read: an element (a type byte
  // per child) or an array of non-trivial values (all of value_type).
  struct frame {
    byte_cursor cur;
    std::uint32_t first = 0, count = 0, next = 0;
    std::uint32_t depth = 0;
    type item_type = type::nil;
    bool element = false;
    bool in_lz4 = false;
  };

  // An LZ4 block of trivial or Struct values (or a BlobLz4), admitted to the
  // budget and decoded once the whole structure has been read.
  struct pending_lz4 {
    std::uint32_t node = 0;
    std::uint64_t offset = 0;  // where its size field ends, for errors
    const char* field = nullptr;
  };
  static constexpr std::uint64_t node_bytes = sizeof(detail::node) + sizeof(std::uint32_t);  // node + sorted_ entry

  static constexpr std::uint64_t min_payload(type t) noexcept {
    switch (t) {
      case type::string:
      case type::reference: return 1;
      case type::utf8_string: return 4;
      case type::blob: return 8;
      case type::blob_lz4: return 16;
      case type::element: return 12;
      case type::array: return 5;
      case type::array_lz4: return 13;
      case type::struct_: return 2;
      default: return size_of(t);
    }
  }

  [[nodiscard]] detail::node& at(std::uint32_t i) noexcept { return doc_.nodes_[i]; }

  /// A sub-cursor of n bytes; a block that ends before its parent does reports
  /// overruns as UDM-BLOCK-SIZE, one that ends with the file as UDM-TRUNC.
  result<byte_cursor> block(byte_cursor& c, std::uint64_t n, const char* field) {
    if (n > c.remaining()) return c.fail_limit(errc::udm_block_range, field, n, c.remaining());
    const bool to_end = n == c.remaining() && c.rules().truncated == errc::udm_truncated;
    const std::uint64_t at = c.offset();
    auto b = c.bytes(n, field);
    if (!b) return b.error();
    return byte_cursor(*b, to_end ? detail::file_rules : detail::block_rules, at);
  }

  status check_depth(std::uint32_t depth, const byte_cursor& c) const {
    if (depth > options_.limits.max_depth) return c.fail_limit(errc::udm_depth, "depth", depth, options_.limits.max_depth);
    return {};
  }

  status check_records(std::uint64_t count, const byte_cursor& c, const char* field) const {
    if (count > options_.limits.max_records)
      return c.fail_limit(errc::udm_limit, field, count, options_.limits.max_records);
    return {};
  }

  /// A hostile file can declare a property per byte or two (an LZ4 block of
  /// empty strings: 250 per stored byte); each costs node_bytes, so the
  /// document's total is capped by max_records and charged to the budget
  /// (memory and work) before the nodes are allocated.
  status reserve_nodes(std::uint64_t count, const byte_cursor& c) {
    if (doc_.nodes_.size() + count > options_.limits.max_records)
      return c.fail_limit(errc::udm_limit, "properties", doc_.nodes_.size() + count, options_.limits.max_records);
    return charged(budget_.charge_items(count, node_bytes, "properties", errc::udm_limit), c);
  }

  /// Array items that get no node of their own (trivial values, structs):
  /// work, whether or not they take bytes. A struct counts once per member.
  status charge_array_items(std::uint64_t count, std::uint32_t layout, const byte_cursor& c) {
    const std::uint64_t per_item = layout == detail::none ? 1 : std::max<std::uint32_t>(doc_.layouts_[layout].member_count, 1);
    return charged(budget_.charge_work(budget::product(count, per_item), "array items", errc::udm_limit), c);
  }

  /// A budget refusal, placed where the charge was made.
  static status charged(status s, const byte_cursor& c) {
    if (!s) return error(s.error()).at_offset(c.offset());
    return s;
  }

  /// Allocates `count` child nodes; returns the first index.
  std::uint32_t add_children(std::uint32_t count, bool in_lz4) {
    const auto first = static_cast<std::uint32_t>(doc_.nodes_.size());
    doc_.nodes_.resize(doc_.nodes_.size() + count);
    doc_.sorted_.resize(doc_.nodes_.size());
    for (std::uint32_t i = 0; i < count; ++i) {
      doc_.sorted_[first + i] = first + i;
      doc_.nodes_[first + i].in_lz4 = in_lz4;
    }
    return first;
  }

  /// A String/Reference (u8 length, 255 -> u32 length).
  static result<std::string_view> short_string(byte_cursor& c, const char* field) {
    auto n = c.read<std::uint8_t>(field);
    if (!n) return n.error();
    std::uint64_t len = *n;
    if (len == long_string_marker) {
      auto l = c.read<std::uint32_t>(field);
      if (!l) return l.error();
      len = *l;
    }
    return c.string(len, field);
  }

  /// A struct header: u8 member count, member types, member names.
  result<std::uint32_t> struct_header(byte_cursor& c) {
    const std::size_t start = c.position();
    const std::uint64_t at = c.offset();
    auto n = c.read<std::uint8_t>("memberCount");
    if (!n) return n.error();
    if (*n == 0) return make_error(errc::udm_struct_member).at_field("memberCount").with_value(0).at_offset(at);
    UNTOLD_TRY(charged(budget_.charge_items(*n, sizeof(detail::member), "struct members", errc::udm_limit), c));
    auto types = c.bytes(*n, "memberTypes");
    if (!types) return types.error();
    detail::layout l;
    l.first_member = static_cast<std::uint32_t>(doc_.members_.size());
    l.member_count = *n;
    std::uint64_t offset = 0;
    for (std::uint32_t i = 0; i < *n; ++i) {
      const auto t = static_cast<std::uint8_t>((*types)[i]);
      if (!is_known_type(t)) return make_error(errc::udm_unknown_type).at_field("memberType").with_value(t)
          .at_offset(at + 1 + i);
      if (!is_trivial(static_cast<type>(t)))
        return make_error(errc::udm_struct_member).at_field("memberType").with_value(t).at_offset(at + 1 + i);
      doc_.members_.push_back({{}, static_cast<type>(t), static_cast<std::uint32_t>(offset)});
      offset += size_of(static_cast<type>(t));
    }
    for (std::uint32_t i = 0; i < *n; ++i) {
      auto name = short_string(c, "memberName");
      if (!name) return name.error();
      doc_.members_[l.first_member + i].name = *name;
    }
    l.size = static_cast<std::uint32_t>(offset);  // <= 255 * 64
    // The header as stored (for the writer's byte-exact round trip).
    const std::size_t consumed = c.position() - start;
    l.header = byte_span(c.rest().data() - consumed, consumed);
    doc_.layouts_.push_back(l);
    return static_cast<std::uint32_t>(doc_.layouts_.size() - 1);
  }

  /// Checks a declared decompressed size against the limits and LZ4's
  /// 256:1 bound, and charges it to the budget as memory: before anything
  /// is decoded. Returns whether there is anything to decode.
  result<bool> admit_lz4(byte_span stored, std::uint64_t declared, const byte_cursor& c, const char* field) {
    if (declared == 0 && stored.empty()) return false;
    const limits& lim = options_.limits;
    if (declared > lim.max_chunk_bytes) return c.fail_limit(errc::udm_limit, field, declared, lim.max_chunk_bytes);
    const auto total = checked_add(doc_.stats_.decompressed_bytes, declared);
    if (!total || *total > lim.max_total_bytes)
      return c.fail_limit(errc::udm_limit, field, declared, lim.max_total_bytes);
    if (declared > max_decoded_size(compression::lz4, stored))
      return c.fail_limit(errc::udm_lz4, field, declared, max_decoded_size(compression::lz4, stored));
    UNTOLD_TRY(charged(budget_.charge_memory(declared, "decompressed bytes", errc::udm_limit), c));
    doc_.stats_.decompressed_bytes = *total;
    return true;
  }

  /// Decodes an admitted block to exactly `declared` bytes into a buffer the
  /// document owns. Errors are placed at `offset` (see pending_lz4).
  status decode_lz4(byte_span stored, std::uint64_t declared, std::uint64_t offset, const char* field, byte_span& out) {
    auto buffer = std::unique_ptr<std::byte[]>(new (std::nothrow) std::byte[static_cast<std::size_t>(declared)]);
    if (!buffer) return make_error(errc::udm_limit).at_field(field).with_value(declared).at_offset(offset);
    const mutable_byte_span dst(buffer.get(), static_cast<std::size_t>(declared));
    if (auto s = decompress(compression::lz4, stored, dst); !s) {
      if (s.error().code == errc::compression_unsupported) return s.error();
      return make_error(errc::udm_lz4).at_field(field).with_value(declared).at_offset(offset);
    }
    out = dst;
    doc_.owned_.push_back(std::move(buffer));
    return {};
  }

  /// Admits node `index`'s LZ4 block (stored, uncompressed_size set) and
  /// queues it for decode_pending.
  status defer_lz4(std::uint32_t index, const byte_cursor& c, const char* field) {
    auto any = admit_lz4(at(index).stored, at(index).uncompressed_size, c, field);
    if (!any) return any.error();
    if (*any) pending_.push_back({index, c.offset(), field});
    return {};
  }

  /// Decodes the queued blocks, once the whole structure is read and every
  /// declared size is charged.
  status decode_pending() {
    for (const pending_lz4& p : pending_) {
      detail::node& n = at(p.node);
      byte_span out;
      if (auto s = decode_lz4(n.stored, n.uncompressed_size, p.offset, p.field, out); !s) {
        error e = s.error();
        return e.with_subject(n.key);
      }
      n.data = out;
    }
    pending_.clear();
    return {};
  }

  /// Reads the payload of node `index` (its kind is set) from c. Leaves and
  /// trivial arrays are read at once; containers push a frame.
  status value(byte_cursor& c, std::uint32_t index, std::uint32_t depth) {
    const type t = at(index).kind;
    at(index).offset = c.offset();
    const bool in_lz4 = at(index).in_lz4;
    if (is_trivial(t)) {
      auto b = c.bytes(size_of(t), "value");
      if (!b) return b.error();
      at(index).data = *b;
      return {};
    }
    switch (t) {
      case type::string:
      case type::reference: {
        auto s = short_string(c, "string");
        if (!s) return s.error();
        at(index).data = std::as_bytes(std::span(s->data(), s->size()));
        return {};
      }
      case type::utf8_string: {
        auto n = c.read<std::uint32_t>("utf8Length");
        if (!n) return n.error();
        auto b = c.bytes(*n, "utf8");
        if (!b) return b.error();
        at(index).data = *b;
        return {};
      }
      case type::blob: {
        auto n = c.read<std::uint64_t>("blobSize");
        if (!n) return n.error();
        auto b = c.bytes(*n, "blob");
        if (!b) return b.error();
        at(index).data = *b;
        return {};
      }
      case type::blob_lz4: {
        auto compressed = c.read<std::uint64_t>("compressedSize");
        if (!compressed) return compressed.error();
        auto uncompressed = c.read<std::uint64_t>("uncompressedSize");
        if (!uncompressed) return uncompressed.error();
        auto stored = c.bytes(*compressed, "lz4");
        if (!stored) return stored.error();
        at(index).stored = *stored;
        at(index).uncompressed_size = *uncompressed;
        ++doc_.stats_.lz4_blobs;
        return defer_lz4(index, c, "uncompressedSize");
      }
      case type::struct_: {
        auto size = c.read<std::uint16_t>("structSize");
        if (!size) return size.error();
        auto b = block(c, *size, "structSize");
        if (!b) return b.error();
        auto l = struct_header(*b);
        if (!l) return l.error();
        const std::uint32_t sz = doc_.layouts_[*l].size;
        if (b->remaining() != sz) return b->fail_limit(errc::udm_struct_member, "structData", b->remaining(), sz);
        at(index).data = b->rest();
        at(index).layout = *l;
        at(index).count = 1;
        return {};
      }
      case type::element: {
        UNTOLD_TRY(check_depth(depth + 1, c));
        auto size = c.read<std::uint64_t>("elementSize");
        if (!size) return size.error();
        auto b = block(c, *size, "elementSize");
        if (!b) return b.error();
        // Each child needs at least a key length and a type byte.
        auto n = b->count_u32(2, "childCount");
        if (!n) return n.error();
        UNTOLD_TRY(check_records(*n, *b, "childCount"));
        UNTOLD_TRY(reserve_nodes(*n, *b));
        const std::uint32_t first = add_children(*n, in_lz4);
        at(index).first_child = first;
        at(index).child_count = *n;
        for (std::uint32_t i = 0; i < *n; ++i) {
          auto len = b->read<std::uint8_t>("keyLength");
          if (!len) return len.error();
          auto key = b->string(*len, "key");
          if (!key) return key.error();
          at(first + i).key = *key;
        }
        UNTOLD_TRY(sort_keys(first, *n, *b));
        stack_.push_back({*b, first, *n, 0, depth + 1, type::nil, true, in_lz4});
        note_depth(depth + 1);
        return {};
      }
      case type::array: return array(c, index, depth);
      case type::array_lz4: return array_lz4(c, index, depth);
      default: break;
    }
    return c.fail(errc::udm_unknown_type, "type", static_cast<std::uint8_t>(t));
  }

  void note_depth(std::uint32_t depth) noexcept {
    if (depth > doc_.stats_.max_depth) doc_.stats_.max_depth = depth;
  }

  status sort_keys(std::uint32_t first, std::uint32_t n, const byte_cursor& c) {
    auto* s = doc_.sorted_.data() + first;
    const auto& nodes = doc_.nodes_;
    std::sort(s, s + n, [&nodes](std::uint32_t a, std::uint32_t b) {
      return nodes[a].key < nodes[b].key || (nodes[a].key == nodes[b].key && a < b);
    });
    for (std::uint32_t i = 1; i < n; ++i)
      if (nodes[s[i]].key == nodes[s[i - 1]].key)
        return error(c.fail(errc::udm_duplicate_key, "key", s[i] - first)).with_subject(nodes[s[i]].key);
    return {};
  }

  status array(byte_cursor& c, std::uint32_t index, std::uint32_t depth) {
    const bool in_lz4 = at(index).in_lz4;
    auto vt = c.read<std::uint8_t>("valueType");
    if (!vt) return vt.error();
    if (!is_known_type(*vt)) return c.fail(errc::udm_unknown_type, "valueType", *vt);
    const auto value_type = static_cast<type>(*vt);
    at(index).value_type = value_type;
    auto count = c.read<std::uint32_t>("count");
    if (!count) return count.error();
    UNTOLD_TRY(check_records(*count, c, "count"));
    at(index).count = *count;
    if (is_trivial(value_type)) {
      auto b = c.array_bytes(*count, size_of(value_type), "values");
      if (!b) return b.error();
      UNTOLD_TRY(charge_array_items(*count, detail::none, c));
      at(index).data = *b;
      return {};
    }
    auto size = c.read<std::uint64_t>("arraySize");
    if (!size) return size.error();
    auto b = block(c, *size, "arraySize");
    if (!b) return b.error();
    if (value_type == type::struct_) {
      auto header_size = b->read<std::uint16_t>("structHeaderSize");
      if (!header_size) return header_size.error();
      auto h = block(*b, *header_size, "structHeaderSize");
      if (!h) return h.error();
      auto l = struct_header(*h);
      if (!l) return l.error();
      if (!h->at_end()) return h->fail(errc::udm_block_size, "structHeaderSize", h->remaining());
      at(index).layout = *l;
      const std::uint32_t sz = doc_.layouts_[*l].size;
      auto data = b->array_bytes(*count, sz, "values");
      if (!data) return data.error();
      UNTOLD_TRY(charge_array_items(*count, *l, *b));
      if (!b->at_end()) return b->fail(errc::udm_block_size, "arraySize", b->remaining());
      at(index).data = *data;
      return {};
    }
    UNTOLD_TRY(check_depth(depth + 1, c));
    UNTOLD_TRY(b->check_count(*count, min_payload(value_type), "count"));
    UNTOLD_TRY(reserve_nodes(*count, *b));
    const std::uint32_t first = add_children(*count, in_lz4);
    at(index).first_child = first;
    at(index).child_count = *count;
    for (std::uint32_t i = 0; i < *count; ++i) at(first + i).kind = value_type;
    stack_.push_back({*b, first, *count, 0, depth + 1, value_type, false, in_lz4});
    note_depth(depth + 1);
    return {};
  }

  status array_lz4(byte_cursor& c, std::uint32_t index, std::uint32_t depth) {
    auto compressed = c.read<std::uint64_t>("compressedSize");
    if (!compressed) return compressed.error();
    auto vt = c.read<std::uint8_t>("valueType");
    if (!vt) return vt.error();
    if (!is_known_type(*vt)) return c.fail(errc::udm_unknown_type, "valueType", *vt);
    const auto value_type = static_cast<type>(*vt);
    if (!is_trivial(value_type) && value_type != type::struct_ && value_type != type::element &&
        value_type != type::string)
      return c.fail(errc::udm_array_type, "valueType", *vt);
    at(index).value_type = value_type;
    std::uint64_t element_size = size_of(value_type);
    if (value_type == type::struct_) {
      auto header_size = c.read<std::uint16_t>("structHeaderSize");
      if (!header_size) return header_size.error();
      auto h = block(c, *header_size, "structHeaderSize");
      if (!h) return h.error();
      auto l = struct_header(*h);
      if (!l) return l.error();
      if (!h->at_end()) return h->fail(errc::udm_block_size, "structHeaderSize", h->remaining());
      at(index).layout = *l;
      element_size = doc_.layouts_[*l].size;
    }
    std::uint64_t declared = 0;
    const bool sized = value_type == type::element || value_type == type::string;
    if (sized) {
      auto u = c.read<std::uint64_t>("uncompressedSize");
      if (!u) return u.error();
      declared = *u;
    }
    auto count = c.read<std::uint32_t>("count");
    if (!count) return count.error();
    UNTOLD_TRY(check_records(*count, c, "count"));
    at(index).count = *count;
    if (!sized) {
      const auto n = checked_mul(*count, element_size);
      if (!n) return c.fail(errc::udm_count_too_large, "count", *count);
      declared = *n;
    }
    auto stored = c.bytes(*compressed, "lz4");
    if (!stored) return stored.error();
    at(index).stored = *stored;
    at(index).uncompressed_size = declared;
    ++doc_.stats_.lz4_arrays;
    if (*count == 0 && stored->empty() && (!sized || declared == 0)) {
      return {};  // Pragma writes empty arrays without LZ4 data
    }
    if (!sized) {
      UNTOLD_TRY(charge_array_items(*count, at(index).layout, c));
      return defer_lz4(index, c, "uncompressedSize");
    }
    // Element / String values must be decoded now to be read.
    auto any = admit_lz4(*stored, declared, c, "uncompressedSize");
    if (!any) return any.error();
    byte_span out;
    if (*any) UNTOLD_TRY(decode_lz4(*stored, declared, c.offset(), "uncompressedSize", out));
    at(index).data = out;
    // Element / String values: u32 count, then one payload per value.
    byte_cursor inner(out, detail::block_rules, 0);
    auto n = inner.read<std::uint32_t>("count");
    if (!n) return n.error();
    if (*n != *count) return inner.fail_limit(errc::udm_block_size, "count", *n, *count);
    UNTOLD_TRY(check_depth(depth + 1, c));
    UNTOLD_TRY(inner.check_count(*count, min_payload(value_type), "count"));
    UNTOLD_TRY(reserve_nodes(*count, inner));
    const std::uint32_t first = add_children(*count, true);
    at(index).first_child = first;
    at(index).child_count = *count;
    for (std::uint32_t i = 0; i < *count; ++i) at(first + i).kind = value_type;
    stack_.push_back({inner, first, *count, 0, depth + 1, value_type, false, true});
    note_depth(depth + 1);
    return {};
  }

  /// Reads the values of every pending container, innermost first.
  status drain() {
    while (!stack_.empty()) {
      const std::size_t top = stack_.size() - 1;
      frame& f = stack_[top];
      if (f.next == f.count) {
        if (!f.cur.at_end()) return f.cur.fail(errc::udm_block_size, f.element ? "elementSize" : "arraySize", f.cur.remaining());
        stack_.pop_back();
        continue;
      }
      const std::uint32_t child = f.first + f.next++;
      if (f.element) {
        auto t = f.cur.read<std::uint8_t>("type");
        if (!t) return error(t.error()).with_subject(at(child).key);
        if (!is_known_type(*t)) return error(f.cur.fail(errc::udm_unknown_type, "type", *t)).with_subject(at(child).key);
        at(child).kind = static_cast<type>(*t);
      }
      // value() may push a frame (invalidating f): copy the cursor out and back.
      byte_cursor cur = f.cur;
      const std::uint32_t depth = f.depth;
      auto s = value(cur, child, depth);
      stack_[top].cur = cur;
      if (!s) {
        error e = s.error();
        if (e.subject().empty() && !at(child).key.empty()) e.with_subject(at(child).key);
        if (e.context.record_index == no_index) e.context.record_index = child - stack_[top].first;
        return e;
      }
    }
    return {};
  }

  status check_root() const {
    const property_view root = doc_.root();
    auto bad = [&](const char* field) {
      error e = make_error(errc::udm_bad_root);
      e.context.field = field;
      e.context.offset = header_size;
      return e;
    };
    if (root["assetType"].kind() != type::string) return bad("assetType");
    if (root["assetVersion"].kind() != type::uint32) return bad("assetVersion");
    if (root["assetData"].kind() != type::element) return bad("assetData");
    return {};
  }

  document& doc_;
  const open_options& options_;
  budget& budget_;
  std::vector<frame> stack_;
  std::vector<pending_lz4> pending_;
};

/// Parses and validates `file` (binary UDM). Preconditions: none (any
/// bytes); safe on untrusted input; `file` must outlive the document and its
/// views. Errors: the UDM-* rules above; UDM-LIMITS also when the budget
/// (options.budget or one made from options.limits and file.size()) is
/// exhausted.
[[nodiscard]] inline result<document> open_document(byte_span file, const open_options& options = {}) {
  document doc;
  budget own(options.limits, file.size());
  parser p(doc, options, budget::own_or_shared(options.budget, own));
  if (auto s = p.run(file); !s) return s.error();
  return doc;
}
/// A temporary buffer would dangle under the document's views.
result<document> open_document(std::vector<std::byte>&& file, const open_options& options = {}) = delete;

inline std::string_view document::asset_type() const noexcept {
  auto s = root()["assetType"].as_string();
  return s ? *s : std::string_view{};
}
inline std::uint32_t document::asset_version() const noexcept {
  auto v = root()["assetVersion"].as<std::uint32_t>();
  return v ? *v : 0;
}

// ---- views ----------------------------------------------------------------------------------

inline std::size_t struct_layout_view::member_count() const noexcept {
  return doc_ == nullptr ? 0 : doc_->layouts_[index_].member_count;
}
inline struct_member struct_layout_view::member(std::size_t i) const noexcept {
  const detail::member& m = doc_->members_[doc_->layouts_[index_].first_member + i];
  return {m.name, m.kind, m.offset};
}
inline std::optional<struct_member> struct_layout_view::find(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < member_count(); ++i)
    if (member(i).name == name) return member(i);
  return std::nullopt;
}
inline std::uint32_t struct_layout_view::size() const noexcept { return doc_ == nullptr ? 0 : doc_->layouts_[index_].size; }
inline byte_span struct_layout_view::header_bytes() const noexcept {
  return doc_ == nullptr ? byte_span{} : doc_->layouts_[index_].header;
}

inline const detail::node* property_view::node() const noexcept { return doc_ == nullptr ? nullptr : &doc_->nodes_[index_]; }
inline type property_view::kind() const noexcept { return doc_ == nullptr ? type::nil : node()->kind; }
inline std::string_view property_view::key() const noexcept { return doc_ == nullptr ? std::string_view{} : node()->key; }
inline std::uint64_t property_view::offset() const noexcept { return doc_ == nullptr ? 0 : node()->offset; }
inline byte_span property_view::raw() const noexcept { return doc_ == nullptr ? byte_span{} : node()->data; }
inline byte_span property_view::stored() const noexcept { return doc_ == nullptr ? byte_span{} : node()->stored; }
inline std::uint64_t property_view::uncompressed_size() const noexcept {
  return doc_ == nullptr ? 0 : node()->uncompressed_size;
}
inline type property_view::value_type() const noexcept { return doc_ == nullptr ? type::nil : node()->value_type; }
inline std::size_t property_view::size() const noexcept {
  if (doc_ == nullptr) return 0;
  if (is_element()) return node()->child_count;
  if (is_array()) return node()->count;
  return 0;
}
inline std::size_t property_view::children_count() const noexcept { return doc_ == nullptr ? 0 : node()->child_count; }
inline property_view property_view::child(std::size_t i) const noexcept {
  if (doc_ == nullptr || i >= node()->child_count) return {};
  return {doc_, static_cast<std::uint32_t>(node()->first_child + i)};
}
inline property_view property_view::operator[](std::string_view key) const noexcept {
  if (!is_element()) return {};
  const detail::node* n = node();
  const std::uint32_t* first = doc_->sorted_.data() + n->first_child;
  const std::uint32_t* last = first + n->child_count;
  const auto& nodes = doc_->nodes_;
  const std::uint32_t* it =
      std::lower_bound(first, last, key, [&nodes](std::uint32_t a, std::string_view k) { return nodes[a].key < k; });
  if (it == last || nodes[*it].key != key) return {};
  return {doc_, *it};
}
inline error property_view::fail(errc code, const char* field) const noexcept {
  error e = make_error(code);
  e.context.field = field;
  if (doc_ != nullptr) e.context.offset = offset();
  e.with_subject(key());
  if (doc_ != nullptr) {
    e.context.value = static_cast<std::uint8_t>(kind());
    e.context.has_value = true;
  }
  return e;
}
inline result<property_view> property_view::find(std::string_view path) const {
  property_view at = *this;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
    if (part.empty()) continue;
    property_view next;
    if (at.is_element()) {
      next = at[part];
    } else if (at.is_array()) {
      std::size_t i = 0;
      bool number = true;
      for (char ch : part) {
        if (ch < '0' || ch > '9' || i > (SIZE_MAX - 9) / 10) {  // i * 10 + 9 still fits (size_t may be 32 bits)
          number = false;
          break;
        }
        i = i * 10 + static_cast<std::size_t>(ch - '0');
      }
      if (number) next = at.child(i);
    }
    if (!next) {
      error e = make_error(errc::udm_not_found);
      e.context.field = "path";
      e.with_subject(part);
      if (at) e.context.offset = at.offset();
      return e;
    }
    at = next;
  }
  if (!at) return make_error(errc::udm_not_found);
  return at;
}
template <class T>
inline result<T> property_view::as() const noexcept {
  if (doc_ == nullptr) return fail(errc::udm_not_found, "value");
  if (kind() != type_of_v<T>) return fail(errc::udm_type_mismatch, name(type_of_v<T>).data());
  return load_value<T>(node()->data.data());
}
inline result<std::string_view> property_view::as_string() const noexcept {
  if (doc_ == nullptr) return fail(errc::udm_not_found, "value");
  const type t = kind();
  if (t != type::string && t != type::reference && t != type::utf8_string)
    return fail(errc::udm_type_mismatch, "String");
  const byte_span d = node()->data;
  return std::string_view(reinterpret_cast<const char*>(d.data()), d.size());
}
inline result<byte_span> property_view::as_blob() const noexcept {
  if (doc_ == nullptr) return fail(errc::udm_not_found, "value");
  if (kind() != type::blob && kind() != type::blob_lz4) return fail(errc::udm_type_mismatch, "Blob");
  return node()->data;
}
template <class T>
inline result<array_view<T>> property_view::as_array() const noexcept {
  if (doc_ == nullptr) return fail(errc::udm_not_found, "value");
  if (!is_array() || value_type() != type_of_v<T>) return fail(errc::udm_type_mismatch, name(type_of_v<T>).data());
  return array_view<T>(node()->data, node()->count);
}
inline result<struct_array_view> property_view::as_structs() const noexcept {
  if (doc_ == nullptr) return fail(errc::udm_not_found, "value");
  if (kind() == type::struct_) return struct_array_view(layout(), node()->data, 1);
  if (!is_array() || value_type() != type::struct_) return fail(errc::udm_type_mismatch, "Struct");
  return struct_array_view(layout(), node()->data, node()->count);
}
inline struct_layout_view property_view::layout() const noexcept {
  if (doc_ == nullptr || node()->layout == detail::none) return {};
  return {doc_, node()->layout};
}

}  // namespace untold::udm
