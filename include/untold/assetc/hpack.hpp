// untold/assetc/hpack.hpp - assetc .hpack v2 bundles: reader, validator,
// lookup by path, entries as spans (no copy), layout breakdown and a
// deterministic writer.
//
// Reads: a 24-byte header ("HPAK", version 2, count, flags, u64 tocBytes),
// the TOC (count entries of u64 offset, u64 size, u8 kind, u16 pathLen, path,
// sorted by path) and 16-byte aligned payloads. Entries are parsed once into
// a vector of views; find(path) is a binary search over the TOC order.
//
// Rejects (open_hpack): HM-TRUNC HM-MAGIC HM-VERSION HM-LIMITS HM-COUNT
// HM-HPAK-TOC (the entries do not end exactly at 24 + tocBytes)
// HM-HPAK-ORDER (paths not strictly ascending byte-wise: unsorted or
// duplicated) HM-PATH HM-HPAK-RANGE (an entry unaligned, past the end of the
// file, inside the header/TOC or overlapping another entry). Unknown kinds
// are kept.
//
// Safe on untrusted input: every range is overflow-checked, the entry vector
// is sized only after count x 19 bytes are proven to fit in the TOC, the
// overlap check sorts once (n log n in the entry count).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "../bytes.hpp"
#include "../cursor.hpp"
#include "../error.hpp"
#include "../sink.hpp"
#include "common.hpp"
#include "fnv.hpp"

namespace untold::assetc {

inline constexpr std::uint32_t hpack_version = 2;
inline constexpr std::size_t hpack_header_size = 24;
inline constexpr std::size_t hpack_min_entry_size = 19;

enum class pack_kind : std::uint8_t { other = 0, hmesh, hmat, hman, hanim, ktx2, spv, hfont };

[[nodiscard]] constexpr std::string_view pack_kind_name(std::uint8_t kind) noexcept {
  constexpr std::string_view names[] = {"other", "mesh", "material", "manifest", "animation", "texture", "shader", "font"};
  return kind < 8 ? names[kind] : "unknown";
}

/// The kind the writer records for a path, from its extension (ASCII case-insensitive).
[[nodiscard]] inline pack_kind pack_kind_for_path(std::string_view path) noexcept {
  const std::size_t dot = path.rfind('.');
  const std::size_t slash = path.rfind('/');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return pack_kind::other;
  const std::string_view ext = path.substr(dot + 1);
  constexpr std::pair<std::string_view, pack_kind> table[] = {
      {"hmesh", pack_kind::hmesh}, {"hmat", pack_kind::hmat}, {"hman", pack_kind::hman}, {"hanim", pack_kind::hanim},
      {"ktx2", pack_kind::ktx2},   {"spv", pack_kind::spv},   {"hfont", pack_kind::hfont}};
  for (const auto& [name, kind] : table) {
    if (name.size() != ext.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < name.size(); ++i) same = same && ascii_lower(ext[i]) == name[i];
    if (same) return kind;
  }
  return pack_kind::other;
}

struct pack_entry {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint8_t kind = 0;  // pack_kind; other values are kept
  std::string_view path{};
  friend constexpr bool operator==(const pack_entry&, const pack_entry&) = default;
};

/// Where the bytes of a pack go (`untold pack info`).
struct pack_layout {
  std::uint64_t file = 0;
  std::uint64_t header = hpack_header_size;
  std::uint64_t toc = 0;
  std::uint64_t payload = 0;  // sum of entry sizes
  std::uint64_t padding = 0;  // everything else: alignment gaps and unreferenced bytes
};

/// A validated .hpack over the caller's bytes (which must outlive it).
class hpack {
 public:
  [[nodiscard]] std::uint32_t flags() const noexcept { return flags_; }
  [[nodiscard]] std::uint64_t toc_bytes() const noexcept { return toc_bytes_; }
  /// The TOC, in path order.
  [[nodiscard]] std::span<const pack_entry> entries() const noexcept { return entries_; }
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  /// The entry at `path` (exact, byte-wise), or nullptr. O(log n).
  [[nodiscard]] const pack_entry* find(std::string_view path) const noexcept {
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), path,
                                     [](const pack_entry& e, std::string_view p) { return e.path < p; });
    return it != entries_.end() && it->path == path ? &*it : nullptr;
  }
  /// An entry's bytes, a view into the pack. Precondition: `e` is one of entries().
  [[nodiscard]] byte_span bytes(const pack_entry& e) const noexcept {
    return file_.subspan(static_cast<std::size_t>(e.offset), static_cast<std::size_t>(e.size));
  }
  /// The bytes at `path`, or nullopt.
  [[nodiscard]] std::optional<byte_span> bytes(std::string_view path) const noexcept {
    const pack_entry* e = find(path);
    if (e == nullptr) return std::nullopt;
    return bytes(*e);
  }
  [[nodiscard]] pack_layout layout() const noexcept {
    pack_layout l;
    l.file = file_.size();
    l.toc = toc_bytes_;
    for (const pack_entry& e : entries_) l.payload += e.size;
    l.padding = l.file - l.header - l.toc - l.payload;  // entries are disjoint and outside header/TOC
    return l;
  }

 private:
  friend result<hpack> open_hpack(byte_span, const open_options&);
  byte_span file_{};
  std::uint32_t flags_ = 0;
  std::uint64_t toc_bytes_ = 0;
  std::vector<pack_entry> entries_;
};

