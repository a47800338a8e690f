// The Urho3D commands under hostile input (issue 27): `info` summarises huge
// lists (--full prints them), `cook` names the rule for NaN UVs and LOD
// distances and accepts the engine's own NaN geometry centres, and
// `pak extract` checks the whole package and the output directory before
// it writes anything, writes through a temporary directory and never
// follows a symbolic link.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <untold/urho3d/model.hpp>
#include <untold/urho3d/package.hpp>

#include "cli_support.hpp"

using namespace cli_test;
using json = nlohmann::json;
namespace u3 = untold::urho3d;

namespace {

void write_bytes(const fs::path& p, const std::vector<std::byte>& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::byte> as_bytes(std::string_view s) {
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

/// Every file and directory under `dir` (none when it does not exist), as
/// generic relative paths.
std::vector<std::string> tree(const fs::path& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.push_back(e.path().lexically_relative(dir).generic_string());
  std::sort(out.begin(), out.end());
  return out;
}

/// A valid model (no vertices) whose one vertex buffer declares `elements`
/// FLOAT TEXCOORD elements: 4 bytes each in the file.
std::vector<std::byte> many_elements(std::uint32_t elements) {
  u3::model m;
  m.kind = u3::model_kind::umd2;
  m.vertex_buffers.resize(1);
  m.vertex_buffers[0].elements.assign(elements, {u3::element_type::float32, u3::element_semantic::texcoord, 0, 0});
  auto bytes = u3::write_model(m);
  REQUIRE_MESSAGE(bytes.has_value(), bytes.error().describe());
  return *bytes;
}

/// One triangle with a position and a VECTOR2 uv per vertex; `uv` is vertex
/// 1's u, `distance` the LOD distance.
std::vector<std::byte> uv_model(float uv, float distance) {
  const float vertices[3][5] = {{0, 0, 0, 0.5f, 0.5f}, {1, 0, 0, uv, 0.5f}, {0, 1, 0, 0.5f, 0.5f}};
  const std::uint16_t indices[3] = {0, 1, 2};
  u3::model m;
  m.kind = u3::model_kind::umd2;
  m.vertex_buffers.resize(1);
  auto& vb = m.vertex_buffers[0];
  vb.vertex_count = 3;
  vb.elements = {{u3::element_type::vector3, u3::element_semantic::position, 0, 0},
                 {u3::element_type::vector2, u3::element_semantic::texcoord, 0, 0}};
  vb.vertex_size = u3::layout(vb.elements);
  vb.data = untold::byte_span(reinterpret_cast<const std::byte*>(vertices), sizeof(vertices));
  m.index_buffers.push_back({3, 2, untold::byte_span(reinterpret_cast<const std::byte*>(indices), sizeof(indices))});
  m.geometries.push_back({{}, {{distance, u3::primitive_type::triangle_list, 0, 0, 0, 3}}});
  m.bounds_max = {1, 1, 0};
  auto bytes = u3::write_model(m);
  REQUIRE_MESSAGE(bytes.has_value(), bytes.error().describe());
  return *bytes;
}

}  // namespace

TEST_CASE("info on a model of a million-ish vertex elements prints a summary, --full prints every item") {
  const fs::path dir = scratch("u3d_info_summary");
  const fs::path file = dir / "elements.mdl";
  write_bytes(file, many_elements(100000));  // 400 KB
  const run_result r = run_untold("info --json " + quoted(file));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.size() < 8192);  // it printed every element: about 8 MB
  json i = json::parse(r.out)[0];
  CHECK(i["vertexBufferCount"] == 1);
  CHECK(i["vertexBuffers"][0]["elementCount"] == 100000);
  CHECK(i["vertexBuffers"][0]["elements"].size() == 16);
  CHECK(i["truncated"].get<std::string>().find("--full") != std::string::npos);
  const run_result text = run_untold("info " + quoted(file));
  CHECK(text.exit_code == 0);
  CHECK(text.out.size() < 8192);

  const fs::path small = dir / "small.mdl";
  write_bytes(small, many_elements(20));
  const run_result full = run_untold("info --json --full " + quoted(small));
  REQUIRE(full.exit_code == 0);
  json f = json::parse(full.out)[0];
  CHECK(f["vertexBuffers"][0]["elements"].size() == 20);
  CHECK_FALSE(f.contains("truncated"));
}

TEST_CASE("cook names U3D-FINITE for a NaN uv or LOD distance, not a generic invalid argument") {
  const fs::path dir = scratch("u3d_cook_finite");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  write_bytes(dir / "fine.mdl", uv_model(0.25f, 0));
  write_bytes(dir / "uv.mdl", uv_model(nan, 0));
  write_bytes(dir / "lod.mdl", uv_model(0.25f, nan));
  CHECK(run_untold("cook " + quoted(dir / "fine.mdl") + " -o " + quoted(dir / "fine.untold")).exit_code == 0);
  for (const char* name : {"uv", "lod"}) {
    CAPTURE(name);
    const run_result v = run_untold("validate --deep " + quoted(dir / (std::string(name) + ".mdl")));
    CHECK(v.exit_code == 1);
    CHECK(v.out.find("U3D-FINITE") != std::string::npos);
    CHECK(v.out.find("value nan (bits 0x7fc00000)") != std::string::npos);
    const run_result c = run_untold("cook " + quoted(dir / (std::string(name) + ".mdl")) + " -o " +
                                    quoted(dir / (std::string(name) + ".untold")));
    CHECK(c.exit_code == 1);
    CHECK(c.err.find("U3D-FINITE") != std::string::npos);
    CHECK(c.err.find("E-INVALID-ARGUMENT") == std::string::npos);
    CHECK_FALSE(fs::exists(dir / (std::string(name) + ".untold")));
  }
}

TEST_CASE("the engine's 2011 models with NaN geometry centres: validate, info says so, cook reports the change") {
  const fs::path dir = scratch("u3d_nan_centres");
  const fs::path box = test_data("urho3d/Models/History2011/Box.mdl");
  const run_result v = run_untold("validate --deep " + quoted(box) + " " +
                                  quoted(test_data("urho3d/Models/History2011/CloudPlane.mdl")));
  CHECK_MESSAGE(v.exit_code == 0, v.out);
  const run_result info = run_untold("info --json " + quoted(box));
  REQUIRE(info.exit_code == 0);
  json i = json::parse(info.out)[0];
  CHECK(i["nonFiniteGeometryCenters"] == 1);
  CHECK(i["note"].get<std::string>().find("bounding box") != std::string::npos);
  const run_result cook = run_untold("cook --json " + quoted(box) + " -o " + quoted(dir / "box.untold"));
  REQUIRE_MESSAGE(cook.exit_code == 0, cook.err);
  json c = json::parse(cook.out);
  bool changed = false;
  for (const json& e : c["report"])
    if (e["what"] == "geometry centres") changed = e["severity"] == "changed" && e["count"] == 1;
  CHECK(changed);
  CHECK(run_untold("validate --deep " + quoted(dir / "box.untold")).exit_code == 0);
}

TEST_CASE("pak extract: entries 'a' and 'a/b' are U3D-PAK-PATH before anything is written") {
  const fs::path dir = scratch("u3d_pak_conflict");
  const auto x = as_bytes("x");
  const std::vector<u3::package_input> in = {{"a", x}, {"a/b", x}};
  auto pak = u3::write_package(in);
  REQUIRE(pak);
  write_bytes(dir / "c.pak", *pak);
  const run_result r = run_untold("pak extract " + quoted(dir / "c.pak") + " -o " + quoted(dir / "out") + " --json");
  CHECK(r.exit_code == 1);
  CHECK(json::parse(r.out)["error"]["rule"] == "U3D-PAK-PATH");
  CHECK(tree(dir / "out").empty());  // it used to write 'a', then fail on 'a/b' with exit 3
  // One of them alone extracts.
  const run_result one = run_untold("pak extract " + quoted(dir / "c.pak") + " a/b -o " + quoted(dir / "one"));
  CHECK(one.exit_code == 0);
  CHECK(tree(dir / "one") == std::vector<std::string>{"a", "a/b"});
}

TEST_CASE("pak extract: a bad checksum on a later entry leaves nothing written") {
  const fs::path dir = scratch("u3d_pak_checksum");
  const auto first = as_bytes("first entry"), second = as_bytes("second entry");
  const std::vector<u3::package_input> in = {{"one.txt", first}, {"two.txt", second}};
  auto pak = u3::write_package(in);
  REQUIRE(pak);
  auto p = u3::open_package(*pak);
  REQUIRE(p);
  std::vector<std::byte> bad = *pak;
  bad[p->entries[1].offset] ^= std::byte{1};  // the second entry's first byte
  write_bytes(dir / "bad.pak", bad);
  const run_result r = run_untold("pak extract " + quoted(dir / "bad.pak") + " -o " + quoted(dir / "out"));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("U3D-PAK-CHECKSUM") != std::string::npos);
  CHECK(tree(dir / "out").empty());  // 'one.txt' used to be written first
}

