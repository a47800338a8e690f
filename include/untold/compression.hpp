// untold/compression.hpp - chunk codecs (spec section 5, rule R-DECOMPRESS).
//
//   none (0): stored bytes are the payload.
//   lz4  (1): one raw LZ4 block (no frame, no size prefix).
//   zstd (2): exactly one standard zstd frame, nothing after it.
//   meshopt (3), meshopt+zstd (4): the library's extension for VERTEX_DATA
//            and INDEX_DATA, a stream directory then meshoptimizer streams
//            (each zstd-framed for 4): mesh_codec.hpp.
//
// Decoding is strict: a chunk must decode to exactly its declared
// uncompressedSize AND consume exactly its compressedSize, otherwise it is
// rejected with errc::decompress_failed. A codec this build was compiled
// without (UNTOLD_HAS_LZ4 / UNTOLD_HAS_ZSTD not set or 0) reports
// errc::compression_unsupported instead, so the header always compiles.
//
// UNTOLD_EXTERNAL_CODECS: a build with no liblz4/libzstd (WebAssembly, a
// console with a hardware zstd decoder) may define it and provide
//   extern "C" int untold_external_decode(uint32_t method, const void* stored,
//       size_t stored_size, void* out, size_t out_size, uint64_t size);
// which decodes lz4 (1) and zstd (2) chunks the library cannot. `size` is the
// chunk's declared uncompressedSize (within the reader's limits). Return 0
// when `stored` (one raw LZ4 block / exactly one zstd frame, nothing after it)
// decodes to exactly `size` bytes, written to `out` (out_size == size), or,
// for out_size < size (decompress_into asking whether the data delivers that
// much before it allocates more), to at least out_size bytes, the first
// out_size written (the decoder may stop there); else nonzero. Never write
// outside `out`; allocate what the declared size allows, not what the data
// claims. Its answer is trusted: the strictness above is the hook's duty. A
// codec the library has natively is never sent to it, and encoding stays
// unsupported (compression_available() is false for these codecs).
//
// R-LIMITS: decompress() writes into a buffer the caller sized from the
// chunk's uncompressedSize; the caller checks its limits before allocating
// it. decompress_into() sizes the buffer itself and grows it only as the
// stored bytes prove they decode that far, so a chunk that declares more
// than its data delivers fails after allocating about what the data really
// produced (at most twice that, plus 256 KiB), never the declared size.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "bytes.hpp"
#include "error.hpp"
#include "format.hpp"
#include "mesh_codec.hpp"

#if defined(UNTOLD_HAS_LZ4) && UNTOLD_HAS_LZ4
#define UNTOLD_DETAIL_LZ4 1
#include <lz4.h>
#include <lz4hc.h>
#else
#define UNTOLD_DETAIL_LZ4 0
#endif

#if defined(UNTOLD_HAS_ZSTD) && UNTOLD_HAS_ZSTD
#define UNTOLD_DETAIL_ZSTD 1
// The buffer-less block API (ZSTD_decompressBegin/Continue) lives in zstd.h's
// static section; every libzstd since 1.0 exports it. zstd.h may be included
// again after a plain include: the section has its own guard.
#ifndef ZSTD_STATIC_LINKING_ONLY
#define ZSTD_STATIC_LINKING_ONLY
#define UNTOLD_DETAIL_UNDEF_ZSTD_STATIC
#endif
#include <zstd.h>
#ifdef UNTOLD_DETAIL_UNDEF_ZSTD_STATIC
#undef ZSTD_STATIC_LINKING_ONLY
#undef UNTOLD_DETAIL_UNDEF_ZSTD_STATIC
#endif
#else
#define UNTOLD_DETAIL_ZSTD 0
#endif

#ifdef UNTOLD_EXTERNAL_CODECS
extern "C" int untold_external_decode(std::uint32_t method, const void* stored, std::size_t stored_size, void* out,
                                      std::size_t out_size, std::uint64_t size) noexcept;
#endif

namespace untold {

/// True when this build can decode and encode `method`. Unknown methods are
/// never available.
[[nodiscard]] constexpr bool compression_available(compression method) noexcept {
  switch (method) {
    case compression::none: return true;
    case compression::lz4: return UNTOLD_DETAIL_LZ4 != 0;
    case compression::zstd: return UNTOLD_DETAIL_ZSTD != 0;
    case compression::meshopt: return UNTOLD_DETAIL_MESHOPT != 0;
    case compression::meshopt_zstd: return UNTOLD_DETAIL_MESHOPT != 0 && UNTOLD_DETAIL_ZSTD != 0;
  }
  return false;
}

namespace detail {

[[nodiscard]] inline error codec_error(errc code, const char* field, std::uint64_t value) noexcept {
  error_context ctx;
  ctx.field = field;
  ctx.value = value;
  ctx.has_value = true;
  return make_error(code, ctx);
}

[[nodiscard]] inline error unknown_method_error(errc code, compression method) noexcept {
  return codec_error(code, "compressionType", static_cast<std::uint32_t>(method));
}

// Codec libraries are handed a real address even for empty spans: a null
// pointer with size 0 is legal for std::span but not promised to be accepted
// (or UB-free) by every C library version.
inline constexpr std::byte empty_buffer_placeholder{};

[[nodiscard]] inline const char* nonnull_src(byte_span s) noexcept {
  return reinterpret_cast<const char*>(s.empty() ? &empty_buffer_placeholder : s.data());
}
[[nodiscard]] inline char* nonnull_dst(mutable_byte_span s, std::byte& scratch) noexcept {
  return reinterpret_cast<char*>(s.empty() ? &scratch : s.data());
}

#ifdef UNTOLD_EXTERNAL_CODECS
/// A chunk through the program's untold_external_decode (see the top of this file).
[[nodiscard]] inline status external_decode(compression method, byte_span stored, mutable_byte_span out,
                                            std::uint64_t size) noexcept {
  std::byte scratch{};
  if (untold_external_decode(static_cast<std::uint32_t>(method), nonnull_src(stored), stored.size(),
                             nonnull_dst(out, scratch), out.size(), size) != 0)
    return codec_error(errc::decompress_failed, "compressedSize", stored.size());
  return {};
}
#endif

#if UNTOLD_DETAIL_ZSTD
/// Owns a zstd context (<memory>'s unique_ptr would cost every reader
/// translation unit 28,000 preprocessed lines).
template <class Ctx, std::size_t (*Free)(Ctx*)>
class zstd_handle {
 public:
  zstd_handle() noexcept = default;
  explicit zstd_handle(Ctx* ctx) noexcept : ctx_(ctx) {}
  zstd_handle(zstd_handle&& other) noexcept : ctx_(other.ctx_) { other.ctx_ = nullptr; }
  zstd_handle& operator=(zstd_handle&& other) noexcept {
    if (this != &other) {
      reset(other.ctx_);
      other.ctx_ = nullptr;
    }
    return *this;
  }
  zstd_handle(const zstd_handle&) = delete;
  zstd_handle& operator=(const zstd_handle&) = delete;
  ~zstd_handle() { reset(nullptr); }
  void reset(Ctx* ctx) noexcept {
    if (ctx_ != nullptr) Free(ctx_);
    ctx_ = ctx;
  }
  [[nodiscard]] Ctx* get() const noexcept { return ctx_; }
  explicit operator bool() const noexcept { return ctx_ != nullptr; }