/// Opens and validates a .hpack (rules above). Safe on untrusted input.
[[nodiscard]] inline result<hpack> open_hpack(byte_span bytes, const open_options& options = {}) {
  if (bytes.size() < 4) return make_error(errc::hm_truncated).at_field("magic").with_value(bytes.size()).at_offset(0);
  if (magic_of(bytes) != hpack_magic) return make_error(errc::hm_bad_magic).at_field("magic")
      .with_value(magic_of(bytes)).at_offset(0);
  if (bytes.size() < hpack_header_size) return make_error(errc::hm_truncated).at_field("header")
      .with_value(bytes.size()).at_offset(0);
  const auto version = load_le_unchecked<std::uint32_t>(bytes.data() + 4);
  const auto count = load_le_unchecked<std::uint32_t>(bytes.data() + 8);
  hpack h;
  h.file_ = bytes;
  h.flags_ = load_le_unchecked<std::uint32_t>(bytes.data() + 12);
  h.toc_bytes_ = load_le_unchecked<std::uint64_t>(bytes.data() + 16);
  if (version != hpack_version) return make_error(errc::hm_bad_version).at_field("version").with_value(version)
      .at_offset(4);
  const auto toc = checked_range(hpack_header_size, h.toc_bytes_, 1, bytes.size());
  if (!toc) return make_error(errc::hm_truncated).at_field("tocBytes").with_value(h.toc_bytes_).at_offset(16);
  byte_cursor c(subspan(bytes, *toc), detail::hm_cursor_rules, hpack_header_size);
  if (auto s = c.check_count(count, hpack_min_entry_size, "count", options.limits.max_chunks, errc::hm_limit_exceeded); !s) {
    error e = s.error();
    e.context.offset = 8;
    return e;
  }
  // The entry vector and the overlap check's index, charged before either exists.
  budget own(options.limits, bytes.size());
  UNTOLD_TRY(detail::reader_budget(options, own).charge_items(count, sizeof(pack_entry) + sizeof(std::uint32_t),
                                                              "entries", errc::hm_limit_exceeded));
  h.entries_.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint64_t at = c.offset();
    auto offset = c.read<std::uint64_t>("offset");
    if (!offset) return offset.error();
    auto size = c.read<std::uint64_t>("size");
    if (!size) return size.error();
    auto kind = c.read<std::uint8_t>("kind");
    if (!kind) return kind.error();
    auto len = c.read<std::uint16_t>("pathLen");
    if (!len) return len.error();
    auto path = c.string(*len, "path");
    if (!path) return path.error();
    const pack_entry e{*offset, *size, *kind, *path};
    auto bad = [&](errc code, const char* field, std::uint64_t value, std::uint64_t where) {
      return make_error(code).at_field(field).with_value(value).at_record(i).at_offset(where).with_subject(e.path);
    };
    if (!is_safe_runtime_path(e.path)) return bad(errc::hm_bad_path, "path", e.path.size(), at + 19);
    if (!h.entries_.empty() && !(h.entries_.back().path < e.path)) return bad(errc::hm_pack_order, "path", i, at + 19);
    if (e.size > options.limits.max_chunk_bytes) {
      error err = bad(errc::hm_limit_exceeded, "size", e.size, at + 8);
      err.context.limit = options.limits.max_chunk_bytes, err.context.has_limit = true;
      return err;
    }
    if (e.offset % 16 != 0) return bad(errc::hm_pack_range, "offset", e.offset, at);
    const auto r = checked_range(e.offset, e.size, 1, bytes.size());
    if (!r) return bad(errc::hm_pack_range, "size", e.size, at + 8);
    if (e.size != 0 && e.offset < toc->end()) return bad(errc::hm_pack_range, "offset", e.offset, at);
    h.entries_.push_back(e);
  }
  if (!c.at_end()) return make_error(errc::hm_pack_toc).at_field("tocBytes").with_value(h.toc_bytes_).at_offset(16);

  // Overlaps: sort the non-empty entries by offset once.
  std::vector<std::uint32_t> by_offset;
  by_offset.reserve(h.entries_.size());
  for (std::uint32_t i = 0; i < h.entries_.size(); ++i)
    if (h.entries_[i].size != 0) by_offset.push_back(i);
  std::sort(by_offset.begin(), by_offset.end(), [&h](std::uint32_t a, std::uint32_t b) {
    return h.entries_[a].offset < h.entries_[b].offset || (h.entries_[a].offset == h.entries_[b].offset && a < b);
  });
  std::uint64_t total = 0;
  for (std::size_t k = 0; k < by_offset.size(); ++k) {
    const pack_entry& e = h.entries_[by_offset[k]];
    total += e.size;
    if (k > 0) {
      const pack_entry& prev = h.entries_[by_offset[k - 1]];
      if (prev.offset + prev.size > e.offset)
        return make_error(errc::hm_pack_range).at_field("offset").with_value(e.offset).at_record(by_offset[k])
            .with_subject(e.path);
    }
  }
  if (total > options.limits.max_total_bytes)
    return make_error(errc::hm_limit_exceeded).at_field("total entry bytes").with_value(total)
        .with_limit(options.limits.max_total_bytes);
  return h;
}

