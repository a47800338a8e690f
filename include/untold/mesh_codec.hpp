// untold/mesh_codec.hpp - the stream directory of the meshopt chunk
// compressions (3 `meshopt`, 4 `meshopt+zstd`; docs/format.md, "meshopt
// chunks"), and one stream's meshoptimizer encode and decode.
//
// A library extension: the reference engine reads compression types 0-2
// only. Only VERTEX_DATA (meshoptimizer's vertex codec, version 0) and
// INDEX_DATA (its index codec, version 1, for triangle lists; its index
// sequence codec, version 1, where the triangle codec would rotate a
// triangle) may use them (R-CODEC-CHUNK); a stream the codec would not
// shrink is stored as it is ("raw"), or with its 4-byte words grouped by
// their place in the element ("words": all first words, then all second
// words, ...; zstd finds more in such planes of floats), whichever the
// writer finds smallest (after zstd for type 4). The stored bytes are:
//
//   u32 streamCount, u32 reserved (0)
//   streamCount x 24 B: u64 rawOffset, u32 elementCount, u16 elementSize,
//                       u8 codec (1 vertex, 2 index triangles, 3 index
//                       sequence, 4 raw, 5 words), u8 reserved (0),
//                       u64 storedSize
//   the streams, back to back in directory order
//
// One stream per mesh (a mesh shares its stream with the meshes that
// instance its bytes): a mesh loaded by byte range reads the directory and
// decodes its own streams only. Each stream is meshoptimizer's encoding
// (type 3) or one zstd frame of it that declares its content size (type 4).
// The streams lie in ascending rawOffset order without overlap; the bytes
// between them (at most 15: alignment padding) and before the first are
// zero; the last ends at the chunk's uncompressedSize.
//
// R-DECOMPRESS: a directory that breaks any of this, a stream that decodes
// to other than elementCount x elementSize bytes or that declares more than
// 64 decoded bytes per stored byte (the vertex codec's own most, so a small
// file cannot claim a large allocation) is rejected before anything is
// decoded into it. meshoptimizer's decoders are memory-safe on malformed
// input; the preconditions they assert (element sizes, counts) are checked
// here first. A build without meshoptimizer (UNTOLD_HAS_MESHOPT unset)
// parses directories but reports compression_unsupported on decode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "bytes.hpp"
#include "error.hpp"
#include "format.hpp"

#if defined(UNTOLD_HAS_MESHOPT) && UNTOLD_HAS_MESHOPT
#define UNTOLD_DETAIL_MESHOPT 1
#include <meshoptimizer.h>
#else
#define UNTOLD_DETAIL_MESHOPT 0
#endif

namespace untold {

/// Which meshoptimizer codec a stream of a meshopt chunk went through.
/// `raw`: the bytes as they are (type 4: one zstd frame of them); `words`:
/// the elements' 4-byte words grouped by their place in the element. For
/// streams meshoptimizer's codec would not make smaller.
enum class codec_stream_kind : std::uint8_t { vertex = 1, index_triangles = 2, index_sequence = 3, raw = 4, words = 5 };

/// True for the kinds stored without meshoptimizer (raw, words): their
/// stored bytes (type 3) or frame content (type 4) are exactly raw_size().
[[nodiscard]] constexpr bool is_plain_kind(codec_stream_kind k) noexcept {
  return k == codec_stream_kind::raw || k == codec_stream_kind::words;
}

inline constexpr std::uint64_t codec_directory_header_size = 8;
inline constexpr std::uint64_t codec_stream_entry_size = 24;
/// Decoded bytes per stored byte a stream may claim: the vertex codec's
/// most (2 bits per 16-byte group of 256 vertices per byte lane); the index
/// codecs stay below 12.
inline constexpr std::uint64_t codec_max_expansion = 64;
/// Zero bytes allowed before a stream (index ranges start 4-byte aligned).
inline constexpr std::uint64_t codec_max_gap = 15;

/// One entry of a meshopt chunk's stream directory.
struct codec_stream {
  std::uint64_t raw_offset = 0;     // where its decoded bytes start in the chunk's payload
  std::uint32_t element_count = 0;  // vertices or indices
  std::uint16_t element_size = 0;   // vertex stride (4..256, a multiple of 4) or index size (2, 4); raw: 1..256
  codec_stream_kind kind = codec_stream_kind::vertex;
  std::uint64_t stored_offset = 0;  // from the start of the chunk's stored bytes
  std::uint64_t stored_size = 0;

