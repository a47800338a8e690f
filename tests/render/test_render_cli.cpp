// `untold render` on the device that exists (lavapipe on CI): renders of the
// sample models compared with stored golden PNGs, byte-identical repeats,
// option errors and hostile files.
//
// The golden tolerance. Two pixels "match" when no channel differs by more
// than `channel_tolerance` (8 of 255): shading runs in float on the GPU and
// rounds to 8 bits, so another driver or CPU may move a shade by a level or
// two, never by 8 (the lighting is smooth, with no thresholds). At most
// `max_differing_fraction` (2%) of the pixels may differ by more: those are
// silhouette pixels, where coverage depends on the rasteriser's sub-pixel
// precision and fill rule (the 2 x 2 supersampling makes each such pixel move
// by a quarter step at most). A wrong camera, pose, clip time, colour or
// missing mesh moves far more than 2% (the golden renders cover 12-60% of
// their area; a test checks that the comparison sees a 0.1 s clip step). On
// the same machine and driver the render is byte-identical (tested too).
#include <doctest/doctest.h>

#include "cli_support.hpp"
#include "render_files.hpp"

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#define STBI_NO_STDIO
#include <stb/stb_image.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace cli_test;

constexpr int channel_tolerance = 8;
constexpr double max_differing_fraction = 0.02;

struct image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgba;
};

image decode(const std::vector<std::byte>& png) {
  image out;
  int channels = 0;
  stbi_uc* pixels = stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(png.data()), static_cast<int>(png.size()),
                                          &out.width, &out.height, &channels, 4);
  REQUIRE_MESSAGE(pixels != nullptr, "not a PNG stb_image reads");
  out.rgba.assign(pixels, pixels + std::size_t(out.width) * std::size_t(out.height) * 4);
  stbi_image_free(pixels);
  return out;
}

struct difference {
  std::size_t differing = 0, pixels = 0, covered = 0;  // covered: pixels of `b` unlike its corner (background)
  int max_channel = 0;
  [[nodiscard]] double fraction() const { return pixels == 0 ? 1.0 : double(differing) / double(pixels); }
};

difference compare(const image& a, const image& b) {
  difference d;
  REQUIRE(a.width == b.width);
  REQUIRE(a.height == b.height);
  d.pixels = std::size_t(a.width) * std::size_t(a.height);
  for (std::size_t p = 0; p < d.pixels; ++p) {
    int worst = 0;
    bool background = true;
    for (std::size_t c = 0; c < 4; ++c) {
      worst = std::max(worst, std::abs(int(a.rgba[p * 4 + c]) - int(b.rgba[p * 4 + c])));
      background = background && b.rgba[p * 4 + c] == b.rgba[c];
    }
    d.max_channel = std::max(d.max_channel, worst);
    d.differing += worst > channel_tolerance;
    d.covered += !background;
  }
  return d;
}

fs::path golden(const std::string& name) { return test_data("golden/render/" + name); }

/// Renders `args` into `dir`/out.png and returns its bytes (the run must succeed).
std::vector<std::byte> render(const fs::path& dir, const std::string& args) {
  const fs::path out = dir / "out.png";
  fs::remove(out);
  const run_result r = run_untold("render " + args + " -o " + quoted(out));
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return read_bytes(out);
}

/// Compares the render with the golden PNG `name` (with UNTOLD_UPDATE_GOLDEN=1
/// set, writes it instead: how the goldens were made).
void check_golden(const std::string& name, const std::string& args) {
  const std::vector<std::byte> png = render(scratch("golden_" + name), args);
  if (const char* update = std::getenv("UNTOLD_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    std::ofstream(golden(name), std::ios::binary).write(reinterpret_cast<const char*>(png.data()), std::streamsize(png.size()));
    WARN_MESSAGE(false, "wrote " << golden(name).string());
    return;
  }
  const std::vector<std::byte> stored = read_bytes(golden(name));
  REQUIRE_MESSAGE(!stored.empty(), "missing golden " << golden(name).string());
  const difference d = compare(decode(png), decode(stored));
  INFO(name << ": " << d.differing << " of " << d.pixels << " pixels differ by more than " << channel_tolerance
            << " (largest channel difference " << d.max_channel << "); the golden covers " << d.covered);
  CHECK(d.fraction() <= max_differing_fraction);
  CHECK(d.covered >= d.pixels / 10);  // the model fills a fair part of the frame: a match means something
}

const std::string jack = quoted(test_data("urho3d/Models/Jack.mdl"));
const std::string jack_walk = " --animations " + quoted(test_data("urho3d/Models/Jack_Walk.ani"));

}  // namespace

