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
// words, ...; zstd finds more in such planes of floats), or (vertex streams)
// cut into fields, each stored its own way ("fields", below), whichever the
// writer finds smallest (after zstd for type 4). The stored bytes are:
//
//   u32 streamCount, u32 reserved (0)
//   streamCount x 24 B: u64 rawOffset, u32 elementCount, u16 elementSize,
//                       u8 codec (1 vertex, 2 index triangles, 3 index
//                       sequence, 4 raw, 5 words, 6 fields), u8 reserved (0),
//                       u64 storedSize
//   the streams, back to back in directory order
//
// A `fields` stream cuts each element into consecutive fields (a vertex's
// position, its normal, its UVs ...) and stores each field of every element
// on its own:
//
//   u8 fieldCount (1..16)
//   fieldCount x 6 B: u8 fieldSize, u8 codec (1 vertex: 4..32 bytes, a
//                     multiple of 4; 4 raw: 1..255; 5 words: a multiple
//                     of 4), u32 storedSize
//   each field's stored bytes, in order: the field's bytes of every element
//   back to back, through that codec
//
// The field sizes add up to elementSize; a raw or words field stores
// exactly elementCount x fieldSize bytes. Why: positions and normals differ
// in what compresses them (2CylinderEngine's quantized positions zstd best
// as they are, its octahedral normals through the vertex codec), and one
// codec for the whole element has to pick one for both.
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
// file cannot claim a large allocation), a fields header that breaks its
// rules, is rejected before anything is decoded into it. meshoptimizer's
// decoders are memory-safe on malformed input; the preconditions they
// assert (element sizes, counts) are checked here first. A build without
// meshoptimizer (UNTOLD_HAS_MESHOPT unset) parses directories but reports
// compression_unsupported on decode (raw and words streams and fields
// excepted).
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
/// streams meshoptimizer's codec would not make smaller. `fields`: the
/// element cut into fields, each stored as vertex, raw or words (the file
/// comment).
enum class codec_stream_kind : std::uint8_t {
  vertex = 1,
  index_triangles = 2,
  index_sequence = 3,
  raw = 4,
  words = 5,
  fields = 6
};

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
/// A fields stream: at most this many fields, each described in 6 bytes;
/// a field the vertex codec stores is at most 32 bytes (so that the fields'
/// encodings stay within codec_encoded_bound).
inline constexpr std::size_t codec_max_fields = 16;
inline constexpr std::size_t codec_field_entry_size = 6;
inline constexpr std::size_t codec_max_vertex_field = 32;

/// One field of a `fields` stream: `size` bytes of each element, stored
/// with `kind` (vertex, raw or words).
struct codec_field {
  std::uint8_t size = 0;
  codec_stream_kind kind = codec_stream_kind::raw;
};

/// Whether a field of `size` bytes may be stored with `kind`.
[[nodiscard]] constexpr bool codec_field_fits(codec_stream_kind kind, std::uint32_t size) noexcept {
  switch (kind) {
    case codec_stream_kind::vertex:
      return size >= 4 && size <= codec_max_vertex_field && size % 4 == 0;
    case codec_stream_kind::raw:
      return size >= 1 && size <= 255;
    case codec_stream_kind::words:
      return size >= 4 && size <= 252 && size % 4 == 0;
    default:
      return false;
  }
}

namespace detail {
inline constexpr std::uint8_t static_v1_fields[] = {12, 4, 4, 4, 4, 4};
inline constexpr std::uint8_t quant_v1_fields[] = {8, 4, 4, 4, 4};
}  // namespace detail