  [[nodiscard]] std::uint64_t raw_size() const noexcept { return std::uint64_t{element_count} * element_size; }
  [[nodiscard]] std::uint64_t raw_end() const noexcept { return raw_offset + raw_size(); }
};

/// True for the two meshopt compressions.
[[nodiscard]] constexpr bool is_mesh_codec(compression method) noexcept {
  return method == compression::meshopt || method == compression::meshopt_zstd;
}

/// R-CODEC-CHUNK: compression types 3 and 4 are for VERTEX_DATA and
/// INDEX_DATA only; every other compression fits every chunk.
[[nodiscard]] constexpr bool compression_fits_chunk(std::uint32_t compression_type, std::uint32_t chunk_type) noexcept {
  if (!is_mesh_codec(static_cast<compression>(compression_type))) return true;
  return chunk_type == static_cast<std::uint32_t>(chunk_type::vertex_data) ||
         chunk_type == static_cast<std::uint32_t>(chunk_type::index_data);
}

namespace detail {
[[nodiscard]] inline error directory_error(const char* field, std::uint64_t value, std::uint32_t stream = no_index) {
  return make_error(errc::decompress_failed).at_field(field).with_value(value).at_record(stream);
}
}  // namespace detail

/// The size of a meshopt chunk's directory, read from its first 8 bytes
/// (streamCount). nullopt when fewer than 8 bytes are given. Safe on
/// untrusted input (the size is not checked against anything here).
[[nodiscard]] inline std::optional<std::uint64_t> codec_directory_size(byte_span first_bytes) noexcept {
  const auto count = load_le<std::uint32_t>(first_bytes, 0);
  if (!count) return std::nullopt;
  return codec_directory_header_size + std::uint64_t{*count} * codec_stream_entry_size;
}

/// Checks a meshopt chunk's stream directory and calls `visit(index,
/// stream)` for each stream in order, stopping at the first error (a rule
/// or a failure `visit` returns). `directory` holds at least the directory
/// (codec_directory_size bytes) of a chunk of `stored_size` stored bytes.
/// Checks every directory rule in the file comment (kinds, element sizes
/// and counts, order, gaps, stored sizes that add up to the chunk, and for
/// type 3 the 64x expansion bound; type 4's bound needs each frame and is
/// checked as the stream is decoded). Allocates nothing.
/// Errors: decompress_failed (R-DECOMPRESS) with the field and, for a
/// stream, its index as record_index. Safe on untrusted input.
template <class Visit>
[[nodiscard]] status for_each_codec_stream(compression method, byte_span directory, std::uint64_t stored_size,
                                           Visit&& visit) {
  const auto size = codec_directory_size(directory);
  if (!size || *size > stored_size) return detail::directory_error("streamCount", size ? *size : directory.size());
  if (*size > directory.size()) return detail::directory_error("streamCount", *size);
  if (load_le_unchecked<std::uint32_t>(directory.data() + 4) != 0)
    return detail::directory_error("reserved", load_le_unchecked<std::uint32_t>(directory.data() + 4));
  const auto count = load_le_unchecked<std::uint32_t>(directory.data());
  std::uint64_t raw_end = 0, stored_at = *size;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::byte* e = directory.data() + codec_directory_header_size + std::uint64_t{i} * codec_stream_entry_size;
    codec_stream s;
    s.raw_offset = load_le_unchecked<std::uint64_t>(e);
    s.element_count = load_le_unchecked<std::uint32_t>(e + 8);
    s.element_size = load_le_unchecked<std::uint16_t>(e + 12);
    const auto kind = static_cast<std::uint8_t>(e[14]);
    s.kind = static_cast<codec_stream_kind>(kind);
    s.stored_size = load_le_unchecked<std::uint64_t>(e + 16);
    s.stored_offset = stored_at;
    if (kind < 1 || kind > 5) return detail::directory_error("codec", kind, i);
    if (e[15] != std::byte{0}) return detail::directory_error("reserved", static_cast<std::uint8_t>(e[15]), i);
    const bool bad_size = s.kind == codec_stream_kind::raw      ? s.element_size < 1 || s.element_size > 256
                          : s.kind == codec_stream_kind::vertex || s.kind == codec_stream_kind::words
                              ? s.element_size < 4 || s.element_size > 256 || s.element_size % 4 != 0
                                                                : s.element_size != 2 && s.element_size != 4;
    if (bad_size) return detail::directory_error("elementSize", s.element_size, i);
    if (s.element_count == 0 || (s.kind == codec_stream_kind::index_triangles && s.element_count % 3 != 0))
      return detail::directory_error("elementCount", s.element_count, i);
    if (s.raw_offset < raw_end || s.raw_offset - raw_end > codec_max_gap)
      return detail::directory_error("rawOffset", s.raw_offset, i);
    raw_end = s.raw_end();  // no wrap: raw_offset <= the previous end + 15 < 2^63, size < 2^41
    if (s.stored_size > stored_size - stored_at) return detail::directory_error("storedSize", s.stored_size, i);
    stored_at += s.stored_size;
    if (method == compression::meshopt && s.raw_size() > s.stored_size * codec_max_expansion)
      return detail::directory_error("elementCount", s.element_count, i);
    if (method == compression::meshopt && is_plain_kind(s.kind) && s.stored_size != s.raw_size())
      return detail::directory_error("storedSize", s.stored_size, i);
    if (status st = visit(i, s); !st) return st;
  }
  if (stored_at != stored_size) return detail::directory_error("storedSize", stored_at);
  return {};
}

