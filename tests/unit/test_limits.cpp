// Tests for untold/limits.hpp and decompression bombs (issue 18 item 7): the
// default limits bound what a small file may decompress to (a multiple of its
// size, and an absolute cap), and a chunk that declares more than its data
// delivers fails before the reader allocates the declared size.
//
// The largest single allocation is measured by replacing the global
// operator new for this test binary: it counts only while a test arms it
// (allocation_probe), and otherwise behaves exactly like the default.
#include "support.hpp"

#include <untold/compression.hpp>
#include <untold/limits.hpp>
#include <untold/ranges.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

namespace {

thread_local bool armed = false;
thread_local std::size_t largest_request = 0;

void* counted_allocation(std::size_t size) {
  if (armed && size > largest_request) largest_request = size;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
#if defined(__cpp_exceptions)
  throw std::bad_alloc();
#else
  std::abort();
#endif
}

/// The largest single operator-new request `f` makes.
template <class F>
std::size_t largest_allocation(F&& f) {
  largest_request = 0;
  armed = true;
  f();
  armed = false;
  return largest_request;
}

}  // namespace

void* operator new(std::size_t size) { return counted_allocation(size); }
void* operator new[](std::size_t size) { return counted_allocation(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): each
// new must pair with this file's delete, or ASan reports a new/free mismatch.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (armed && size > largest_request) largest_request = size;
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

using untold::compression;
using untold::errc;
using bytes = std::vector<std::byte>;

constexpr bool has_zstd = untold::compression_available(compression::zstd);
constexpr std::size_t MiB = std::size_t{1} << 20;

/// Bytes that compress very well but not into zstd RLE blocks: one 32-byte
/// vertex repeated (compressed blocks of one long match each).
bytes repeated_vertex(std::size_t count) {
  const bytes one = test::raw_vertices({{0.0f, 0.0f, 0.0f}});
  bytes out;
  out.reserve(count * one.size());
  for (std::size_t i = 0; i < count; ++i) out.insert(out.end(), one.begin(), one.end());
  return out;
}

/// A valid file whose one mesh has `vertex_count` identical vertices, its
/// vertex data zstd-compressed: a few KB that decode to 32 x vertex_count.
bytes zstd_bomb_file(std::uint32_t vertex_count) {
  const bytes vertices = repeated_vertex(vertex_count);
  const std::uint32_t indices[] = {0, 1, 2};
  untold::builder b{untold::file_type::tile};
  const std::uint32_t root = b.add_entity({.name = "root"});
  b.add_mesh({.entity = root, .name = "bomb", .vertices = vertices, .indices = indices});
  untold::write_options options;
  options.content_hash = false;  // tests patch the stored bytes
  options.compression.data = {compression::zstd, 3};  // no block splitting: 128 KiB blocks
  auto file = b.finish(options);
  REQUIRE(file);
  return *file;
}

/// Offsets of the content of each block of the zstd frame `f` (RFC 8878).
std::vector<std::size_t> zstd_block_contents(const bytes& f) {
  const auto descriptor = static_cast<std::uint8_t>(f[4]);
  const bool single_segment = (descriptor & 0x20u) != 0;
  constexpr std::size_t dictionary_bytes[] = {0, 1, 2, 4}, content_size_bytes[] = {0, 2, 4, 8};
  const unsigned fcs_flag = descriptor >> 6;
  std::size_t at = 5 + (single_segment ? 0 : 1) + dictionary_bytes[descriptor & 3u] +
                   (fcs_flag == 0 && single_segment ? 1 : content_size_bytes[fcs_flag]);
  std::vector<std::size_t> contents;
  for (;;) {
    const std::uint32_t header = static_cast<std::uint32_t>(f[at]) | static_cast<std::uint32_t>(f[at + 1]) << 8 |
                                 static_cast<std::uint32_t>(f[at + 2]) << 16;
    at += 3;
    contents.push_back(at);
    at += ((header >> 1) & 3u) == 1 ? 1 : header >> 3;
    if ((header & 1u) != 0) return contents;
  }
}

}  // namespace

