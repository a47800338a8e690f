// The tool library called directly: cook's embedded-image extraction and
// compression argument, recompress on unknown and plugin chunks.
#include "cli_support.hpp"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include <untold/untold.hpp>

#include "compress_spec.hpp"
#include "cook.hpp"
#include "recompress.hpp"

using namespace cli_test;

namespace {

std::string base64(const std::string& in) {
  static constexpr char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(table[(v >> s) & 63]);
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out.push_back(table[(v >> 18) & 63]);
    out.push_back(table[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? table[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

}  // namespace

TEST_CASE("parse_compression") {
  std::string error;
  CHECK(untold::tools::parse_compression("none", error)->method == untold::compression::none);
  CHECK(untold::tools::parse_compression("lz4", error)->level == 0);
  CHECK(untold::tools::parse_compression("lz4hc", error)->level == 9);
  CHECK(untold::tools::parse_compression("lz4hc:12", error)->level == 12);
  CHECK(untold::tools::parse_compression("zstd", error)->level == 0);
  CHECK(untold::tools::parse_compression("zstd:19", error)->method == untold::compression::zstd);
  for (const char* bad : {"", "zip", "lz4:1", "lz4hc:13", "zstd:0", "zstd:", "zstd:x", "zstd:3x", "none:1"}) {
    CAPTURE(bad);
    error.clear();
    CHECK(!untold::tools::parse_compression(bad, error));
    CHECK(!error.empty());
  }
  CHECK(untold::tools::describe_compression({untold::compression::lz4, 12}) == "lz4hc:12");
}

TEST_CASE("cook writes embedded images next to the output and references them") {
  const fs::path dir = scratch("cook_embedded");
  // The sample with its buffer and image as data URIs (no files beside it).
  auto gltf = nlohmann::json::parse(read_text(sample_model()));
  const std::string png = read_text(fs::path(UNTOLD_SAMPLE_DIR) / "checker.png");
  gltf["buffers"][0]["uri"] = "data:application/octet-stream;base64," +
                              base64(read_text(fs::path(UNTOLD_SAMPLE_DIR) / "sample.bin"));
  gltf["images"][0]["uri"] = "data:image/png;base64," + base64(png);
  std::ofstream(dir / "embedded.gltf") << gltf.dump();

  untold::tools::cook_options o;
  o.input = dir / "embedded.gltf";
  o.output = dir / "out" / "embedded.untold";
  const untold::tools::cook_report r = untold::tools::cook(o);
  REQUIRE_MESSAGE(static_cast<bool>(r), r.error);
  CHECK(r.textures == 1);
  auto opened = untold::open_file(o.output, {.deep_checks = true});
  REQUIRE(opened.has_value());
  const untold::asset& a = opened->asset;
  const std::string uri(a.string(a.textures()[0].uri_offset));
  CHECK(uri == "embedded_tex0.png");
  CHECK(read_text(dir / "out" / uri) == png);
  CHECK(a.textures()[0].width == 8);
  CHECK(std::find(r.written.begin(), r.written.end(), dir / "out" / uri) != r.written.end());
}

TEST_CASE("cook without optimisation keeps every vertex referenced") {
  const fs::path dir = scratch("cook_plain");
  untold::tools::cook_options o;
  o.input = sample_model();
  o.output = dir / "plain.untold";
  o.order = untold::tools::mesh_order::source;
  REQUIRE(static_cast<bool>(untold::tools::cook(o)));
  auto opened = untold::open_file(o.output, {.deep_checks = true});
  REQUIRE(opened.has_value());
  for (const untold::mesh_record& m : opened->asset.meshes()) CHECK(m.index_count >= m.vertex_count);
}

TEST_CASE("recompress keeps unknown and plugin chunks and the hash state") {
  untold::builder b;
  std::vector<float> positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  untold::pbr_vertex_input in;
  in.positions = positions;
  const auto vertices = untold::encode_pbr_vertices(in);
  REQUIRE(vertices.has_value());
  const std::vector<std::uint32_t> indices = {0, 1, 2};
  const auto e = b.add_entity({.name = "root"});
  b.add_mesh({.entity = e, .vertices = *vertices, .indices = indices});
  // An unknown core chunk (type 300) and a plugin chunk with a valid envelope.
  std::vector<std::byte> unknown(1000, std::byte{7});
  b.add_raw_chunk(300, unknown, 5);
  const std::string id = "com.example.test";
  std::vector<std::byte> plugin(16 + id.size() + 600, std::byte{0x42});
  untold::store_le_unchecked<std::uint32_t>(plugin.data(), 0x54584555u);
  untold::store_le_unchecked<std::uint16_t>(plugin.data() + 4, 1);
  untold::store_le_unchecked<std::uint16_t>(plugin.data() + 6, static_cast<std::uint16_t>(id.size()));
  untold::store_le_unchecked<std::uint32_t>(plugin.data() + 8, 3);
  untold::store_le_unchecked<std::uint32_t>(plugin.data() + 12, 2);
  std::memcpy(plugin.data() + 16, id.data(), id.size());
  b.add_raw_chunk(0x8001, plugin);

  for (const bool hashed : {true, false}) {
    CAPTURE(hashed);
    untold::write_options w;
    w.content_hash = hashed;
    const auto file = b.finish(w);
    REQUIRE(file.has_value());
    for (const auto method : {untold::compression::lz4, untold::compression::zstd}) {
      const auto r = untold::tools::recompress(*file, untold::tools::uniform_policy({method, 0}));
      REQUIRE_MESSAGE(static_cast<bool>(r), r.error);
      CHECK(r.bytes.size() < file->size());
      auto a = untold::open(r.bytes, {.integrity = untold::integrity::full});  // every block digest matches
      REQUIRE(a.has_value());
      CHECK(untold::is_hashed(a->header()) == hashed);
      // The writer adds block digests (the untold.integrity plugin chunk)
      // whenever it hashes; recompress rebuilds them for the new stored bytes.
      auto input = untold::open(*file);
      REQUIRE(input.has_value());
      const auto integrity_row = [](const untold::asset& x) -> std::optional<std::uint32_t> {
        for (std::uint32_t row = 0; row < x.chunks().size(); ++row)
          if (x.chunks()[row].chunk_type == untold::integrity_chunk_type) return row;
        return std::nullopt;
      };
      const auto digests = integrity_row(*a);
      CHECK(digests.has_value() == hashed);
      if (digests) {
        REQUIRE(integrity_row(*input).has_value());
        const auto before = input->payload(*integrity_row(*input));
        const auto after = a->payload(*digests);
        CHECK_FALSE(std::equal(before.begin(), before.end(), after.begin(), after.end()));
        CHECK(untold::has_block_digests(*a));
      }
      std::vector<std::uint32_t> raw;  // the unknown and the plugin chunk, the integrity chunk aside
      for (const std::uint32_t row : a->raw_chunks())
        if (a->chunks()[row].chunk_type != untold::integrity_chunk_type) raw.push_back(row);
      REQUIRE(raw.size() == 2);
      CHECK(a->chunks()[raw[0]].compression_type == static_cast<std::uint32_t>(method));
      CHECK(a->chunks()[raw[0]].element_count == 5);
      const auto payload = a->payload(raw[1]);
      CHECK(std::equal(payload.begin(), payload.end(), plugin.begin(), plugin.end()));
      CHECK(untold::tools::compare_payloads(*file, r.bytes).empty());
      // Back to none gives the builder's bytes exactly.
      const auto back = untold::tools::recompress(r.bytes, {});
      REQUIRE(static_cast<bool>(back));
      CHECK(back.bytes == *file);
    }
  }
}

#if __has_include(<untold/extensions.hpp>)
TEST_CASE("dump --json lists extension tables with every field and resolved strings") {
  const fs::path dir = scratch("dump_extensions");
  untold::builder b;
  const auto root = b.add_entity({.name = "root"});
  const untold::skeleton_joint_desc joints[] = {{.path = "hips"}, {.path = "hips/spine", .parent = 0}};
  b.add_skeleton({.name = "rig", .entity = root, .joints = joints});
  untold::light_record light;
  light.light_type = static_cast<std::uint32_t>(untold::light_type::spot);
  light.intensity = 2.5f;
  b.add_light({.name = "key", .entity = root, .light = light});
  b.add_camera({.name = "main", .entity_id = 42});
  const auto file = b.finish();
  REQUIRE_MESSAGE(file.has_value(), file.error().describe());
  const fs::path path = dir / "ext.untold";
  REQUIRE(untold::write_file(path, *file).has_value());

  const run_result r = run_untold("dump --json " + quoted(path));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  const auto& ext = j["extensions"];
  CHECK(ext.size() == 4);  // skeletons, skeletonJoints, lights, cameras
  CHECK(ext["skeletons"][0]["name"] == "rig");
  CHECK(ext["skeletons"][0]["jointRecordCount"] == 2);
  CHECK(ext["skeletonJoints"][1]["jointPath"] == "hips/spine");
  CHECK(ext["skeletonJoints"][1]["parentJointIndex"] == 0);
  CHECK(ext["skeletonJoints"][0]["bindTransform"].size() == 16);
  CHECK(ext["lights"][0]["name"] == "key");
  CHECK(ext["lights"][0]["lightType"] == 3);
  CHECK(ext["lights"][0]["intensity"] == 2.5);
  CHECK(ext["cameras"][0]["entityId"] == 42);
  CHECK(ext["cameras"][0]["name"] == "main");
  const run_result text = run_untold("dump " + quoted(path));
  CHECK(text.out.find("lights (1)") != std::string::npos);
  CHECK(text.out.find("jointPath=hips/spine") != std::string::npos);
}
#endif
