// The glTF importer (tools/pipeline/import_gltf.hpp, TinyGLTF underneath):
// the data assimp used to lose (per-slot KHR_texture_transform, sampler
// filters, morph target names, extras) reaches the scene and cook's report,
// and each rejection of a hostile file has its crafted input.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include <untold/detail/base64.hpp>

#include "cli_support.hpp"
#include "import_gltf.hpp"

namespace fs = std::filesystem;
namespace uc = untold::convert;
using json = nlohmann::json;
using namespace cli_test;

namespace {

fs::path fixture() { return test_data("gltf/texture_transform.gltf"); }

/// The fixture with `edit` applied, written to a fresh directory as model.gltf.
template <class Edit>
fs::path edited(const std::string& name, Edit&& edit) {
  const fs::path dir = scratch("import_gltf_" + name);
  json doc = json::parse(read_text(fixture()));
  edit(doc);
  std::ofstream(dir / "model.gltf") << doc.dump();
  return dir / "model.gltf";
}

}  // namespace

TEST_CASE("import_gltf: two texture slots keep their own KHR_texture_transform, uv set and sampler filters") {
  const auto r = untold::tools::import_model(fixture());
  REQUIRE_MESSAGE(r, r.error);
  CHECK(r.gltf);
  REQUIRE(r.scene.materials.size() == 1);
  const uc::material& m = r.scene.materials[0];
  CHECK(m.name == "skin");

  const uc::texture_slot& base = m.base_color_texture;
  CHECK(base.texture == 0);
  CHECK(base.uv_set == 0);
  CHECK(base.has_transform);
  CHECK(base.offset == std::array<float, 2>{0.5f, 0.0f});
  CHECK(base.scale == std::array<float, 2>{2.0f, 2.0f});
  CHECK(base.rotation == 0.5f);
  CHECK(base.mag_filter == uc::texture_filter::nearest);
  CHECK(base.min_filter == uc::texture_filter::linear_mipmap_linear);
  CHECK(base.wrap == std::array<uc::wrap_mode, 2>{uc::wrap_mode::clamp, uc::wrap_mode::repeat});

  const uc::texture_slot& glow = m.emissive_texture;
  CHECK(glow.texture == 1);
  CHECK(glow.uv_set == 1);  // KHR_texture_transform's texCoord overrides the slot's
  CHECK(glow.has_transform);
  CHECK(glow.offset == std::array<float, 2>{0.0f, 0.25f});
  CHECK(glow.scale == std::array<float, 2>{1.0f, 3.0f});
  CHECK(glow.rotation == 0.0f);
  CHECK(glow.mag_filter == uc::texture_filter::linear);
  CHECK(glow.min_filter == uc::texture_filter::nearest_mipmap_nearest);

  // Images as the glTF lists them, never decoded: URI and the header's size.
  REQUIRE(r.scene.textures.size() == 2);
  CHECK(r.scene.textures[0].uri == "checker.png");
  CHECK(r.scene.textures[0].width == 2);
  CHECK(r.scene.textures[0].srgb);
  CHECK(r.scene.textures[1].uri == "glow.png");
  CHECK(r.scene.textures[1].embedded.empty());
}

TEST_CASE("import_gltf: morph target names and default weights, extras, instancing") {
  const auto r = untold::tools::import_model(fixture());
  REQUIRE_MESSAGE(r, r.error);
  REQUIRE(r.scene.meshes.size() == 1);
  const uc::mesh& m = r.scene.meshes[0];
  REQUIRE(m.morphs.size() == 2);
  CHECK(m.morphs[0].name == "smile");
  CHECK(m.morphs[0].default_weight == 0.25f);
  CHECK(m.morphs[0].position_deltas == std::vector<float>{0, 0, 0.5f, 0, 0, 0.5f, 0, 0, 0.5f});
  CHECK(m.morphs[1].name == "frown");
  CHECK(m.morphs[1].default_weight == 0.0f);
  CHECK(json::parse(m.extras) == json{{"targetNames", {"smile", "frown"}}, {"rig", "v2"}});
  CHECK(json::parse(r.scene.materials[0].extras) == json{{"shader", "toon"}});
  REQUIRE(r.scene.nodes.size() == 3);
  CHECK(json::parse(r.scene.nodes[0].extras) == json{{"tag", "root"}, {"lod_bias", 2}});
  CHECK(r.scene.nodes[1].extras.empty());
  // One mesh drawn by two nodes.
  CHECK(r.scene.nodes[1].meshes == std::vector<std::uint32_t>{0});
  CHECK(r.scene.nodes[2].meshes == std::vector<std::uint32_t>{0});
  CHECK(r.scene.nodes[2].parent == 0);
  CHECK(r.scene.nodes[2].local.translation == std::array<float, 3>{1, 0, 0});
  // The import itself lost nothing.
  CHECK_FALSE(r.scene.report.lost_anything());
}