/// for_each_codec_stream's streams as a vector (one entry per stream:
/// bounded by directory.size() / 24). Same checks and errors.
template <class = void>
[[nodiscard]] result<std::vector<codec_stream>> parse_codec_directory(compression method, byte_span directory,
                                                                      std::uint64_t stored_size) {
  std::vector<codec_stream> streams;
  if (const auto size = codec_directory_size(directory); size && *size <= directory.size())
    streams.reserve(static_cast<std::size_t>((*size - codec_directory_header_size) / codec_stream_entry_size));
  UNTOLD_TRY(for_each_codec_stream(method, directory, stored_size, [&](std::uint32_t, const codec_stream& s) -> status {
    streams.push_back(s);
    return {};
  }));
  return streams;
}

/// Where a meshopt chunk's payload ends (its last stream's end), once every
/// directory rule of its stored bytes holds (for_each_codec_stream's
/// errors). Allocates nothing. Safe on untrusted input.
[[nodiscard]] inline result<std::uint64_t> codec_payload_size(compression method, byte_span stored) noexcept {
  std::uint64_t end = 0;
  UNTOLD_TRY(for_each_codec_stream(method, stored, stored.size(), [&](std::uint32_t, const codec_stream& s) -> status {
    end = s.raw_end();
    return {};
  }));
  return end;
}

/// The payload size a parsed directory decodes to: where its last stream ends.
[[nodiscard]] inline std::uint64_t codec_decoded_size(std::span<const codec_stream> streams) noexcept {
  return streams.empty() ? 0 : streams.back().raw_end();
}

namespace detail {
[[nodiscard]] inline status check_stream_kind(std::uint32_t index, const codec_stream& s, std::uint32_t chunk_type) {
  if (is_plain_kind(s.kind) ||
      (s.kind == codec_stream_kind::vertex) == (chunk_type == static_cast<std::uint32_t>(chunk_type::vertex_data)))
    return {};
  return make_error(errc::codec_chunk_type).at_field("codec").with_value(static_cast<std::uint8_t>(s.kind)).at_record(index);
}
}  // namespace detail

/// R-CODEC-CHUNK for the streams: a VERTEX_DATA chunk holds vertex (or raw)
/// streams, an INDEX_DATA chunk index (or raw) streams. Safe on untrusted
/// input.
[[nodiscard]] inline status check_codec_streams(std::span<const codec_stream> streams, std::uint32_t chunk_type) {
  for (std::uint32_t i = 0; i < streams.size(); ++i) UNTOLD_TRY(detail::check_stream_kind(i, streams[i], chunk_type));
  return {};
}

/// The same for a chunk's stored bytes: the directory (R-DECOMPRESS), then
/// each stream's kind. Allocates nothing. Safe on untrusted input.
[[nodiscard]] inline status check_codec_chunk(compression method, byte_span stored, std::uint32_t chunk_type) {
  return for_each_codec_stream(method, stored, stored.size(), [&](std::uint32_t i, const codec_stream& s) {
    return detail::check_stream_kind(i, s, chunk_type);
  });
}

