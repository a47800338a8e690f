// The `untold` binary end to end: exit codes, --help, golden JSON of
// tests/data/minimal_v1.untold, validate reports, cook and recompress.
#include "cli_support.hpp"

#include "../support.hpp"

#include <nlohmann/json.hpp>

#include <untold/untold.hpp>

#include "recompress.hpp"

using namespace cli_test;
using json = nlohmann::json;

namespace {

/// The golden file with one field patched, written to `dir`.
fs::path patched_golden(const fs::path& dir, const std::string& name, std::size_t at, std::uint32_t value) {
  auto bytes = untold::read_file(test_data("minimal_v1.untold"));
  REQUIRE(bytes.has_value());
  untold::store_le_unchecked<std::uint32_t>(bytes->data() + at, value);
  const fs::path p = dir / name;
  REQUIRE(untold::write_file(p, *bytes).has_value());
  return p;
}


}  // namespace

TEST_CASE("exit code 2 for usage errors, 0 for --help and --version") {
  for (const char* args : {"", "bogus", "info", "info --bogus x", "validate", "dump", "dump a b", "cook",
                           "cook x.gltf", "cook x.gltf -o y --compress brotli", "cook x.gltf -o y --compress zstd:40",
                           "cook x.gltf -o y --compress lz4:3", "cook x.gltf -o y --lod 99",
                           "recompress x -o y", "recompress x -o y --compress lz4hc:0", "dump x --vertices -1"}) {
    CAPTURE(args);
    const run_result r = run_untold(args);
    CHECK(r.exit_code == 2);
    CHECK(!r.err.empty());
  }
  const run_result top = run_untold("--help");
  CHECK(top.exit_code == 0);
  CHECK(top.out.find("Exit codes") != std::string::npos);
  for (const char* sub : {"info", "validate", "dump", "cook", "recompress"}) {
    CAPTURE(sub);
    const run_result r = run_untold(std::string(sub) + " --help");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Usage: untold " + std::string(sub)) != std::string::npos);
  }
  const run_result version = run_untold("--version");
  CHECK(version.exit_code == 0);
  CHECK(version.out.find('.') != std::string::npos);
}

TEST_CASE("info --json of the golden file is exactly the spec layout") {
  const run_result r = run_untold("info --json " + quoted(test_data("minimal_v1.untold")));
  REQUIRE(r.exit_code == 0);
  json got = parse_json(r.out);
  REQUIRE(got.is_array());
  REQUIRE(got.size() == 1);
  got[0]["file"] = "minimal_v1.untold";
  // tests/unit/test_golden.cpp lays these bytes out by hand from the spec.
  const json want = json::parse(R"({
    "file": "minimal_v1.untold", "format": "untold", "fileSize": 1014, "valid": true, "error": null,
    "formatVersion": 1, "fileType": "tile", "flags": 0, "headerSize": 204, "vertexLayout": "pbrStaticV1",
    "counts": {"chunks": 7, "entities": 1, "meshes": 1, "materials": 1, "textures": 1},
    "worldBounds": {"min": [0, 0, 0], "max": [1, 1, 0]},
    "rootTransform": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    "contentHash": null,
    "chunks": [
      {"index": 0, "chunkType": 1, "typeName": "stringTable", "compression": "none", "fileOffset": 496, "storedSize": 23, "rawSize": 23, "ratio": 1.0, "elementCount": 0},
      {"index": 1, "chunkType": 2, "typeName": "entityTable", "compression": "none", "fileOffset": 528, "storedSize": 136, "rawSize": 136, "ratio": 1.0, "elementCount": 1},
      {"index": 2, "chunkType": 3, "typeName": "meshTable", "compression": "none", "fileOffset": 672, "storedSize": 104, "rawSize": 104, "ratio": 1.0, "elementCount": 1},
      {"index": 3, "chunkType": 4, "typeName": "materialTable", "compression": "none", "fileOffset": 784, "storedSize": 88, "rawSize": 88, "ratio": 1.0, "elementCount": 1},
      {"index": 4, "chunkType": 5, "typeName": "textureTable", "compression": "none", "fileOffset": 880, "storedSize": 32, "rawSize": 32, "ratio": 1.0, "elementCount": 1},
      {"index": 5, "chunkType": 6, "typeName": "vertexData", "compression": "none", "fileOffset": 912, "storedSize": 96, "rawSize": 96, "ratio": 1.0, "elementCount": 0},
      {"index": 6, "chunkType": 7, "typeName": "indexData", "compression": "none", "fileOffset": 1008, "storedSize": 6, "rawSize": 6, "ratio": 1.0, "elementCount": 0}],
    "storedBytes": 485, "rawBytes": 485, "blockDigests": "none",
    "geometry": {"vertices": 3, "indices": 3, "triangles": 1}})");
  CHECK(got[0] == want);
}

