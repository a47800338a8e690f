// Tests for untold/hash.hpp: FIPS 180-4 / NIST known answers for the SHA-256
// implementations, incremental use, a differential test portable vs
// OpenSSL, sha256_resumable (and its SHA-extensions block function) against
// the plain code, and saving / resuming a message's midstate.
#include <untold/hash.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#if defined(UNTOLD_HAS_OPENSSL) && UNTOLD_HAS_OPENSSL
#include <openssl/evp.h>
#endif

namespace {

untold::byte_span as_span(std::string_view s) { return std::as_bytes(std::span<const char>(s.data(), s.size())); }

std::string hex_of(const untold::result<untold::sha256_digest>& r) {
  REQUIRE(r.has_value());
  return untold::to_hex(*r);
}

struct known_answer {
  std::string message;
  std::string_view digest;
};

std::vector<known_answer> known_answers() {
  return {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      // 448 bits
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      // 896 bits
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrst"
       "nopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
      {std::string(1000000, 'a'), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
}

}  // namespace

TEST_CASE("hash: known answers, one-shot") {
  for (const auto& kat : known_answers()) {
    CAPTURE(kat.message.size());
    CHECK(hex_of(untold::sha256_of(as_span(kat.message))) == kat.digest);
    CHECK(untold::to_hex(untold::sha256_portable_of(as_span(kat.message))) == kat.digest);
  }
}

TEST_CASE("hash: known answers, fed in pieces") {
  for (const auto& kat : known_answers()) {
    const auto msg = as_span(kat.message);
    for (const std::size_t piece : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 1000u}) {
      if (piece == 1 && msg.size() > 100000) continue;  // keep the runtime small
      CAPTURE(kat.message.size());
      CAPTURE(piece);
      untold::sha256 h;
      untold::sha256_portable p;
      for (std::size_t at = 0; at < msg.size(); at += piece) {
        const auto part = msg.subspan(at, std::min(piece, msg.size() - at));
        h.update(part);
        p.update(part);
      }
      h.update({});  // empty updates are no-ops
      p.update({});
      CHECK(hex_of(h.finish()) == kat.digest);
      CHECK(untold::to_hex(p.finish()) == kat.digest);
    }
  }
}

TEST_CASE("hash: one million 'a' as 10000 updates of 100") {
  const std::string hundred(100, 'a');
  untold::sha256 h;
  untold::sha256_portable p;
  for (int i = 0; i < 10000; ++i) {
    h.update(as_span(hundred));
    p.update(as_span(hundred));
  }
  constexpr std::string_view expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  CHECK(hex_of(h.finish()) == expected);
  CHECK(untold::to_hex(p.finish()) == expected);
}

TEST_CASE("hash: finish starts a new message, moves keep the state") {
  untold::sha256 h;
  h.update(as_span("ab"));
  untold::sha256 moved = std::move(h);
  moved.update(as_span("c"));
  CHECK(hex_of(moved.finish()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex_of(moved.finish()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  moved.update(as_span("abc"));
  CHECK(hex_of(moved.finish()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  untold::sha256 assigned;
  assigned = std::move(moved);
  assigned.update(as_span("abc"));
  CHECK(hex_of(assigned.finish()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

  untold::sha256_portable p;
  p.update(as_span("garbage"));
  p.reset();
  p.update(as_span("abc"));
  CHECK(untold::to_hex(p.finish()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(untold::to_hex(p.finish()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("hash: backend matches the build configuration") {
#if defined(UNTOLD_HAS_OPENSSL) && UNTOLD_HAS_OPENSSL
  CHECK(untold::sha256_uses_openssl);
#else
  CHECK_FALSE(untold::sha256_uses_openssl);
#endif
}

TEST_CASE("hash: portable SHA-256 equals OpenSSL on random inputs") {
  // Differential test: every length 0..300 (all padding cases around the
  // 55/56/64-byte boundaries) plus larger random lengths, random split points.
  std::mt19937_64 rng(2024);
  std::vector<std::byte> data(1 << 20);
  for (auto& b : data) b = static_cast<std::byte>(rng() & 0xFF);
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n <= 300; ++n) lengths.push_back(n);
  for (int i = 0; i < 40; ++i) lengths.push_back(rng() % data.size());
  lengths.push_back(data.size());
  for (const std::size_t n : lengths) {
    const untold::byte_span msg(data.data() + (n == data.size() ? 0 : rng() % (data.size() - n)), n);
    const std::size_t split = n == 0 ? 0 : rng() % (n + 1);
    untold::sha256_portable p;
    p.update(msg.first(split));
    p.update(msg.subspan(split));
    const auto portable = p.finish();
    CAPTURE(n);
#if defined(UNTOLD_HAS_OPENSSL) && UNTOLD_HAS_OPENSSL
    untold::sha256_digest reference{};
    unsigned int length = 0;
    REQUIRE(EVP_Digest(msg.data(), msg.size(), reference.data(), &length, EVP_sha256(), nullptr) == 1);
    REQUIRE(length == 32);
    CHECK(portable == reference);
#endif
    const auto through_class = untold::sha256_of(msg);
    REQUIRE(through_class.has_value());
    CHECK(*through_class == portable);
  }
}

TEST_CASE("hash: sha256_resumable gives the known answers and the plain implementation's digests") {
  for (const known_answer& kat : known_answers()) {
    untold::sha256_resumable r;
    r.update(as_span(kat.message));
    CHECK(untold::to_hex(r.finish()) == kat.digest);
  }
  std::mt19937_64 rng(7);
  std::vector<std::byte> data(300000);
  for (auto& b : data) b = static_cast<std::byte>(rng() & 0xFF);
  for (int i = 0; i < 300; ++i) {
    const std::size_t n = i < 200 ? static_cast<std::size_t>(i) : rng() % data.size();
    CAPTURE(n);
    untold::sha256_resumable r;
    std::size_t at = 0;
    while (at < n) {  // random pieces: whole blocks straight from the input and through the buffer
      const std::size_t piece = std::min<std::size_t>(n - at, rng() % 5000);
      r.update(untold::byte_span(data).subspan(at, piece));
      at += piece;
    }
    CHECK(r.finish() == untold::sha256_portable_of(untold::byte_span(data).first(n)));
  }
}

TEST_CASE("hash: the SHA-extensions block function equals the plain one") {
#if UNTOLD_DETAIL_SHA_X86
  if (!untold::detail::sha256_cpu_has_extensions()) {
    MESSAGE("this CPU has no SHA extensions: sha256_resumable runs the plain code, nothing to compare");
    return;
  }
  std::mt19937_64 rng(11);
  std::vector<std::byte> blocks(64 * 40);
  for (int round = 0; round < 200; ++round) {
    for (auto& b : blocks) b = static_cast<std::byte>(rng() & 0xFF);
    std::array<std::uint32_t, 8> state{};
    for (auto& w : state) w = static_cast<std::uint32_t>(rng());
    const std::size_t count = rng() % 40;
    std::array<std::uint32_t, 8> plain = state, fast = state;
    untold::detail::sha256_compress_generic(plain, blocks.data(), count);
    untold::detail::sha256_compress_x86(fast, blocks.data(), count);
    CAPTURE(count);
    CHECK(plain == fast);
  }
#else
  MESSAGE("not an x86-64 build: sha256_resumable runs the plain code");
#endif
}

TEST_CASE("hash: sha256_pair equals two separate digests, its interleaved block function the plain one") {
  std::mt19937_64 rng(23);
  std::vector<std::byte> a(3 * 65536 + 100), b(a.size());
  for (auto* v : {&a, &b})
    for (auto& x : *v) x = static_cast<std::byte>(rng() & 0xFF);
  const untold::byte_span sa(a), sb(b);
  // Lengths around the padding boundaries, a 64 KiB block, and unequal
  // lengths: their common whole blocks interleave, the longer one ends alone
  // (a whole digest block with a chunk's shorter last block, either order).
  for (const auto& [na, nb] : {std::pair<std::size_t, std::size_t>{0, 0}, {1, 1}, {55, 55}, {56, 56}, {63, 63},
                               {64, 64}, {65, 65}, {119, 119}, {65536, 65536}, {a.size(), a.size()}, {64, 65}, {0, 9},
                               {65536, 17504}, {17504, 65536}, {65536, 64240}, {65536, 1}, {128, 191}, {a.size(), 0}}) {
    const std::size_t first_length = na, second_length = nb;  // clang 14 captures no structured binding
    CAPTURE(first_length);
    CAPTURE(second_length);
    const auto pair = untold::sha256_pair(sa.first(na), sb.first(nb));
    REQUIRE(pair.has_value());
    CHECK((*pair)[0] == *untold::sha256_of(sa.first(na)));
    CHECK((*pair)[1] == *untold::sha256_of(sb.first(nb)));
  }
#if UNTOLD_DETAIL_SHA_X86
  if (!untold::detail::sha256_cpu_has_extensions()) return;
  for (int round = 0; round < 100; ++round) {
    std::array<std::uint32_t, 8> s0{}, s1{};
    for (auto* s : {&s0, &s1})
      for (auto& w : *s) w = static_cast<std::uint32_t>(rng());
    const std::size_t count = rng() % 40;
    const std::size_t offset = rng() % 64;  // any alignment
    std::array<std::uint32_t, 8> plain0 = s0, plain1 = s1;
    untold::detail::sha256_compress_generic(plain0, a.data() + offset, count);
    untold::detail::sha256_compress_generic(plain1, b.data() + offset, count);
    untold::detail::sha256_compress_x86_x2(s0, a.data() + offset, s1, b.data() + offset, count);
    CAPTURE(count);
    CHECK(plain0 == s0);
    CHECK(plain1 == s1);
  }
#endif
}

TEST_CASE("hash: midstate() and the midstate constructor continue a message") {
  std::mt19937_64 rng(3);
  std::vector<std::byte> data(20000);
  for (auto& b : data) b = static_cast<std::byte>(rng() & 0xFF);
  for (int i = 0; i < 200; ++i) {
    const std::size_t cut = rng() % data.size();
    const std::size_t end = cut + rng() % (data.size() - cut + 1);
    CAPTURE(cut);
    CAPTURE(end);
    const untold::byte_span message = untold::byte_span(data).first(end);
    untold::sha256_resumable fast;
    untold::sha256_portable plain;
    fast.update(message.first(cut));
    plain.update(message.first(cut));
    const untold::sha256_midstate state = fast.midstate();
    CHECK(fast.size() == cut);
    CHECK(state.length == cut / 64 * 64);  // the last cut % 64 bytes are not in it
    CHECK(state == plain.midstate());      // the same intermediate hash value, both implementations
    untold::sha256_resumable resumed(state);
    resumed.update(message.subspan(static_cast<std::size_t>(state.length)));
    const untold::sha256_digest whole = untold::sha256_portable_of(message);
    CHECK(resumed.finish() == whole);
    untold::sha256_portable resumed_plain(state);
    resumed_plain.update(message.subspan(static_cast<std::size_t>(state.length)));
    CHECK(resumed_plain.finish() == whole);
  }
}