 private:
  Ctx* ctx_ = nullptr;
};
using zstd_dctx = zstd_handle<ZSTD_DCtx, &ZSTD_freeDCtx>;
using zstd_cctx = zstd_handle<ZSTD_CCtx, &ZSTD_freeCCtx>;
#endif

}  // namespace detail

/// Decodes chunks, keeping codec state (a zstd decompression context) alive
/// between calls so decoding many chunks does not pay a context allocation
/// each time. Not thread-safe: use one per thread (the free function
/// untold::decompress() does exactly that). Move-only.
class decompressor {
 public:
  decompressor() noexcept = default;
  decompressor(decompressor&&) noexcept = default;
  decompressor& operator=(decompressor&&) noexcept = default;
  decompressor(const decompressor&) = delete;
  decompressor& operator=(const decompressor&) = delete;
  ~decompressor() = default;

  /// Decodes `stored` into `out`, resized to exactly `size` bytes (the
  /// chunk's declared uncompressedSize), without allocating `size` up front:
  /// the buffer starts at min(size, max(256 KiB, 4 x stored.size())) and
  /// doubles only after the codec has filled it from the stored bytes
  /// (decoding again from the start: at most about twice the work of one
  /// decode). One buffer is alive at a time, and it is never larger than
  /// max(256 KiB, 4 x stored.size(), twice what the data has been seen to
  /// decode to + 256 KiB), whatever `size` claims. Same result and errors as
  /// decompress() into a buffer of `size` bytes; on failure `out` is empty.
  /// Precondition: `size` fits in memory addressing (size_t) - the reader's
  /// limits ensure it. Safe on untrusted input.
  [[nodiscard]] status decompress_into(compression method, byte_span stored, std::uint64_t size,
                                       std::vector<std::byte>& out) {
    return decode_growing(method, stored, size, out);
  }

  /// The same into a byte_buffer, which is never zero-filled: every byte of
  /// the result is written once, by the decoder (the reader stores decoded
  /// chunks this way). Same preconditions, errors and allocation bound; on
  /// failure `out` is empty. Safe on untrusted input.
  [[nodiscard]] status decompress_into(compression method, byte_span stored, std::uint64_t size, byte_buffer& out) {
    return decode_growing(method, stored, size, out);
  }

  /// Decodes `stored` (a chunk's compressedSize bytes) into `out`, whose size
  /// is the chunk's declared uncompressedSize. Succeeds only when the codec
  /// produces exactly out.size() bytes from exactly stored.size() bytes.
  /// Preconditions: `out` does not overlap `stored`. On failure the contents
  /// of `out` are unspecified.
  /// Errors: decompress_failed (corrupt data, size mismatch, trailing bytes,
  /// sizes beyond the codec API), raw_size_mismatch (none with different
  /// sizes, R-RAW-SIZE), unknown_compression, compression_unsupported.
  /// Safe on untrusted input: never reads or writes outside the two spans.
  [[nodiscard]] status decompress(compression method, byte_span stored, mutable_byte_span out) noexcept {
    switch (method) {
      case compression::none:
        if (stored.size() != out.size()) return detail::codec_error(errc::raw_size_mismatch, "compressedSize", stored.size());
        if (!out.empty()) std::memcpy(out.data(), stored.data(), out.size());
        return {};
      case compression::lz4:
        return decode_lz4(stored, out);
      case compression::zstd:
        return decode_zstd(stored, out);
      case compression::meshopt:
      case compression::meshopt_zstd:
        return decode_mesh_codec(method, stored, out);
    }
    return detail::unknown_method_error(errc::unknown_compression, method);
  }

