// untold/error.hpp - errors as values.
//
// Every failure the library can report is one `errc` value. Each value knows
// its stable name, the spec rule id it enforces (`R-...`, or an `E-...` id for
// failures that are not file rules, such as I/O or bad writer input) and a
// one-line message. An `error` adds where it happened: chunk index and type,
// record index and the field name. `result<T>` carries either a value or an
// error; nothing in the library throws.
//
// To find the code that enforces a rule, grep for its errc name next to the
// rule id in the table below (e.g. R-MESH-MATERIAL -> mesh_material).
//
// The foreign formats (Urho3D, UDM, assetc) add their rules to the same enum
// from their own tables (urho3d/rules.hpp, udm/rules.hpp, assetc/rules.hpp):
// one error type for every format, each value tagged with its format family.
#pragma once

#include <array>
#include <cassert>
#include <cstdint>
#include <iosfwd>
#include <new>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "assetc/rules.hpp"
#include "udm/rules.hpp"
#include "urho3d/rules.hpp"

namespace untold {

// X(name, rule id, message). One table per format family; every other
// accessor derives from them.
#define UNTOLD_ERROR_TABLE(X)                                                  \
  UNTOLD_CORE_ERROR_TABLE(X)                                                   \
  UNTOLD_URHO3D_ERROR_TABLE(X)                                                 \
  UNTOLD_UDM_ERROR_TABLE(X)                                                    \
  UNTOLD_ASSETC_ERROR_TABLE(X)

#define UNTOLD_CORE_ERROR_TABLE(X)                                                                                   \
  X(ok, "OK", "no error")                                                                                       \
  /* spec 6: header and table */                                                                                \
  X(bad_magic, "R-MAGIC", "the first 8 bytes are not the .untold magic \"UNTOLD\\0\\0\"")                       \
  X(truncated_header, "R-TRUNC-HEADER", "the file is shorter than the 204-byte header")                        \
  X(unsupported_version, "R-VERSION", "formatVersion is not in 1..4")                                           \
  X(bad_header_size, "R-HEADER-SIZE", "headerSize is not 204")                                                  \
  X(unknown_file_type, "R-FILE-TYPE", "unknown fileType")                                                       \
  X(unknown_vertex_layout, "R-VERTEX-LAYOUT", "unknown vertexLayout")                                           \
  X(truncated_table, "R-TRUNC-TABLE", "the chunk table extends past the end of the file")                      \
  X(unknown_compression, "R-COMPRESSION", "unknown compressionType")                                            \
  X(misaligned_chunk, "R-ALIGN", "a chunk fileOffset is not a multiple of 16")                                 \
  X(chunk_out_of_range, "R-CHUNK-RANGE",                                                                        \
    "a chunk extends past the end of the file or overlaps the header, the table or another chunk")             \
  X(raw_size_mismatch, "R-RAW-SIZE", "an uncompressed chunk has compressedSize != uncompressedSize")          \
  X(duplicate_chunk, "R-DUP-CHUNK", "a core chunk type appears more than once")                                \
  X(missing_required_chunk, "R-REQUIRED", "a chunk required for this fileType is missing")                     \
  X(table_size_mismatch, "R-TABLE-SIZE", "a record table's uncompressedSize != elementCount * record size")    \
  X(header_count_mismatch, "R-HEADER-COUNTS", "a header count differs from its table's element count")         \
  X(limit_exceeded, "R-LIMITS", "a count or size exceeds the caller's limits")                                 \
  /* spec 6: payloads */                                                                                        \
  X(decompress_failed, "R-DECOMPRESS", "a compressed chunk failed to decode to exactly its declared size")     \
  X(compression_unsupported, "R-DECOMPRESS",                                                                    \
    "this build of the library cannot decode the chunk's compression (unsupported here)")                      \
  X(hash_mismatch, "R-HASH", "contentHash does not match the chunk bytes")                                     \
  /* spec 6: records */                                                                                         \
  X(bad_string, "R-STRING", "a string reference is outside the string table, unterminated or not UTF-8")      \
  X(entity_mesh_range, "R-ENTITY-MESH-RANGE", "an entity's mesh record range exceeds the mesh table")          \
  X(duplicate_entity_id, "R-ENTITY-ID", "two entities share an entityId")                                      \
  X(bad_entity_parent, "R-ENTITY-PARENT", "an entity's parent does not exist or the parent chain has a cycle")  \
  X(mesh_entity, "R-MESH-ENTITY", "a mesh's entityId names no entity")                                         \
  X(mesh_material, "R-MESH-MATERIAL", "a mesh's materialIndex is neither NONE nor a material")                 \
  X(bad_index_type, "R-INDEX-TYPE", "a mesh's indexType is not 1 (uint16) or 2 (uint32)")                     \
  X(bad_stride, "R-STRIDE", "a mesh's vertexStrideBytes does not match the vertex layout (32)")               \
  X(vertex_size, "R-VERTEX-SIZE", "a mesh's vertexDataSizeBytes != vertexCount * vertexStrideBytes")          \
  X(index_size, "R-INDEX-SIZE", "a mesh's indexDataSizeBytes != indexCount * index size")                     \
  X(index_count, "R-INDEX-COUNT", "a mesh's indexCount is not a multiple of 3 (meshes are triangle lists)")    \
  X(vertex_range, "R-VERTEX-RANGE", "a mesh's vertex bytes exceed VERTEX_DATA")                                \
  X(index_range, "R-INDEX-RANGE", "a mesh's index bytes exceed INDEX_DATA")                                    \
  X(edge_range, "R-EDGE-RANGE", "a mesh's edge indices exceed EDGE_INDEX_DATA or it is missing")              \
  X(texture_index, "R-TEXTURE-INDEX", "a material texture index is neither NONE nor a texture")               \
  X(texture_format, "R-TEXTURE-FORMAT", "unknown textureFormat")                                               \
  X(extension_range, "R-EXT-RANGES", "an extension-table reference or range is invalid")                      \
  X(morph_mesh, "R-MORPH-MESH", "a morph target's meshRecordIndex names no mesh")                              \
  X(morph_range, "R-MORPH-RANGE", "a morph target's entries exceed MORPH_TARGET_DATA, or that chunk is missing") \
  X(morph_driver, "R-MORPH-DRIVER", "a morph driver's targetIndex names no morph target")                      \
  /* spec 6: deep checks */                                                                                     \
  X(index_value, "R-INDEX-VALUE", "an index is >= the mesh's vertexCount")                                     \
  X(not_finite, "R-FINITE", "a position, bound or transform is not finite")                                    \
  X(out_of_bounds, "R-BOUNDS", "a vertex lies outside its mesh's localBounds")                                 \
  X(morph_vertex, "R-MORPH-VERTEX", "a morph entry's vertexIndex is >= its mesh's vertexCount")                \
  /* not file rules: I/O and API misuse */                                                                      \
  X(io_open_failed, "E-IO-OPEN", "the file could not be opened")                                               \
  X(io_read_failed, "E-IO-READ", "reading the file failed")                                                    \
  X(io_empty_file, "E-IO-EMPTY", "the file is empty")                                                          \
  X(io_write_failed, "E-IO-WRITE", "writing the file failed")                                                  \
  X(range_missing, "E-RANGE-MISSING", "the bytes this needs have not been supplied yet")                      \
  X(invalid_argument, "E-INVALID-ARGUMENT", "invalid input to the writer or API")                              \
  X(format_version_too_low, "E-FORMAT-VERSION",                                                                 \
    "the requested formatVersion cannot store the content (limit = the lowest version that can)")              \
  X(encode_failed, "E-ENCODE", "compressing or hashing failed inside the codec library")                        \
  /* block digests (integrity.hpp): the untold.integrity plugin chunk */                                        \
  X(integrity_layout, "R-INTEGRITY-LAYOUT", "the untold.integrity chunk is malformed or appears twice")          \
  X(integrity_hash, "R-INTEGRITY-HASH", "the untold.integrity chunk's digest of its own digests does not match") \
  X(directory_hash, "R-DIRECTORY-HASH", "the header or chunk table differs from the integrity chunk's digest")  \
  X(block_hash, "R-BLOCK-HASH", "a block of a chunk's stored bytes does not match its SHA-256 block digest")

enum class errc : std::uint16_t {
#define UNTOLD_X(name, rule, msg) name,
  UNTOLD_ERROR_TABLE(UNTOLD_X)
#undef UNTOLD_X
};

/// The enumerator's name, e.g. "mesh_material".
[[nodiscard]] constexpr std::string_view name(errc e) noexcept {
  switch (e) {
#define UNTOLD_X(n, rule, msg) \
  case errc::n:                \
    return #n;
    UNTOLD_ERROR_TABLE(UNTOLD_X)
#undef UNTOLD_X
  }
  return "unknown";
}

/// The spec rule id, e.g. "R-MESH-MATERIAL".
[[nodiscard]] constexpr std::string_view rule_id(errc e) noexcept {
  switch (e) {
#define UNTOLD_X(n, rule, msg) \
  case errc::n:                \
    return rule;
    UNTOLD_ERROR_TABLE(UNTOLD_X)
#undef UNTOLD_X
  }
  return "E-UNKNOWN";
}

/// A one-line human-readable message.
[[nodiscard]] constexpr std::string_view message(errc e) noexcept {
  switch (e) {
#define UNTOLD_X(n, rule, msg) \
  case errc::n:                \
    return msg;
    UNTOLD_ERROR_TABLE(UNTOLD_X)
#undef UNTOLD_X
  }
  return "unknown error";
}

/// Which format's rules a value enforces. Derived from the rule id prefix:
/// R-/E- core, U3D- Urho3D, UDM- Pragma UDM, HM- assetc.
enum class format_family : std::uint8_t { untold, urho3d, udm, assetc };

[[nodiscard]] constexpr format_family family(errc e) noexcept {
  const std::string_view id = rule_id(e);
  if (id.starts_with("U3D-")) return format_family::urho3d;
  if (id.starts_with("UDM-")) return format_family::udm;
  if (id.starts_with("HM-")) return format_family::assetc;
  return format_family::untold;
}

[[nodiscard]] constexpr std::string_view name(format_family f) noexcept {
  switch (f) {
    case format_family::untold: return "untold";
    case format_family::urho3d: return "urho3d";
    case format_family::udm: return "udm";
    case format_family::assetc: return "assetc";
  }
  return "unknown";
}

inline constexpr std::uint32_t no_index = 0xFFFFFFFFu;
inline constexpr std::uint64_t no_offset = ~std::uint64_t{0};

/// Where an error happened and the values needed to act on it. Unknown parts
/// stay at their defaults. Chunk/record are the .untold terms; the foreign
/// formats use record_index for "the n-th item of the structure being read"
/// (vertex buffer, entry, property) and `offset` for the byte position.
struct error_context {
  std::uint32_t chunk_index = no_index;   // row in the chunk table
  std::uint32_t chunk_type = 0;           // that row's chunkType (0 = n/a)
  std::uint32_t record_index = no_index;  // row in the record table / mesh index
  const char* field = nullptr;            // spec field name, e.g. "materialIndex"
  std::uint64_t value = 0;                // the offending value, when one helps
  bool has_value = false;
  std::uint64_t offset = no_offset;       // byte offset in the file, when known
  std::uint64_t limit = 0;                // the bound the value broke, when one helps
  bool has_limit = false;
  /// A name from the file (package entry, bone, property key), truncated to
  /// fit; stored inline so an error never points into the caller's buffer.
  std::array<char, 48> subject{};
};

struct error {
  errc code = errc::ok;
  error_context context{};

