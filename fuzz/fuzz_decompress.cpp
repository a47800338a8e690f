// fuzz_decompress: untold::decompress on arbitrary stored bytes.
// Input: byte 0 picks the method (none, lz4, zstd) and the mode, bytes 1..3
// the declared uncompressed size (< 8 MiB), the rest is data.
//   mode "stored": the data is the stored chunk, decoded at the declared size;
//   mode "mutated": the data is compressed, one byte of the result is changed
//     (position and xor from bytes 1..3), then decoded at the true size.
// Properties:
//   - never reads or writes outside the two spans (sanitizers);
//   - the decompressor object, the free function and decompress_into (the
//     reader's growing decoder) agree, in verdict and bytes;
//   - max_decoded_size (the reader's pre-allocation bound) is never below the
//     size of a successful decode;
//   - compress() is deterministic and round-trips.
#include "traverse.hpp"

#include <untold/compression.hpp>

namespace {

using untold::compression;
using untold_fuzz::die;

void decode_bounded(compression method, untold::byte_span stored, std::size_t declared) {
  // A size above what the stored bytes can decode to (max_decoded_size) can
  // only fail, at any such size: decode at the smallest one, so the buffers
  // stay proportional to the input (the reader refuses those sizes before
  // allocating; 8 MiB buffers per input held fuzzing at 14 runs/s).
  const std::uint64_t bound = untold::max_decoded_size(method, stored);
  if (bound < declared) declared = static_cast<std::size_t>(bound) + 1;
  std::vector<std::byte> out;
  if (untold_fuzz::decode_three_ways(method, stored, declared, out) && declared > untold::max_decoded_size(method, stored))
    die("max_decoded_size is below a real decode");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const auto method = static_cast<compression>(data[0] % 3);
  const bool mutated = (data[0] & 0x80u) != 0;
  const std::size_t declared = std::size_t{data[1]} | std::size_t{data[2]} << 8 | std::size_t{data[3] & 0x7Fu} << 16;
  const untold::byte_span body = untold_fuzz::as_span(data + 4, size - 4);

  if (!mutated) {
    decode_bounded(method, body, declared);
    return 0;
  }
  for (const int level : {0, 5}) {
    auto packed = untold::compress(method, level, body);
    if (!packed) die("compress failed: " + packed.error().describe());
    auto packed_again = untold::compress(method, level, body);
    if (!packed_again || !untold_fuzz::same_bytes(*packed, *packed_again)) die("compress is not deterministic");
    std::vector<std::byte> back(body.size());
    if (!untold::decompress(method, *packed, back) || !untold_fuzz::same_bytes(back, body))
      die("compress/decompress round trip failed");
    decode_bounded(method, *packed, body.size());
    if (!packed->empty()) {
      (*packed)[declared % packed->size()] ^= static_cast<std::byte>((data[1] ^ data[3]) | 1u);
      decode_bounded(method, *packed, body.size());
    }
  }
  return 0;
}