  /// Decodes one stream of a meshopt chunk (`s` from its directory,
  /// for_each_codec_stream; `stored` its s.stored_size bytes) into `out`,
  /// exactly s.raw_size() bytes: a mesh loaded by byte range decodes its
  /// own streams only. For meshopt+zstd the frame must declare its content
  /// size, at most the codec's bound and at least 1/64 of the stream.
  /// Errors: decompress_failed, compression_unsupported. Safe on untrusted
  /// input.
  [[nodiscard]] status decompress_stream(compression method, const codec_stream& s, byte_span stored,
                                         mutable_byte_span out) noexcept {
    if (out.size() != s.raw_size()) return detail::codec_error(errc::decompress_failed, "uncompressedSize", out.size());
    if (method == compression::meshopt) return decode_codec_stream(s, stored, out, &field_scratch_);
    if (method != compression::meshopt_zstd) return detail::unknown_method_error(errc::unknown_compression, method);
#if UNTOLD_DETAIL_ZSTD
    const auto magic = load_le<std::uint32_t>(stored, 0);
    if (!magic || *magic != ZSTD_MAGICNUMBER)
      return detail::codec_error(errc::decompress_failed, "storedSize", stored.size());
    const unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
    if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN || declared == 0 ||
        declared > codec_encoded_bound(s) || s.raw_size() > declared * codec_max_expansion ||
        (is_plain_kind(s.kind) && declared != s.raw_size()))
      return detail::codec_error(errc::decompress_failed, "storedSize", stored.size());
    if (s.kind == codec_stream_kind::raw) return decode_zstd(stored, out);  // declared == raw_size, checked above
    // words: the frame holds the grouped form, the codec step regroups it
    if (scratch_.size() < declared) scratch_ = byte_buffer(static_cast<std::size_t>(declared));
    const mutable_byte_span encoded(scratch_.data(), static_cast<std::size_t>(declared));
    UNTOLD_TRY(decode_zstd(stored, encoded));
    return decode_codec_stream(s, encoded, out, &field_scratch_);
#else
    return detail::unknown_method_error(errc::compression_unsupported, method);
#endif
  }

 private:
  // The largest output of one zstd block (Block_Maximum_Size, RFC 8878 3.1.1.2.4).
  static constexpr std::uint64_t zstd_block_max = std::uint64_t{128} << 10;

  // Replaces `out` with `size` bytes: a vector zero-filled, a byte_buffer not.
  static void reallocate(std::vector<std::byte>& out, std::uint64_t size) {
    out = {};
    out.resize(static_cast<std::size_t>(size));
  }
  static void reallocate(byte_buffer& out, std::uint64_t size) {
    out = {};  // free the old one first: one buffer alive at a time
    out = byte_buffer(static_cast<std::size_t>(size));
  }

  // decompress_into for either buffer type (see there).
  template <class Buffer>
  status decode_growing(compression method, byte_span stored, std::uint64_t size, Buffer& out) {
    out = {};
    if (method == compression::none && size != stored.size())
      return detail::codec_error(errc::raw_size_mismatch, "compressedSize", stored.size());
    if (!is_known_compression(static_cast<std::uint32_t>(method)))
      return detail::unknown_method_error(errc::unknown_compression, method);
    if (is_mesh_codec(method)) {  // the directory proves the size before anything is allocated
      const auto end = codec_payload_size(method, stored);
      if (!end) return end.error();
      if (*end != size) return detail::codec_error(errc::decompress_failed, "uncompressedSize", size);
    } else if (method != compression::none) {
      constexpr std::uint64_t first_capacity = std::uint64_t{256} << 10;
      std::uint64_t capacity = std::max(first_capacity, std::uint64_t{stored.size()} * 4);
      for (; capacity < size; capacity = std::max(capacity * 2, capacity + zstd_block_max)) {
        reallocate(out, capacity);
        const status filled = fill_prefix(method, stored, out, size);
        out = {};  // the next attempt decodes from the start: free this one first
        if (!filled) return filled;
      }
    }
    reallocate(out, size);
    status s = decompress(method, stored, out);
    if (!s) out = {};
    return s;
  }

  // Succeeds when the stored bytes decode to at least `out.size()` bytes (the
  // first ones land in `out`); fails with decompress_failed when they end
  // earlier or are corrupt before that point. For zstd "at least" is "all
  // blocks that surely fit did, and the next may not": out.size() minus one
  // block. Used by decompress_into, which always ends with a strict decode
  // of the chunk's declared `size`.
  status fill_prefix(compression method, byte_span stored, mutable_byte_span out, [[maybe_unused]] std::uint64_t size) {
#if UNTOLD_DETAIL_LZ4
    if (method == compression::lz4) {
      if (stored.empty() || stored.size() > static_cast<std::size_t>(INT_MAX) ||
          out.size() > static_cast<std::size_t>(INT_MAX))
        return detail::codec_error(errc::decompress_failed, "compressedSize", stored.size());
      // srcSize is the exact block (the whole stored chunk), so any
      // targetOutputSize is allowed (lz4.h, LZ4_decompress_safe_partial, note 4).
      const int target = static_cast<int>(out.size());
      const int produced = LZ4_decompress_safe_partial(detail::nonnull_src(stored),
                                                       reinterpret_cast<char*>(out.data()),
                                                       static_cast<int>(stored.size()), target, target);
      if (produced < 0) return detail::codec_error(errc::decompress_failed, "compressedSize", stored.size());
      if (produced < target) return detail::codec_error(errc::decompress_failed, "uncompressedSize", produced);
      return {};
    }
#endif
#if UNTOLD_DETAIL_ZSTD
    if (method == compression::zstd) return fill_prefix_zstd(stored, out);
#endif
#ifdef UNTOLD_EXTERNAL_CODECS
    if (method == compression::lz4 || method == compression::zstd) return detail::external_decode(method, stored, out, size);
#endif
    return decompress(method, stored, out);  // a codec this build lacks: report it the usual way
  }

#if UNTOLD_DETAIL_ZSTD
  // Block by block with zstd's buffer-less API, which keeps no window of its
  // own (ZSTD_decompressStream would allocate one as large as a
  // single-segment frame's declared size) and writes straight into `out`.
  // A block is decoded only when its largest output (its Block_Size when
  // raw or RLE, 128 KiB when compressed) fits what is left of `out`.
  status fill_prefix_zstd(byte_span stored, mutable_byte_span out) {
    const auto corrupt = [&] { return detail::codec_error(errc::decompress_failed, "compressedSize", stored.size()); };
    const auto magic = load_le<std::uint32_t>(stored, 0);
    if (!magic || *magic != ZSTD_MAGICNUMBER) return corrupt();
    if (!zstd_) zstd_.reset(ZSTD_createDCtx());
    if (!zstd_) return detail::codec_error(errc::decompress_failed, "ZSTD_createDCtx", 0);
    if (ZSTD_isError(ZSTD_decompressBegin(zstd_.get()))) return corrupt();
    std::size_t read = 0, written = 0;
    for (;;) {
      const std::size_t want = ZSTD_nextSrcSizeToDecompress(zstd_.get());
      if (want == 0)  // the frame ended before filling `out`
        return detail::codec_error(errc::decompress_failed, "uncompressedSize", written);
      if (stored.size() - read < want) return corrupt();
      const ZSTD_nextInputType_e kind = ZSTD_nextInputType(zstd_.get());
      if (kind == ZSTDnit_block || kind == ZSTDnit_lastBlock) {
        // The 3 bytes before a block's content are its header.
        const std::uint32_t header = static_cast<std::uint32_t>(stored[read - 3]) |
                                     static_cast<std::uint32_t>(stored[read - 2]) << 8 |
                                     static_cast<std::uint32_t>(stored[read - 1]) << 16;
        const std::uint64_t most = ((header >> 1) & 3u) == 2 ? zstd_block_max : header >> 3;
        if (most > out.size() - written) return {};
      }
      const std::size_t produced =
          ZSTD_decompressContinue(zstd_.get(), out.data() + written, out.size() - written, stored.data() + read, want);
      if (ZSTD_isError(produced)) return corrupt();
      read += want;
      written += produced;
    }
  }
#endif

