// untold/limits.hpp - the one limits struct every reader takes.
//
// Caps on what a file may make a reader do: how much it may allocate, how
// much it may decompress, how deep it may nest. Every format (.untold,
// Urho3D, UDM, assetc) reads its caps from here, so a caller who loads files
// from the internet tightens one struct, and an offline tool raises one.
// The defaults suit an engine streaming tiles from the internet: a small
// file cannot make the reader decompress gigabytes (a 132 KB zstd file used
// to make it allocate 4.2 GB). SECURITY.md lists them; raise them
// deliberately for offline tools.
#pragma once

#include <cstdint>

namespace untold {

struct limits {
  std::uint32_t max_chunks = 1024;                           // rows in a chunk table / entries in a package
  std::uint64_t max_chunk_bytes = std::uint64_t{256} << 20;  // one decompressed chunk, blob or entry
  std::uint64_t max_total_bytes = std::uint64_t{1} << 30;    // everything decompressed from one file
  std::uint32_t max_records = std::uint32_t{1} << 24;        // records in one table / elements in one array
  std::uint32_t max_depth = 256;                             // nesting: UDM elements, bone/entity chains
  /// Everything decompressed from one file, as a multiple of the file's own
  /// size (real geometry compresses 2-4x; a bomb by thousands). 0 allows no
  /// compressed chunk at all.
  std::uint32_t max_expansion = 64;

  /// The budget (budget.hpp) one input of n bytes gets across everything it
  /// makes the library do: reader, converter and printer alike.
  ///   memory  <= memory_per_input_byte x n + memory_floor   (bytes held)
  ///   work    <= work_per_input_byte x n + work_floor       (items visited:
  ///              nodes, keys, elements, vertices, entries; items that take
  ///              no bytes in the file count too)
  ///   output  <= output_per_input_byte x n + output_floor   (bytes written
  ///              by a converter or printer)
  /// The floors are what any input, however small, may use; the rates keep
  /// peak memory, work and output linear in the input's size.
  std::uint32_t memory_per_input_byte = 64;
  std::uint64_t memory_floor = std::uint64_t{64} << 20;
  std::uint32_t work_per_input_byte = 256;
  std::uint64_t work_floor = std::uint64_t{1} << 20;
  std::uint32_t output_per_input_byte = 64;
  std::uint64_t output_floor = std::uint64_t{64} << 20;

  /// What one file of `file_size` bytes may decompress to in total:
  /// max_expansion x file_size, and never more than max_total_bytes.
  /// Overflow-safe for any values.
  [[nodiscard]] constexpr std::uint64_t decoded_budget(std::uint64_t file_size) const noexcept {
    if (max_expansion != 0 && file_size > max_total_bytes / max_expansion) return max_total_bytes;
    return file_size * max_expansion;
  }
};

}  // namespace untold