TEST_CASE("limits: defaults suit files from the internet, and the budget scales with the file") {
  const untold::limits l;
  CHECK(l.max_chunks == 1024);
  CHECK(l.max_chunk_bytes == std::uint64_t{256} << 20);
  CHECK(l.max_total_bytes == std::uint64_t{1} << 30);
  CHECK(l.max_records == std::uint32_t{1} << 24);
  CHECK(l.max_depth == 256);
  CHECK(l.max_expansion == 64);

  CHECK(l.decoded_budget(0) == 0);
  CHECK(l.decoded_budget(132'000) == 64 * 132'000);
  CHECK(l.decoded_budget(16 * MiB) == std::uint64_t{1} << 30);        // exactly the absolute cap
  CHECK(l.decoded_budget(16 * MiB + 1) == std::uint64_t{1} << 30);    // never above it
  CHECK(l.decoded_budget(~std::uint64_t{0}) == std::uint64_t{1} << 30);  // no overflow

  untold::limits lifted;
  lifted.max_expansion = ~std::uint32_t{0};
  lifted.max_total_bytes = ~std::uint64_t{0};
  CHECK(lifted.decoded_budget(~std::uint64_t{0}) == ~std::uint64_t{0});
  CHECK(lifted.decoded_budget(3) == 3 * std::uint64_t{~std::uint32_t{0}});
  untold::limits none_compressed;
  none_compressed.max_expansion = 0;
  CHECK(none_compressed.decoded_budget(1'000'000) == 0);
}

TEST_CASE("limits: a small valid zstd file that decodes to megabytes is refused under the defaults") {
  if (!has_zstd) return;
  // 8 MiB of vertices in about 2 KB: the audit's bomb, scaled down (its
  // 132 KB file made the reader allocate 4.2 GB under the old defaults).
  const bytes file = zstd_bomb_file(256 * 1024);
  REQUIRE(file.size() < 8 * 1024);

  untold::result<untold::asset> refused = untold::make_error(errc::invalid_argument, {});
  const std::size_t largest = largest_allocation([&] { refused = untold::open(file); });
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == errc::limit_exceeded);  // R-LIMITS, from the chunk table
  CHECK(refused.error().rule_id() == "R-LIMITS");
  CHECK(refused.error().context.has_limit);
  CHECK(refused.error().context.limit <= 64 * file.size());
  CHECK(largest < 64 * 1024);  // nothing near the declared size was allocated

  // Byte-range loading refuses it at open, from the same table rule.
  untold::memory_range_source source(file);
  const auto streamed = untold::streamed_asset::open(source);
  REQUIRE_FALSE(streamed);
  CHECK(streamed.error().code == errc::limit_exceeded);
}

TEST_CASE("limits: a caller who raises the limits deliberately opens the same file") {
  if (!has_zstd) return;
  const bytes file = zstd_bomb_file(256 * 1024);
  untold::open_options options;
  options.limits.max_expansion = 1u << 16;
  const auto opened = untold::open(file, options);
  REQUIRE(opened);
  CHECK(opened->vertices(opened->meshes()[0]).size() == 8 * MiB);
}

TEST_CASE("limits: a zstd chunk that declares more than its data delivers fails before the declared size is allocated") {
  if (!has_zstd) return;
  // Limits lifted, so the table rules pass: only the decoder stands between
  // the declared 8 MiB and the allocation. Block 4 (after 512 KiB of output)
  // is zeroed: an empty literals section followed by bytes where no sequence
  // may be, which zstd reports as corrupt.
  bytes file = zstd_bomb_file(256 * 1024);
  const std::size_t row = test::chunk_row(file, static_cast<std::uint32_t>(untold::chunk_type::vertex_data));
  const std::size_t at = test::get_u64(file, test::chunk_row_offset(row) + 8);
  const std::size_t stored = test::get_u64(file, test::chunk_row_offset(row) + 16);
  const bytes frame(file.begin() + static_cast<std::ptrdiff_t>(at),
                    file.begin() + static_cast<std::ptrdiff_t>(at + stored));
  const auto blocks = zstd_block_contents(frame);
  REQUIRE(blocks.size() == 64);
  const std::size_t broken = at + blocks[4];
  std::fill(file.begin() + static_cast<std::ptrdiff_t>(broken), file.begin() + static_cast<std::ptrdiff_t>(at + blocks[5] - 3),
            std::byte{0});

  untold::open_options lifted;
  lifted.limits.max_expansion = ~std::uint32_t{0};
  untold::result<untold::asset> rejected = untold::make_error(errc::invalid_argument, {});
  const std::size_t largest = largest_allocation([&] { rejected = untold::open(file, lifted); });
  REQUIRE_FALSE(rejected);
  CHECK(rejected.error().rule_id() == "R-DECOMPRESS");
  CHECK(largest <= 2 * MiB);  // the old reader allocated all 8 MiB first
}

