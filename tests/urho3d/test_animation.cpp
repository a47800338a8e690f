// .ani: UANI and UAN2 built by the writer and by hand, read back, byte-exact
// round trips, one crafted file per rule.
#include <limits>

#include <untold/urho3d/animation.hpp>

#include "u3d_support.hpp"

namespace u3 = untold::urho3d;
using namespace u3d_test;
using untold::errc;

namespace {

struct hand_ani {
  bytes file;
  std::size_t track_mask, key_count, first_key, variant_type, variant_interp;
};

/// Hand-written: a "Walk" animation, track "Hips" (position+rotation, 2 keys),
/// track "Head" (scale, 1 key); UAN2 v>=2 adds a float variant track.
hand_ani make_ani(std::string_view id = "UANI", std::uint32_t version = 1) {
  hand_ani h{};
  gen g;
  g.id(id);
  const bool uan2 = id == "UAN2";
  if (uan2) g.u32(version);
  g.cstr("Walk").f32(1.5f).u32(2);
  g.cstr("Hips");
  h.track_mask = g.size();
  g.u8(3);
  if (uan2 && version >= 3) g.f32(0.75f);
  h.key_count = g.size();
  g.u32(2);
  h.first_key = g.size();
  g.f32(0).f32(0).f32(1).f32(0).f32(1).f32(0).f32(0).f32(0);
  g.f32(1.5f).f32(0).f32(1.1f).f32(0).f32(0.7071f).f32(0).f32(0.7071f).f32(0);
  g.cstr("Head").u8(4);
  if (uan2 && version >= 3) g.f32(1);
  g.u32(1).f32(0.5f).f32(2).f32(2).f32(2);
  if (uan2 && version >= 2) {
    g.u32(2);
    g.cstr("Light/brightness");
    h.variant_type = g.size();
    g.u8(3);  // float
    h.variant_interp = g.size();
    g.u8(1).f32(0.5f);
    if (version >= 3) g.f32(1);
    g.u32(2).f32(0).f32(0.25f).f32(1).f32(1.0f);
    g.cstr("Label/text").u8(9).u8(3).f32(0.5f);  // strings with tangents (in, out per key)
    if (version >= 3) g.f32(1);
    g.u32(1).f32(0).cstr("hello").cstr("in").cstr("out");
  }
  h.file = std::move(g.b);
  return h;
}

}  // namespace

TEST_CASE("urho3d animation: hand-made UANI and UAN2 read and round-trip byte-exactly") {
  for (const auto& variant : {std::pair<std::string_view, std::uint32_t>{"UANI", 1}, {"UAN2", 1}, {"UAN2", 2}, {"UAN2", 3}}) {
    const std::string_view id = variant.first;
    const std::uint32_t version = variant.second;
    CAPTURE(id);
    CAPTURE(version);
    const hand_ani h = make_ani(id, version);
    auto a = u3::open_animation(h.file, {.deep_checks = true});
    REQUIRE_MESSAGE(a.has_value(), a.error().describe());
    CHECK(a->name == "Walk");
    CHECK(a->length == 1.5f);
    REQUIRE(a->tracks.size() == 2);
    CHECK(a->tracks[0].name == "Hips");
    CHECK(a->tracks[0].keyframe_count == 2);
    const u3::keyframe k = a->tracks[0].key(1);
    CHECK(k.time == 1.5f);
    CHECK(k.position[1] == 1.1f);
    CHECK(k.rotation[0] == 0.7071f);  // w first in the file
    CHECK(k.scale == u3::float3{1, 1, 1});
    CHECK(a->tracks[1].key(0).scale == u3::float3{2, 2, 2});
    CHECK(a->tracks[0].weight == (version >= 3 ? 0.75f : 1.0f));
    CHECK(a->variant_tracks.size() == (id == "UAN2" && version >= 2 ? 2u : 0u));
    CHECK(a->keyframe_total() == 3 + (id == "UAN2" && version >= 2 ? 3u : 0u));
    auto again = u3::write_animation(*a);
    REQUIRE(again);
    CHECK(*again == h.file);
  }
}

TEST_CASE("urho3d animation: the engine's own Jack_Walk.ani reads, deep-validates and round-trips byte-exactly") {
  const bytes file = load(data_dir() / "Models/Jack_Walk.ani");
  auto a = u3::open_animation(file, {.deep_checks = true});
  REQUIRE_MESSAGE(a.has_value(), a.error().describe());
  CHECK(a->kind == u3::animation_kind::uani);
  CHECK(a->name == "Walk");
  CHECK(a->length == doctest::Approx(1.0667).epsilon(1e-4));
  REQUIRE(a->tracks.size() == 54);
  CHECK(a->tracks[0].name == "Bip01");
  for (const u3::track& t : a->tracks) {
    CAPTURE(t.name);
    CHECK(t.keyframe_count == 32);
    CHECK(t.mask == (u3::channel_position | u3::channel_rotation));
  }
  CHECK(a->keyframe_total() == 54 * 32);
  auto again = u3::write_animation(*a);
  REQUIRE(again);
  CHECK(*again == file);
}

