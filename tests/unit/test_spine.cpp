// Tests for the pieces every format shares: the budget (budget.hpp), the
// shared checks (detail/checks.hpp), the rule tables' family column and the
// error context's named setters, float values and escaped names (error.hpp).
#include <untold/budget.hpp>
#include <untold/detail/checks.hpp>
#include <untold/error.hpp>
#include <untold/remote/error.hpp>

#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <string>

using untold::errc;

TEST_CASE("budget: caps are rate x input + floor, charges refuse past the cap with the caller's rule") {
  untold::limits lim;
  lim.memory_per_input_byte = 4;
  lim.memory_floor = 100;
  lim.work_per_input_byte = 2;
  lim.work_floor = 10;
  lim.output_per_input_byte = 1;
  lim.output_floor = 5;
  untold::budget b(lim, 50);
  CHECK(b.memory().cap == 300);
  CHECK(b.work().cap == 110);
  CHECK(b.output().cap == 55);

  CHECK(b.charge_memory(250, "nodes", errc::udm_limit));
  CHECK(b.memory().used == 250);
  const auto over = b.charge_memory(51, "nodes", errc::udm_limit);
  REQUIRE_FALSE(over);
  CHECK(over.error().code == errc::udm_limit);
  CHECK(std::string(over.error().context.field) == "nodes");
  CHECK(over.error().context.value == 301);
  CHECK(over.error().context.limit == 300);
  CHECK(b.memory().used == 250);  // a refused charge takes nothing
  b.release_memory(200);
  CHECK(b.charge_memory(51, "nodes", errc::udm_limit));

  // Items cost work even when they take no memory.
  CHECK(b.charge_items(110, 0, "nil items", errc::udm_limit));
  const auto more = b.charge_items(1, 0, "nil items", errc::udm_limit);
  REQUIRE_FALSE(more);
  CHECK(more.error().context.limit == 110);

  CHECK(b.charge_output(55, "text", errc::limit_exceeded));
  CHECK_FALSE(b.charge_output(1, "text", errc::limit_exceeded));
}

TEST_CASE("budget: saturates instead of wrapping for any input size and charge") {
  untold::limits lim;
  lim.memory_per_input_byte = ~std::uint32_t{0};
  untold::budget huge(lim, ~std::uint64_t{0});
  CHECK(huge.memory().cap == ~std::uint64_t{0});
  untold::budget b(untold::limits{}, 1000);
  CHECK(b.charge_memory(1, "a", errc::limit_exceeded));
  // 2^63 items of 4 bytes would wrap a u64 product to a small number.
  CHECK_FALSE(b.charge_items(std::uint64_t{1} << 20, std::uint64_t{1} << 63, "a", errc::limit_exceeded));
  CHECK_FALSE(b.charge_memory(~std::uint64_t{0}, "a", errc::limit_exceeded));
  CHECK(b.memory().used == 1);
}

TEST_CASE("budget: default caps are linear in the input with the documented constants") {
  const untold::limits lim;
  const untold::budget small(lim, 0), big(lim, 1u << 20);
  CHECK(small.memory().cap == lim.memory_floor);
  CHECK(big.memory().cap == lim.memory_floor + std::uint64_t{lim.memory_per_input_byte} * (1u << 20));
  CHECK(big.work().cap == lim.work_floor + std::uint64_t{lim.work_per_input_byte} * (1u << 20));
  untold::budget own(lim, 10), shared(lim, 10);
  CHECK(&untold::budget::own_or_shared(nullptr, own) == &own);
  CHECK(&untold::budget::own_or_shared(&shared, own) == &shared);
}

TEST_CASE("checks: is_finite looks at the bits") {
  using untold::detail::is_finite;
  CHECK(is_finite(0.0f));
  CHECK(is_finite(-std::numeric_limits<float>::max()));
  CHECK(is_finite(std::numeric_limits<float>::denorm_min()));
  CHECK_FALSE(is_finite(std::bit_cast<float>(0xFFFFFFFFu)));
  CHECK_FALSE(is_finite(std::bit_cast<float>(0x7F800000u)));
  CHECK_FALSE(is_finite(std::bit_cast<float>(0xFF800000u)));
  CHECK_FALSE(is_finite(std::bit_cast<double>(0x7FF8000000000000u)));
  CHECK(is_finite(1e300));
  CHECK(untold::detail::is_nan(std::bit_cast<float>(0x7FC00000u)));
  CHECK_FALSE(untold::detail::is_nan(std::bit_cast<float>(0x7F800000u)));
  const float v[] = {1.0f, 2.0f, std::bit_cast<float>(0x7FC00000u)};
  CHECK_FALSE(untold::detail::all_finite(v));
  CHECK(untold::detail::all_finite(std::span<const float>(v, 2)));
}

TEST_CASE("checks: is_safe_relative_path is the union of the package and runtime-path rules") {
  using untold::detail::is_safe_relative_path;
  for (const char* ok : {"a", "a/b.png", "Textures/stone_01.dds", "a..b/c", ".hidden"}) {
    INFO(ok);
    CHECK(is_safe_relative_path(ok));
  }
  using namespace std::string_literals;
  for (const std::string& bad : {""s, "/etc/passwd"s, "../x"s, "a/../../x"s, "a/./b"s, "a//b"s, "a/"s, "."s,
                                "C:x"s, "C:/Windows/x"s, "a\\b"s, "a\0b"s, "a\nb"s, "a\x1b[2Jb"s, "x:stream"s}) {
    INFO(bad);
    CHECK_FALSE(is_safe_relative_path(bad));
  }
}