/// The fields writers try for a vertex stream of `stride` bytes: the
/// attributes of the vertex layout with that stride (PBR_STATIC_V1:
/// position, normal, tangent, uv0, uv1, color0; PBR_QUANT_V1: position with
/// handedness, normal and tangent, uv0, uv1, color0); empty for any other
/// stride. Only a writer's choice: a reader takes any fields header.
[[nodiscard]] constexpr std::span<const std::uint8_t> codec_fields_for_stride(std::size_t stride) noexcept {
  if (stride == vertex_stride_pbr_static_v1) return detail::static_v1_fields;
  if (stride == vertex_stride_pbr_quant_v1) return detail::quant_v1_fields;
  return {};
}

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
    if (kind < 1 || kind > 6) return detail::directory_error("codec", kind, i);
    if (e[15] != std::byte{0}) return detail::directory_error("reserved", static_cast<std::uint8_t>(e[15]), i);
    const bool bad_size = s.kind == codec_stream_kind::raw      ? s.element_size < 1 || s.element_size > 256
                          : s.kind == codec_stream_kind::vertex || s.kind == codec_stream_kind::words ||
                                    s.kind == codec_stream_kind::fields
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
  const bool vertex_kind = s.kind == codec_stream_kind::vertex || s.kind == codec_stream_kind::fields;
  if (is_plain_kind(s.kind) || vertex_kind == (chunk_type == static_cast<std::uint32_t>(chunk_type::vertex_data)))
    return {};
  return make_error(errc::codec_chunk_type).at_field("codec").with_value(static_cast<std::uint8_t>(s.kind)).at_record(index);
}
}  // namespace detail

/// R-CODEC-CHUNK for the streams: a VERTEX_DATA chunk holds vertex or fields
/// (or raw, words) streams, an INDEX_DATA chunk index (or raw, words) streams. Safe on untrusted
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
  if (s.kind == codec_stream_kind::fields) {
    // The header, the raw and words fields (at most the raw size), and the
    // vertex-coded ones: for a field of 4..32 bytes the codec's bound is at
    // most fieldSize / 4 times its bound for 4 bytes (the same blocks of 256
    // vertices; the 32-byte tail counted once per 4 bytes).
    const std::uint64_t plain = 1 + codec_max_fields * codec_field_entry_size + s.raw_size();
#if UNTOLD_DETAIL_MESHOPT
    return plain + std::uint64_t{s.element_size / 4u} * meshopt_encodeVertexBufferBound(s.element_count, 4);
#else
    return plain;
#endif
  }
#if UNTOLD_DETAIL_MESHOPT
  if (s.kind == codec_stream_kind::vertex) return meshopt_encodeVertexBufferBound(s.element_count, s.element_size);
  const std::size_t vertices = s.element_size == 2 ? std::size_t{1} << 16 : std::size_t{0xFFFFFFFFu};
  if (s.kind == codec_stream_kind::index_triangles) return meshopt_encodeIndexBufferBound(s.element_count, vertices);
  return meshopt_encodeIndexSequenceBound(s.element_count, vertices);
#else
  return 0;
#endif
}