/// The first byte meshoptimizer writes for each kind: its codec and version
/// (vertex codec version 0, index codecs version 1). Streams of other
/// versions are rejected, so every reader decodes the same files whatever
/// meshoptimizer version it was built with.
[[nodiscard]] constexpr std::byte codec_header_byte(codec_stream_kind kind) noexcept {
  return kind == codec_stream_kind::vertex            ? std::byte{0xA0}
         : kind == codec_stream_kind::index_triangles ? std::byte{0xE1}
         : kind == codec_stream_kind::index_sequence  ? std::byte{0xD1}
                                                      : std::byte{0};
}

/// The largest meshoptimizer encoding of a stream (the codec's bound): what
/// a type 4 frame may declare. 0 without meshoptimizer.
[[nodiscard]] inline std::uint64_t codec_encoded_bound([[maybe_unused]] const codec_stream& s) noexcept {
  if (is_plain_kind(s.kind)) return s.raw_size();
#if UNTOLD_DETAIL_MESHOPT
  if (s.kind == codec_stream_kind::vertex) return meshopt_encodeVertexBufferBound(s.element_count, s.element_size);
  const std::size_t vertices = s.element_size == 2 ? std::size_t{1} << 16 : std::size_t{0xFFFFFFFFu};
  if (s.kind == codec_stream_kind::index_triangles) return meshopt_encodeIndexBufferBound(s.element_count, vertices);
  return meshopt_encodeIndexSequenceBound(s.element_count, vertices);
#else
  return 0;
#endif
}

/// Decodes one stream's meshoptimizer bytes into `out` (exactly
/// s.raw_size() bytes). Errors: decompress_failed (wrong codec header
/// byte, malformed or not exactly consumed data), compression_unsupported
/// without meshoptimizer. Preconditions: `s` came from
/// parse_codec_directory (its element rules hold); out.size() ==
/// s.raw_size(). Safe on untrusted `encoded`.
[[nodiscard]] inline status decode_codec_stream([[maybe_unused]] const codec_stream& s,
                                                [[maybe_unused]] byte_span encoded,
                                                [[maybe_unused]] mutable_byte_span out) noexcept {
  if (is_plain_kind(s.kind)) {
    if (encoded.size() != out.size()) return detail::directory_error("storedSize", encoded.size());
    if (s.kind == codec_stream_kind::raw) {
      if (!out.empty()) std::memcpy(out.data(), encoded.data(), out.size());
      return {};
    }
    const std::size_t count = s.element_count, words = s.element_size / 4u;  // element_size % 4 == 0 (directory rules)
    for (std::size_t w = 0; w < words; ++w)
      for (std::size_t i = 0; i < count; ++i)
        std::memcpy(out.data() + i * s.element_size + 4 * w, encoded.data() + (w * count + i) * 4, 4);
    return {};
  }
#if UNTOLD_DETAIL_MESHOPT
  if (encoded.empty() || encoded[0] != codec_header_byte(s.kind))
    return detail::directory_error("codec", encoded.empty() ? 0 : static_cast<std::uint8_t>(encoded[0]));
  const auto* data = reinterpret_cast<const unsigned char*>(encoded.data());
  int rc = 0;
  switch (s.kind) {
    case codec_stream_kind::vertex:
      rc = meshopt_decodeVertexBuffer(out.data(), s.element_count, s.element_size, data, encoded.size());
      break;
    case codec_stream_kind::index_triangles:
      rc = meshopt_decodeIndexBuffer(out.data(), s.element_count, s.element_size, data, encoded.size());
      break;
    case codec_stream_kind::index_sequence:
      rc = meshopt_decodeIndexSequence(out.data(), s.element_count, s.element_size, data, encoded.size());
      break;
    case codec_stream_kind::raw:
    case codec_stream_kind::words:
      break;
  }
  if (rc != 0) return detail::directory_error("storedSize", encoded.size());
  return {};
#else
  return make_error(errc::compression_unsupported).at_field("compressionType").with_value(3);
#endif
}

/// `bytes` (whole elements of `element_size`, a multiple of 4) with the
/// elements' 4-byte words grouped by their place: the `words` kind's form.
template <class = void>
[[nodiscard]] std::vector<std::byte> group_words(byte_span bytes, std::size_t element_size) {
  std::vector<std::byte> out(bytes.size());
  const std::size_t count = bytes.size() / element_size, words = element_size / 4;
  for (std::size_t w = 0; w < words; ++w)
    for (std::size_t i = 0; i < count; ++i)
      std::memcpy(out.data() + (w * count + i) * 4, bytes.data() + i * element_size + 4 * w, 4);
  return out;
}