  // The directory is checked whole (and its end against out.size()) before
  // any stream is decoded; gaps are zero.
  status decode_mesh_codec(compression method, byte_span stored, mutable_byte_span out) noexcept {
    if (!compression_available(method)) return detail::unknown_method_error(errc::compression_unsupported, method);
    const auto end = codec_payload_size(method, stored);
    if (!end) return end.error();
    if (*end != out.size()) return detail::codec_error(errc::decompress_failed, "uncompressedSize", out.size());
    std::uint64_t written = 0;
    return for_each_codec_stream(method, stored, stored.size(), [&](std::uint32_t i, const codec_stream& s) -> status {
      if (s.raw_offset > written) std::memset(out.data() + written, 0, static_cast<std::size_t>(s.raw_offset - written));
      written = s.raw_end();
      status st = decompress_stream(method, s, stored.subspan(static_cast<std::size_t>(s.stored_offset),
                                                              static_cast<std::size_t>(s.stored_size)),
                                    out.subspan(static_cast<std::size_t>(s.raw_offset), static_cast<std::size_t>(s.raw_size())));
      if (st) return st;
      error e = st.error();
      e.context.record_index = i;
      return e;
    });
  }

  static status decode_lz4([[maybe_unused]] byte_span stored, [[maybe_unused]] mutable_byte_span out) noexcept {
#if UNTOLD_DETAIL_LZ4
    // The LZ4 block API counts in int.
    if (stored.size() > static_cast<std::size_t>(INT_MAX))
      return detail::codec_error(errc::decompress_failed, "compressedSize", stored.size());
    if (out.size() > static_cast<std::size_t>(INT_MAX))
      return detail::codec_error(errc::decompress_failed, "uncompressedSize", out.size());
    // Why LZ4_decompress_safe alone proves "exactly stored.size() consumed":
    // its compressedSize argument is documented as "the exact complete size of
    // the compressed block", and the decoder's only successful exit is the
    // final literal run, which it accepts only if that run ends exactly at
    // src + compressedSize ("input must be consumed"); a block followed by
    // trailing bytes therefore fails. The returned count then proves the
    // output size (dstCapacity is only an upper bound, so a short decode
    // returns less than out.size()). tests/unit/test_compression.cpp checks
    // both directions (truncated and trailing-garbage blocks).
    // (LZ4_decompress_safe_partial would not do: it may stop early.)
    if (stored.empty()) return detail::codec_error(errc::decompress_failed, "compressedSize", 0);
    std::byte scratch{};
    const int produced = LZ4_decompress_safe(detail::nonnull_src(stored), detail::nonnull_dst(out, scratch),
                                             static_cast<int>(stored.size()), static_cast<int>(out.size()));
    if (produced < 0) return detail::codec_error(errc::decompress_failed, "compressedSize", stored.size());
    if (static_cast<std::size_t>(produced) != out.size())
      return detail::codec_error(errc::decompress_failed, "uncompressedSize", out.size());
    return {};
#elif defined(UNTOLD_EXTERNAL_CODECS)
    return detail::external_decode(compression::lz4, stored, out, out.size());
#else
    return detail::unknown_method_error(errc::compression_unsupported, compression::lz4);
#endif
  }

  status decode_zstd([[maybe_unused]] byte_span stored, [[maybe_unused]] mutable_byte_span out) noexcept {
#if UNTOLD_DETAIL_ZSTD
    // Only a standard frame: this rejects skippable frames (which zstd would
    // happily "decode" to nothing) and legacy formats some builds still read.
    const auto magic = load_le<std::uint32_t>(stored, 0);
    if (!magic || *magic != ZSTD_MAGICNUMBER)
      return detail::codec_error(errc::decompress_failed, "compressedSize", stored.size());
    const unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
    if (declared == ZSTD_CONTENTSIZE_ERROR)
      return detail::codec_error(errc::decompress_failed, "compressedSize", stored.size());
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != out.size())
      return detail::codec_error(errc::decompress_failed, "uncompressedSize", declared);
    // Exactly one frame spanning all stored bytes: no second frame, no tail.
    const std::size_t frame_size = ZSTD_findFrameCompressedSize(stored.data(), stored.size());
    if (ZSTD_isError(frame_size) || frame_size != stored.size())
      return detail::codec_error(errc::decompress_failed, "compressedSize", stored.size());
    if (!zstd_) zstd_.reset(ZSTD_createDCtx());
    // Allocation failure is not the file's fault, but there is nothing else
    // to report it as here; the context field names the cause.
    if (!zstd_) return detail::codec_error(errc::decompress_failed, "ZSTD_createDCtx", 0);
    std::byte scratch{};
    const std::size_t produced =
        ZSTD_decompressDCtx(zstd_.get(), detail::nonnull_dst(out, scratch), out.size(), stored.data(), stored.size());
    if (ZSTD_isError(produced)) return detail::codec_error(errc::decompress_failed, "compressedSize", stored.size());
    if (produced != out.size()) return detail::codec_error(errc::decompress_failed, "uncompressedSize", out.size());
    return {};
#elif defined(UNTOLD_EXTERNAL_CODECS)
    return detail::external_decode(compression::zstd, stored, out, out.size());
#else
    return detail::unknown_method_error(errc::compression_unsupported, compression::zstd);
#endif
  }