  /// Copies `s` (truncated to 47 bytes) into context.subject.
  constexpr error& with_subject(std::string_view s) noexcept {
    const std::size_t n = s.size() < context.subject.size() - 1 ? s.size() : context.subject.size() - 1;
    for (std::size_t i = 0; i < context.subject.size(); ++i) context.subject[i] = i < n ? s[i] : '\0';
    return *this;
  }
  [[nodiscard]] constexpr std::string_view subject() const noexcept { return context.subject.data(); }
  [[nodiscard]] constexpr format_family family() const noexcept { return untold::family(code); }

  [[nodiscard]] constexpr std::string_view name() const noexcept { return untold::name(code); }
  [[nodiscard]] constexpr std::string_view rule_id() const noexcept { return untold::rule_id(code); }
  [[nodiscard]] constexpr std::string_view message() const noexcept { return untold::message(code); }

  /// "R-MESH-MATERIAL mesh_material: <message> (chunk 2, record 3, field materialIndex, value 7)"
  /// A template so error.hpp needs no <string> (a reader's translation units
  /// stay light): include <string> where you call it.
  template <class String = std::string>
  [[nodiscard]] String describe() const {
    String s;
    s.append(rule_id()).append(" ").append(name()).append(": ").append(message());
    String where;
    auto add = [&where](std::string_view label, std::string_view v) {
      where.append(where.empty() ? "" : ", ").append(label).append(" ").append(v);
    };
    char digits[24];
    const auto number = [&digits](std::uint64_t v) {
      std::size_t n = sizeof(digits);
      do digits[--n] = static_cast<char>('0' + v % 10), v /= 10;
      while (v != 0);
      return std::string_view(digits + n, sizeof(digits) - n);
    };
    if (context.chunk_index != no_index) add("chunk", number(context.chunk_index));
    if (context.chunk_type != 0) add("type", number(context.chunk_type));
    if (context.record_index != no_index) add("record", number(context.record_index));
    if (context.field != nullptr) add("field", context.field);
    if (context.has_value) add("value", number(context.value));
    if (context.has_limit) add("limit", number(context.limit));
    if (context.offset != no_offset) add("offset", number(context.offset));
    if (!subject().empty()) {
      where.append(where.empty() ? "" : ", ").append("name '").append(subject()).append("'");
    }
    if (!where.empty()) s.append(" (").append(where).append(")");
    return s;
  }
};

/// Builds an error with context fields in spec order.
[[nodiscard]] constexpr error make_error(errc code, error_context ctx = {}) noexcept { return error{code, ctx}; }

/// Either a T or an error of type E. Deliberately small: no exceptions, no
/// RTTI. Accessing the value of a failed result is a precondition violation,
/// trapped by assert() in debug builds.
/// E is any error type whose value-initialised `code` means "no error"
/// (untold::error here, untold::remote::error for the remote layer).
/// The value lives in a union rather than a std::optional<T>: every result<T>
/// type instantiated std::optional's layered bases and traits, about 20 % of
/// the compile time of the reader headers (docs/compile-time.md). Copy and
/// move behave as std::optional's.
template <class T, class E>
class [[nodiscard]] basic_result {
 public:
  basic_result(T value) noexcept(__is_nothrow_constructible(T, T&&)) : has_value_(true) {  // NOLINT
    construct(std::move(value));
  }
  basic_result(E e) noexcept : error_(std::move(e)) {}  // NOLINT