TEST_CASE("pak extract: a symbolic link in the output directory is never followed") {
  const fs::path dir = scratch("u3d_pak_symlink");
  const auto data = as_bytes("payload");
  const std::vector<u3::package_input> in = {{"Models/x.txt", data}, {"y.txt", data}};
  auto pak = u3::write_package(in);
  REQUIRE(pak);
  write_bytes(dir / "p.pak", *pak);
  fs::create_directories(dir / "elsewhere");
  fs::create_directories(dir / "out");
  fs::create_directory_symlink(dir / "elsewhere", dir / "out/Models");
  const run_result r = run_untold("pak extract " + quoted(dir / "p.pak") + " -o " + quoted(dir / "out"));
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("symbolic link") != std::string::npos);
  CHECK(tree(dir / "elsewhere").empty());  // nothing written through the link
  CHECK(tree(dir / "out") == std::vector<std::string>{"Models"});  // nothing else either

  // A link where a file goes is not followed (nor replaced) either.
  fs::remove(dir / "out/Models");
  write_bytes(dir / "elsewhere/target.txt", as_bytes("keep"));
  fs::create_symlink(dir / "elsewhere/target.txt", dir / "out/y.txt");
  const run_result leaf = run_untold("pak extract " + quoted(dir / "p.pak") + " -o " + quoted(dir / "out"));
  CHECK(leaf.exit_code == 3);
  CHECK(read_text(dir / "elsewhere/target.txt") == "keep");

  // Without links it extracts, over existing regular files, and leaves no temporary directory.
  fs::remove(dir / "out/y.txt");
  write_bytes(dir / "out/y.txt", as_bytes("old"));
  const run_result ok = run_untold("pak extract " + quoted(dir / "p.pak") + " -o " + quoted(dir / "out"));
  CHECK_MESSAGE(ok.exit_code == 0, ok.err);
  CHECK(tree(dir / "out") == std::vector<std::string>{"Models", "Models/x.txt", "y.txt"});
  CHECK(read_text(dir / "out/y.txt") == "payload");
}

TEST_CASE("pak extract applies validate's limits, --max-total-bytes sets them on purpose") {
  const fs::path dir = scratch("u3d_pak_limits");
  const std::vector<std::byte> kb(1000, std::byte{'k'});
  const std::vector<u3::package_input> in = {{"a.bin", kb}, {"b.bin", kb}, {"c.bin", kb}};
  auto pak = u3::write_package(in, {.compress = true});
  REQUIRE(pak);
  write_bytes(dir / "p.pak", *pak);
  const run_result low = run_untold("pak extract " + quoted(dir / "p.pak") + " --max-total-bytes 2999 -o " +
                                    quoted(dir / "low") + " --json");
  CHECK(low.exit_code == 1);
  json e = json::parse(low.out)["error"];
  CHECK(e["rule"] == "R-LIMITS");
  CHECK(e["describe"].get<std::string>().find("limit 2999") != std::string::npos);
  CHECK(tree(dir / "low").empty());
  const run_result enough = run_untold("pak extract " + quoted(dir / "p.pak") + " --max-total-bytes 3000 -o " +
                                       quoted(dir / "enough"));
  CHECK(enough.exit_code == 0);
  CHECK(tree(dir / "enough").size() == 3);
}