TEST_CASE("dump --json --vertices of the golden file is exactly its records") {
  const run_result r = run_untold("dump --json --vertices 3 " + quoted(test_data("minimal_v1.untold")));
  REQUIRE(r.exit_code == 0);
  json got = parse_json(r.out);
  got["file"] = "minimal_v1.untold";
  const json vertex_tail = json::parse(R"({"normal": [0, 0, 1], "tangent": [1, 0, 0, 1], "uv0": [0, 0], "uv1": [0, 0], "color0": [1, 1, 1, 1]})");
  json vertices = json::array();
  for (const json& p : {json{0, 0, 0}, json{1, 0, 0}, json{0, 1, 0}}) {
    json v{{"position", p}};
    v.update(vertex_tail);
    vertices.push_back(v);
  }
  json want = json::parse(R"({
    "file": "minimal_v1.untold", "format": "untold", "valid": true, "formatVersion": 1, "fileType": "tile",
    "vertexLayout": "pbrStaticV1", "flags": 0,
    "chunks": [
      {"index": 0, "chunkType": 1, "typeName": "stringTable", "compression": "none", "fileOffset": 496, "storedSize": 23, "rawSize": 23, "elementCount": 0},
      {"index": 1, "chunkType": 2, "typeName": "entityTable", "compression": "none", "fileOffset": 528, "storedSize": 136, "rawSize": 136, "elementCount": 1},
      {"index": 2, "chunkType": 3, "typeName": "meshTable", "compression": "none", "fileOffset": 672, "storedSize": 104, "rawSize": 104, "elementCount": 1},
      {"index": 3, "chunkType": 4, "typeName": "materialTable", "compression": "none", "fileOffset": 784, "storedSize": 88, "rawSize": 88, "elementCount": 1},
      {"index": 4, "chunkType": 5, "typeName": "textureTable", "compression": "none", "fileOffset": 880, "storedSize": 32, "rawSize": 32, "elementCount": 1},
      {"index": 5, "chunkType": 6, "typeName": "vertexData", "compression": "none", "fileOffset": 912, "storedSize": 96, "rawSize": 96, "elementCount": 0},
      {"index": 6, "chunkType": 7, "typeName": "indexData", "compression": "none", "fileOffset": 1008, "storedSize": 6, "rawSize": 6, "elementCount": 0}],
    "entities": [{"index": 0, "entityId": 0, "parentEntityId": null, "name": "root", "flags": 0,
                  "firstMeshRecordIndex": 0, "meshRecordCount": 1,
                  "localTransform": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
                  "localBounds": {"min": [0, 0, 0], "max": [1, 1, 0]},
                  "worldBounds": {"min": [0, 0, 0], "max": [1, 1, 0]}}],
    "meshes": [{"index": 0, "name": "tri", "entityId": 0, "materialIndex": 0, "indexType": "uint16",
                "vertexCount": 3, "indexCount": 3, "vertexStrideBytes": 32, "flags": 0,
                "vertexDataOffset": 0, "vertexDataSizeBytes": 96, "indexDataOffset": 0, "indexDataSizeBytes": 6,
                "edgeIndexCount": 0, "estimatedGPUBytes": 102,
                "localBounds": {"min": [0, 0, 0], "max": [1, 1, 0]}}],
    "materials": [{"index": 0, "name": "mat", "flags": 0, "baseColorFactor": [1, 1, 1, 1], "emissiveFactor": [0, 0, 0],
                   "normalScale": 1, "metallicFactor": 1, "roughnessFactor": 1, "occlusionStrength": 1, "alphaCutoff": 0.5,
                   "alphaMode": "opaque", "transmissionFactor": 0,
                   "textures": {"baseColor": 0, "normal": null, "metallic": null, "roughness": null,
                                "emissive": null, "occlusion": null, "height": null},
                   "roughnessChannel": "r", "metallicChannel": "r",
                   "heightScale": 0.05, "heightMidlevel": 0.5, "heightRemapMin": 0, "heightRemapMax": 1}],
    "textures": [{"index": 0, "name": "tex", "uri": "t.png", "textureFormat": "rgba8", "flags": 1,
                  "flagNames": ["srgb"], "width": 4, "height": 4, "mipCount": 1}],
    "extensions": {},
    "rawChunks": []})");
  want["meshes"][0]["vertices"] = vertices;
  CHECK(got == want);
}