TEST_CASE("rules: the family column of every table gives family()") {
  CHECK(untold::family(errc::mesh_material) == untold::format_family::untold);
  CHECK(untold::family(errc::io_open_failed) == untold::format_family::untold);
  CHECK(untold::family(errc::u3d_truncated) == untold::format_family::urho3d);
  CHECK(untold::family(errc::udm_truncated) == untold::format_family::udm);
  CHECK(untold::family(errc::hm_truncated) == untold::format_family::assetc);
  CHECK(untold::rule_id(errc::u3d_truncated) == "U3D-TRUNC");
  CHECK(untold::name(errc::udm_limit) == "udm_limit");
  // Every row's rule id prefix agrees with its family column.
  for (std::uint16_t i = 0; untold::name(static_cast<errc>(i)) != "unknown"; ++i) {
    const auto e = static_cast<errc>(i);
    const std::string_view id = untold::rule_id(e);
    INFO(untold::name(e));
    switch (untold::family(e)) {
      case untold::format_family::urho3d: CHECK(id.starts_with("U3D-")); break;
      case untold::format_family::udm: CHECK(id.starts_with("UDM-")); break;
      case untold::format_family::assetc: CHECK(id.starts_with("HM-")); break;
      case untold::format_family::untold:
        CHECK((id.starts_with("R-") || id.starts_with("E-") || id == "OK"));
        break;
    }
  }
  // The remote layer's enum comes from the same mechanism.
  CHECK(untold::remote::rule_id(untold::remote::remote_errc::insecure_scheme) == "E-REMOTE-INSECURE");
  CHECK(untold::remote::name(untold::remote::remote_errc::too_large) == "too_large");
}

TEST_CASE("error: named setters, float values shown as floats with their bits, names escaped") {
  const untold::error e = untold::make_error(errc::u3d_not_finite)
                              .at_field("geometry.center")
                              .with_float(std::bit_cast<float>(0xFFFFFFFFu))
                              .at_record(3)
                              .at_offset(128);
  CHECK(e.describe() ==
        "U3D-FINITE u3d_not_finite: " + std::string(e.message()) +
            " (record 3, field geometry.center, value nan (bits 0xffffffff), offset 128)");
  CHECK(untold::make_error(errc::udm_ascii_value).with_float(1e10f).describe().find("value 1e10 (bits 0x501502f9)") !=
        std::string::npos);
  CHECK(untold::make_error(errc::udm_ascii_value).with_float(-0.5f).describe().find("value -0.5 (bits 0xbf000000)") !=
        std::string::npos);
  CHECK(untold::make_error(errc::udm_ascii_value).with_float(3.25f).describe().find("value 3.25 (bits 0x40500000)") !=
        std::string::npos);
  CHECK(untold::make_error(errc::udm_ascii_value).with_float(-std::numeric_limits<float>::infinity()).describe().find(
            "value -inf (bits 0xff800000)") != std::string::npos);
  // A record index past 32 bits reads as unknown rather than wrapping.
  CHECK(untold::make_error(errc::u3d_truncated).at_record(std::uint64_t{1} << 40).context.record_index == untold::no_index);

  untold::error named = untold::make_error(errc::u3d_pak_name);
  named.with_subject("ok\n\x1b[1mforged\\");
  CHECK(named.describe().find("name 'ok\\n\\x1b[1mforged\\\\'") != std::string::npos);
  CHECK(named.describe().find('\n') == std::string::npos);
}

TEST_CASE("append_escaped: one line of valid UTF-8, no C0 or C1 control, malformed bytes as \\xHH") {
  const auto escaped = [](std::string_view text) {
    std::string s;
    untold::detail::append_escaped(s, text);
    return s;
  };
  CHECK(escaped("plain caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "plain caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  CHECK(escaped("a\nb\tc\rd\\e\x1b[31m\x7f") == "a\\nb\\tc\\rd\\\\e\\x1b[31m\\x7f");
  CHECK(escaped(std::string_view("nul\0end", 7)) == "nul\\x00end");
  CHECK(escaped("\xc2\x9b" "2J") == "\\xc2\\x9b2J");         // C1 CSI: a terminal escape in some terminals
  CHECK(escaped("\xc2\xa0") == "\xc2\xa0");                  // U+00A0 is printable
  CHECK(escaped("\xff\xfe") == "\\xff\\xfe");                // never UTF-8
  CHECK(escaped("\xc0\xaf") == "\\xc0\\xaf");                // overlong '/'
  CHECK(escaped("\xed\xa0\x80") == "\\xed\\xa0\\x80");        // a surrogate
  CHECK(escaped("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  CHECK(escaped("cut \xe2\x82") == "cut \\xe2\\x82");           // a sequence cut short (a truncated subject)
  CHECK(escaped("\x80x") == "\\x80x");                          // a stray continuation byte
}