TEST_CASE("golden: Urho3D Jack.mdl posed by Jack_Walk.ani at 0.5 s, auto-framed") {
  check_golden("jack_walk.png", jack + jack_walk + " --animation 0 --time 0.5 --size 128x128");
}

TEST_CASE("golden: glTF sample, given camera and background, 160x96") {
  check_golden("sample_gltf.png", quoted(sample_model()) +
                                      " --size 160x96 --eye 2.5,1.5,3 --target 0,0,0 --fov 50 --background '#102040'");
}

TEST_CASE("golden: Pragma cube.pmdl_b") {
  check_golden("pmdl_cube.png", quoted(test_data("udm/models/cube.pmdl_b")) + " --size 96");
}

TEST_CASE("same input and options give the same bytes") {
  const fs::path dir = scratch("same_bytes_twice");
  const std::string args = jack + jack_walk + " --animation Walk --time 0.25 --size 200x120";
  const std::vector<std::byte> first = render(dir, args);
  const std::vector<std::byte> second = render(dir, args);
  REQUIRE(!first.empty());
  CHECK(first == second);
}

TEST_CASE("a 0.1 s clip step differs by more than the golden tolerance") {
  const fs::path dir = scratch("clip_step");
  const image a = decode(render(dir, jack + jack_walk + " --animation 0 --time 0.5 --size 128x128"));
  const image b = decode(render(dir, jack + jack_walk + " --animation 0 --time 0.6 --size 128x128"));
  CHECK(compare(a, b).fraction() > max_differing_fraction);
}

TEST_CASE("--size, --background and the PNG's dimensions") {
  const fs::path dir = scratch("size");
  const image wide = decode(render(dir, jack + " --size 64x32 --background '#ff000080'"));
  CHECK(wide.width == 64);
  CHECK(wide.height == 32);
  const std::uint8_t corner[4] = {wide.rgba[0], wide.rgba[1], wide.rgba[2], wide.rgba[3]};
  CHECK(corner[0] == 0xff);
  CHECK(corner[1] == 0);
  CHECK(corner[3] == 0x80);
  const image square = decode(render(dir, jack + " --size 40"));
  CHECK(square.width == 40);
  CHECK(square.height == 40);
}

