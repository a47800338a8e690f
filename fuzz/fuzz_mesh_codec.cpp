// fuzz_mesh_codec: the meshopt chunk compressions (3 meshopt, 4
// meshopt+zstd; untold/mesh_codec.hpp) on arbitrary bytes.
// Input: byte 0 picks the method (bit 0: meshopt / meshopt+zstd) and the
// mode (bit 7), byte 1 an element size, the rest is data.
//   mode "stored": the data is a chunk's stored bytes (directory and
//     streams), decoded at the size its directory declares (and one more);
//   mode "encoded": the data is vertex (bit 1 clear) or index bytes, cut into
//     two streams with 4 bytes of zero padding between them, compressed, one
//     byte of the result changed, then decoded.
// Properties:
//   - never reads or writes outside the spans (sanitizers), never asserts
//     inside meshoptimizer (the directory rules guard its preconditions);
//   - decompress, a fresh decompressor and decompress_into agree, in verdict
//     and bytes; max_decoded_size is never below a successful decode;
//   - each stream decoded alone (decompress_stream, what a byte-range mesh
//     load does) gives the whole decode's bytes;
//   - compress_streams is deterministic and round-trips exactly.
#include "traverse.hpp"

#include <untold/compression.hpp>

namespace {

using untold::compression;
using untold_fuzz::die;

void decode_each_stream(compression method, untold::byte_span stored, std::size_t declared) {
  std::vector<std::byte> out;
  if (!untold_fuzz::decode_three_ways(method, stored, declared, out)) return;
  if (declared > untold::max_decoded_size(method, stored)) die("max_decoded_size is below a real decode");
  const auto streams = untold::parse_codec_directory(method, stored, stored.size());
  if (!streams) die("a decoded chunk's directory does not parse");
  for (const untold::codec_stream& s : *streams) {
    std::vector<std::byte> part(static_cast<std::size_t>(s.raw_size()));
    untold::decompressor fresh;
    const auto alone = fresh.decompress_stream(method, s, stored.subspan(s.stored_offset, s.stored_size), part);
    if (!alone) die("a stream of a decoded chunk fails alone: " + alone.error().describe());
    if (!untold_fuzz::same_bytes(part, untold::byte_span(out).subspan(s.raw_offset, part.size())))
      die("a stream decoded alone differs from the whole decode");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const compression method = (data[0] & 1u) != 0 ? compression::meshopt_zstd : compression::meshopt;
  if (!untold::compression_available(method)) return 0;
  const untold::byte_span body = untold_fuzz::as_span(data + 2, size - 2);
  if ((data[0] & 0x80u) == 0) {
    // The directory's own size, capped: a decode at any larger size fails the same way.
    const std::uint64_t bound = untold::max_decoded_size(method, body);
    const std::size_t declared = static_cast<std::size_t>(std::min<std::uint64_t>(bound, std::uint64_t{1} << 22));
    decode_each_stream(method, body, declared);
    decode_each_stream(method, body, declared + 1);
    return 0;
  }
  const bool vertex = (data[0] & 2u) == 0;
  const std::uint16_t element = vertex ? static_cast<std::uint16_t>(4 * (1 + data[1] % 64))
                                       : static_cast<std::uint16_t>((data[1] & 1u) != 0 ? 4 : 2);
  const std::size_t unit = vertex ? element : std::size_t{3} * element;  // index streams: whole triangles
  const std::size_t half = body.size() / 2 / unit * unit;
  if (half == 0) return 0;
  static const std::byte zeros[4]{};
  const untold::codec_input inputs[] = {{body.first(half), element, vertex},
                                        {untold::byte_span(zeros), 0, vertex},
                                        {body.subspan(half, half), element, vertex}};
  for (const int level : {1, 5}) {
    auto packed = untold::compress_streams(method, level, inputs);
    if (!packed) die("compress_streams failed: " + packed.error().describe());
    auto packed_again = untold::compress_streams(method, level, inputs);
    if (!packed_again || !untold_fuzz::same_bytes(*packed, *packed_again)) die("compress_streams is not deterministic");
    std::vector<std::byte> back(2 * half + 4);
    if (!untold::decompress(method, *packed, back)) die("compress_streams output does not decode");
    if (!untold_fuzz::same_bytes(untold::byte_span(back).first(half), body.first(half)) ||
        !untold_fuzz::same_bytes(untold::byte_span(back).subspan(half, 4), untold::byte_span(zeros)) ||
        !untold_fuzz::same_bytes(untold::byte_span(back).subspan(half + 4), body.subspan(half, half)))
      die("compress_streams round trip failed");
    decode_each_stream(method, *packed, back.size());
    (*packed)[(std::size_t{data[1]} * 131 + size) % packed->size()] ^= static_cast<std::byte>(data[0] | 1u);
    decode_each_stream(method, *packed, back.size());
  }
  return 0;
}