TEST_CASE("info and dump text") {
  const run_result info = run_untold("info " + quoted(test_data("minimal_v1.untold")));
  CHECK(info.exit_code == 0);
  for (const char* line : {"version 1, tile", "1 entities, 1 meshes, 1 materials, 1 textures", "3 vertices, 1 triangles",
                           "(0 0 0) .. (1 1 0)", "stringTable (1)", "indexData (7)", "valid          yes"})
    CHECK_MESSAGE(info.out.find(line) != std::string::npos, line);
  const run_result dump = run_untold("dump " + quoted(test_data("minimal_v1.untold")));
  CHECK(dump.exit_code == 0);
  for (const char* line : {"[0] 'root' t=(0 0 0)", "mesh 0 'tri': 3 vertices, 3 indices (uint16), material 0",
                           "[0] 'tex' uri=t.png rgba8 4x4 mips=1 flags=srgb"})
    CHECK_MESSAGE(dump.out.find(line) != std::string::npos, line);
}

TEST_CASE("validate: rule ids per failing file, a summary line, exit 1 when any fails") {
  const fs::path dir = scratch("validate");
  const fs::path good = test_data("minimal_v1.untold");
  const fs::path bad_material = patched_golden(dir, "bad_material.untold", 672 + 8, 7);  // materialIndex
  const fs::path bad_index = patched_golden(dir, "bad_index.untold", 1008, 9);          // index 0 -> 9 (u32 write)
  const fs::path missing = dir / "missing.untold";

  const run_result ok = run_untold("validate " + quoted(good));
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("1 passed, 0 failed") != std::string::npos);

  const run_result r = run_untold("validate " + quoted(good) + " " + quoted(bad_material) + " " + quoted(missing));
  CHECK(r.exit_code == 3);  // an unreadable file (I/O) outranks an invalid one
  CHECK(r.out.find("R-MESH-MATERIAL mesh_material") != std::string::npos);
  CHECK(r.out.find("field materialIndex, value 7") != std::string::npos);
  CHECK(r.out.find("cannot open " + quoted(missing) + ": No such file or directory") != std::string::npos);
  CHECK(r.out.find("1 passed, 2 failed") != std::string::npos);

  // The index is a deep check: only --deep finds it.
  CHECK(run_untold("validate " + quoted(bad_index)).exit_code == 0);
  const run_result deep = run_untold("validate --deep " + quoted(bad_index));
  CHECK(deep.exit_code == 1);
  CHECK(deep.out.find("R-INDEX-VALUE") != std::string::npos);

  const run_result j = run_untold("validate --json --deep " + quoted(good) + " " + quoted(bad_index));
  CHECK(j.exit_code == 1);
  const json report = parse_json(j.out);
  CHECK(report["deep"] == true);
  CHECK(report["passed"] == 1);
  CHECK(report["failed"] == 1);
  CHECK(report["results"][0]["valid"] == true);
  CHECK(report["results"][1]["error"]["rule"] == "R-INDEX-VALUE");
  CHECK(report["results"][1]["error"]["context"]["field"] == "indices");
  CHECK(report["results"][1]["error"]["context"]["record"] == 0);

  // info on a broken file still shows what it can, and exits 1.
  const run_result info = run_untold("info --json " + quoted(bad_material));
  CHECK(info.exit_code == 1);
  const json i = parse_json(info.out);
  CHECK(i[0]["valid"] == false);
  CHECK(i[0]["chunks"].size() == 7);
  CHECK(i[0]["error"]["rule"] == "R-MESH-MATERIAL");
  CHECK(run_untold("dump " + quoted(bad_material)).exit_code == 1);
}