TEST_CASE("option errors are usage errors (exit 2) that name the option") {
  const fs::path dir = scratch("option_errors");
  const std::string out = " -o " + quoted(dir / "x.png");
  for (const char* size : {"0x10", "abc", "5000x5000", "64x", "-3x4"}) {
    const run_result r = run_untold("render " + jack + out + " --size " + size);
    INFO("--size " << size << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--size") != std::string::npos);
  }
  const run_result clip = run_untold("render " + jack + jack_walk + out + " --animation Run");
  CHECK(clip.exit_code == 2);
  CHECK(clip.err.find("no such clip") != std::string::npos);
  CHECK(clip.err.find("'Walk'") != std::string::npos);  // the clips it has
  const run_result index = run_untold("render " + jack + jack_walk + out + " --animation 1");
  CHECK(index.exit_code == 2);
  const run_result fov = run_untold("render " + jack + out + " --fov 180");
  CHECK(fov.exit_code == 2);
  const run_result eye = run_untold("render " + jack + out + " --eye 1,2");
  CHECK(eye.exit_code == 2);
  CHECK(eye.err.find("--eye") != std::string::npos);
  const run_result background = run_untold("render " + jack + out + " --background red");
  CHECK(background.exit_code == 2);
  CHECK(!fs::exists(dir / "x.png"));
}

TEST_CASE("hostile and unreadable files report the rule and write nothing") {
  const fs::path dir = scratch("hostile");
  const fs::path out = dir / "x.png";
  // A .untold cut inside its header.
  const std::vector<std::byte> whole = read_bytes(test_data("minimal_v4.untold"));
  REQUIRE(whole.size() > 40);
  std::ofstream(dir / "cut.untold", std::ios::binary).write(reinterpret_cast<const char*>(whole.data()), 20);
  const run_result cut = run_untold("render " + quoted(dir / "cut.untold") + " -o " + quoted(out));
  INFO(cut.err);
  CHECK(cut.exit_code == 1);
  CHECK(cut.err.find("R-TRUNC-HEADER") != std::string::npos);
  // An Urho3D model whose vertex count runs past the file.
  std::vector<std::byte> box = read_bytes(test_data("urho3d/Models/Box.mdl"));
  REQUIRE(box.size() > 20);
  box.resize(box.size() / 2);
  std::ofstream(dir / "half.mdl", std::ios::binary).write(reinterpret_cast<const char*>(box.data()), std::streamsize(box.size()));
  const run_result half = run_untold("render " + quoted(dir / "half.mdl") + " -o " + quoted(out));
  INFO(half.err);
  CHECK(half.exit_code == 1);
  CHECK(half.err.find("U3D-") != std::string::npos);
  // A Pragma model and an assetc mesh cut after 100 bytes.
  for (const auto& cut_sample : {std::pair<std::string, std::string>{"udm/models/cube.pmdl_b", "UDM-BLOCK-RANGE"},
                                 {"assetc/quad.hmesh", "HM-TRUNC"}}) {
    const std::string& sample = cut_sample.first;
    const std::string& rule = cut_sample.second;
    const std::vector<std::byte> bytes = read_bytes(test_data(sample));
    REQUIRE(bytes.size() > 100);
    const fs::path cut_file = dir / fs::path(sample).filename();
    std::ofstream(cut_file, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), 100);
    const run_result r = run_untold("render " + quoted(cut_file) + " -o " + quoted(out));
    INFO(sample << ": " << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(rule) != std::string::npos);
  }
  // A clip file is not a model.
  const run_result clip = run_untold("render " + quoted(test_data("urho3d/Models/Jack_Walk.ani")) + " -o " + quoted(out));
  CHECK(clip.exit_code == 1);
  CHECK(clip.err.find("render cannot import this format (Urho3D animation") != std::string::npos);
  const run_result missing = run_untold("render " + quoted(dir / "missing.mdl") + " -o " + quoted(out));
  CHECK(missing.exit_code == 3);
  CHECK(!fs::exists(out));
}

TEST_CASE("--json reports the camera and counts") {
  const fs::path dir = scratch("json");
  const run_result r = run_untold("render " + jack + " --size 32 --json -o " + quoted(dir / "j.png"));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\"ok\": true") != std::string::npos);
  CHECK(r.out.find("\"camera\"") != std::string::npos);
  CHECK(r.out.find("\"triangles\"") != std::string::npos);
}

TEST_CASE("--lod draws each mesh's level, or its coarsest") {
  const fs::path dir = scratch("lod");
  const auto triangles = [&](const std::string& lod) {
    const run_result r = run_untold("render " + jack + " --size 16 --json --lod " + lod + " -o " + quoted(dir / "l.png"));
    REQUIRE(r.exit_code == 0);
    const std::size_t at = r.out.find("\"triangles\": ");
    REQUIRE(at != std::string::npos);
    return std::stoull(r.out.substr(at + 13));
  };
  // Jack.mdl: body and head, 7560 triangles at full detail, then levels 1 to 6.
  CHECK(triangles("0") == 7560);
  CHECK(triangles("1") == 4493);
  CHECK(triangles("5") == 550);
  CHECK(triangles("6") == 312);   // the coarsest of both
  CHECK(triangles("99") == 312);  // past it: the coarsest
}

TEST_CASE("a scene whose bounds reach the float range renders (the framed eye is clamped)") {
  const fs::path dir = scratch("huge");
  const std::vector<std::byte> file = render_test::grid_untold(10, 3.0e37f);  // 9 x 3e37: near FLT_MAX
  std::ofstream(dir / "huge.untold", std::ios::binary)
      .write(reinterpret_cast<const char*>(file.data()), std::streamsize(file.size()));
  const image picture = decode(render(dir, quoted(dir / "huge.untold") + " --size 32"));
  CHECK(picture.width == 32);
}
