// untold/urho3d/package.hpp - Urho3D packages (.pak): UPAK (stored) and
// ULZ4 (each entry as blocks of u16 uncompressed length, u16 compressed
// length, raw LZ4 block).
//
// Reads: the entry table (name, offset from the package start, uncompressed
// size, SDBM checksum), the package checksum, each entry's extent in the
// file (ULZ4: by walking its block headers, without decoding) and the
// packaging tool's trailing u32 (the package size; optional). Extracts one
// entry by name, decoding only that entry's blocks with LZ4's safe API to
// exact sizes and verifying its checksum. Writes packages deterministically
// (input order, LZ4HC level 9 like Urho3D's PackageTool, 32 KiB blocks).
//
// Rejects (open_package): U3D-MAGIC, U3D-TRUNC, U3D-COUNT, U3D-STRING,
// U3D-PAK-NAME, U3D-PAK-RANGE, U3D-PAK-OVERLAP, U3D-PAK-BLOCK (block
// headers, and a block declaring more than LZ4 can produce from its bytes),
// U3D-PAK-SIZE, U3D-TRAILING, R-LIMITS; extract_entry and verify_package add
// U3D-PAK-BLOCK (decoding) and U3D-PAK-CHECKSUM (with the entry's name as the
// error's subject); check_extract_paths (for extractors) U3D-PAK-PATH.
//
// Safe on untrusted input: counts are checked against the remaining bytes
// and limits.max_chunks before allocation, entry sizes against
// limits.max_chunk_bytes and the input's budget (one entry held at a time)
// and the total against limits.max_total_bytes, every range is
// overflow-checked, the decode buffer grows only as blocks decode, LZ4
// decoding never writes past the declared size. Linear in the file size
// (plus n log n for the overlap check).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "../budget.hpp"
#include "../compression.hpp"
#include "../records.hpp"
#include "../sink.hpp"
#include "common.hpp"

namespace untold::urho3d {

enum class package_kind : std::uint8_t { upak, ulz4 };

struct package_entry {
  std::string_view name;
  std::uint32_t offset = 0;    // from the package start
  std::uint32_t size = 0;      // uncompressed
  std::uint32_t checksum = 0;  // SDBM of the uncompressed bytes
  std::uint64_t stored_size = 0;  // bytes in the file (ULZ4: block headers included)
  std::uint32_t blocks = 0;       // ULZ4 blocks
};

}  // namespace untold::urho3d

// An entry's fixed fields after its name, described once for the reader and
// the writer (records.hpp).
template <>
struct untold::record_traits<untold::urho3d::package_entry> {
  static constexpr std::size_t size(std::uint32_t = 0) noexcept { return 12; }
  template <class V, class R>
  static constexpr void fields(V& v, R& r, std::uint32_t = 0) {
    v(r.offset, "offset"), v(r.size, "size"), v(r.checksum, "checksum");
  }
};

namespace untold::urho3d {

struct package {
  package_kind kind = package_kind::upak;
  std::uint32_t checksum = 0;  // SDBM over every entry's bytes, in table order
  std::vector<package_entry> entries;
  std::uint64_t header_size = 0;  // id, counts and the entry table
  bool has_trailing_size = false;
  byte_span file;  // the package bytes the entries point into