namespace detail {

/// The inverse of group_words for one field: `count` elements' `size`-byte
/// field, given as its words grouped by place at `from`, put back at
/// `offset` of each `stride`-byte element of `out`.
inline void ungroup_words(const std::byte* from, std::size_t count, std::size_t size, std::byte* out,
                          std::size_t stride, std::size_t offset) noexcept {
  for (std::size_t w = 0; w < size / 4; ++w)
    for (std::size_t i = 0; i < count; ++i) std::memcpy(out + i * stride + offset + 4 * w, from + (w * count + i) * 4, 4);
}

/// The inverse of gather_field: `count` fields of `size` bytes, back to back
/// at `from`, put at `offset` of each `stride`-byte element of `out`.
inline void scatter_field(const std::byte* from, std::size_t count, std::size_t size, std::byte* out,
                          std::size_t stride, std::size_t offset) noexcept {
  for (std::size_t i = 0; i < count; ++i) std::memcpy(out + i * stride + offset, from + i * size, size);
}

/// Decodes a `fields` stream (the file comment's layout) into `out`,
/// scattering each field into its place in every element. Every header rule
/// is checked before anything is decoded. Same contract as
/// decode_codec_stream.
[[nodiscard]] inline status decode_fields(const codec_stream& s, byte_span encoded, mutable_byte_span out,
                                          byte_buffer* scratch) noexcept {
  if (encoded.empty()) return directory_error("fieldCount", 0);
  const std::size_t count = s.element_count, stride = s.element_size;
  const std::size_t fields = static_cast<std::uint8_t>(encoded[0]);
  if (fields < 1 || fields > codec_max_fields) return directory_error("fieldCount", fields);
  const std::size_t header = 1 + fields * codec_field_entry_size;
  if (encoded.size() < header) return directory_error("storedSize", encoded.size());
  struct entry {
    codec_field field;
    std::size_t stored = 0;
  };
  entry entries[codec_max_fields];
  std::size_t widths = 0, largest_coded = 0;
  std::uint64_t stored = header;
  for (std::size_t f = 0; f < fields; ++f) {
    const std::byte* e = encoded.data() + 1 + f * codec_field_entry_size;
    const auto size = static_cast<std::uint8_t>(e[0]);
    const auto kind = static_cast<codec_stream_kind>(e[1]);
    const std::uint64_t field_stored = load_le_unchecked<std::uint32_t>(e + 2);
    if (!codec_field_fits(kind, size)) return directory_error("fieldSize", size, static_cast<std::uint32_t>(f));
    widths += size;
    if (widths > stride) return directory_error("fieldSize", widths, static_cast<std::uint32_t>(f));
    if (is_plain_kind(kind) ? field_stored != std::uint64_t{count} * size : field_stored == 0)
      return directory_error("fieldStoredSize", field_stored, static_cast<std::uint32_t>(f));
    if (field_stored > encoded.size() - stored)
      return directory_error("fieldStoredSize", field_stored, static_cast<std::uint32_t>(f));
    stored += field_stored;
    if (kind == codec_stream_kind::vertex && size > largest_coded) largest_coded = size;
    entries[f] = {{size, kind}, static_cast<std::size_t>(field_stored)};
  }
  if (widths != stride) return directory_error("fieldSize", widths);
  if (stored != encoded.size()) return directory_error("storedSize", encoded.size());
#if !UNTOLD_DETAIL_MESHOPT
  if (largest_coded != 0) return make_error(errc::compression_unsupported).at_field("compressionType").with_value(3);
#endif
  // A vertex-coded field before it is scattered (at most out.size() bytes):
  // in the caller's scratch, grown as needed, else in a buffer of its own.
  byte_buffer own;
  byte_buffer& decoded = scratch != nullptr ? *scratch : own;
  if (decoded.size() < count * largest_coded) decoded = byte_buffer(count * largest_coded);
  const std::byte* at = encoded.data() + header;
  std::size_t offset = 0;
  for (std::size_t f = 0; f < fields; ++f) {
    const auto [field, field_stored] = entries[f];
    if (field.kind == codec_stream_kind::words) {
      ungroup_words(at, count, field.size, out.data(), stride, offset);
    } else if (field.kind == codec_stream_kind::raw) {
      scatter_field(at, count, field.size, out.data(), stride, offset);
    } else {
#if UNTOLD_DETAIL_MESHOPT
      if (at[0] != codec_header_byte(field.kind) ||
          meshopt_decodeVertexBuffer(decoded.data(), count, field.size, reinterpret_cast<const unsigned char*>(at),
                                     field_stored) != 0)
        return directory_error("fieldStoredSize", field_stored, static_cast<std::uint32_t>(f));
      scatter_field(decoded.data(), count, field.size, out.data(), stride, offset);
#endif
    }
    at += field_stored;
    offset += field.size;
  }
  return {};
}

}  // namespace detail

