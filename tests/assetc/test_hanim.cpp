// .hanim v1: hand-made bytes, round trip, crafted files per rule.
#include "assetc_support.hpp"

#include <limits>

using namespace hm_test;

namespace {

const float t_times[] = {0, 0.5f, 1};
const float t_values[] = {0, 0, 0, 1, 0, 0, 2, 0, 0};
const float r_times[] = {0, 1};
const float r_values[] = {0, 0, 0, 1, 0, 0.7071f, 0, 0.7071f};

std::vector<ua::anim_channel_input> walk_channels() {
  return {{1, ua::anim_path::translation, ua::anim_interp::linear, t_times, t_values},
          {0, ua::anim_path::rotation, ua::anim_interp::step, r_times, r_values}};
}

/// "walk" (2 channels) and "idle" (no channels), by hand.
bytes hand_made_hanim() {
  gen g;
  g.tag("HANM"), g.u32(1), g.u32(2), g.u32(0);
  g.u16(4), g.str("walk"), g.f32(1), g.u32(2);
  g.u32(1), g.u8(0), g.u8(1), g.u8(3), g.u8(0), g.u32(3);
  for (int k = 0; k < 3; ++k) {
    g.f32(t_times[k]);
    for (int c = 0; c < 3; ++c) g.f32(t_values[3 * k + c]);
  }
  g.u32(0), g.u8(1), g.u8(0), g.u8(4), g.u8(0), g.u32(2);
  for (int k = 0; k < 2; ++k) {
    g.f32(r_times[k]);
    for (int c = 0; c < 4; ++c) g.f32(r_values[4 * k + c]);
  }
  g.u16(4), g.str("idle"), g.f32(0), g.u32(0);
  return g.out;
}

// Offsets in hand_made_hanim(): clip 0 at 16; channel 0 at 16 + 2 + 4 + 4 + 4 = 30.
constexpr std::size_t channel0 = 30;
constexpr std::size_t channel1 = channel0 + 12 + 3 * 16;

std::string rule(const bytes& b, bool deep = false, untold::limits lim = {}) {
  return rule_of(ua::open_hanim(span(b), {.limits = lim, .deep_checks = deep}));
}

}  // namespace

TEST_CASE("hanim: writer bytes equal the hand-made file, clips read back") {
  const auto channels = walk_channels();
  const ua::anim_clip_input clips[] = {{"walk", 1.0f, channels}, {"idle", 0.0f, {}}};
  auto out = ua::write_hanim(clips);
  REQUIRE_MESSAGE(out, out.error().describe());
  CHECK(*out == hand_made_hanim());
  auto a = ua::open_hanim(span(*out), {.deep_checks = true});
  REQUIRE(a);
  REQUIRE(a->clips().size() == 2);
  CHECK(a->clips()[0].name == "walk");
  CHECK(a->clips()[1].name == "idle");
  CHECK(a->clips()[0].duration == 1.0f);
  REQUIRE(a->channels(0).size() == 2);
  CHECK(a->channels(1).empty());
  const ua::anim_channel& t = a->channels(0)[0];
  CHECK(t.joint == 1);
  CHECK(t.path == ua::anim_path::translation);
  CHECK(t.components == 3);
  CHECK(t.key_count == 3);
  CHECK(t.time(1) == 0.5f);
  CHECK(t.value(2, 0) == 2.0f);
  const ua::anim_channel& r = a->channels(0)[1];
  CHECK(r.interp == ua::anim_interp::step);
  CHECK(r.components == 4);
  CHECK(r.value(1, 3) == 0.7071f);
}