TEST_CASE("cook the bundled sample: counts, transforms, materials, texture references") {
  const fs::path dir = scratch("cook_sample");
  // The sample below the output's directory, so its image has a relative URI that stays inside.
  fs::create_directories(dir / "nested" / "src");
  for (const char* f : {"sample.gltf", "sample.bin", "checker.png"})
    fs::copy_file(fs::path(UNTOLD_SAMPLE_DIR) / f, dir / "nested" / "src" / f);
  const fs::path out = dir / "nested" / "sample.untold";
  const run_result r = run_untold("cook " + quoted(dir / "nested" / "src" / "sample.gltf") + " -o " + quoted(out));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("4 entities, 3 meshes, 52 vertices, 26 triangles, 2 materials, 1 textures") != std::string::npos);
  CHECK(run_untold("validate --deep " + quoted(out)).exit_code == 0);

  auto opened = untold::open_file(out, {.deep_checks = true});
  REQUIRE(opened.has_value());
  const untold::asset& a = opened->asset;
  // The texture is referenced where it is, relative to the output.
  const std::string uri(a.string(a.textures()[0].uri_offset));
  CHECK(uri == "src/checker.png");
  CHECK(a.textures()[0].width == 8);
  CHECK((a.textures()[0].flags & untold::texture_flags::srgb) != 0);

  // Node "crate": translation (0, 0.5, 0), 30 degrees about +Y, column-major.
  bool found = false;
  for (const untold::entity_record& e : a.entities()) {
    if (a.string(e.name_offset) != "crate") continue;
    found = true;
    const auto& m = e.local_transform;
    CHECK(m[12] == doctest::Approx(0.0));
    CHECK(m[13] == doctest::Approx(0.5));
    CHECK(m[0] == doctest::Approx(0.8660254));
    CHECK(m[8] == doctest::Approx(0.5));   // row 0, column 2
    CHECK(m[2] == doctest::Approx(-0.5));  // row 2, column 0
    CHECK(e.mesh_record_count == 1);
  }
  CHECK(found);
  for (const untold::material_record& m : a.materials()) {
    if (a.string(m.name_offset) != "crate") continue;
    CHECK(m.base_color_factor[0] == doctest::Approx(0.8));
    CHECK(m.base_color_factor[1] == doctest::Approx(0.45));
    CHECK(m.roughness_factor == doctest::Approx(0.6));
    CHECK(m.metallic_factor == 0.0f);
  }
  const run_result dump = run_untold("dump " + quoted(out));
  CHECK(dump.out.find("      [3] 'small_crate' t=(0 0.75 0) m=[0.5 0 0; 0 0.5 0; 0 0 0.5]") != std::string::npos);
}

TEST_CASE("cook --copy-textures, --compress, --lod, --progress") {
  const fs::path dir = scratch("cook_options");
  const fs::path out = dir / "scene.untold";
  const run_result r = run_untold("cook " + quoted(sample_model()) + " -o " + quoted(out) +
                              " --copy-textures --compress zstd:19 --lod 2 --progress");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("cook: write\n") != std::string::npos);  // progress, one line per step off a terminal
  CHECK(fs::exists(dir / "checker.png"));
  CHECK(cli_test::read_text(dir / "checker.png") == cli_test::read_text(fs::path(UNTOLD_SAMPLE_DIR) / "checker.png"));

  const json info = parse_json(run_untold("info --json " + quoted(out)).out);
  bool zstd = false;
  for (const json& c : info[0]["chunks"])
    if (c["typeName"] == "vertexData") zstd = c["compression"] == "zstd";
  CHECK(zstd);
  const json dump = parse_json(run_untold("dump --json " + quoted(out)).out);
  CHECK(dump["textures"][0]["uri"] == "checker.png");

  const auto triangles = [](const json& i) { return i[0]["geometry"]["triangles"].get<std::uint64_t>(); };
  std::uint64_t previous = triangles(info);
  // A level is written only when it reduces the triangle count (the sample's boxes may not reduce).
  for (const char* lod : {"scene.lod1.untold", "scene.lod2.untold"}) {
    CAPTURE(lod);
    if (!fs::exists(dir / lod)) continue;
    CHECK(run_untold("validate --deep " + quoted(dir / lod)).exit_code == 0);
    const json li = parse_json(run_untold("info --json " + quoted(dir / lod)).out);
    CHECK(li[0]["fileType"] == "lod");
    CHECK(triangles(li) < previous);
    CHECK(triangles(li) > 0);
    previous = triangles(li);
  }
}