/// Decodes one stream's meshoptimizer bytes into `out` (exactly
/// s.raw_size() bytes). `scratch` (optional): memory a fields stream's
/// vertex-coded fields are decoded into before they are put in place, grown
/// as needed and kept for the next call (without it each such stream
/// allocates its own). Errors: decompress_failed (wrong codec header
/// byte, malformed or not exactly consumed data), compression_unsupported
/// without meshoptimizer. Preconditions: `s` came from
/// parse_codec_directory (its element rules hold); out.size() ==
/// s.raw_size(). Safe on untrusted `encoded`.
[[nodiscard]] inline status decode_codec_stream([[maybe_unused]] const codec_stream& s,
                                                [[maybe_unused]] byte_span encoded,
                                                [[maybe_unused]] mutable_byte_span out,
                                                byte_buffer* scratch = nullptr) noexcept {
  if (s.kind == codec_stream_kind::fields) return detail::decode_fields(s, encoded, out, scratch);
  if (is_plain_kind(s.kind)) {
    if (encoded.size() != out.size()) return detail::directory_error("storedSize", encoded.size());
    if (s.kind == codec_stream_kind::raw) {
      if (!out.empty()) std::memcpy(out.data(), encoded.data(), out.size());
      return {};
    }
    // element_size % 4 == 0 (directory rules)
    detail::ungroup_words(encoded.data(), s.element_count, s.element_size, out.data(), s.element_size, 0);
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
    case codec_stream_kind::fields:
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

#if UNTOLD_DETAIL_MESHOPT
namespace detail {
/// Sets meshoptimizer's encoders to the versions codec_header_byte names
/// (vertex 0, index 1: 0.18's defaults), once per process.
inline void pin_codec_versions() noexcept {
  static const bool pinned = [] {
    meshopt_encodeVertexVersion(0);
    meshopt_encodeIndexVersion(1);
    return true;
  }();
  (void)pinned;
}
}  // namespace detail

/// Appends meshoptimizer's vertex encoding (version 0) of `elements`
/// (`size` bytes each, a multiple of 4 up to 256) to `out`. Errors:
/// encode_failed. Deterministic.
template <class = void>
[[nodiscard]] status append_vertex_encoding(byte_span elements, std::size_t size, std::vector<std::byte>& out) {
  detail::pin_codec_versions();
  const std::size_t count = elements.size() / size, at = out.size();
  out.resize(at + meshopt_encodeVertexBufferBound(count, size));
  const std::size_t written = meshopt_encodeVertexBuffer(reinterpret_cast<unsigned char*>(out.data() + at),
                                                         out.size() - at, elements.data(), count, size);
  out.resize(at + written);
  if (written == 0) return make_error(errc::encode_failed).at_field("vertices").with_value(count);
  return {};
}
#endif

/// The bytes of one field (`offset`, `size` bytes into each element of
/// `element_size`) of every element of `bytes`, back to back.
template <class = void>
[[nodiscard]] std::vector<std::byte> gather_field(byte_span bytes, std::size_t element_size, std::size_t offset,
                                                  std::size_t size) {
  const std::size_t count = bytes.size() / element_size;
  std::vector<std::byte> out(count * size);
  for (std::size_t i = 0; i < count; ++i) std::memcpy(out.data() + i * size, bytes.data() + i * element_size + offset, size);
  return out;
}

/// One field's stored form in a `fields` stream: its gathered bytes
/// (gather_field) through the vertex codec, as they are (raw) or with their
/// words grouped. Precondition: codec_field_fits(kind, size). Errors:
/// encode_failed, compression_unsupported (vertex without meshoptimizer).
/// Deterministic.
template <class = void>
[[nodiscard]] result<std::vector<std::byte>> encode_field(byte_span field, std::size_t size, codec_stream_kind kind) {
  if (kind == codec_stream_kind::raw) return std::vector<std::byte>(field.begin(), field.end());
  if (kind == codec_stream_kind::words) return group_words(field, size);
#if UNTOLD_DETAIL_MESHOPT
  std::vector<std::byte> out;
  UNTOLD_TRY(append_vertex_encoding(field, size, out));
  return out;
#else
  return make_error(errc::compression_unsupported).at_field("compressionType").with_value(3);
#endif
}

/// A `fields` stream (the file comment's layout) from its fields and each
/// one's stored form (encode_field), in order. Preconditions (a writer's own
/// data): 1..codec_max_fields fields that fit their kinds, forms below 4 GiB.
template <class = void>
[[nodiscard]] std::vector<std::byte> assemble_fields(std::span<const codec_field> fields,
                                                     std::span<const std::vector<std::byte>> forms) {
  std::vector<std::byte> out(1 + fields.size() * codec_field_entry_size);
  out[0] = static_cast<std::byte>(fields.size());
  for (std::size_t f = 0; f < fields.size(); ++f) {
    std::byte* e = out.data() + 1 + f * codec_field_entry_size;
    e[0] = static_cast<std::byte>(fields[f].size);
    e[1] = static_cast<std::byte>(fields[f].kind);
    store_le_unchecked<std::uint32_t>(e + 2, static_cast<std::uint32_t>(forms[f].size()));
  }
  for (const std::vector<std::byte>& form : forms) out.insert(out.end(), form.begin(), form.end());
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
  detail::pin_codec_versions();
  const std::size_t count = in.bytes.size() / in.element_size;
  const auto append = [&](std::size_t bound, auto encode) -> bool {
    const std::size_t at = out.size();
    out.resize(at + bound);
    const std::size_t written = encode(reinterpret_cast<unsigned char*>(out.data() + at), bound);
    out.resize(at + written);
    return written != 0;
  };
  if (in.is_vertex) {
    UNTOLD_TRY(append_vertex_encoding(in.bytes, in.element_size, out));
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
