// untold/limits.hpp - the one limits struct every reader takes.
//
// Caps on what a file may make a reader do: how much it may allocate, how
// much it may decompress, how deep it may nest. Every format (.untold,
// Urho3D, UDM, assetc) reads its caps from here, so a caller who loads files
// from the internet tightens one struct, and an offline tool raises one.
// Defaults suit a streamed game tile; SECURITY.md lists them.
#pragma once

#include <cstdint>

namespace untold {

struct limits {
  std::uint32_t max_chunks = 1024;                         // rows in a chunk table / entries in a package
  std::uint64_t max_chunk_bytes = std::uint64_t{1} << 30;  // one decompressed chunk, blob or entry
  std::uint64_t max_total_bytes = std::uint64_t{4} << 30;  // everything decompressed from one file
  std::uint32_t max_records = std::uint32_t{1} << 24;      // records in one table / elements in one array
  std::uint32_t max_depth = 256;                           // nesting: UDM elements, bone/entity chains
};

}  // namespace untold