TEST_CASE("urho3d animation: the writer's file equals the hand-made one") {
  // Built from values, not from a parsed file.
  gen hips_keys;
  hips_keys.f32(0).f32(0).f32(1).f32(0).f32(1).f32(0).f32(0).f32(0);
  hips_keys.f32(1.5f).f32(0).f32(1.1f).f32(0).f32(0.7071f).f32(0).f32(0.7071f).f32(0);
  gen head_keys;
  head_keys.f32(0.5f).f32(2).f32(2).f32(2);
  u3::animation a;
  a.name = "Walk";
  a.length = 1.5f;
  a.tracks.push_back({.name = "Hips", .mask = 3, .weight = 1, .keyframe_count = 2, .keys = hips_keys.b});
  a.tracks.push_back({.name = "Head", .mask = 4, .weight = 1, .keyframe_count = 1, .keys = head_keys.b});
  auto written = u3::write_animation(a);
  REQUIRE(written);
  CHECK(*written == make_ani().file);
}

TEST_CASE("urho3d animation: one crafted file per rule") {
  const hand_ani h = make_ani("UAN2", 3);
  SUBCASE("U3D-MAGIC") {
    bytes b = h.file;
    b[3] = std::byte{'X'};
    U3D_CHECK_ERR(u3::open_animation(b), errc::u3d_bad_magic);
  }
  SUBCASE("U3D-VERSION") { U3D_CHECK_ERR(u3::open_animation(make_ani("UAN2", 4).file), errc::u3d_bad_version); }
  SUBCASE("U3D-TRUNC / U3D-COUNT / U3D-STRING at every length") {
    for (std::size_t n = 0; n < h.file.size(); ++n) {
      const bytes cut(h.file.begin(), h.file.begin() + static_cast<std::ptrdiff_t>(n));
      auto a = u3::open_animation(cut);
      REQUIRE_FALSE(a.has_value());
      const errc e = a.error().code;
      CHECK_MESSAGE((e == errc::u3d_truncated || e == errc::u3d_count_too_large || e == errc::u3d_missing_nul ||
                     e == errc::u3d_bad_magic),
                    n << ": " << a.error().describe());
    }
  }
  SUBCASE("U3D-COUNT") {
    bytes b = h.file;
    put_u32(b, h.key_count, 0x00100000u);
    U3D_CHECK_ERR(u3::open_animation(b), errc::u3d_count_too_large);
  }
  SUBCASE("R-LIMITS: keyframes") {
    u3::animation_options o;
    o.limits.max_records = 2;
    U3D_CHECK_ERR(u3::open_animation(h.file, o), errc::limit_exceeded);
  }
  SUBCASE("U3D-TRACK-MASK") {
    bytes b = h.file;
    b[h.track_mask] = std::byte{8};
    U3D_CHECK_ERR(u3::open_animation(b), errc::u3d_track_mask);
  }
  SUBCASE("U3D-VARIANT-TYPE") {
    bytes b = h.file;
    b[h.variant_type] = std::byte{15};  // VariantMap: not sized here
    U3D_CHECK_ERR(u3::open_animation(b), errc::u3d_variant_type);
  }
  SUBCASE("U3D-INTERPOLATION") {
    bytes b = h.file;
    b[h.variant_interp] = std::byte{4};
    U3D_CHECK_ERR(u3::open_animation(b), errc::u3d_interpolation);
  }
  SUBCASE("U3D-FINITE and U3D-KEY-ORDER (deep only)") {
    bytes nan = h.file;
    put_f32(nan, h.first_key + 8, std::numeric_limits<float>::quiet_NaN());
    CHECK(u3::open_animation(nan).has_value());
    U3D_CHECK_ERR(u3::open_animation(nan, {.deep_checks = true}), errc::u3d_not_finite);
    bytes order = h.file;
    put_f32(order, h.first_key, 2.0f);  // key 0 at 2 s, key 1 at 1.5 s
    CHECK(u3::open_animation(order).has_value());
    U3D_CHECK_ERR(u3::open_animation(order, {.deep_checks = true}), errc::u3d_key_order);
  }
  SUBCASE("U3D-TRAILING") {
    bytes b = h.file;
    b.push_back(std::byte{0});
    U3D_CHECK_ERR(u3::open_animation(b), errc::u3d_trailing_bytes);
  }
  SUBCASE("the writer refuses variant tracks a UANI cannot hold") {
    auto a = u3::open_animation(h.file);
    REQUIRE(a);
    a->kind = u3::animation_kind::uani;
    U3D_CHECK_ERR(u3::write_animation(*a), errc::invalid_argument);
  }
}