#if UNTOLD_DETAIL_ZSTD
  detail::zstd_dctx zstd_;  // created on first zstd chunk
  byte_buffer scratch_;     // one meshopt+zstd stream's meshoptimizer bytes
#endif
  byte_buffer field_scratch_;  // one vertex-coded field of a fields stream, before it is put in place
};

namespace detail {
/// What the blocks of the zstd frame starting `frame` (magic already checked)
/// regenerate at most: raw and RLE blocks their Block_Size, compressed blocks
/// 128 KiB. Walks the frame header and the block headers only (RFC 8878
/// 3.1.1), O(blocks); 0 when they are malformed or run past the end.
[[nodiscard]] inline std::uint64_t zstd_blocks_bound(byte_span frame) noexcept {
  if (frame.size() < 5) return 0;
  const auto descriptor = static_cast<std::uint8_t>(frame[4]);
  const unsigned content_size_flag = descriptor >> 6, dictionary_flag = descriptor & 3u;
  const bool single_segment = (descriptor & 0x20u) != 0;
  constexpr std::size_t dictionary_bytes[] = {0, 1, 2, 4}, content_size_bytes[] = {0, 2, 4, 8};
  std::size_t at = 5 + (single_segment ? 0 : 1) + dictionary_bytes[dictionary_flag] +
                   (content_size_flag == 0 && single_segment ? 1 : content_size_bytes[content_size_flag]);
  std::uint64_t total = 0;
  for (;;) {
    if (at > frame.size() || frame.size() - at < 3) return 0;
    const std::uint32_t header = static_cast<std::uint32_t>(frame[at]) | static_cast<std::uint32_t>(frame[at + 1]) << 8 |
                                 static_cast<std::uint32_t>(frame[at + 2]) << 16;
    at += 3;
    const unsigned type = (header >> 1) & 3u;  // 0 raw, 1 RLE, 2 compressed, 3 reserved
    const std::uint32_t size = header >> 3;
    const std::size_t content = type == 1 ? 1 : size;
    if (type == 3 || frame.size() - at < content) return 0;
    at += content;
    total += type == 2 ? std::uint64_t{128} * 1024 : size;  // at most 2^21 per 3 bytes: no overflow
    if ((header & 1u) != 0) return total;  // Last_Block
  }
}
}  // namespace detail

/// The most bytes `stored` can decode to with `method`, from the codec's
/// format alone: a reader rejects a larger uncompressedSize before allocating
/// it, so a small file cannot make it allocate up to its limits.
///   none: stored.size();
///   lz4:  256 x stored.size() (a match of n stored bytes yields at most
///         19 + 255 x (n - 3) bytes, a literal one byte per byte);
///   zstd: the sum over the frame's blocks (read from their 3-byte headers,
///         RFC 8878) of a raw or RLE block's Block_Size and a compressed
///         block's Block_Maximum_Size (128 KiB, which the format applies to
///         the decompressed size too), or the frame's declared content size
///         when that is less (decoding must produce exactly it); 0 when the
///         bytes are not one well-formed standard frame (decoding fails);
///   meshopt, meshopt+zstd: where the directory's last stream ends, once the
///         directory and each stream's 64x bound (of its zstd frame's bound
///         for 4) hold; 0 when they do not.
/// Never below what a successful decompress() produces (fuzz_decompress
/// checks this); UINT64_MAX for a codec this build lacks or an unknown method,
/// so decompress() reports those. Safe on untrusted input.
[[nodiscard]] inline std::uint64_t max_decoded_size(compression method, byte_span stored) noexcept {
  constexpr std::uint64_t unknown = ~std::uint64_t{0};
  switch (method) {
    case compression::none: return stored.size();
    case compression::lz4: return UNTOLD_DETAIL_LZ4 ? checked_mul(stored.size(), 256).value_or(unknown) : unknown;
    case compression::meshopt:
    case compression::meshopt_zstd: {
      if (!compression_available(method)) return unknown;
      std::uint64_t end = 0;
      const status ok = for_each_codec_stream(method, stored, stored.size(), [&](std::uint32_t, const codec_stream& s) -> status {
        if (method == compression::meshopt_zstd) {  // the frame's own bound, then the codec's
          const byte_span frame = stored.subspan(static_cast<std::size_t>(s.stored_offset), static_cast<std::size_t>(s.stored_size));
          if (s.raw_size() > max_decoded_size(compression::zstd, frame) * codec_max_expansion)
            return detail::codec_error(errc::decompress_failed, "storedSize", s.stored_size);
        }
        end = s.raw_end();
        return {};
      });
      return ok ? end : 0;
    }
    case compression::zstd: {
#if UNTOLD_DETAIL_ZSTD
      const auto magic = load_le<std::uint32_t>(stored, 0);
      if (!magic || *magic != ZSTD_MAGICNUMBER) return 0;
      const unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
      if (declared == ZSTD_CONTENTSIZE_ERROR) return 0;
      const std::uint64_t blocks = detail::zstd_blocks_bound(stored);
      return declared == ZSTD_CONTENTSIZE_UNKNOWN ? blocks : std::min<std::uint64_t>(declared, blocks);
#else
      return unknown;
#endif
    }
  }
  return unknown;
}