/// One file for write_hpack.
struct pack_file {
  std::string_view path{};  // relative to the output root, '/'-separated
  byte_span bytes{};
  int kind = -1;  // a pack_kind value, or -1: pack_kind_for_path(path)
};

/// The bytes of a .hpack: header, TOC sorted by path (byte-wise), then the
/// payloads in path order, each at the next multiple of 16, the file padded
/// to a multiple of 16; padding and flags zero. Errors: HM-HPAK-ORDER for a
/// duplicated path (subject: the path), HM-PATH, invalid_argument for a
/// path over 65535 bytes, a kind > 255 or more than 2^32 - 1 files.
/// Deterministic (input order does not matter).
[[nodiscard]] inline result<std::vector<std::byte>> write_hpack(std::span<const pack_file> files) {
  if (files.size() > 0xFFFFFFFFu) return make_error(errc::invalid_argument).at_field("files").with_value(files.size());
  std::vector<pack_file> sorted(files.begin(), files.end());
  std::sort(sorted.begin(), sorted.end(), [](const pack_file& a, const pack_file& b) { return a.path < b.path; });
  std::uint64_t toc_bytes = 0;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const pack_file& f = sorted[i];
    if (!is_safe_runtime_path(f.path)) return make_error(errc::hm_bad_path).at_field("path")
        .with_value(f.path.size()).at_record(i).with_subject(f.path);
    if (f.path.size() > 0xFFFFu) return make_error(errc::invalid_argument).at_field("path").with_value(f.path.size())
        .at_record(i).with_subject(f.path);
    if (f.kind > 255 || f.kind < -1) return make_error(errc::invalid_argument).at_field("kind")
        .with_value(static_cast<std::uint64_t>(f.kind)).at_record(i);
    if (i > 0 && sorted[i - 1].path == f.path) return make_error(errc::hm_pack_order).at_field("path").with_value(i)
        .at_record(i).with_subject(f.path);
    toc_bytes += hpack_min_entry_size + f.path.size();
  }
  std::vector<std::byte> out;
  byte_sink sink(out);
  sink.put(hpack_magic);
  sink.put(hpack_version);
  sink.put(static_cast<std::uint32_t>(sorted.size()));
  sink.put(std::uint32_t{0});
  sink.put(toc_bytes);
  // Offsets are known before any payload is written: lay them out first.
  std::uint64_t at = (hpack_header_size + toc_bytes + 15) & ~std::uint64_t{15};
  for (const pack_file& f : sorted) {
    sink.put(at);
    sink.put(static_cast<std::uint64_t>(f.bytes.size()));
    sink.put(static_cast<std::uint8_t>(f.kind < 0 ? static_cast<int>(pack_kind_for_path(f.path)) : f.kind));
    sink.put(static_cast<std::uint16_t>(f.path.size()));
    sink.string(f.path);
    at = (at + f.bytes.size() + 15) & ~std::uint64_t{15};
  }
  for (const pack_file& f : sorted) {
    sink.align(16);
    sink.bytes(f.bytes);
  }
  sink.align(16);
  return out;
}

}  // namespace untold::assetc