/// What a writer hands the meshopt compressions for one stream: the bytes
/// (`element_size` 0: zero padding of at most 15 bytes, stored as a gap)
/// and the codec (vertex, or index: triangles where exact, else sequence).
struct codec_input {
  byte_span bytes;
  std::uint16_t element_size = 0;
  bool is_vertex = true;
};

/// Encodes one stream with meshoptimizer: the vertex codec, or for indices
/// the triangle codec when it gives the indices back exactly (it may rotate
/// a triangle: then the sequence codec, when that gives them back exactly,
/// else the bytes as they are, kind raw). Appends the encoding to `out` and
/// returns the kind used. Preconditions (a writer's
/// own data): bytes.size() a non-zero multiple of element_size, element
/// sizes as in the directory rules. Errors: encode_failed,
/// compression_unsupported without meshoptimizer. Deterministic.
template <class = void>
[[nodiscard]] result<codec_stream_kind> encode_codec_stream([[maybe_unused]] const codec_input& in,
                                                            [[maybe_unused]] std::vector<std::byte>& out) {
#if UNTOLD_DETAIL_MESHOPT
  static const bool pinned = [] {  // the versions codec_header_byte names (0.18's defaults)
    meshopt_encodeVertexVersion(0);
    meshopt_encodeIndexVersion(1);
    return true;
  }();
  (void)pinned;
  const std::size_t count = in.bytes.size() / in.element_size;
  const auto append = [&](std::size_t bound, auto encode) -> bool {
    const std::size_t at = out.size();
    out.resize(at + bound);
    const std::size_t written = encode(reinterpret_cast<unsigned char*>(out.data() + at), bound);
    out.resize(at + written);
    return written != 0;
  };
  if (in.is_vertex) {
    if (!append(meshopt_encodeVertexBufferBound(count, in.element_size), [&](unsigned char* dst, std::size_t bound) {
          return meshopt_encodeVertexBuffer(dst, bound, in.bytes.data(), count, in.element_size);
        }))
      return make_error(errc::encode_failed).at_field("vertices").with_value(count);
    return codec_stream_kind::vertex;
  }
  std::vector<unsigned> wide(count);
  std::uint32_t most = 0;
  for (std::size_t i = 0; i < count; ++i) {
    wide[i] = in.element_size == 2 ? load_le_unchecked<std::uint16_t>(in.bytes.data() + 2 * i)
                                   : load_le_unchecked<std::uint32_t>(in.bytes.data() + 4 * i);
    most = wide[i] > most ? wide[i] : most;
  }
  // The index codecs may hand indices back changed: the triangle codec
  // rotates triangles, the sequence codec keeps 30-bit deltas (indices 2^30
  // apart; fuzz_mesh_codec found it). The first whose decode gives the
  // indices back exactly is kept, else the bytes as they are.
  const std::size_t at = out.size();
  const auto exact = [&](codec_stream_kind kind) {
    codec_stream s;
    s.element_count = static_cast<std::uint32_t>(count);
    s.element_size = in.element_size;
    s.kind = kind;
    byte_buffer back(in.bytes.size());
    return decode_codec_stream(s, byte_span(out).subspan(at), back).has_value() &&
           std::memcmp(back.data(), in.bytes.data(), in.bytes.size()) == 0;
  };
  if (count % 3 == 0) {
    if (!append(meshopt_encodeIndexBufferBound(count, std::size_t{most} + 1), [&](unsigned char* dst, std::size_t bound) {
          return meshopt_encodeIndexBuffer(dst, bound, wide.data(), count);
        }))
      return make_error(errc::encode_failed).at_field("indices").with_value(count);
    if (exact(codec_stream_kind::index_triangles)) return codec_stream_kind::index_triangles;
    out.resize(at);
  }
  if (!append(meshopt_encodeIndexSequenceBound(count, std::size_t{most} + 1), [&](unsigned char* dst, std::size_t bound) {
        return meshopt_encodeIndexSequence(dst, bound, wide.data(), count);
      }))
    return make_error(errc::encode_failed).at_field("indices").with_value(count);
  if (exact(codec_stream_kind::index_sequence)) return codec_stream_kind::index_sequence;
  out.resize(at);
  out.insert(out.end(), in.bytes.begin(), in.bytes.end());
  return codec_stream_kind::raw;
#else
  return make_error(errc::compression_unsupported).at_field("compressionType").with_value(3);
#endif
}

}  // namespace untold