TEST_CASE("hanim rules") {
  bytes b = hand_made_hanim();
  REQUIRE(rule(b, true) == "OK");
  SUBCASE("HM-MAGIC / HM-VERSION") {
    wr32(b, 4, 2);
    CHECK(rule(b) == "HM-VERSION");
    b[0] = std::byte{'h'};
    CHECK(rule(b) == "HM-MAGIC");
  }
  SUBCASE("HM-COUNT: clipCount larger than the bytes") {
    wr32(b, 8, 100000);
    CHECK(rule(b) == "HM-COUNT");
  }
  SUBCASE("HM-COUNT: channelCount larger than the bytes") {
    wr32(b, 26, 0x10000000u);
    CHECK(rule(b, false, {.max_records = 0xFFFFFFFFu}) == "HM-COUNT");
  }
  SUBCASE("HM-COUNT: keyCount x stride larger than the bytes") {
    wr32(b, channel0 + 8, 0x40000000u);
    CHECK(rule(b, false, {.max_records = 0xFFFFFFFFu}) == "HM-COUNT");
  }
  SUBCASE("HM-LIMITS: keys") {
    CHECK(rule(b, false, {.max_records = 4}) == "HM-LIMITS");
  }
  SUBCASE("HM-TRUNC") {
    b.resize(b.size() - 2);
    CHECK(rule(b) == "HM-TRUNC");
  }
  SUBCASE("HM-TRAILING") {
    b.push_back(std::byte{0});
    CHECK(rule(b) == "HM-TRAILING");
  }
  SUBCASE("HM-HANIM-CHANNEL: path") {
    b[channel0 + 4] = std::byte{3};
    CHECK(rule(b) == "HM-HANIM-CHANNEL");
  }
  SUBCASE("HM-HANIM-CHANNEL: interp (CUBICSPLINE = 2 is not stored)") {
    b[channel0 + 5] = std::byte{2};
    CHECK(rule(b) == "HM-HANIM-CHANNEL");
  }
  SUBCASE("HM-HANIM-COMPONENTS: 5") {
    b[channel0 + 6] = std::byte{5};
    CHECK(rule(b) == "HM-HANIM-COMPONENTS");
  }
  SUBCASE("HM-HANIM-COMPONENTS: 4 for a translation") {
    b[channel0 + 6] = std::byte{4};
    CHECK(rule(b) == "HM-HANIM-COMPONENTS");
  }
  SUBCASE("HM-HANIM-COMPONENTS: 3 for a rotation") {
    b[channel1 + 6] = std::byte{3};
    CHECK(rule(b) == "HM-HANIM-COMPONENTS");
  }
  SUBCASE("HM-HANIM-TIME: decreasing") {
    wrf(b, channel0 + 12 + 16 * 2, 0.25f);
    CHECK(rule(b) == "HM-HANIM-TIME");
  }
  SUBCASE("HM-HANIM-TIME: equal times are fine") {
    wrf(b, channel0 + 12 + 16 * 2, 0.5f);
    CHECK(rule(b) == "OK");
  }
  SUBCASE("HM-HANIM-TIME: NaN") {
    wrf(b, channel0 + 12, std::numeric_limits<float>::quiet_NaN());
    CHECK(rule(b) == "HM-HANIM-TIME");
  }
  SUBCASE("HM-HANIM-TIME: negative duration") {
    wrf(b, 22, -1.0f);
    CHECK(rule(b) == "HM-HANIM-TIME");
  }
  SUBCASE("HM-FINITE (deep only)") {
    wrf(b, channel0 + 12 + 4, std::numeric_limits<float>::infinity());
    CHECK(rule(b) == "OK");
    CHECK(rule(b, true) == "HM-FINITE");
  }
  SUBCASE("the writer refuses mismatched values and decreasing times") {
    auto ch = walk_channels();
    ch[0].values = std::span(t_values).first(8);
    const ua::anim_clip_input clip{"x", 1, ch};
    CHECK(rule_of(ua::write_hanim(std::span(&clip, 1))) == "E-INVALID-ARGUMENT");
    const float back[] = {1, 0, 2};
    ch = walk_channels();
    ch[0].times = back;
    const ua::anim_clip_input clip2{"x", 1, ch};
    CHECK(rule_of(ua::write_hanim(std::span(&clip2, 1))) == "HM-HANIM-TIME");
  }
}

TEST_CASE("hanim: many clips open in linear time") {
  // 100k clips of one empty channel: a per-clip exact reserve made this quadratic.
  gen g;
  constexpr std::uint32_t clips = 100000;
  g.tag("HANM"), g.u32(1), g.u32(clips), g.u32(0);
  for (std::uint32_t c = 0; c < clips; ++c) {
    g.u16(1), g.str("c"), g.f32(0), g.u32(1);
    g.u32(0), g.u8(2), g.u8(1), g.u8(3), g.u8(0), g.u32(0);
  }
  auto a = ua::open_hanim(span(g.out));
  REQUIRE(a);
  CHECK(a->clips().size() == clips);
  CHECK(a->all_channels().size() == clips);
  CHECK(a->channels(clips - 1)[0].path == ua::anim_path::scale);
}