TEST_CASE("cook --texture-compress and build --basisu: how the encoder is found, and its failures") {
  const fs::path dir = scratch("texture_encoder");
  const fs::path out = dir / "scene.untold";
  const std::string cook = " cook " + quoted(sample_model()) + " -o " + quoted(out) + " --texture-compress uastc";
  // Nothing found: no --basisu, no UNTOLD_BASISU, no basisu on PATH (an empty directory).
  const std::string bare = "env -u UNTOLD_BASISU PATH=" + quoted(dir) + " " + std::string(UNTOLD_CLI);
  run_result r = run_untold(bare + cook, true);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--texture-compress needs the Basis Universal encoder basisu: none found") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  // An explicit path or the variable that names no executable: exit 2 naming it.
  r = run_untold(cook + " --basisu " + quoted(dir / "missing"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--basisu names '" + (dir / "missing").string() + "', which is not an executable file") != std::string::npos);
  r = run_untold("env UNTOLD_BASISU=" + quoted(dir / "missing") + " " + std::string(UNTOLD_CLI) + cook, true);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("UNTOLD_BASISU names") != std::string::npos);
  r = run_untold("build " + quoted(dir) + " -o " + quoted(dir / "runtime") + " --basisu " + quoted(dir / "missing"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("not an executable file") != std::string::npos);
  CHECK(run_untold(" cook " + quoted(sample_model()) + " -o " + quoted(out) + " --texture-compress bc7").exit_code == 2);
  // A program that is not the encoder, and an encoder that fails: exit 1 with its message, nothing written.
  const auto script = [&](const std::string& name, const std::string& body) {
    const fs::path p = dir / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    fs::permissions(p, fs::perms::owner_all);
    return p;
  };
  r = run_untold(cook + " --basisu " + quoted(script("not_basisu", "echo hello\n")));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("is not a working Basis Universal encoder") != std::string::npos);
  const fs::path failing = script("failing_basisu",
                                  "if [ \"$1\" = -version ]; then echo 'Basis Universal GPU Texture Compressor v9.9'; exit 0; fi\n"
                                  "echo 'ERROR: no memory'; exit 3\n");
  r = run_untold(cook + " --basisu " + quoted(failing));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("failed (exit 3): ERROR: no memory") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("cook: inputs it cannot read exit 1 with a message") {
  const fs::path dir = scratch("cook_bad");
  std::ofstream(dir / "garbage.gltf") << "{ this is not json";
  std::ofstream(dir / "empty.obj") << "";
  for (const fs::path& input : {dir / "missing.gltf", dir / "garbage.gltf", dir / "empty.obj"}) {
    CAPTURE(input);
    const run_result r = run_untold("cook " + quoted(input) + " -o " + quoted(dir / "out.untold"));
    CHECK(r.exit_code == (input.filename() == "missing.gltf" ? 3 : 1));  // unreadable input: I/O
    CHECK(r.err.find(input.string()) != std::string::npos);
    CHECK(!fs::exists(dir / "out.untold"));
  }
}

TEST_CASE("info: block digests current, or stale after a rewrite by a tool that does not know them") {
  const fs::path dir = scratch("info_digests");
  const test::bytes good = test::write_scene(true);  // default options: contentHash and block digests
  const fs::path current = dir / "current.untold", stale = dir / "stale.untold";
  REQUIRE(untold::write_file(current, good).has_value());
  REQUIRE(untold::write_file(stale, test::patch_texture_uri(good, "Textures/baked/a.ktx2", true)).has_value());
  const auto digests_of = [](const fs::path& p) {
    const run_result r = run_untold("info --json " + quoted(p));
    CHECK(r.exit_code == 0);
    const json j = parse_json(r.out);
    CHECK(j[0]["valid"] == true);
    return j[0]["blockDigests"];
  };
  CHECK(digests_of(current) == "current");
  CHECK(digests_of(stale) == "stale");
  CHECK(digests_of(test_data("minimal_v1.untold")) == "none");
  const run_result text = run_untold("info " + quoted(stale));
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("  block digests  stale: computed for another contentHash") != std::string::npos);
  CHECK(text.out.find("the whole-file contentHash was verified instead") != std::string::npos);
  CHECK(text.out.find("valid          yes") != std::string::npos);
  CHECK(run_untold("info " + quoted(current)).out.find("  block digests  current (verified), version 3\n") !=
        std::string::npos);
  CHECK(run_untold("info " + quoted(test_data("minimal_v1.untold"))).out.find("  block digests  none\n") !=
        std::string::npos);
  // A version 2 chunk, which the writer wrote before: named, with what it costs.
  const fs::path v2 = test_data("integrity/v2_hashed.untold");
  const run_result old_text = run_untold("info " + quoted(v2));
  CHECK(old_text.exit_code == 0);
  CHECK(old_text.out.find("  block digests  current (verified), version 2 (no tree under the contentHash: a full "
                          "check hashes the file again; untold recompress writes version 3)\n") != std::string::npos);
  const fs::path upgraded = dir / "upgraded.untold";
  CHECK(run_untold("recompress " + quoted(v2) + " -o " + quoted(upgraded) + " --compress none").exit_code == 0);
  CHECK(parse_json(run_untold("info --json " + quoted(upgraded)).out)[0]["blockDigestsVersion"] == 3);
  CHECK(parse_json(run_untold("info --json " + quoted(stale)).out)[0]["blockDigestsVersion"] == 3);
  CHECK(run_untold("validate " + quoted(stale)).exit_code == 0);
  // recompress rebuilds the digests for its output: current again.
  const fs::path rebuilt = dir / "rebuilt.untold";
  const run_result r = run_untold("recompress " + quoted(stale) + " -o " + quoted(rebuilt) + " --compress lz4");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(digests_of(rebuilt) == "current");
}

TEST_CASE("recompress: every method round-trips to the same bytes") {
  const fs::path dir = scratch("recompress");
  const fs::path plain = dir / "plain.untold";
  REQUIRE(run_untold("cook " + quoted(sample_model()) + " -o " + quoted(plain)).exit_code == 0);
  const auto original = untold::read_file(plain);
  REQUIRE(original.has_value());
  for (const char* method : {"lz4", "lz4hc:12", "zstd", "zstd:19", "meshopt", "meshopt+zstd", "meshopt+zstd:19", "none"}) {
    CAPTURE(method);
    const fs::path packed = dir / "packed.untold";
    const run_result r = run_untold("recompress " + quoted(plain) + " -o " + quoted(packed) + " --compress " + method);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const auto bytes = untold::read_file(packed);
    REQUIRE(bytes.has_value());
    CHECK(untold::tools::compare_payloads(*original, *bytes).empty());
    CHECK(run_untold("validate --deep " + quoted(packed)).exit_code == 0);
    // And back: the uncompressed layout is exactly what cook wrote.
    REQUIRE(run_untold("recompress " + quoted(packed) + " -o " + quoted(packed) + " --compress none").exit_code == 0);
    CHECK(untold::read_file(packed).value() == *original);
  }
  CHECK(run_untold("recompress " + quoted(dir / "nothing") + " -o " + quoted(dir / "x") + " --compress lz4").exit_code == 3);
  const fs::path bad = patched_golden(dir, "bad.untold", 672 + 8, 7);
  const run_result r = run_untold("recompress " + quoted(bad) + " -o " + quoted(dir / "x") + " --compress lz4");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("R-MESH-MATERIAL") != std::string::npos);
}
