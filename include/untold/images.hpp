// untold/images.hpp - image files stored inside a .untold file: the
// `untold.images` plugin chunk, an untold library convention (not the
// reference engine's; docs/format.md, "Embedded images").
//
// A texture record whose URI starts with '#' names an image of this chunk:
// URI "#wood.png" -> the entry named "wood.png". (A URI reference that starts
// with '#' is a same-document reference, RFC 3986 4.4.) An engine that does
// not know the convention resolves "#wood.png" next to the file, finds no
// such image and falls back to its missing-texture handling; it never loads
// a wrong file.
//
//   auto images = untold::embedded_images(*a);           // result<std::vector<embedded_image>>
//   if (!images) ...                                      // a bad chunk: R-EXT-RANGES with the field
//   for (const untold::texture_record& t : a->textures())
//     if (auto bytes = untold::find_embedded_image(*images, a->string(t.uri_offset))) decode(*bytes);
//
// Chunk: type images_chunk_type, UEXT envelope with plugin id "untold.images",
// chunkKind 1, chunkVersion 1; after the plugin id (offsets from there,
// little-endian):
//
//    0 u32 imageCount
//    4 u32 reserved           0
//    8 imageCount x 24 B      u32 nameOffset, u32 nameLength, u64 dataOffset, u64 dataSize
//                             (offsets from the start of this body)
//   then the names (UTF-8, no NUL, not blank, unique) and the image files'
//   bytes, as stored on disk (PNG, JPEG, KTX2 ...). The writer packs names
//   then data in entry order; a reader only requires every range to lie
//   inside the body (ranges may share bytes).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asset.hpp"
#include "bytes.hpp"
#include "cursor.hpp"
#include "error.hpp"
#include "extension_records.hpp"
#include "limits.hpp"
#include "sink.hpp"

