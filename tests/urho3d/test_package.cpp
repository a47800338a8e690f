// .pak: UPAK and ULZ4 built by the writer and by hand (literal-only LZ4
// blocks written byte by byte), read, extracted, verified, round-tripped;
// one crafted file per rule.
#include <string>

#include <untold/urho3d/package.hpp>

#include "u3d_support.hpp"

namespace u3 = untold::urho3d;
using namespace u3d_test;
using untold::errc;

namespace {

bytes text(std::string_view s) {
  bytes b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

/// The SDBM of Urho3D, written independently of the library.
std::uint32_t hand_sdbm(const bytes& b, std::uint32_t h = 0) {
  for (std::byte c : b) h = std::to_integer<std::uint32_t>(c) + (h << 6) + (h << 16) - h;
  return h;
}

/// A raw LZ4 block holding only literals (valid LZ4: the last sequence).
bytes lz4_literals(const bytes& data) {
  gen g;
  const std::size_t n = data.size();
  if (n < 15) {
    g.u8(static_cast<std::uint8_t>(n << 4));
  } else {
    g.u8(0xF0);
    std::size_t rest = n - 15;
    while (rest >= 255) {
      g.u8(255);
      rest -= 255;
    }
    g.u8(static_cast<std::uint8_t>(rest));
  }
  g.raw(data);
  return g.b;
}

struct hand_pak {
  bytes file;
  std::vector<std::size_t> entry_fields;  // offset field of each entry
  std::size_t data_start = 0;
};

/// Entries "Data/a.txt" and "Data/Models/b.bin", optionally ULZ4 with
/// `block` bytes per block, with the trailing size.
hand_pak make_pak(bool lz4, std::size_t block = 32768) {
  const std::vector<std::pair<std::string, bytes>> files = {
      {"Data/a.txt", text("hello, package")},
      {"Data/Models/b.bin", text(std::string(100, 'x') + "tail of the second file")}};
  hand_pak h;
  gen g;
  g.id(lz4 ? "ULZ4" : "UPAK").u32(static_cast<std::uint32_t>(files.size()));
  std::uint32_t sum = 0;
  for (const auto& f : files) sum = hand_sdbm(f.second, sum);
  g.u32(sum);
  for (const auto& f : files) {
    g.cstr(f.first);
    h.entry_fields.push_back(g.size());
    g.u32(0).u32(static_cast<std::uint32_t>(f.second.size())).u32(hand_sdbm(f.second));
  }
  h.data_start = g.size();
  for (std::size_t i = 0; i < files.size(); ++i) {
    put_u32(g.b, h.entry_fields[i], static_cast<std::uint32_t>(g.size()));
    const bytes& d = files[i].second;
    if (!lz4) {
      g.raw(d);
      continue;
    }
    for (std::size_t pos = 0; pos < d.size(); pos += block) {
      const bytes part(d.begin() + static_cast<std::ptrdiff_t>(pos),
                       d.begin() + static_cast<std::ptrdiff_t>(std::min(d.size(), pos + block)));
      const bytes packed = lz4_literals(part);
      g.u16(static_cast<std::uint16_t>(part.size())).u16(static_cast<std::uint16_t>(packed.size())).raw(packed);
    }
  }
  g.u32(static_cast<std::uint32_t>(g.size() + 4));
  h.file = std::move(g.b);
  return h;
}

}  // namespace

TEST_CASE("urho3d package: hand-made UPAK and ULZ4 read, extract, verify") {
  for (bool lz4 : {false, true})
    for (std::size_t block : {std::size_t{32768}, std::size_t{7}}) {
      CAPTURE(lz4);
      CAPTURE(block);
      const hand_pak h = make_pak(lz4, block);
      auto p = u3::open_package(h.file, {.deep_checks = true});
      REQUIRE_MESSAGE(p.has_value(), p.error().describe());
      CHECK(p->kind == (lz4 ? u3::package_kind::ulz4 : u3::package_kind::upak));
      REQUIRE(p->entries.size() == 2);
      CHECK(p->has_trailing_size);
      CHECK(p->total_uncompressed() == 14 + 123);
      auto a = u3::extract(*p, "Data/a.txt");
      REQUIRE(a);
      CHECK(*a == text("hello, package"));
      auto b = u3::extract(*p, "Data/Models/b.bin");
      REQUIRE(b);
      CHECK(b->size() == 123);
      CHECK(p->entries[1].blocks == (lz4 ? (block == 7 ? 18u : 1u) : 0u));
      U3D_CHECK_ERR(u3::extract(*p, "missing"), errc::invalid_argument);
    }
}

TEST_CASE("urho3d package: the writer builds the hand-made UPAK byte for byte, ULZ4 round-trips") {
  const bytes a = text("hello, package"), b = text(std::string(100, 'x') + "tail of the second file");
  const std::vector<u3::package_input> in = {{"Data/a.txt", a}, {"Data/Models/b.bin", b}};
  auto upak = u3::write_package(in);
  REQUIRE(upak);
  CHECK(*upak == make_pak(false).file);

  for (std::uint32_t block : {32768u, 16u}) {
    auto ulz4 = u3::write_package(in, {.compress = true, .block_size = block});
    REQUIRE_MESSAGE(ulz4.has_value(), ulz4.error().describe());
    auto p = u3::open_package(*ulz4, {.deep_checks = true});
    REQUIRE_MESSAGE(p.has_value(), p.error().describe());
    CHECK(*u3::extract(*p, "Data/Models/b.bin") == b);
    // Read back and write again: the same bytes.
    std::vector<u3::package_input> again;
    std::vector<bytes> keep;
    for (const auto& e : p->entries) keep.push_back(*u3::extract(*p, e.name));
    for (std::size_t i = 0; i < keep.size(); ++i) again.push_back({std::string(p->entries[i].name), keep[i]});
    auto rewritten = u3::write_package(again, {.compress = true, .block_size = block});
    REQUIRE(rewritten);
    CHECK(*rewritten == *ulz4);
  }
  // The hand-made ULZ4 (literal blocks) decodes to what the writer stored.
  const hand_pak hand_file = make_pak(true);  // the package views these bytes: keep them alive
  auto hand = u3::open_package(hand_file.file);
  REQUIRE(hand);
  CHECK(*u3::extract(*hand, "Data/Models/b.bin") == b);
  // Empty packages and empty entries.
  auto empty = u3::write_package({}, {.compress = true});
  REQUIRE(empty);
  CHECK(u3::open_package(*empty, {.deep_checks = true}).has_value());
  const std::vector<u3::package_input> zero = {{"empty", {}}, {"one", a}};
  auto z = u3::write_package(zero, {.compress = true});
  REQUIRE(z);
  auto zp = u3::open_package(*z, {.deep_checks = true});
  REQUIRE(zp);
  CHECK(u3::extract(*zp, "empty")->empty());
}

TEST_CASE("urho3d package: one crafted file per rule") {
  const hand_pak up = make_pak(false), lz = make_pak(true, 7);
  SUBCASE("U3D-MAGIC") { U3D_CHECK_ERR(u3::open_package(text("UPAC1234")), errc::u3d_bad_magic); }
  SUBCASE("truncation at every length") {
    for (const hand_pak* h : {&up, &lz})
      for (std::size_t n = 0; n < h->file.size(); ++n) {
        auto r = u3::open_package(bytes(h->file.begin(), h->file.begin() + static_cast<std::ptrdiff_t>(n)));
        // A cut that removes exactly the trailing size leaves a valid package without one.
        if (n == h->file.size() - 4) {
          CHECK(r.has_value());
          continue;
        }
        REQUIRE_FALSE(r);
      }
  }
  SUBCASE("U3D-COUNT and R-LIMITS") {
    bytes b = up.file;
    put_u32(b, 4, 1000);
    U3D_CHECK_ERR(u3::open_package(b), errc::u3d_count_too_large);
    u3::package_options o;
    o.limits.max_chunks = 1;
    U3D_CHECK_ERR(u3::open_package(up.file, o), errc::limit_exceeded);
    o = {};
    o.limits.max_chunk_bytes = 100;
    U3D_CHECK_ERR(u3::open_package(up.file, o), errc::limit_exceeded);
  }
  SUBCASE("U3D-PAK-NAME") {
    for (std::string_view bad : {"../evil", "/etc/passwd", "a\\b", "C:x", "a//b", "a/./b", ""}) {
      CAPTURE(bad);
      gen g;
      g.id("UPAK").u32(1).u32(0).cstr(bad).u32(0).u32(0).u32(0);
      put_u32(g.b, g.size() - 12, static_cast<std::uint32_t>(g.size()));
      U3D_CHECK_ERR(u3::open_package(g.b), errc::u3d_pak_name);
    }
    gen dup;
    dup.id("UPAK").u32(2).u32(0).cstr("x").u32(0).u32(0).u32(0).cstr("x").u32(0).u32(0).u32(0);
    put_u32(dup.b, 14, static_cast<std::uint32_t>(dup.size()));
    put_u32(dup.b, 28, static_cast<std::uint32_t>(dup.size()));
    U3D_CHECK_ERR(u3::open_package(dup.b), errc::u3d_pak_name);
  }
  SUBCASE("U3D-PAK-RANGE") {
    bytes b = up.file;
    put_u32(b, up.entry_fields[1] + 4, 100000);  // size past the end
    U3D_CHECK_ERR(u3::open_package(b), errc::u3d_pak_range);
    b = up.file;
    put_u32(b, up.entry_fields[0], 4);  // offset inside the header
    U3D_CHECK_ERR(u3::open_package(b), errc::u3d_pak_range);
  }
  SUBCASE("U3D-PAK-OVERLAP") {
    bytes b = up.file;
    put_u32(b, up.entry_fields[1], get_u32(b, up.entry_fields[0]) + 2);
    put_u32(b, up.entry_fields[1] + 4, 3);
    auto r = u3::open_package(b);
    REQUIRE_FALSE(r);
    // Shrinking entry 1 leaves its old bytes as trailing data before the size; overlap is found first.
    CHECK(r.error().code == errc::u3d_pak_overlap);
  }
  SUBCASE("U3D-PAK-BLOCK: lengths that disagree, blocks that do not decode exactly") {
    const std::size_t first_block = get_u32(lz.file, lz.entry_fields[0]);
    bytes b = lz.file;
    b[first_block] = std::byte{0};  // uncompressed length 0
    b[first_block + 1] = std::byte{0};
    U3D_CHECK_ERR(u3::open_package(b), errc::u3d_pak_block);
    b = lz.file;
    b[first_block] = std::byte{6};  // claims 6 bytes, the literals hold 7
    auto p = u3::open_package(b);
    REQUIRE_FALSE(p);  // the block chain no longer ends where the next entry starts
    b = lz.file;
    b[first_block + 4] = std::byte{0x50};  // token: 5 literals instead of 7
    auto q = u3::open_package(b);
    REQUIRE(q);
    U3D_CHECK_ERR(u3::extract(*q, "Data/a.txt"), errc::u3d_pak_block);
  }
  SUBCASE("U3D-PAK-CHECKSUM: entry (named) and package") {
    bytes b = up.file;
    put_u32(b, up.entry_fields[1] + 8, 12345);
    auto p = u3::open_package(b);
    REQUIRE(p);  // structure is fine; the checksum is checked on extraction
    auto e = u3::extract(*p, "Data/Models/b.bin");
    REQUIRE_FALSE(e);
    CHECK(e.error().code == errc::u3d_pak_checksum);
    CHECK(e.error().subject() == "Data/Models/b.bin");
    U3D_CHECK_ERR(u3::open_package(b, {.deep_checks = true}), errc::u3d_pak_checksum);
    bytes data = lz.file;
    data[data.size() - 6] ^= std::byte{1};  // a literal of the last entry
    U3D_CHECK_ERR(u3::open_package(data, {.deep_checks = true}), errc::u3d_pak_checksum);
    bytes pkg = up.file;
    put_u32(pkg, 8, 1);
    U3D_CHECK_ERR(u3::open_package(pkg, {.deep_checks = true}), errc::u3d_pak_checksum);
  }
  SUBCASE("U3D-PAK-SIZE and U3D-TRAILING") {
    bytes b = up.file;
    put_u32(b, b.size() - 4, 7);
    U3D_CHECK_ERR(u3::open_package(b), errc::u3d_pak_size);
    b = up.file;
    b.push_back(std::byte{0});
    U3D_CHECK_ERR(u3::open_package(b), errc::u3d_trailing_bytes);
  }
  SUBCASE("the writer refuses unsafe names") {
    const bytes a = text("x");
    const std::vector<u3::package_input> in = {{"../x", a}};
    U3D_CHECK_ERR(u3::write_package(in), errc::invalid_argument);
  }
}

TEST_CASE("urho3d package: the blocked SDBM equals the byte-by-byte definition") {
  // Every length up to 1700 (512-byte dot-product blocks, 128-byte
  // multiply-add blocks, 8-byte steps and the byte tail in every
  // combination), every byte value, and all-0xFF bytes (the largest
  // products of the vector multiply-adds).
  bytes b;
  for (int i = 0; i < 1700; ++i) b.push_back(static_cast<std::byte>((i * 37 + 11) & 0xFF));
  const bytes ones(b.size(), std::byte{0xFF});
  for (std::size_t n = 0; n <= b.size(); ++n) {
    CAPTURE(n);
    const bytes part(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
    CHECK(u3::sdbm(part) == hand_sdbm(part));
    CHECK(u3::sdbm(part, 12345u) == hand_sdbm(part, 12345u));
    const bytes high(ones.begin(), ones.begin() + static_cast<std::ptrdiff_t>(n));
    CHECK(u3::sdbm(high, 0xFFFFFFFFu) == hand_sdbm(high, 0xFFFFFFFFu));
  }
  // At any alignment (the blocks are unaligned loads).
  for (std::size_t at = 1; at < 64; ++at) {
    const untold::byte_span part = untold::byte_span(b).subspan(at, 1100);
    CHECK(u3::sdbm(part) == hand_sdbm(bytes(part.begin(), part.end())));
  }
#if defined(UNTOLD_DETAIL_SDBM_X86)
  // sdbm takes the widest blocks the CPU has: each kernel directly, on the
  // CPUs that run it (a machine without AVX-512 VNNI or AVX2 tests fewer).
  const auto kernel_matches = [&](const char* name, std::size_t block, auto kernel) {
    CAPTURE(name);
    for (std::size_t blocks = 0; blocks * block <= b.size(); ++blocks) {
      CAPTURE(blocks);
      const bytes part(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(blocks * block));
      CHECK(kernel(part.data(), blocks, 777u) == hand_sdbm(part, 777u));
      const bytes high(ones.begin(), ones.begin() + static_cast<std::ptrdiff_t>(blocks * block));
      CHECK(kernel(high.data(), blocks, 0xFFFFFFFFu) == hand_sdbm(high, 0xFFFFFFFFu));
    }
  };
  kernel_matches("sse2", u3::detail::sdbm_block, u3::detail::sdbm_blocks_sse2);
  if (u3::detail::sdbm_use_avx2()) kernel_matches("avx2", u3::detail::sdbm_block, u3::detail::sdbm_blocks_avx2);
  if (u3::detail::sdbm_use_avx512vnni())
    kernel_matches("avx512vnni", u3::detail::sdbm_wide_block, u3::detail::sdbm_blocks_avx512vnni);
#endif
}

TEST_CASE("urho3d package: extract_entry_into gives extract_entry's bytes and errors in the caller's memory") {
  for (bool lz4 : {false, true})
    for (std::size_t block : {std::size_t{32768}, std::size_t{7}}) {
      CAPTURE(lz4);
      CAPTURE(block);
      hand_pak h = make_pak(lz4, block);
      auto p = u3::open_package(h.file);
      REQUIRE(p);
      bytes buffer(200, std::byte{0xEE});  // one buffer for every entry
      for (const auto& e : p->entries) {
        CAPTURE(e.name);
        bytes expected;
        REQUIRE(u3::extract_entry(*p, e, expected));
        const untold::mutable_byte_span out = untold::mutable_byte_span(buffer).first(e.size);
        REQUIRE(u3::extract_entry_into(*p, e, out));
        CHECK(bytes(out.begin(), out.end()) == expected);
        U3D_CHECK_ERR(u3::extract_entry_into(*p, e, untold::mutable_byte_span(buffer).first(e.size + 1)),
                      errc::invalid_argument);
      }
      // A wrong entry checksum: U3D-PAK-CHECKSUM from both, with the same context.
      put_u32(h.file, h.entry_fields[1] + 8, 12345u);
      auto bad = u3::open_package(h.file);
      REQUIRE(bad);
      const auto& e = bad->entries[1];
      bytes vec;
      const auto from_vector = u3::extract_entry(*bad, e, vec);
      const auto from_span = u3::extract_entry_into(*bad, e, untold::mutable_byte_span(buffer).first(e.size));
      REQUIRE_FALSE(from_vector);
      REQUIRE_FALSE(from_span);
      CHECK(from_span.error().code == errc::u3d_pak_checksum);
      CHECK(from_span.error().describe() == from_vector.error().describe());
    }
  // A block that does not decode: U3D-PAK-BLOCK from both.
  hand_pak h = make_pak(true, 7);
  h.file[get_u32(h.file, h.entry_fields[0]) + 4] = std::byte{0xF0};
  auto p = u3::open_package(h.file);
  REQUIRE(p);
  bytes vec, buffer(p->entries[0].size);
  const auto from_vector = u3::extract_entry(*p, p->entries[0], vec);
  const auto from_span = u3::extract_entry_into(*p, p->entries[0], buffer);
  REQUIRE_FALSE(from_span);
  CHECK(from_span.error().code == errc::u3d_pak_block);
  CHECK(from_span.error().describe() == from_vector.error().describe());
}

TEST_CASE("urho3d package: extracting one entry reads no other entry's data") {
  hand_pak h = make_pak(true, 7);
  // Destroy the first entry's first block (a token claiming 15+ literals): only that entry fails.
  const std::size_t first_block = get_u32(h.file, h.entry_fields[0]);
  h.file[first_block + 4] = std::byte{0xF0};
  auto p = u3::open_package(h.file);
  REQUIRE(p);
  CHECK_FALSE(u3::extract(*p, "Data/a.txt").has_value());
  auto b = u3::extract(*p, "Data/Models/b.bin");
  REQUIRE_MESSAGE(b.has_value(), b.error().describe());
  CHECK(b->size() == 123);
}

TEST_CASE("urho3d package: an empty ULZ4 entry pointing past the end is U3D-PAK-RANGE") {
  gen g;
  g.id("ULZ4").u32(1).u32(0).cstr("e").u32(1000).u32(0).u32(0);
  U3D_CHECK_ERR(u3::open_package(g.b), errc::u3d_pak_range);
  gen ok;  // at the end of the file: fine
  ok.id("ULZ4").u32(1).u32(0).cstr("e").u32(0).u32(0).u32(0);
  put_u32(ok.b, 14, static_cast<std::uint32_t>(ok.size()));
  CHECK(u3::open_package(ok.b).has_value());
}

TEST_CASE("urho3d package: a block declaring more than LZ4 can decode from its bytes is refused unread") {
  // One entry declaring 256 MiB in 4,097 blocks of one garbage byte each
  // (4,096 declaring 65,535 bytes, the last 4,096): refused by the
  // structure walk, before anything is allocated for it (it used to
  // zero-fill 256 MiB before finding the garbage).
  gen g;
  g.id("ULZ4").u32(1).u32(0).cstr("bomb").u32(0).u32(256u << 20).u32(0);
  const std::size_t data = g.size();
  put_u32(g.b, 17, static_cast<std::uint32_t>(data));
  for (int b = 0; b < 4096; ++b) g.u16(65535).u16(1).u8(0x5A);
  g.u16(4096).u16(1).u8(0x5A);
  auto r = u3::open_package(g.b);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == errc::u3d_pak_block);
  CHECK(r.error().context.offset == data);
  CHECK(r.error().context.limit == 256);
}

TEST_CASE("urho3d package: extraction grows its buffer as blocks decode") {
  // 40 blocks of 8 stored bytes, each declaring 1,000 bytes (within LZ4's
  // 256 x 8): the first block is garbage, so decoding stops there having
  // allocated one block's worth, not the 40,000 bytes declared.
  gen g;
  g.id("ULZ4").u32(1).u32(0).cstr("e").u32(0).u32(40000).u32(0);
  put_u32(g.b, 14, static_cast<std::uint32_t>(g.size()));
  for (int b = 0; b < 40; ++b) g.u16(1000).u16(8).u32(0xFFFFFFFFu).u32(0xFFFFFFFFu);
  auto p = u3::open_package(g.b);
  REQUIRE_MESSAGE(p.has_value(), p.error().describe());
  std::vector<std::byte> out;
  U3D_CHECK_ERR(u3::extract_entry(*p, p->entries[0], out), errc::u3d_pak_block);
  CHECK(out.capacity() < 40000);
}

TEST_CASE("urho3d package: verify_package holds one entry at a time within the input's budget") {
  const bytes big(3000, std::byte{'z'});
  const std::vector<u3::package_input> in = {{"a.bin", big}, {"b.bin", big}};
  auto pak = u3::write_package(in, {.compress = true});
  REQUIRE(pak);
  auto p = u3::open_package(*pak);
  REQUIRE(p);
  untold::limits lim;
  lim.memory_per_input_byte = 0;
  lim.memory_floor = 3000;  // room for one entry, not two
  untold::budget budget(lim, pak->size());
  CHECK(u3::verify_package(*p, lim, &budget).has_value());
  CHECK(budget.memory().used == 0);
  lim.memory_floor = 2999;
  U3D_CHECK_ERR(u3::verify_package(*p, lim), errc::limit_exceeded);
}

TEST_CASE("urho3d package: U3D-PAK-PATH, one entry's name is a directory of another's") {
  const bytes x = text("x");
  const std::vector<u3::package_input> in = {{"a", x}, {"a/b", x}, {"ab/c", x}};
  auto pak = u3::write_package(in);
  REQUIRE(pak);
  auto p = u3::open_package(*pak, {.deep_checks = true});
  REQUIRE(p);  // the engine keys entries by name: a valid package
  std::vector<const u3::package_entry*> all, safe;
  for (const auto& e : p->entries) all.push_back(&e);
  safe = {&p->entries[1], &p->entries[2]};  // "a/b" and "ab/c": no conflict
  const auto conflict = u3::check_extract_paths(all);
  REQUIRE_FALSE(conflict);
  CHECK(conflict.error().code == errc::u3d_pak_path);
  CHECK(conflict.error().subject() == "a/b");
  CHECK(u3::check_extract_paths(safe).has_value());
}
