// untold/assetc/hman.hpp - assetc .hman v1, the global hash -> path
// manifest: reader, validator, lookup by hash and a deterministic writer.
//
// Reads: a 16-byte header ("HMAN", version 1, count, reserved) and count
// variable-length entries (u64 hash, u8 kind, u8 colorspace, u16 pathLen,
// path). Entries are parsed once into a vector of views (paths point into the
// caller's bytes); find() binary-searches the hash order the file must have.
//
// Rejects (open_hman): HM-TRUNC HM-MAGIC HM-VERSION HM-LIMITS HM-COUNT
// (count x 12 bytes exceed the file, checked before allocating)
// HM-HMAN-ORDER (hashes not strictly ascending: unsorted or duplicated)
// HM-HMAN-COLORSPACE HM-PATH HM-TRAILING. Unknown kinds are kept.
//
// Safe on untrusted input: a byte_cursor reads every field, the entry vector
// is sized only after the count is proven to fit in the file and charged to
// the budget (open_options::budget).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "../bytes.hpp"
#include "../cursor.hpp"
#include "../error.hpp"
#include "../sink.hpp"
#include "common.hpp"

namespace untold::assetc {

inline constexpr std::uint32_t hman_version = 1;
inline constexpr std::size_t hman_header_size = 16;
inline constexpr std::size_t hman_min_entry_size = 12;

/// Entry kinds (the seed reserves all but texture).
enum class manifest_kind : std::uint8_t { texture = 0, mesh, material, lut, shader, embed, animation, font };
enum class colorspace : std::uint8_t { linear = 0, srgb = 1 };

struct manifest_entry {
  std::uint64_t hash = 0;
  std::uint8_t kind = 0;        // manifest_kind; other values are kept
  std::uint8_t colorspace = 0;  // 0 linear, 1 sRGB
  std::string_view path{};      // relative to the runtime root, '/'-separated
  friend constexpr bool operator==(const manifest_entry&, const manifest_entry&) = default;
};

/// A validated .hman; paths view the caller's bytes.
class hman {
 public:
  [[nodiscard]] std::span<const manifest_entry> entries() const noexcept { return entries_; }
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  /// The entry of `hash`, or nullptr. O(log n).
  [[nodiscard]] const manifest_entry* find(std::uint64_t hash) const noexcept {
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), hash,
                                     [](const manifest_entry& e, std::uint64_t h) { return e.hash < h; });
    return it != entries_.end() && it->hash == hash ? &*it : nullptr;
  }

 private:
  friend result<hman> open_hman(byte_span, const open_options&);
  std::vector<manifest_entry> entries_;
};

