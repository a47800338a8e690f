// to_untold's joint paths (names from the root joined by '/'): a chain is
// capped at limits.max_depth and the paths' total size is charged to the
// budget before one is built, so a deep chain of long names cannot make the
// writer quadratic in memory and output (issue 27, item 2).
#include <doctest/doctest.h>

#include <string>

#include <untold/convert/to_untold.hpp>
#include <untold/reader.hpp>

namespace cv = untold::convert;
using untold::errc;

namespace {

/// A scene with one skeleton: a chain of `depth` + 1 joints named `name`.
cv::scene chain(std::uint32_t depth, const std::string& name) {
  cv::scene s;
  s.nodes.push_back({.name = "root"});
  cv::skeleton sk{.name = "rig", .node = 0};
  for (std::uint32_t j = 0; j <= depth; ++j) sk.joints.push_back({.name = name, .parent = j == 0 ? cv::no_ref : j - 1});
  s.skeletons.push_back(sk);
  return s;
}

}  // namespace

TEST_CASE("to_untold: a joint chain deeper than limits.max_depth is R-LIMITS, at the limit it is written") {
  cv::conversion_report report;
  auto at_limit = cv::to_untold(chain(256, "j"), {}, report);
  REQUIRE_MESSAGE(at_limit.has_value(), at_limit.error().describe());
  auto a = untold::open(at_limit->file, {.deep_checks = true});
  REQUIRE_MESSAGE(a.has_value(), a.error().describe());
  const auto joints = a->table<untold::skeleton_joint_record>();
  REQUIRE(joints.size() == 257);
  CHECK(a->string(joints[256].joint_path_offset).size() == 257 * 2 - 1);  // "j/j/.../j"

  const auto deeper = cv::to_untold(chain(257, "j"), {}, report);
  REQUIRE_FALSE(deeper);
  CHECK(deeper.error().code == errc::limit_exceeded);
  CHECK(std::string_view(deeper.error().context.field) == "joint depth");
  CHECK(deeper.error().context.value == 257);
}

TEST_CASE("to_untold: the joint paths' size is charged to the budget before they are built") {
  // 201 joints of 1,000-byte names: the paths take about 20 MB (each repeats
  // its ancestors' names), from a scene of 200 KB of names.
  const cv::scene s = chain(200, std::string(1000, 'n'));
  untold::limits small;
  small.memory_per_input_byte = 64;
  small.memory_floor = 1 << 20;
  small.output_floor = 1 << 20;
  untold::budget budget(small, 200'000);  // 64 x 200 KB + 1 MiB: less than the paths need
  cv::to_untold_options options;
  options.budget = &budget;
  cv::conversion_report report;
  const auto refused = cv::to_untold(s, options, report);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == errc::limit_exceeded);
  CHECK(std::string_view(refused.error().context.field) == "joint paths");
  CHECK(refused.error().context.value == 201 * 1000 + 200 * 201 / 2 * 1001);  // the sum of the path lengths
  untold::budget roomy(untold::limits{}, 200'000);
  options.budget = &roomy;
  CHECK(cv::to_untold(s, options, report).has_value());
  CHECK(roomy.memory().used >= 20'000'000);
}