  basic_result(const basic_result& other) noexcept(__is_nothrow_constructible(T, const T&))
    requires __is_constructible(T, const T&)
      : error_(other.error_), has_value_(other.has_value_) {
    if (has_value_) construct(other.value_);
  }
  basic_result(basic_result&& other) noexcept(__is_nothrow_constructible(T, T&&))
    requires __is_constructible(T, T&&)
      : error_(std::move(other.error_)), has_value_(other.has_value_) {
    if (has_value_) construct(std::move(other.value_));
  }
  basic_result& operator=(const basic_result& other)
    requires __is_constructible(T, const T&) && __is_assignable(T&, const T&)
  {
    assign(other.has_value_, other.value_);
    error_ = other.error_;
    return *this;
  }
  basic_result& operator=(basic_result&& other) noexcept(__is_nothrow_constructible(T, T&&) &&
                                                         __is_nothrow_assignable(T&, T&&))
    requires __is_constructible(T, T&&) && __is_assignable(T&, T&&)
  {
    assign(other.has_value_, std::move(other.value_));
    error_ = std::move(other.error_);
    return *this;
  }
  ~basic_result() {
    if (has_value_) value_.~T();
  }

  [[nodiscard]] bool has_value() const noexcept { return has_value_; }
  explicit operator bool() const noexcept { return has_value(); }