/// decompressor::decompress() through a per-thread decompressor, so callers
/// get context reuse without managing one. Same contract: `out.size()` is the
/// declared uncompressedSize; succeeds only on an exact decode.
/// Safe on untrusted input; thread-safe.
namespace detail {
[[nodiscard]] inline decompressor& thread_decompressor() noexcept {
  thread_local decompressor per_thread;
  return per_thread;
}
}  // namespace detail

template <class = void>
[[nodiscard]] status decompress(compression method, byte_span stored, mutable_byte_span out) noexcept {
  return detail::thread_decompressor().decompress(method, stored, out);
}

/// decompressor::decompress_into() through a per-thread decompressor: decodes
/// `stored` into `out` resized to `size`, growing the buffer only as the data
/// delivers bytes. Safe on untrusted input; thread-safe.
template <class = void>
[[nodiscard]] status decompress_into(compression method, byte_span stored, std::uint64_t size,
                                     std::vector<std::byte>& out) {
  return detail::thread_decompressor().decompress_into(method, stored, size, out);
}
/// The same into an uninitialised byte_buffer (never zero-filled). Safe on
/// untrusted input; thread-safe.
template <class = void>
[[nodiscard]] status decompress_into(compression method, byte_span stored, std::uint64_t size, byte_buffer& out) {
  return detail::thread_decompressor().decompress_into(method, stored, size, out);
}

#if UNTOLD_DETAIL_ZSTD
namespace detail {

/// A compression context with every parameter that affects the bytes set
/// explicitly, so the output does not depend on library defaults changing
/// (threads would also make it depend on timing); the pledged size puts the
/// content size in the frame. Null on failure.
template <class = void>
[[nodiscard]] zstd_cctx zstd_context(int level, std::uint64_t size) noexcept {
  zstd_cctx cctx(ZSTD_createCCtx());
  if (cctx && (ZSTD_isError(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, level)) ||
               ZSTD_isError(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_contentSizeFlag, 1)) ||
               ZSTD_isError(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_checksumFlag, 0)) ||
               ZSTD_isError(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_dictIDFlag, 0)) ||
               ZSTD_isError(ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_nbWorkers, 0)) ||
               ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx.get(), size))))
    return zstd_cctx(nullptr);
  return cctx;
}

/// The format's readers rely on a declared size: proves it is there.
[[nodiscard]] inline bool zstd_declares(byte_span frame, std::uint64_t size) noexcept {
  return ZSTD_getFrameContentSize(frame.data(), frame.size()) == size;
}

/// One zstd frame of `raw` in one call (ZSTD_compress2), into uninitialised
/// scratch of the codec's bound (only the pages the frame fills become
/// resident), copied out at its exact size.
template <class = void>
[[nodiscard]] result<std::vector<std::byte>> zstd_compress(int level, byte_span raw) {
  const zstd_cctx cctx = zstd_context(level, raw.size());
  if (!cctx) return codec_error(errc::encode_failed, "level", static_cast<std::uint64_t>(level));
  const std::size_t bound = ZSTD_compressBound(raw.size());
  if (ZSTD_isError(bound)) return codec_error(errc::encode_failed, "uncompressedSize", raw.size());
  byte_buffer scratch(bound);
  const std::size_t written = ZSTD_compress2(cctx.get(), scratch.data(), bound, nonnull_src(raw), raw.size());
  if (ZSTD_isError(written) || !zstd_declares(byte_span(scratch.data(), written), raw.size()))
    return codec_error(errc::encode_failed, "uncompressedSize", raw.size());
  return std::vector<std::byte>(scratch.data(), scratch.data() + written);
}

/// One zstd frame of the concatenation of `pieces`, streamed (the pieces are
/// never gathered; the last one ends the frame) into a vector that reserves
/// the codec's bound as address space and grows into it: only the frame's
/// own pages become resident.
template <class = void>
[[nodiscard]] result<std::vector<std::byte>> zstd_compress(int level, std::span<const byte_span> pieces) {
  std::uint64_t total = 0;
  for (const byte_span piece : pieces) total += piece.size();
  const zstd_cctx cctx = zstd_context(level, total);
  if (!cctx) return codec_error(errc::encode_failed, "level", static_cast<std::uint64_t>(level));
  const std::size_t bound = ZSTD_compressBound(static_cast<std::size_t>(total));
  if (ZSTD_isError(bound)) return codec_error(errc::encode_failed, "uncompressedSize", total);
  std::vector<std::byte> out;
  out.reserve(bound);
  const std::size_t step = ZSTD_CStreamOutSize();
  std::size_t used = 0;
  // Feeds `in` until zstd took all of it (continue) or closed the frame (end).
  const auto feed = [&](byte_span piece, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{nonnull_src(piece), piece.size(), 0};
    for (;;) {
      if (out.size() - used < step) out.resize(out.size() + step);  // inside the reservation but at worst the last step
      ZSTD_outBuffer o{out.data(), out.size(), used};
      const std::size_t left = ZSTD_compressStream2(cctx.get(), &o, &in, mode);
      if (ZSTD_isError(left)) return false;
      used = o.pos;
      if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size) return true;
    }
  };
  for (std::size_t k = 0; k < pieces.size() || k == 0; ++k) {
    const bool last = k + 1 >= pieces.size();
    if (!feed(pieces.empty() ? byte_span{} : pieces[k], last ? ZSTD_e_end : ZSTD_e_continue))
      return codec_error(errc::encode_failed, "uncompressedSize", total);
  }
  out.resize(used);
  if (!zstd_declares(out, total)) return codec_error(errc::encode_failed, "uncompressedSize", total);
  return out;
}

}  // namespace detail
#endif