namespace untold {

inline constexpr std::uint32_t images_chunk_type = 0xFFFF0002u;  // the library's own plugin chunk
inline constexpr std::string_view images_plugin_id = "untold.images";
inline constexpr std::uint32_t images_chunk_kind = 1;
inline constexpr std::uint32_t images_chunk_version = 1;
inline constexpr std::size_t images_header_size = 8;
inline constexpr std::size_t images_entry_size = 24;
/// The first character of a texture URI that names an embedded image.
inline constexpr char embedded_uri_mark = '#';

/// One stored image: views into the chunk payload (or, for the writer, the
/// caller's bytes).
struct embedded_image {
  std::string_view name{};
  byte_span bytes{};
};

/// The directory of an images chunk body (the bytes after the plugin id).
/// Errors: errc::extension_range (R-EXT-RANGES), context.record_index the
/// entry, field "imageCount" (more entries than the body or
/// limits::max_records allows), "reserved" (not 0), "nameOffset" (range past
/// the body), "name" (not a valid name, or a name used twice), "dataOffset"
/// (range past the body). Safe on untrusted input: every range is checked
/// overflow-safe before it is formed; allocates one entry per directory row,
/// after the row count is proven to fit in the body. O(n log n) in the count.
[[nodiscard]] inline result<std::vector<embedded_image>> parse_images_chunk(byte_span body,
                                                                            const limits& caps = {}) {
  byte_cursor c(body, {errc::extension_range, errc::extension_range});
  auto count = c.read<std::uint32_t>("imageCount");
  if (!count) return count.error();
  auto reserved = c.read<std::uint32_t>("reserved");
  if (!reserved) return reserved.error();
  if (*reserved != 0) return c.fail(errc::extension_range, "reserved", *reserved);
  if (*count > caps.max_records) return c.fail_limit(errc::extension_range, "imageCount", *count, caps.max_records);
  auto directory = c.array_bytes(*count, images_entry_size, "imageCount");  // fits the body before anything is allocated
  if (!directory) return directory.error();
  const auto fail = [](const char* field, std::uint32_t entry, std::uint64_t value) {
    return make_error(errc::extension_range, {.chunk_type = images_chunk_type, .record_index = entry, .field = field,
                                              .value = value, .has_value = true});
  };
  std::vector<embedded_image> out;
  out.reserve(*count);
  for (std::uint32_t i = 0; i < *count; ++i) {
    const std::byte* row = directory->data() + std::size_t{i} * images_entry_size;
    const auto name_offset = load_le_unchecked<std::uint32_t>(row);
    const auto name_length = load_le_unchecked<std::uint32_t>(row + 4);
    const auto data_offset = load_le_unchecked<std::uint64_t>(row + 8);
    const auto data_size = load_le_unchecked<std::uint64_t>(row + 16);
    const auto name = checked_range(name_offset, name_length, 1, body.size());
    if (!name) return fail("nameOffset", i, name_offset);
    const byte_span name_bytes = subspan(body, *name);
    const std::string_view text(reinterpret_cast<const char*>(name_bytes.data()), name_bytes.size());
    if (!is_valid_plugin_id(text)) return fail("name", i, name_length);
    const auto data = checked_range(data_offset, data_size, 1, body.size());
    if (!data) return fail("dataOffset", i, data_offset);
    out.push_back({text, subspan(body, *data)});
  }
  std::vector<std::string_view> names(out.size());
  std::transform(out.begin(), out.end(), names.begin(), [](const embedded_image& e) { return e.name; });
  std::sort(names.begin(), names.end());
  if (const auto twice = std::adjacent_find(names.begin(), names.end()); twice != names.end()) {
    const auto entry = std::find_if(out.begin(), out.end(), [&](const embedded_image& e) { return e.name == *twice; });
    return fail("name", static_cast<std::uint32_t>(entry - out.begin()), twice->size());
  }
  return out;
}

/// The body of an images chunk (pass it to builder::add_plugin_chunk with
/// images_plugin_id, images_chunk_kind, images_chunk_version and
/// images_chunk_type). Errors: errc::invalid_argument with record_index the
/// image: field "name" for a name parse_images_chunk would reject (empty,
/// blank, NUL, invalid UTF-8, longer than 65535 bytes, used twice),
/// "imageCount" for more than 2^32 - 1 images, "nameOffset" when the names
/// end past 4 GiB. Deterministic.
[[nodiscard]] inline result<std::vector<std::byte>> encode_images_chunk(std::span<const embedded_image> images) {
  const auto fail = [](const char* field, std::size_t image, std::uint64_t value) {
    return make_error(errc::invalid_argument, {.chunk_type = images_chunk_type,
                                               .record_index = static_cast<std::uint32_t>(image), .field = field,
                                               .value = value, .has_value = true});
  };
  if (images.size() > 0xFFFFFFFFu) return fail("imageCount", 0, images.size());
  std::vector<std::string_view> names;
  names.reserve(images.size());
  for (std::size_t i = 0; i < images.size(); ++i) {
    if (!is_valid_plugin_id(images[i].name)) return fail("name", i, images[i].name.size());
    names.push_back(images[i].name);
  }
  std::sort(names.begin(), names.end());
  if (const auto twice = std::adjacent_find(names.begin(), names.end()); twice != names.end()) {
    const auto entry = std::find_if(images.begin(), images.end(), [&](const embedded_image& e) { return e.name == *twice; });
    return fail("name", static_cast<std::size_t>(entry - images.begin()), twice->size());
  }
  std::vector<std::byte> out;
  byte_sink s(out);
  s.put<std::uint32_t>(static_cast<std::uint32_t>(images.size()));
  s.put<std::uint32_t>(0);
  std::uint64_t at = images_header_size + images_entry_size * images.size();
  std::uint64_t name_at = at;
  for (const embedded_image& e : images) at += e.name.size();
  for (const embedded_image& e : images) {
    s.put<std::uint32_t>(static_cast<std::uint32_t>(name_at));
    s.put<std::uint32_t>(static_cast<std::uint32_t>(e.name.size()));
    s.put<std::uint64_t>(at);
    s.put<std::uint64_t>(e.bytes.size());
    name_at += e.name.size();
    at += e.bytes.size();
  }
  if (name_at > 0xFFFFFFFFu) return fail("nameOffset", images.size() - 1, name_at);
  for (const embedded_image& e : images) s.string(e.name);
  for (const embedded_image& e : images) s.bytes(e.bytes);
  return out;
}

/// The images of `a`'s images chunk; empty when it has none. Errors: the
/// envelope's (R-EXT-RANGES, as parse_plugin_chunk), a chunk of
/// images_chunk_type with another plugin id, kind or version, a second
/// images chunk (field "chunkType"), or parse_images_chunk's; each with the
/// chunk row. The views point into the asset. Safe for any opened asset.
[[nodiscard]] inline result<std::vector<embedded_image>> embedded_images(const asset& a, const limits& caps = {}) {
  std::optional<std::uint32_t> found;
  byte_span found_payload{};  // the envelope's payload of the found row
  for (std::uint32_t row = 0; row < a.chunks().size(); ++row) {
    if (a.chunks()[row].chunk_type != images_chunk_type || !a.is_loaded(row)) continue;
    if (found)
      return make_error(errc::extension_range, {.chunk_index = row, .chunk_type = images_chunk_type,
                                                .field = "chunkType", .value = images_chunk_type, .has_value = true});
    found = row;
    const auto body = plugin_chunk_body(
        a.payload(row),
        {.plugin_id = images_plugin_id, .kind = images_chunk_kind, .chunk_version = images_chunk_version},
        errc::extension_range, row, images_chunk_type);
    if (!body) return body.error();
    found_payload = *body;
  }
  if (!found) return std::vector<embedded_image>{};
  auto images = parse_images_chunk(found_payload, caps);
  if (!images) {
    error e = images.error();
    e.context.chunk_index = *found;
    e.context.chunk_type = images_chunk_type;
    return e;
  }
  return images;
}

/// The bytes a texture URI names: "#name" -> the image called "name";
/// nullopt for a URI without the mark or a name the list does not hold.
[[nodiscard]] inline std::optional<byte_span> find_embedded_image(std::span<const embedded_image> images,
                                                                  std::string_view uri) noexcept {
  if (uri.empty() || uri.front() != embedded_uri_mark) return std::nullopt;
  uri.remove_prefix(1);
  for (const embedded_image& e : images)
    if (e.name == uri) return e.bytes;
  return std::nullopt;
}

/// The texture URI of the embedded image called `name`.
[[nodiscard]] inline std::string embedded_image_uri(std::string_view name) {
  std::string uri(1, embedded_uri_mark);
  uri.append(name);
  return uri;
}

}  // namespace untold