  [[nodiscard]] T& value() & noexcept { return checked(), value_; }
  [[nodiscard]] const T& value() const& noexcept { return checked(), value_; }
  [[nodiscard]] T&& value() && noexcept { return checked(), std::move(value_); }
  T& operator*() & noexcept { return checked(), value_; }
  const T& operator*() const& noexcept { return checked(), value_; }
  T&& operator*() && noexcept { return checked(), std::move(value_); }
  T* operator->() noexcept { return checked(), &value_; }
  const T* operator->() const noexcept { return checked(), &value_; }

  [[nodiscard]] const E& error() const noexcept { return error_; }

 private:
  void checked() const noexcept { assert(has_value_ && "untold: value of a failed result"); }
  template <class U>
  void construct(U&& v) {
    ::new (static_cast<void*>(&value_)) T(std::forward<U>(v));
  }
  // std::optional's assignment: assign value to value, else construct or destroy.
  template <class U>
  void assign(bool other_has_value, U&& v) {
    if (has_value_ && other_has_value) {
      value_ = std::forward<U>(v);
    } else if (other_has_value) {
      construct(std::forward<U>(v));
      has_value_ = true;
    } else if (has_value_) {
      value_.~T();
      has_value_ = false;
    }
  }

  union {
    T value_;
  };
  E error_{};
  bool has_value_ = false;
};

/// Success or an error of type E.
template <class E>
class [[nodiscard]] basic_result<void, E> {
 public:
  basic_result() noexcept = default;
  basic_result(E e) noexcept : error_(std::move(e)) {}  // NOLINT
  [[nodiscard]] bool has_value() const noexcept { return error_.code == decltype(error_.code){}; }
  explicit operator bool() const noexcept { return has_value(); }
  [[nodiscard]] const E& error() const noexcept { return error_; }

 private:
  E error_{};
};

template <class T>
using result = basic_result<T, error>;
using status = result<void>;

}  // namespace untold

/// Propagates the error of a status/result expression.
#define UNTOLD_TRY(expr)                                        \
  do {                                                          \
    if (auto untold_try_status_ = (expr); !untold_try_status_) \
      return untold_try_status_.error();                        \
  } while (false)