TEST_CASE("import_gltf: cook reports only what .untold cannot hold (filters, extras), no longer the morph names") {
  const fs::path dir = scratch("import_gltf_cook");
  for (const char* f : {"texture_transform.gltf", "checker.png", "glow.png"})
    fs::copy_file(test_data(std::string("gltf/") + f), dir / f);
  const run_result r = run_untold("cook --json " + quoted(dir / "texture_transform.gltf") + " -o " + quoted(dir / "out.untold"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const json j = json::parse(r.out);
  std::map<std::string, std::uint64_t> dropped;
  for (const json& e : j["report"])
    if (e["severity"] == "dropped") dropped[e["what"].get<std::string>()] += e["count"].get<std::uint64_t>();
  CHECK(dropped["sampler filters"] == 2);        // both slots of the material
  CHECK(dropped["extras"] == 3);                 // root node, mesh, material
  CHECK(dropped.count("texture sampler filters") == 0);  // the importer's old entry: filters now reach the scene
  CHECK(dropped.count("morph targets") == 0);
}

TEST_CASE("import_gltf: hostile files are refused with the reason") {
  auto refused = [](const fs::path& p, const std::string& why) {
    const auto r = untold::tools::import_model(p);
    CHECK_FALSE(r);
    CHECK_MESSAGE(r.error.find("cannot import") != std::string::npos, r.error);
    CHECK_MESSAGE(r.error.find(why) != std::string::npos, r.error);
  };
  SUBCASE("an accessor past the end of its bufferView") {
    refused(edited("range", [](json& d) { d["accessors"][0]["byteOffset"] = 8; }), "exceed bufferView 0's 36 bytes");
  }
  SUBCASE("an element count whose byte size overflows") {
    refused(edited("overflow", [](json& d) { d["accessors"][0]["count"] = 0x4000000000000001ull; }),
            "elements of 12 bytes");
  }
  SUBCASE("accessor data beyond the input's budget (no bufferView: zeros, no bytes to check)") {
    refused(edited("budget", [](json& d) {
              d["accessors"][0].erase("bufferView");
              d["accessors"][0]["count"] = 200000000;
            }),
            "R-LIMITS");
  }
  SUBCASE("a bufferView past the end of its buffer") {
    refused(edited("view", [](json& d) { d["bufferViews"][0]["byteLength"] = 100000; }), "exceeds its buffer's");
  }
  SUBCASE("an index past the vertices") {
    // The indices read from the bytes of 0.5f (00 00 00 3F): 0, 16128, ...
    refused(edited("index", [](json& d) {
              d["accessors"][3]["bufferView"] = 4;
              d["accessors"][3]["byteOffset"] = 8;
            }),
            "index 16128 is not below the 3 vertices");
  }
  SUBCASE("a component type the attribute cannot hold") {
    refused(edited("ctype", [](json& d) { d["accessors"][1]["componentType"] = 5125; }), "component type 5125");
  }
  SUBCASE("a node cycle") {
    refused(edited("cycle", [](json& d) {
              d["nodes"].push_back(json{{"name", "a"}, {"children", json::array({4})}});
              d["nodes"].push_back(json{{"name", "b"}, {"children", json::array({3})}});
            }),
            "cycle");
  }
  SUBCASE("a node with two parents") {
    refused(edited("parents", [](json& d) { d["nodes"][1]["children"] = json::array({2}); }), "has two parents");
  }
  SUBCASE("a NaN position") {
    refused(edited("nan", [](json& d) {
              float v[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
              std::uint32_t nan_bits = 0x7FC00000u;
              std::memcpy(&v[4], &nan_bits, 4);
              std::string b64;
              untold::detail::base64_encode(b64, untold::byte_span(reinterpret_cast<const std::byte*>(v), sizeof v));
              d["buffers"].push_back(json{{"byteLength", 36}, {"uri", "data:application/octet-stream;base64," + b64}});
              d["bufferViews"][0]["buffer"] = 1;
              d["bufferViews"][0]["byteOffset"] = 0;
            }),
            "R-FINITE");
  }
  SUBCASE("a buffer URI outside the source's directory") {
    refused(edited("escape", [](json& d) { d["buffers"][0]["uri"] = "../secret.bin"; }), "not a relative path inside");
  }
  SUBCASE("a GLB whose BIN chunk runs past the file") {
    const fs::path dir = scratch("import_gltf_glb");
    const std::string text = R"({"asset":{"version":"2.0"}})";
    std::string glb = "glTF";
    auto u32 = [&](std::uint32_t v) {
      for (int k = 0; k < 4; ++k) glb.push_back(static_cast<char>(v >> (8 * k) & 0xFF));
    };
    const std::uint32_t json_length = static_cast<std::uint32_t>((text.size() + 3) / 4 * 4);
    u32(2);
    u32(12 + 8 + json_length + 8 + 4);
    u32(json_length);
    u32(0x4E4F534Au);
    glb += text + std::string(json_length - text.size(), ' ');
    u32(8);  // BIN says 8 bytes; 4 follow
    u32(0x004E4942u);
    glb += std::string(4, '\0');
    std::ofstream(dir / "bad.glb", std::ios::binary) << glb;
    refused(dir / "bad.glb", "BIN chunk runs past the end of the file");
  }
}