/// Opens and validates a .hman (rules above). Safe on untrusted input.
[[nodiscard]] inline result<hman> open_hman(byte_span bytes, const open_options& options = {}) {
  if (bytes.size() < 4) return make_error(errc::hm_truncated).at_field("magic").with_value(bytes.size()).at_offset(0);
  if (magic_of(bytes) != hman_magic) return make_error(errc::hm_bad_magic).at_field("magic")
      .with_value(magic_of(bytes)).at_offset(0);
  byte_cursor c(bytes, detail::hm_cursor_rules);
  (void)c.skip(4, "magic");
  auto version = c.read<std::uint32_t>("version");
  if (!version) return version.error();
  if (*version != hman_version) return make_error(errc::hm_bad_version).at_field("version").with_value(*version)
      .at_offset(4);
  auto count = c.read<std::uint32_t>("count");
  if (!count) return count.error();
  if (auto reserved = c.read<std::uint32_t>("reserved"); !reserved) return reserved.error();
  if (auto s = c.check_count(*count, hman_min_entry_size, "count", options.limits.max_records, errc::hm_limit_exceeded); !s)
    return s.error();
  budget own(options.limits, bytes.size());
  UNTOLD_TRY(detail::reader_budget(options, own).charge_items(*count, sizeof(manifest_entry), "entries",
                                                              errc::hm_limit_exceeded));
  hman h;
  h.entries_.reserve(*count);
  for (std::uint32_t i = 0; i < *count; ++i) {
    const std::uint64_t at = c.offset();
    manifest_entry e;
    auto hash = c.read<std::uint64_t>("hash");
    if (!hash) return hash.error();
    auto kind = c.read<std::uint8_t>("kind");
    if (!kind) return kind.error();
    auto cs = c.read<std::uint8_t>("colorspace");
    if (!cs) return cs.error();
    auto len = c.read<std::uint16_t>("pathLen");
    if (!len) return len.error();
    auto path = c.string(*len, "path");
    if (!path) return path.error();
    e.hash = *hash, e.kind = *kind, e.colorspace = *cs, e.path = *path;
    if (e.colorspace > 1) return make_error(errc::hm_manifest_colorspace).at_field("colorspace")
        .with_value(e.colorspace).at_record(i).at_offset(at + 9);
    if (!is_safe_runtime_path(e.path)) return make_error(errc::hm_bad_path).at_field("path")
        .with_value(e.path.size()).at_record(i).at_offset(at + 12).with_subject(e.path);
    if (!h.entries_.empty() && h.entries_.back().hash >= e.hash) return make_error(errc::hm_manifest_order)
        .at_field("hash").with_value(e.hash).at_record(i).at_offset(at);
    h.entries_.push_back(e);
  }
  if (!c.at_end()) return make_error(errc::hm_trailing_bytes).at_field("trailing").with_value(c.remaining())
      .at_offset(c.offset());
  return h;
}

/// The bytes of a .hman: entries sorted by hash, identical (hash, path)
/// pairs written once (the first one's kind/colorspace kept). Errors:
/// HM-HMAN-ORDER when two different paths share a hash (a collision: the
/// subject names the second path), HM-PATH for an unsafe path,
/// HM-HMAN-COLORSPACE, invalid_argument for a path over 65535 bytes or more
/// than 2^32 - 1 entries. Deterministic (input order does not matter).
[[nodiscard]] inline result<std::vector<std::byte>> write_hman(std::span<const manifest_entry> entries) {
  std::vector<manifest_entry> sorted(entries.begin(), entries.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const manifest_entry& a, const manifest_entry& b) { return a.hash < b.hash; });
  std::vector<manifest_entry> unique;
  unique.reserve(sorted.size());
  for (const manifest_entry& e : sorted) {
    if (!is_safe_runtime_path(e.path)) return make_error(errc::hm_bad_path).at_field("path")
        .with_value(e.path.size()).with_subject(e.path);
    if (e.path.size() > 0xFFFFu) return make_error(errc::invalid_argument).at_field("path").with_value(e.path.size())
        .with_subject(e.path);
    if (e.colorspace > 1) return make_error(errc::hm_manifest_colorspace).at_field("colorspace")
        .with_value(e.colorspace).with_subject(e.path);
    if (!unique.empty() && unique.back().hash == e.hash) {
      if (unique.back().path != e.path) return make_error(errc::hm_manifest_order).at_field("hash")
          .with_value(e.hash).with_subject(e.path);
      continue;
    }
    unique.push_back(e);
  }
  if (unique.size() > 0xFFFFFFFFu) return make_error(errc::invalid_argument).at_field("entries")
      .with_value(unique.size());
  std::vector<std::byte> out;
  byte_sink sink(out);
  sink.put(hman_magic);
  sink.put(hman_version);
  sink.put(static_cast<std::uint32_t>(unique.size()));
  sink.put(std::uint32_t{0});
  for (const manifest_entry& e : unique) {
    sink.put(e.hash);
    sink.put(e.kind);
    sink.put(e.colorspace);
    sink.put(static_cast<std::uint16_t>(e.path.size()));
    sink.string(e.path);
  }
  return out;
}

}  // namespace untold::assetc