#if UNTOLD_DETAIL_LZ4
namespace detail {

/// One raw LZ4 block of `raw` (level <= 0: LZ4_compress_default, else LZ4HC)
/// in uninitialised scratch of the codec's bound: only the pages the block
/// fills become resident. `size`: the block's.
struct lz4_block {
  byte_buffer bytes;
  std::size_t size = 0;
};
template <class = void>
[[nodiscard]] result<lz4_block> lz4_compress(int level, byte_span raw) {
  if (raw.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE))
    return codec_error(errc::encode_failed, "uncompressedSize", raw.size());
  const int src_size = static_cast<int>(raw.size());
  const int bound = LZ4_compressBound(src_size);
  if (bound <= 0) return codec_error(errc::encode_failed, "uncompressedSize", raw.size());
  lz4_block block{byte_buffer(static_cast<std::size_t>(bound))};
  char* dst = reinterpret_cast<char*>(block.bytes.data());
  const int written = level <= 0 ? LZ4_compress_default(nonnull_src(raw), dst, src_size, bound)
                                 : LZ4_compress_HC(nonnull_src(raw), dst, src_size, bound, level);
  if (written <= 0) return codec_error(errc::encode_failed, "uncompressedSize", raw.size());
  block.size = static_cast<std::size_t>(written);
  return block;
}

}  // namespace detail
#endif

/// Compresses `raw` into a new buffer as the format stores it:
///   none -> a copy (level ignored);
///   lz4  -> a raw block: level <= 0 uses LZ4_compress_default, level > 0
///           uses LZ4HC at that level (the library caps it at its maximum);
///   zstd -> one frame declaring its content size, no checksum (the file's
///           contentHash covers integrity); level 0 = zstd's default, out of
///           range levels are clamped by zstd.
/// Output is deterministic for a given codec library version and level.
/// Does not apply the writer's "keep only if smaller" rule. Memory: the
/// codec writes into uninitialised scratch of its worst-case bound (only the
/// pages it fills become resident) and the result is a copy of exactly the
/// compressed size, never a zero-filled bound-size buffer.
/// Errors: encode_failed (codec failure, lz4 input above LZ4_MAX_INPUT_SIZE),
/// compression_unsupported (codec compiled out), invalid_argument (unknown
/// method). `raw` is trusted writer input (any bytes are fine).
template <class = void>
[[nodiscard]] result<std::vector<std::byte>> compress(compression method, [[maybe_unused]] int level,
                                                      byte_span raw) {
  switch (method) {
    case compression::none:
      return std::vector<std::byte>(raw.begin(), raw.end());
    case compression::lz4: {
#if UNTOLD_DETAIL_LZ4
      auto block = detail::lz4_compress(level, raw);
      if (!block) return block.error();
      return std::vector<std::byte>(block->bytes.data(), block->bytes.data() + block->size);
#else
      return detail::unknown_method_error(errc::compression_unsupported, method);
#endif
    }
    case compression::zstd:
#if UNTOLD_DETAIL_ZSTD
      return detail::zstd_compress(level, raw);
#else
      return detail::unknown_method_error(errc::compression_unsupported, method);
#endif
    case compression::meshopt:
    case compression::meshopt_zstd:  // needs the element sizes: compress_streams
      return detail::unknown_method_error(errc::invalid_argument, method);
  }
  return detail::unknown_method_error(errc::invalid_argument, method);
}

namespace detail {

/// The `fields` form of vertex stream `in` cut as `split` (field sizes):
/// each field stored as the smallest of the vertex codec, raw and words
/// (each measured after zstd at `level` for meshopt+zstd, as it is for
/// meshopt; ties keep the earlier). The stream's type-3 bytes.
template <class = void>
[[nodiscard]] result<std::vector<std::byte>> encode_fields_stream([[maybe_unused]] compression method, [[maybe_unused]] int level,
                                                                  const codec_input& in,
                                                                  std::span<const std::uint8_t> split) {
  std::vector<codec_field> fields;
  std::vector<std::vector<std::byte>> forms;
  std::size_t offset = 0;
  for (const std::uint8_t size : split) {
    const std::vector<std::byte> field = gather_field(in.bytes, in.element_size, offset, size);
    offset += size;
    std::vector<std::byte> best;
    std::size_t best_measure = 0;
    codec_field chosen{size, codec_stream_kind::raw};
    for (const codec_stream_kind kind : {codec_stream_kind::vertex, codec_stream_kind::raw, codec_stream_kind::words}) {
      if (!codec_field_fits(kind, size) || (kind == codec_stream_kind::words && size == 4)) continue;
      auto form = encode_field(field, size, kind);
      if (!form) return form.error();
      std::size_t measure = form->size();
#if UNTOLD_DETAIL_ZSTD
      if (method == compression::meshopt_zstd) {
        auto framed = zstd_compress(level, *form);
        if (!framed) return framed.error();
        measure = framed->size();
      }
#endif
      if (best.empty() || measure < best_measure) {
        best = std::move(*form);
        best_measure = measure;
        chosen.kind = kind;
      }
    }
    fields.push_back(chosen);
    forms.push_back(std::move(best));
  }
  return assemble_fields(fields, forms);
}

}  // namespace detail