// The same bounds and errors into a std::vector and into an uninitialised
// untold::byte_buffer.
TEST_CASE_TEMPLATE("decompress_into: grows the buffer only as the data delivers bytes", Buffer, bytes,
                   untold::byte_buffer) {
  const bytes raw = repeated_vertex(128 * 1024);  // 4 MiB
  for (const compression method : {compression::lz4, compression::zstd}) {
    if (!untold::compression_available(method)) continue;
    CAPTURE(static_cast<int>(method));
    const auto packed = untold::compress(method, 0, raw);
    REQUIRE(packed);

    Buffer out;
    REQUIRE(untold::decompress_into(method, *packed, raw.size(), out));
    CHECK(std::equal(out.begin(), out.end(), raw.begin(), raw.end()));
    // Declaring one byte more or less fails, as decompress() does, and leaves nothing behind.
    CHECK(untold::decompress_into(method, *packed, raw.size() + 1, out).error().code == errc::decompress_failed);
    CHECK(out.empty());
    CHECK(untold::decompress_into(method, *packed, raw.size() - 1, out).error().code == errc::decompress_failed);
    CHECK(out.empty());

    // A stream cut to its first eighth declaring 1 GiB: decoding stops where
    // the data ends, having allocated about what it produced.
    const bytes cut(packed->begin(), packed->begin() + static_cast<std::ptrdiff_t>(packed->size() / 8));
    untold::status s;
    const std::size_t largest =
        largest_allocation([&] { s = untold::decompress_into(method, cut, std::uint64_t{1} << 30, out); });
    REQUIRE_FALSE(s);
    CHECK(s.error().code == errc::decompress_failed);
    CHECK(out.empty());
    CHECK(largest <= 2 * MiB);

    // Into caller memory (decompress): a span of the wrong size is rejected.
    bytes caller(raw.size() + 1);
    CHECK(untold::decompress(method, *packed, caller).error().code == errc::decompress_failed);
    CHECK(untold::decompress(method, *packed, untold::mutable_byte_span(caller).first(raw.size() - 1)).error().code ==
          errc::decompress_failed);
    REQUIRE(untold::decompress(method, *packed, untold::mutable_byte_span(caller).first(raw.size())));
    CHECK(std::equal(raw.begin(), raw.end(), caller.begin()));
  }
  // none: sizes must match, checked before anything is allocated.
  Buffer out;
  untold::status s;
  CHECK(largest_allocation([&] { s = untold::decompress_into(compression::none, raw, std::uint64_t{1} << 40, out); }) ==
        0);
  CHECK(s.error().code == errc::raw_size_mismatch);
  REQUIRE(untold::decompress_into(compression::none, raw, raw.size(), out));
  CHECK(std::equal(out.begin(), out.end(), raw.begin(), raw.end()));
  CHECK(untold::decompress_into(static_cast<compression>(9), raw, 5, out).error().code == errc::unknown_compression);
}

TEST_CASE("decompress_into: highly compressible data still decodes exactly") {
  // 32 MiB of zeros from a few hundred stored bytes: several growth steps.
  const bytes zeros(32 * MiB);
  for (const compression method : {compression::lz4, compression::zstd}) {
    if (!untold::compression_available(method)) continue;
    const auto packed = untold::compress(method, 0, zeros);
    REQUIRE(packed);
    bytes out;
    REQUIRE(untold::decompress_into(method, *packed, zeros.size(), out));
    CHECK(out == zeros);
  }
}

TEST_CASE("byte_buffer: owns its bytes, moves, converts to spans") {
  untold::byte_buffer empty;
  CHECK(empty.empty());
  CHECK(untold::byte_span(empty).empty());
  untold::byte_buffer b(5);
  REQUIRE(b.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) b.data()[i] = static_cast<std::byte>(i);
  const std::byte* at = b.data();
  untold::byte_buffer moved = std::move(b);
  CHECK(moved.data() == at);
  CHECK(b.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty, documented
  const untold::byte_span view = moved;
  CHECK(view.size() == 5);
  CHECK(view[4] == std::byte{4});
  b = std::move(moved);
  CHECK(b.data() == at);
  CHECK(untold::byte_buffer(0).data() == nullptr);
}
