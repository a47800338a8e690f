// The meshopt compressions and PBR_QUANT_V1 through the tool (issue 30):
// cook, convert and recompress take them, the files validate, and a file
// written with them holds the same content as one written with the defaults.
#include "cli_support.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

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

namespace {

/// Every triangle of every mesh as its three stored vertices, each triangle
/// rotated to start at its smallest vertex (winding kept), sorted: what
/// stays the same when triangles and vertices are only reordered.
std::vector<std::string> triangles_of(const fs::path& file) {
  auto opened = untold::open_file(file, {.deep_checks = true});
  REQUIRE(opened.has_value());
  const untold::asset& a = opened->asset;
  std::vector<std::string> out;
  for (const untold::mesh_record& m : a.meshes()) {
    const untold::byte_span vertices = a.vertices(m);
    const untold::index_view indices = untold::view_indices(a, m);
    const auto vertex = [&](std::size_t i) {
      const auto* p = reinterpret_cast<const char*>(vertices.data()) + std::size_t{indices[i]} * m.vertex_stride_bytes;
      return std::string(p, m.vertex_stride_bytes);
    };
    for (std::size_t t = 0; t + 2 < indices.size(); t += 3) {
      std::array<std::string, 3> v = {vertex(t), vertex(t + 1), vertex(t + 2)};
      const std::size_t first = static_cast<std::size_t>(std::min_element(v.begin(), v.end()) - v.begin());
      std::rotate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(first), v.end());
      out.push_back(v[0] + v[1] + v[2]);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::uint64_t stored_size_of(const json& info, std::uint32_t chunk_type) {
  for (const json& c : info["chunks"])
    if (c["chunkType"] == chunk_type) return c["storedSize"].get<std::uint64_t>();
  return 0;
}

}  // namespace

TEST_CASE("cook --mesh-order size: the same triangles in fewer bytes than the vertex cache order") {
  const fs::path dir = scratch("mesh_order");
  const fs::path model = assimp_model("glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb");
  std::map<std::string, fs::path> cooked;
  for (const std::string order : {"cache", "size", "source"}) {
    CAPTURE(order);
    cooked[order] = dir / (order + ".untold");
    const run_result r = run_untold("cook -q " + quoted(model) + " -o " + quoted(cooked[order]) +
                                    " --compress meshopt+zstd --mesh-order " + order);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }
  // Only the order differs: the same triangles, each with its winding.
  const std::vector<std::string> want = triangles_of(cooked["cache"]);
  CHECK(want.size() > 60'000);
  CHECK(triangles_of(cooked["size"]) == want);
  CHECK(triangles_of(cooked["source"]) == want);
  // The strip-friendly order stores indices and vertices in fewer bytes
  // (2CylinderEngine: indices 21% fewer, measured when it was added).
  const json cache = run_json("info " + quoted(cooked["cache"])), size = run_json("info " + quoted(cooked["size"]));
  CHECK(stored_size_of(size, 7) < stored_size_of(cache, 7) * 9 / 10);
  CHECK(stored_size_of(size, 6) < stored_size_of(cache, 6));
  // The quantized vertices of the size order: some stored as fields streams
  // (positions and normals each their own way), and decoded exactly.
  const fs::path quant_packed = dir / "quant_packed.untold", quant_plain = dir / "quant_plain.untold";
  for (const auto& [path, compress] : {std::pair{quant_packed, "meshopt+zstd:19"}, std::pair{quant_plain, "none"}})
    REQUIRE(run_untold("cook -q " + quoted(model) + " -o " + quoted(path) + " --mesh-order size --vertex-layout quantized"
                       " --compress " + compress).exit_code == 0);
  const std::vector<std::byte> packed_file = untold::read_file(quant_packed).value();
  auto packed = untold::open(packed_file, {.deep_checks = true, .integrity = untold::integrity::full});
  auto unpacked = untold::open_file(quant_plain, {.deep_checks = true});
  REQUIRE(packed.has_value());
  REQUIRE(unpacked.has_value());
  for (const std::uint32_t type : {6u, 7u}) {
    const auto got_row = packed->find_chunk(static_cast<untold::chunk_type>(type));
    const auto want_row = unpacked->asset.find_chunk(static_cast<untold::chunk_type>(type));
    REQUIRE((got_row && want_row));
    const untold::byte_span got = packed->payload(*got_row), want = unpacked->asset.payload(*want_row);
    CHECK(std::equal(got.begin(), got.end(), want.begin(), want.end()));
  }
  const untold::chunk_entry& vertex_chunk = packed->chunks()[*packed->find_chunk(untold::chunk_type::vertex_data)];
  const auto streams = untold::parse_codec_directory(
      untold::compression::meshopt_zstd,
      untold::byte_span(packed_file).subspan(vertex_chunk.file_offset, vertex_chunk.compressed_size),
      vertex_chunk.compressed_size);
  REQUIRE(streams);
  CHECK(std::count_if(streams->begin(), streams->end(),
                      [](const untold::codec_stream& x) { return x.kind == untold::codec_stream_kind::fields; }) > 0);
  // --no-optimize is --mesh-order source; the two together are refused.
  const fs::path plain = dir / "no_optimize.untold";
  REQUIRE(run_untold("cook -q " + quoted(model) + " -o " + quoted(plain) + " --compress meshopt+zstd --no-optimize")
              .exit_code == 0);
  CHECK(untold::read_file(plain).value() == untold::read_file(cooked["source"]).value());
  CHECK(run_untold("cook -q " + quoted(model) + " -o " + quoted(plain) + " --no-optimize --mesh-order size").exit_code ==
        2);
  CHECK(run_untold("cook -q " + quoted(model) + " -o " + quoted(plain) + " --mesh-order fastest").exit_code == 2);
}
