// The meshopt compressions and PBR_QUANT_V1 through the tool (issue 30):
// cook, convert and recompress take them, the files validate, and a file
// written with them holds the same content as one written with the defaults.
#include "cli_support.hpp"

#include <nlohmann/json.hpp>

#include <untold/untold.hpp>

using namespace cli_test;
using json = nlohmann::json;

namespace {

json run_json(const std::string& args) {
  const run_result r = run_untold(args + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, args << "\n" << r.err);
  json j = json::parse(r.out, nullptr, false);
  REQUIRE_MESSAGE(!j.is_discarded(), r.out);
  if (j.is_array() && j.size() == 1) return j[0];  // info --json: one entry per file
  return j;
}

/// `dump --json` without what depends on the stored bytes alone (the file
/// name, the chunk table's compression, offsets and stored sizes, the
/// content hash): the content.
json content_of(const fs::path& file) {
  json j = run_json("dump --vertices 1000000 " + quoted(file));
  j.erase("file");
  j.erase("chunks");
  if (j.contains("header")) j["header"].erase("contentHash");
  return j;
}

std::string compression_of(const json& info, std::uint32_t chunk_type) {
  for (const json& c : info["chunks"])
    if (c["chunkType"] == chunk_type) return c["compression"].get<std::string>();
  return "absent";
}

}  // namespace

TEST_CASE("cook --compress meshopt|meshopt+zstd: valid files with the same content as the default cook") {
  const fs::path dir = scratch("mesh_codec_cook");
  const fs::path plain = dir / "plain.untold";
  REQUIRE(run_untold("cook -q " + quoted(sample_model()) + " -o " + quoted(plain)).exit_code == 0);
  const json want = content_of(plain);
  for (const std::string method : {"meshopt", "meshopt+zstd", "meshopt+zstd:19"}) {
    CAPTURE(method);
    const fs::path packed = dir / "packed.untold";
    const run_result r = run_untold("cook -q " + quoted(sample_model()) + " -o " + quoted(packed) + " --compress " + method);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(run_untold("validate --deep " + quoted(packed)).exit_code == 0);
    // The sample's few vertices: a meshopt chunk of them is no smaller than
    // its payload, so the writer may keep it uncompressed (spec 7). Jack
    // (below) is large enough to show the chunk types.
    const json info = run_json("info " + quoted(packed));
    const std::string expected = method.starts_with("meshopt+zstd") ? "meshopt+zstd" : "meshopt";
    CHECK((compression_of(info, 6) == expected || compression_of(info, 6) == "none"));
    CHECK((compression_of(info, 7) == expected || compression_of(info, 7) == "none"));
    // The same content as the default cook, directly and after recompressing back.
    CHECK(content_of(packed) == want);
    const fs::path back = dir / "back.untold";
    REQUIRE(run_untold("recompress -q " + quoted(packed) + " -o " + quoted(back) + " --compress none").exit_code == 0);
    CHECK(content_of(back) == want);
    CHECK(untold::read_file(back).value() == untold::read_file(plain).value());
  }
}

TEST_CASE("cook --compress meshopt|meshopt+zstd: vertex and index data take the mesh codecs, the rest does not") {
  const fs::path dir = scratch("mesh_codec_jack");
  for (const std::string method : {"meshopt", "meshopt+zstd"}) {
    CAPTURE(method);
    const fs::path out = dir / "jack.untold";
    const run_result r = run_untold("cook -q " + quoted(test_data("urho3d/Models/Jack.mdl")) + " -o " + quoted(out) +
                                    " --compress " + method);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(run_untold("validate --deep " + quoted(out)).exit_code == 0);
    const json info = run_json("info " + quoted(out));
    CHECK(compression_of(info, 6) == method);
    CHECK(compression_of(info, 7) == method);
    CHECK(compression_of(info, 3) == (method == "meshopt" ? "none" : "zstd"));  // the mesh table
    for (const json& c : info["chunks"])  // joint data, keyframes, tables: never the mesh codecs
      if (c["chunkType"] != 6 && c["chunkType"] != 7) CHECK(c["compression"].get<std::string>().find("meshopt") == std::string::npos);
  }
}

TEST_CASE("cook --vertex-layout quantized: PBR_QUANT_V1, valid, positions within the bounds") {
  const fs::path dir = scratch("quant_cook");
  const fs::path plain = dir / "plain.untold", quant = dir / "quant.untold";
  REQUIRE(run_untold("cook -q " + quoted(sample_model()) + " -o " + quoted(plain)).exit_code == 0);
  const run_result r = run_untold("cook -q " + quoted(sample_model()) + " -o " + quoted(quant) +
                                  " --vertex-layout quantized --compress meshopt+zstd");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(run_untold("validate --deep " + quoted(quant)).exit_code == 0);
  const json info = run_json("info " + quoted(quant));
  CHECK(info["vertexLayout"] == "pbrQuantV1");
  const json a = content_of(plain), b = content_of(quant);
  REQUIRE(a["meshes"].size() == b["meshes"].size());
  for (std::size_t m = 0; m < a["meshes"].size(); ++m) {
    const json& ma = a["meshes"][m];
    const json& mb = b["meshes"][m];
    CHECK(mb["vertexStrideBytes"] == 24);
    CHECK(ma["localBounds"] == mb["localBounds"]);
    REQUIRE(ma["vertices"].size() == mb["vertices"].size());
    for (std::size_t v = 0; v < ma["vertices"].size(); ++v)
      for (int axis = 0; axis < 3; ++axis) {
        const double lo = ma["localBounds"]["min"][axis].get<double>(), hi = ma["localBounds"]["max"][axis].get<double>();
        CHECK(std::fabs(ma["vertices"][v]["position"][axis].get<double>() -
                        mb["vertices"][v]["position"][axis].get<double>()) <= (hi - lo) / 65535.0 + 1e-7);
        CHECK(ma["vertices"][v]["uv0"] == mb["vertices"][v]["uv0"]);
      }
  }
  CHECK(run_untold("cook -q " + quoted(sample_model()) + " -o " + quoted(quant) + " --vertex-layout packed").exit_code == 2);
}

TEST_CASE("convert --compress: .untold outputs only") {
  const fs::path dir = scratch("mesh_codec_convert");
  const fs::path out = dir / "jack.untold";
  const run_result r = run_untold("convert -q " + quoted(test_data("urho3d/Models/Jack.mdl")) + " " + quoted(out) +
                                  " --compress meshopt+zstd");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(run_untold("validate --deep " + quoted(out)).exit_code == 0);
  CHECK(compression_of(run_json("info " + quoted(out)), 6) == "meshopt+zstd");
  const run_result refused = run_untold("convert " + quoted(test_data("urho3d/Models/Jack.mdl")) + " " +
                                        quoted(dir / "jack.glb") + " --compress meshopt");
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("--compress is for .untold output") != std::string::npos);
}