/// Compresses a VERTEX_DATA or INDEX_DATA payload, given as its streams in
/// order (one per mesh; element_size 0 for the zero padding between them),
/// with meshopt or meshopt+zstd (`level`: zstd's, for meshopt+zstd): the
/// stream directory, then each stream (mesh_codec.hpp): meshoptimizer's
/// encoding, or the bytes as they are (codec "raw") when that is not larger,
/// or their words grouped, or (vertex streams of a known layout's stride)
/// cut into fields each stored its smallest way, whichever is smallest
/// (compared after zstd for meshopt+zstd). Empty inputs are skipped. Deterministic for the same inputs, meshoptimizer and zstd
/// versions and level. Errors: invalid_argument (another method, padding
/// that is not zero or longer than 15 bytes, a stream that is not a whole
/// number of elements, or an element size the directory cannot hold),
/// encode_failed, compression_unsupported. The inputs are trusted writer
/// data.
template <class = void>
[[nodiscard]] result<std::vector<std::byte>> compress_streams(compression method, [[maybe_unused]] int level,
                                                              std::span<const codec_input> inputs) {
  if (!is_mesh_codec(method)) return detail::unknown_method_error(errc::invalid_argument, method);
  if (!compression_available(method)) return detail::unknown_method_error(errc::compression_unsupported, method);
  std::vector<std::byte> directory(codec_directory_header_size), streams, encoded;
  std::uint64_t raw_at = 0, gap = 0;
  std::uint32_t count = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const codec_input& in = inputs[i];
    if (in.bytes.empty()) continue;
    if (in.element_size == 0) {  // padding
      gap += in.bytes.size();
      for (const std::byte b : in.bytes)
        if (b != std::byte{0} || gap > codec_max_gap) return make_error(errc::invalid_argument).at_field("padding").at_record(i);
      raw_at += in.bytes.size();
      continue;
    }
    const bool sizes_ok = in.is_vertex ? in.element_size >= 4 && in.element_size <= 256 && in.element_size % 4 == 0
                                       : in.element_size == 2 || in.element_size == 4;
    if (!sizes_ok || in.bytes.size() % in.element_size != 0 || in.bytes.size() / in.element_size > 0xFFFFFFFFu)
      return make_error(errc::invalid_argument).at_field("elementSize").with_value(in.element_size).at_record(i);
    encoded.clear();
    auto kind = encode_codec_stream(in, encoded);
    if (!kind) return kind.error();
    // The codec's bytes, or the stream as it is, or its words grouped,
    // whichever is smallest (after zstd for meshopt+zstd; ties keep the
    // earlier): float positions and packed normals often zstd better
    // without meshoptimizer's byte-lane deltas, and better still in planes.
    std::vector<std::byte> chosen = encoded;
    const std::span<const std::uint8_t> split =
        in.is_vertex ? codec_fields_for_stride(in.element_size) : std::span<const std::uint8_t>{};
    std::vector<std::byte> fields;
    if (!split.empty()) {
      auto cut = detail::encode_fields_stream(method, level, in, split);
      if (!cut) return cut.error();
      fields = std::move(*cut);
    }
    if (method == compression::meshopt_zstd) {
#if UNTOLD_DETAIL_ZSTD
      auto coded = detail::zstd_compress(level, encoded);
      if (!coded) return coded.error();
      chosen = std::move(*coded);
      const auto consider = [&](byte_span form, codec_stream_kind form_kind) -> status {
        auto framed = detail::zstd_compress(level, form);
        if (!framed) return framed.error();
        if (framed->size() < chosen.size()) {
          chosen = std::move(*framed);
          kind = form_kind;
        }
        return {};
      };
      UNTOLD_TRY(consider(in.bytes, codec_stream_kind::raw));
      if (in.element_size % 4 == 0 && in.element_size > 4)
        UNTOLD_TRY(consider(group_words(in.bytes, in.element_size), codec_stream_kind::words));
      if (!fields.empty()) UNTOLD_TRY(consider(fields, codec_stream_kind::fields));
#endif
    } else {
      if (in.bytes.size() <= encoded.size()) {
        chosen.assign(in.bytes.begin(), in.bytes.end());
        kind = codec_stream_kind::raw;
      }
      if (!fields.empty() && fields.size() < chosen.size()) {
        chosen = std::move(fields);
        kind = codec_stream_kind::fields;
      }
    }
    streams.insert(streams.end(), chosen.begin(), chosen.end());
    const std::uint64_t stored_size = chosen.size();
    std::byte entry[codec_stream_entry_size]{};
    store_le_unchecked<std::uint64_t>(entry, raw_at);
    store_le_unchecked<std::uint32_t>(entry + 8, static_cast<std::uint32_t>(in.bytes.size() / in.element_size));
    store_le_unchecked<std::uint16_t>(entry + 12, in.element_size);
    entry[14] = static_cast<std::byte>(*kind);
    store_le_unchecked<std::uint64_t>(entry + 16, stored_size);
    directory.insert(directory.end(), entry, entry + codec_stream_entry_size);
    raw_at += in.bytes.size();
    gap = 0;
    ++count;
  }
  if (gap != 0) return make_error(errc::invalid_argument).at_field("padding").with_value(gap);  // nothing may follow the last stream
  store_le_unchecked<std::uint32_t>(directory.data(), count);
  directory.insert(directory.end(), streams.begin(), streams.end());
  return directory;
}

/// compress() of the concatenation of `pieces` (the writer's chunks lie in
/// pieces: one per mesh). One piece: exactly compress() of it. Several:
/// zstd streams them (no gathered copy; the frame grows into reserved
/// address space), deterministic for the same pieces, codec version and
/// level; lz4 (one raw block needs one input buffer) and none gather them,
/// for as long as the codec runs, and give compress()'s bytes.
template <class = void>
[[nodiscard]] result<std::vector<std::byte>> compress(compression method, int level,
                                                      std::span<const byte_span> pieces) {
  if (pieces.size() == 1) return compress(method, level, pieces[0]);
#if UNTOLD_DETAIL_ZSTD
  if (method == compression::zstd) return detail::zstd_compress(level, pieces);
#endif
  const auto gather = [pieces] {
    std::size_t total = 0;
    for (const byte_span piece : pieces) total += piece.size();
    std::vector<std::byte> gathered;
    gathered.reserve(total);
    for (const byte_span piece : pieces) gathered.insert(gathered.end(), piece.begin(), piece.end());
    return gathered;
  };
#if UNTOLD_DETAIL_LZ4
  if (method == compression::lz4) {
    // The gathered input is released before the block is copied out: the
    // peak is the input plus the block, never the input plus two blocks.
    auto block = detail::lz4_compress(level, gather());
    if (!block) return block.error();
    return std::vector<std::byte>(block->bytes.data(), block->bytes.data() + block->size);
  }
#endif
  return compress(method, level, gather());
}

}  // namespace untold