  [[nodiscard]] const package_entry* find(std::string_view name) const noexcept {
    for (const package_entry& e : entries)
      if (e.name == name) return &e;
    return nullptr;
  }
  [[nodiscard]] std::uint64_t total_uncompressed() const noexcept {
    std::uint64_t n = 0;
    for (const package_entry& e : entries) n += e.size;
    return n;
  }
};

struct package_options {
  untold::limits limits{};
  /// + U3D-PAK-BLOCK (decoding), U3D-PAK-CHECKSUM: every entry decoded and
  /// its checksum checked, one at a time (verify_package).
  bool deep_checks = false;
  untold::budget* budget = nullptr;  // the input's (verify_package); none: one made from `limits`
};

[[nodiscard]] inline bool is_package(byte_span head) noexcept {
  return starts_with_id(head, "UPAK") || starts_with_id(head, "ULZ4");
}

/// True when `name` is safe to use as a relative path: the shared
/// untold::detail::is_safe_relative_path (not empty, not absolute, no drive
/// letter or ':', no backslash, NUL or control byte, no empty, "." or ".."
/// component).
[[nodiscard]] constexpr bool is_safe_entry_name(std::string_view name) noexcept {
  return untold::detail::is_safe_relative_path(name);
}

[[nodiscard]] inline status verify_package(const package& p, const untold::limits& lim = {},
                                           untold::budget* budget = nullptr);

/// Reads and checks a package's structure (see the header comment); with
/// options.deep_checks also every entry's data. Preconditions: none; safe on
/// untrusted input. The result views `file`.
[[nodiscard]] inline result<package> open_package(byte_span file, const package_options& options = {}) {
  const untold::limits& lim = options.limits;
  byte_cursor c(file, u3d_rules);
  package p;
  p.file = file;
  if (starts_with_id(file, "UPAK")) {
    p.kind = package_kind::upak;
  } else if (starts_with_id(file, "ULZ4")) {
    p.kind = package_kind::ulz4;
  } else {
    return make_error(errc::u3d_bad_magic).at_field("id").at_offset(0);
  }
  (void)c.skip(4, "id");
  auto count = c.count_u32(13, "fileCount", lim.max_chunks, errc::limit_exceeded);
  if (!count) return count.error();
  auto checksum = c.read<std::uint32_t>("checksum");
  if (!checksum) return checksum.error();
  p.checksum = *checksum;
  p.entries.resize(*count);
  for (package_entry& e : p.entries) {
    const std::uint64_t at = c.offset();
    auto name = detail::read_name(c, "entry.name");
    if (!name) return name.error();
    e.name = *name;
    if (!is_safe_entry_name(e.name)) return make_error(errc::u3d_pak_name).at_field("entry.name").at_offset(at)
        .with_subject(e.name);
    auto fields = c.record<package_entry>("entry");
    if (!fields) return fields.error();
    e.offset = fields->offset;
    e.size = fields->size;
    e.checksum = fields->checksum;
    if (e.size > lim.max_chunk_bytes)
      return c.fail_limit(errc::limit_exceeded, "entry.size", e.size, lim.max_chunk_bytes).with_subject(e.name);
  }
  p.header_size = c.offset();

  // Duplicate names would make "extract by name" ambiguous.
  {
    std::vector<std::string_view> names;
    names.reserve(p.entries.size());
    for (const package_entry& e : p.entries) names.push_back(e.name);
    std::sort(names.begin(), names.end());
    const auto dup = std::adjacent_find(names.begin(), names.end());
    if (dup != names.end()) return make_error(errc::u3d_pak_name).at_field("entry.name").at_offset(0)
        .with_subject(*dup);
  }

  // Extents: stored bytes directly, ULZ4 by walking block headers.
  struct extent {
    std::uint64_t begin, end;
    std::size_t entry;
  };
  std::vector<extent> extents;
  extents.reserve(p.entries.size());
  std::uint64_t data_end = p.header_size;
  for (std::size_t i = 0; i < p.entries.size(); ++i) {
    package_entry& e = p.entries[i];
    auto out_of_range = [&](std::uint64_t value) {
      error err = make_error(errc::u3d_pak_range).at_field("entry.offset").with_value(value).at_offset(e.offset);
      err.context.record_index = static_cast<std::uint32_t>(i);
      return err.with_subject(e.name);
    };
    if (e.offset < p.header_size || e.offset > file.size()) return out_of_range(e.offset);
    if (p.kind == package_kind::upak) {
      if (!checked_range(e.offset, e.size, 1, file.size())) return out_of_range(std::uint64_t{e.offset} + e.size);
      e.stored_size = e.size;
    } else {
      std::uint64_t pos = e.offset, left = e.size;
      while (left > 0) {
        if (pos + 4 > file.size()) return out_of_range(pos + 4);
        const auto unpacked = load_le_unchecked<std::uint16_t>(file.data() + pos);
        const auto packed = load_le_unchecked<std::uint16_t>(file.data() + pos + 2);
        if (unpacked == 0 || unpacked > left || packed == 0) {
          error err = make_error(errc::u3d_pak_block).at_field("block.length")
              .with_value(unpacked == 0 || unpacked > left ? unpacked : packed).at_offset(pos);
          err.context.record_index = static_cast<std::uint32_t>(i);
          return err.with_subject(e.name);
        }
        if (pos + 4 + std::uint64_t{packed} > file.size()) return out_of_range(pos + 4 + std::uint64_t{packed});
        // A block cannot decode to more than LZ4 allows for its bytes (256 x):
        // refused here, before an extractor allocates what it declares.
        if (unpacked > max_decoded_size(compression::lz4, file.subspan(pos + 4, packed)))
          return make_error(errc::u3d_pak_block).at_field("block.uncompressedLength").with_value(unpacked)
              .with_limit(std::uint64_t{packed} * 256).at_record(i).at_offset(pos).with_subject(e.name);
        pos += 4 + std::uint64_t{packed};
        left -= unpacked;
        ++e.blocks;
      }
      e.stored_size = pos - e.offset;
    }
    if (e.stored_size == 0) continue;  // an empty entry occupies no bytes (its offset may be anywhere in the file)
    extents.push_back({e.offset, e.offset + e.stored_size, i});
    data_end = std::max(data_end, std::uint64_t{e.offset} + e.stored_size);
  }
  std::sort(extents.begin(), extents.end(), [](const extent& a, const extent& b) { return a.begin < b.begin; });
  for (std::size_t k = 1; k < extents.size(); ++k)
    if (extents[k].begin < extents[k - 1].end) {
      const package_entry& e = p.entries[extents[k].entry];
      error err = make_error(errc::u3d_pak_overlap).at_field("entry.offset").with_value(e.offset).at_offset(e.offset);
      err.context.record_index = static_cast<std::uint32_t>(extents[k].entry);
      return err.with_subject(e.name);
    }

  // The packaging tool appends the package size as a u32.
  const std::uint64_t tail = file.size() - data_end;
  if (tail == 4) {
    const auto stored = load_le_unchecked<std::uint32_t>(file.data() + data_end);
    if (stored != file.size()) {
      error err = make_error(errc::u3d_pak_size).at_field("packageSize").with_value(stored).at_offset(data_end);
      err.context.limit = file.size();
      err.context.has_limit = true;
      return err;
    }
    p.has_trailing_size = true;
  } else if (tail != 0) {
    return make_error(errc::u3d_trailing_bytes).at_field("end").with_value(tail).at_offset(data_end);
  }
  if (options.deep_checks) UNTOLD_TRY(verify_package(p, lim, options.budget));
  return p;
}

namespace detail {
/// The decode of extract_entry: entry `e`'s blocks decoded in order, each
/// into the span block_memory(written, unpacked) gives (where the block's
/// bytes go), its SDBM continued while the block is in the cache; then the
/// checksum compared. Preconditions: as extract_entry's, and each span
/// block_memory returns is `unpacked` bytes.
template <class BlockMemory>
[[nodiscard]] status decode_entry(const package& p, const package_entry& e, const untold::limits& lim,
                                  BlockMemory&& block_memory) {
  if (e.size > lim.max_chunk_bytes)
    return make_error(errc::limit_exceeded).at_field("entry.size").with_value(e.size).at_offset(e.offset)
        .with_subject(e.name);
  std::uint32_t sum = 0;
  if (p.kind == package_kind::upak) {
    const mutable_byte_span out = block_memory(std::size_t{0}, std::size_t{e.size});
    if (e.size != 0) std::memcpy(out.data(), p.file.data() + e.offset, e.size);
    sum = sdbm(out);
  } else {
    std::size_t pos = e.offset, written = 0;
    for (std::uint32_t b = 0; b < e.blocks; ++b) {
      const auto unpacked = load_le_unchecked<std::uint16_t>(p.file.data() + pos);
      const auto packed = load_le_unchecked<std::uint16_t>(p.file.data() + pos + 2);
      const mutable_byte_span out = block_memory(written, std::size_t{unpacked});
      const status s = untold::decompress(compression::lz4, p.file.subspan(pos + 4, packed), out);
      if (!s) {
        if (s.error().code == errc::compression_unsupported) return s;
        return make_error(errc::u3d_pak_block).at_field("block").with_value(b).at_offset(pos).with_subject(e.name);
      }
      sum = sdbm(out, sum);  // while the block is in the cache
      pos += 4 + std::size_t{packed};
      written += unpacked;
    }
  }
  if (sum != e.checksum) {
    error err = make_error(errc::u3d_pak_checksum).at_field("entry.checksum").with_value(sum).at_offset(e.offset);
    err.context.limit = e.checksum;
    err.context.has_limit = true;
    return err.with_subject(e.name);
  }
  return {};
}
}  // namespace detail

/// Decodes entry `e` of `p` into `out` (e.size bytes when it succeeds) and
/// checks its checksum. Preconditions: `p` came from open_package and its
/// file is alive; `e` is one of p.entries. `out` grows block by block as
/// the blocks decode, so a garbage entry fails having allocated about twice
/// what its valid blocks produced, never what it declares. Errors:
/// U3D-PAK-BLOCK (a block that does not decode to exactly its length),
/// U3D-PAK-CHECKSUM, R-LIMITS, compression_unsupported (LZ4 compiled out).
/// Safe on untrusted input.
[[nodiscard]] inline status extract_entry(const package& p, const package_entry& e, std::vector<std::byte>& out,
                                          const untold::limits& lim = {}) {
  out.clear();
  return detail::decode_entry(p, e, lim, [&out](std::size_t written, std::size_t unpacked) {
    out.resize(written + unpacked);  // geometric growth: amortised linear
    return mutable_byte_span(out).subspan(written, unpacked);
  });
}

/// The same into memory the caller owns: `out` must be exactly e.size bytes
/// (invalid_argument otherwise), for example one buffer reused for every
/// entry. Nothing is allocated, and no byte is written twice (the vector
/// form zero-fills what it grows). Whatever `out` holds when an error is
/// returned is unspecified. Preconditions and errors otherwise as
/// extract_entry's; safe on untrusted input.
[[nodiscard]] inline status extract_entry_into(const package& p, const package_entry& e, mutable_byte_span out,
                                               const untold::limits& lim = {}) {
  if (out.size() != e.size)
    return make_error(errc::invalid_argument).at_field("out.size").with_value(out.size()).with_limit(e.size)
        .with_subject(e.name);
  return detail::decode_entry(p, e, lim, [out](std::size_t written, std::size_t unpacked) {
    return out.subspan(written, unpacked);
  });
}

/// Extracts the entry called `name` (reading no other entry's data).
/// Errors: invalid_argument with the name as subject when there is none,
/// else as extract_entry.
[[nodiscard]] inline result<std::vector<std::byte>> extract(const package& p, std::string_view name,
                                                            const untold::limits& lim = {}) {
  const package_entry* e = p.find(name);
  if (e == nullptr) {
    error err = make_error(errc::invalid_argument);
    err.context.field = "entry.name";
    return err.with_subject(name);
  }
  std::vector<std::byte> out;
  UNTOLD_TRY(extract_entry(p, *e, out, lim));
  return out;
}

/// Decodes every entry, checks every entry checksum and the package
/// checksum (SDBM continued across the entries in table order), the total
/// against limits.max_total_bytes, and each entry's size against the
/// memory left in `budget` (the input's, budget.hpp; none: one made from
/// `lim`): R-LIMITS. One entry is held at a time. Linear in the decoded size.
[[nodiscard]] inline status verify_package(const package& p, const untold::limits& lim, untold::budget* budget) {
  if (p.total_uncompressed() > lim.max_total_bytes) {
    error err = make_error(errc::limit_exceeded);
    err.context.field = "entries.size";
    err.context.value = p.total_uncompressed();
    err.context.has_value = true;
    err.context.limit = lim.max_total_bytes;
    err.context.has_limit = true;
    return err;
  }
  untold::budget own(lim, p.file.size());
  untold::budget& memory = untold::budget::own_or_shared(budget, own);
  std::uint32_t sum = 0;
  std::vector<std::byte> buffer;
  for (const package_entry& e : p.entries) {
    UNTOLD_TRY(memory.charge_memory(e.size, "entry.size", errc::limit_exceeded));
    UNTOLD_TRY(extract_entry(p, e, buffer, lim));
    memory.release_memory(e.size);
    sum = sdbm(buffer, sum);
  }
  if (sum != p.checksum) {
    error err = make_error(errc::u3d_pak_checksum).at_field("checksum").with_value(sum).at_offset(8);
    err.context.limit = p.checksum;
    err.context.has_limit = true;
    return err;
  }
  return {};
}

/// U3D-PAK-PATH when one of `entries` names a directory another one lies in
/// ("a" and "a/b"): Urho3D keys entries by name and loads both, but no
/// directory tree holds both, so an extractor checks this before it writes
/// anything. Work: the names' length x log(entries).
[[nodiscard]] inline status check_extract_paths(std::span<const package_entry* const> entries) {
  std::vector<std::string_view> names;
  names.reserve(entries.size());
  for (const package_entry* e : entries) names.push_back(e->name);
  std::sort(names.begin(), names.end());
  for (const package_entry* e : entries)
    for (std::size_t slash = e->name.find('/'); slash != std::string_view::npos; slash = e->name.find('/', slash + 1))
      if (std::binary_search(names.begin(), names.end(), e->name.substr(0, slash)))
        return make_error(errc::u3d_pak_path).at_field("entry.name").with_subject(e->name);
  return {};
}

struct package_input {
  std::string name;  // a safe relative path with '/' separators
  byte_span data;
};

struct package_write_options {
  bool compress = false;            // ULZ4 instead of UPAK
  int level = 9;                    // LZ4HC level (Urho3D's PackageTool: the HC default, 9)
  std::uint32_t block_size = 32768; // 1..65535
  bool trailing_size = true;        // append the package size like the packaging tool
};

/// Writes a package of `files` in the given order. Deterministic for a given
/// LZ4 library version. Errors: invalid_argument (unsafe or duplicate name,
/// block size, a file above 4 GiB, a package above 4 GiB), encode_failed,
/// compression_unsupported. The bytes are re-read before returning.
[[nodiscard]] inline result<std::vector<std::byte>> write_package(std::span<const package_input> files,
                                                                  const package_write_options& options = {}) {
  auto bad = [](const char* field, std::size_t record, std::string_view name) {
    error e = make_error(errc::invalid_argument);
    e.context.field = field;
    e.context.record_index = static_cast<std::uint32_t>(record);
    return e.with_subject(name);
  };
  if (options.block_size == 0 || options.block_size > 0xFFFF) return bad("block_size", 0, "");
  std::vector<std::byte> out;
  byte_sink s(out);
  put_id(out, options.compress ? "ULZ4" : "UPAK");
  s.put<std::uint32_t>(static_cast<std::uint32_t>(files.size()));
  s.put<std::uint32_t>(0);  // package checksum, patched below
  std::vector<std::size_t> entry_at(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    const package_input& f = files[i];
    if (!is_safe_entry_name(f.name) || f.name.find('\0') != std::string::npos) return bad("name", i, f.name);
    if (f.data.size() > 0xFFFFFFFFu) return bad("data", i, f.name);
    s.cstring(f.name);
    entry_at[i] = s.size();
    s.zeros(codec<package_entry>::size());  // patched below
  }
  std::uint32_t package_sum = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const byte_span data = files[i].data;
    if (s.size() > 0xFFFFFFFFu) return bad("offset", i, files[i].name);
    package_entry fields;
    fields.offset = static_cast<std::uint32_t>(s.size());
    fields.size = static_cast<std::uint32_t>(data.size());
    fields.checksum = sdbm(data);
    s.patch_record(entry_at[i], fields);
    package_sum = sdbm(data, package_sum);
    if (!options.compress) {
      s.bytes(data);
      continue;
    }
    for (std::size_t pos = 0; pos < data.size(); pos += options.block_size) {
      const byte_span block = data.subspan(pos, std::min<std::size_t>(options.block_size, data.size() - pos));
      auto packed = untold::compress(compression::lz4, options.level, block);
      if (!packed) return packed.error();
      if (packed->size() > 0xFFFF) return make_error(errc::encode_failed);
      s.put<std::uint16_t>(static_cast<std::uint16_t>(block.size()));
      s.put<std::uint16_t>(static_cast<std::uint16_t>(packed->size()));
      s.bytes(*packed);
    }
  }
  if (options.trailing_size) s.put<std::uint32_t>(static_cast<std::uint32_t>(s.size() + 4));
  if (s.size() > 0xFFFFFFFFu) return bad("size", 0, "");
  s.patch<std::uint32_t>(8, package_sum);
  package_options check;
  check.limits.max_chunks = ~std::uint32_t{0};
  auto reread = open_package(out, check);
  if (!reread) return reread.error();
  return out;
}

}  // namespace untold::urho3d
